// Table tests of the JSONC text edits setup makes (jsonc.ts): the parser's
// errors with their line, a member set or appended where it belongs in the
// file's own indentation, and an entry taken out with its comma and its
// line, every other byte as it was.

import { describe, expect, it } from 'vitest';
import { appendAt, JsonTextError, nodeAt, parseJsonc, removeItems, removeMember, setAt, valueOf } from './jsonc';

function error(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(JsonTextError);
    return (e as Error).message;
  }
  return 'no error';
}

describe('parseJsonc', () => {
  it.each<[string, unknown]>([
    ['', null],
    [' \n // only a comment\n /* and */ ', null],
    ['{}', {}],
    ['[]', []],
    ['{"a": [1, -2.5, 3e2, 4E-1, true, false, null, "x\\"y"],}', { a: [1, -2.5, 300, 0.4, true, false, null, 'x"y'] }],
    ['// c\n{"a": /* c */ {"b": [1,],},} // end', { a: { b: [1] } }],
    ['"s"', 's'],
    ['{"a\\\\": 1}', { 'a\\': 1 }],
  ])('%j', (text, value) => {
    const root = parseJsonc(text);
    expect(root === null ? null : valueOf(text, root)).toEqual(value);
  });

  it.each<[string, string]>([
    ['{"a": 1', '"," or "}" was expected on line 1'],
    ['{\n"a" 1}', '":" was expected on line 2'],
    ['{\n\n a: 1}', 'a key was expected on line 3'],
    ['[1 2]', '"," or "]" was expected on line 1'],
    ['{"a": }', 'a value was expected on line 1'],
    ['{"a": "x}', 'an unclosed string on line 1'],
    ['{"a": 1} /* x', 'an unclosed /* comment'],
    ['{"a": 1}\n\n x', 'unexpected text after the end on line 3'],
    ['{"a": undefined}', 'a value was expected on line 1'],
  ])('%j: %s', (text, message) => expect(error(() => parseJsonc(text))).toBe(message));

  it('keeps each value\'s offsets', () => {
    const text = '{ "a": [10, "x"] }';
    const node = nodeAt(parseJsonc(text), ['a'])!;
    expect(text.slice(node.start, node.end)).toBe('[10, "x"]');
    expect(nodeAt(parseJsonc(text), ['a', 'b'])).toBeUndefined();
    expect(nodeAt(parseJsonc(text), ['b'])).toBeUndefined();
  });
});

describe('setAt', () => {
  it.each<[string, string[], unknown, string]>([
    ['', ['a', 'b'], 1, '{\n  "a": {\n    "b": 1\n  }\n}\n'],
    ['{}', ['a'], 1, '{\n  "a": 1\n}'],
    ['{}\n', ['a'], { b: 2 }, '{\n  "a": {\n    "b": 2\n  }\n}\n'],
    ['{ }', ['a'], 1, '{\n  "a": 1\n}'],
    ['{"x": 1}', ['a'], 1, '{"x": 1,\n  "a": 1}'],
    ['{\n  "x": 1\n}\n', ['a'], [1], '{\n  "x": 1,\n  "a": [\n    1\n  ]\n}\n'],
    ['{\n  "x": 1,\n}\n', ['a'], 1, '{\n  "x": 1,\n  "a": 1,\n}\n'],
    ['{\n    "x": {\n        "y": 1\n    }\n}\n', ['x', 'z'], 2, '{\n    "x": {\n        "y": 1,\n        "z": 2\n    }\n}\n'],
    ['{\n\t"x": {}\n}\n', ['x', 'z'], 2, '{\n\t"x": {\n\t\t"z": 2\n\t}\n}\n'],
    ['{\n  "x": {"y": 1}\n}\n', ['x', 'y'], { z: 1 }, '{\n  "x": {"y": {\n    "z": 1\n  }}\n}\n'],
    ['{\n  "x": {// c\n  }\n}\n', ['x', 'y'], 1, '{\n  "x": {\n    "y": 1,// c\n  }\n}\n'],
    ['{\n  "x": 1\n}\n', ['x'], 2, '{\n  "x": 2\n}\n'],
  ])('%j, %j = %j', (text, path, value, expected) => expect(setAt(text, path, value)).toBe(expected));

  it.each<[string, string[], string]>([
    ['[]', ['a'], 'the file is not an object'],
    ['{"a": 1}', ['a', 'b'], 'a is not an object'],
    ['{"a": {"b": []}}', ['a', 'b', 'c'], 'a.b is not an object'],
  ])('%j, %j: %s', (text, path, message) => expect(error(() => setAt(text, path, 1))).toBe(message));
});

