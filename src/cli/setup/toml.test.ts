// Table tests of the text helpers setup edits configs with (toml.ts, and the comment-aware comparisons of jsonc.ts).

import { describe, expect, it } from 'vitest';
import { commentsOf, sameJsonc } from './jsonc';
import { addInline, canonical, inlineEntries, inlineServers, removeInline, sameToml, tomlComments } from './toml';

describe('tomlComments', () => {
  it.each([
    ['a line comment', 'a = 1 # one\n', ['# one']],
    ['a # inside a basic string is not one', 'a = "x # y" # z\n', ['# z']],
    ['a # inside a literal string is not one', "a = 'x # y'\n", []],
    ['an escaped quote does not end the string', 'a = "x \\" # y"\n', []],
    ['a multi-line string holds its #', 'a = """\n# not a comment\n"""\n# yes\n', ['# yes']],
    ['trailing spaces are not part of it', '# x   \n', ['# x']],
    ['the last line without a newline', 'a = 1\n# end', ['# end']],
  ])('%s', (_name, text, comments) => expect(tomlComments(text)).toEqual(comments));
});

describe('sameToml and sameJsonc', () => {
  it.each([
    ['spacing outside strings', 'a = 1\n', 'a   =   1\n\n', true],
    ['spacing inside a string', 'a = "x y"\n', 'a = "x  y"\n', false],
    ['a changed comment', 'a = 1 # x\n', 'a = 1 # y\n', false],
    ['key order in a table', 'a = 1\nb = 2\n', 'b = 2\na = 1\n', true],
    ['not TOML', 'a = \n', 'a = \n', false],
  ])('TOML: %s', (_name, a, b, same) => expect(sameToml(a, b)).toBe(same));
  it.each([
    ['spacing outside strings', '{"a": 1}', '{\n  "a":   1\n}\n', true],
    ['spacing inside a string', '{"a": "x y"}', '{"a": "x  y"}', false],
    ['a changed comment', '{"a": 1 // x\n}', '{"a": 1 // y\n}', false],
    ['a trailing comma', '{"a": 1}', '{"a": 1,}', true],
    ['key order', '{"a": 1, "b": 2}', '{"b": 2, "a": 1}', false],
    ['not JSON', '{"a": ', '{"a": ', false],
  ])('JSONC: %s', (_name, a, b, same) => expect(sameJsonc(a, b)).toBe(same));
  it.each([
    ['line and block comments', '{ // a\n "x": "// not" /* b */ }', ['// a', '/* b */']],
    ['an escaped quote in a string', '{"x": "\\" // no"}', []],
  ])('commentsOf: %s', (_name, text, comments) => expect(commentsOf(text)).toEqual(comments));
});

describe('the inline mcp_servers table', () => {
  it.each([
    ['at the root', 'mcp_servers = { a = 1 }\n', ' a = 1 '],
    ['quoted key', '"mcp_servers" = {}\n', ''],
    ['after a comment and a key', '# c\nmodel = "x"\nmcp_servers = { a = { b = "}" } }\n', ' a = { b = "}" } '],
    ['only at the root: none under a [table]', '[t]\nmcp_servers = { a = 1 }\n', null],
    ['a [mcp_servers] table is not inline', '[mcp_servers]\na = 1\n', null],
    ['dotted keys are not inline', 'mcp_servers.a.b = 1\n', null],
    ['a key that only starts the same', 'mcp_servers_x = { a = 1 }\n', null],
  ])('inlineServers: %s', (_name, text, inside) => {
    const range = inlineServers(text);
    expect(range === null ? null : text.slice(range.open, range.close)).toBe(inside);
  });
  it.each([
    ['one', '{ a = 1 }', ['a']],
    ['nested commas stay inside', '{ a = [1, 2], b = { c = 1, d = 2 }, "e" = "x,y" }', ['a', 'b', 'e']],
    ['empty', '{}', []],
  ])('inlineEntries: %s', (_name, text, keys) => expect(inlineEntries(text, 1, text.length - 1).map((e) => e.key)).toEqual(keys));
  it.each([
    ['into an empty one', 'm = {}', 'm = { w = 1 }'],
    ['after the last', 'm = { a = 1 }', 'm = { a = 1, w = 1 }'],
    ['after the last, no spaces', 'm = {a = 1}', 'm = {a = 1, w = 1 }'],
  ])('addInline: %s', (_name, text, out) => expect(addInline(text, { open: text.indexOf('{') + 1, close: text.lastIndexOf('}') }, 'w = 1')).toBe(out));
  it.each([
    ['the only one', 'm = { w = 1 }', 'm = {}'],
    ['the last', 'm = { a = 1, w = 1 }', 'm = { a = 1 }'],
    ['the first', 'm = { w = 1, a = 1 }', 'm = { a = 1 }'],
    ['a middle one', 'm = { a = 1, w = { x = [1, 2] }, b = 2 }', 'm = { a = 1, b = 2 }'],
    ['not there', 'm = { a = 1 }', 'm = { a = 1 }'],
  ])('removeInline: %s', (_name, text, out) => expect(removeInline(text, { open: text.indexOf('{') + 1, close: text.lastIndexOf('}') }, 'w')).toBe(out));
});

describe('canonical', () => {
  it.each([
    ['key order does not matter', { a: 1, b: { d: 1, c: 2 } }, { b: { c: 2, d: 1 }, a: 1 }, true],
    ['array order does', [1, 2], [2, 1], false],
    ['values do', { a: 1 }, { a: 2 }, false],
  ])('%s', (_name, a, b, same) => expect(canonical(a) === canonical(b)).toBe(same));
});