describe('appendAt', () => {
  it.each<[string, string[], unknown, string]>([
    ['{}', ['a'], 1, '{\n  "a": [\n    1\n  ]\n}'],
    ['{"a": []}', ['a'], 1, '{"a": [\n  1\n]}'],
    ['{\n  "a": [\n    1\n  ]\n}\n', ['a'], { b: 2 }, '{\n  "a": [\n    1,\n    {\n      "b": 2\n    }\n  ]\n}\n'],
    ['{\n  "a": [\n    1,\n  ]\n}\n', ['a'], 2, '{\n  "a": [\n    1,\n    2,\n  ]\n}\n'],
  ])('%j, %j += %j', (text, path, value, expected) => expect(appendAt(text, path, value)).toBe(expected));

  it('refuses what is not an array', () => expect(error(() => appendAt('{"a": {}}', ['a'], 1))).toBe('a is not an array'));
});

describe('removeMember', () => {
  it.each<[string, string[], string, string]>([
    ['{"a": 1}', [], 'a', '{}'],
    ['{\n  "a": 1\n}\n', [], 'a', '{}\n'],
    ['{\n  "a": 1,\n}\n', [], 'a', '{}\n'],
    ['{ /* c */ "a": 1}', [], 'a', '{ /* c */ }'],
    ['{"a": 1 /* c */}', [], 'a', '{ /* c */}'],
    // On one line the space after the comma stays (setup puts its entries on lines of their own).
    ['{"a": 1, "b": 2}', [], 'a', '{ "b": 2}'],
    ['{\n  "a": 1,\n  "b": 2\n}\n', [], 'a', '{\n  "b": 2\n}\n'],
    ['{\n  "a": 1, // one\n  "b": 2\n}\n', [], 'a', '{ // one\n  "b": 2\n}\n'],
    ['{\n  "a": 1,\r\n  "b": 2\r\n}\r\n', [], 'b', '{\n  "a": 1\r\n}\r\n'],
    ['{\r\n  "a": 1,\r\n  "b": 2,\r\n  "c": 3\r\n}\r\n', [], 'b', '{\r\n  "a": 1,\r\n  "c": 3\r\n}\r\n'],
    ['{"a": 1, "b": 2}', [], 'b', '{"a": 1}'],
    ['{\n  "a": 1,\n  "b": 2,\n}\n', [], 'b', '{\n  "a": 1,\n}\n'],
    ['{\n  "a": 1, // one\n  "b": 2\n}\n', [], 'b', '{\n  "a": 1 // one\n}\n'],
    ['{\n  "a": 1, /* one */ "b": 2\n}\n', [], 'b', '{\n  "a": 1 /* one */\n}\n'],
    ['{"a": 1, "b": 2, "c": 3}', [], 'b', '{"a": 1, "c": 3}'],
    ['{"x": {"a": 1, "b": 2}}', ['x'], 'a', '{"x": { "b": 2}}'],
    ['{"x": {"a": 1}}', ['x'], 'b', '{"x": {"a": 1}}'],
    ['{"x": [1]}', ['x'], 'a', '{"x": [1]}'],
    ['', [], 'a', ''],
  ])('%j, %j: without %s', (text, path, key, expected) => expect(removeMember(text, path, key)).toBe(expected));
});

describe('removeItems', () => {
  const isTwo = (v: unknown) => v === 2;
  it.each<[string, string]>([
    ['[2]', '[]'],
    ['[1, 2]', '[1]'],
    ['[2, 1]', '[ 1]'],
    ['[2, 1, 2, 2, 3, 2]', '[ 1, 3]'],
    ['[\n  1,\n  2,\n  3\n]\n', '[\n  1,\n  3\n]\n'],
    ['[\n  2,\n  2\n]', '[]'],
    ['[1, 3]', '[1, 3]'],
    ['{}', '{}'],
  ])('%j', (text, expected) => expect(removeItems(text, text.startsWith('{') ? ['a'] : [], isTwo)).toBe(expected));
});
