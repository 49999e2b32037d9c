// Edits JSON (and JSON with comments and trailing commas, as Gemini CLI's
// settings allow) as text: a member or an array item is inserted or taken
// out where it belongs, and every other byte of the user's file (comments,
// order, spacing) stays as it was. The parser keeps each value's offsets.

import { InputError } from '../../shared/errors';

export type JsonNode =
  | { kind: 'object'; start: number; end: number; members: JsonMember[] }
  | { kind: 'array'; start: number; end: number; items: JsonNode[] }
  | { kind: 'scalar'; start: number; end: number; value: unknown };

export interface JsonMember {
  key: string;
  keyStart: number;
  value: JsonNode;
}

/** A config file that is not JSON (with comments): bad input, said with where. */
export class JsonTextError extends InputError {
  override name = 'JsonTextError';
}

/** Offset of the next character that is not whitespace or a comment. */
function skip(text: string, at: number): number {
  let i = at;
  for (;;) {
    while (i < text.length && /\s/.test(text[i]!)) i++;
    if (text.startsWith('//', i)) {
      const end = text.indexOf('\n', i);
      i = end < 0 ? text.length : end + 1;
    } else if (text.startsWith('/*', i)) {
      const end = text.indexOf('*/', i + 2);
      if (end < 0) throw new JsonTextError('an unclosed /* comment');
      i = end + 2;
    } else return i;
  }
}

function lineOf(text: string, at: number): number {
  let line = 1;
  for (let i = 0; i < at && i < text.length; i++) if (text[i] === '\n') line++;
  return line;
}

function parseString(text: string, at: number): { value: string; end: number } {
  let i = at + 1;
  while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
  if (i >= text.length) throw new JsonTextError(`an unclosed string on line ${lineOf(text, at)}`);
  return { value: JSON.parse(text.slice(at, i + 1)) as string, end: i + 1 };
}

function parseValue(text: string, at: number): JsonNode {
  const i = skip(text, at);
  const c = text[i];
  if (c === '{') {
    const members: JsonMember[] = [];
    let j = skip(text, i + 1);
    while (text[j] !== '}') {
      if (text[j] !== '"') throw new JsonTextError(`a key was expected on line ${lineOf(text, j)}`);
      const key = parseString(text, j);
      const colon = skip(text, key.end);
      if (text[colon] !== ':') throw new JsonTextError(`":" was expected on line ${lineOf(text, colon)}`);
      const value = parseValue(text, colon + 1);
      members.push({ key: key.value, keyStart: j, value });
      j = skip(text, value.end);
      if (text[j] === ',') j = skip(text, j + 1);
      else if (text[j] !== '}') throw new JsonTextError(`"," or "}" was expected on line ${lineOf(text, j)}`);
    }
    return { kind: 'object', start: i, end: j + 1, members };
  }
  if (c === '[') {
    const items: JsonNode[] = [];
    let j = skip(text, i + 1);
    while (text[j] !== ']') {
      const item = parseValue(text, j);
      items.push(item);
      j = skip(text, item.end);
      if (text[j] === ',') j = skip(text, j + 1);
      else if (text[j] !== ']') throw new JsonTextError(`"," or "]" was expected on line ${lineOf(text, j)}`);
    }
    return { kind: 'array', start: i, end: j + 1, items };
  }
  if (c === '"') {
    const s = parseString(text, i);
    return { kind: 'scalar', start: i, end: s.end, value: s.value };
  }
  const m = /^(-?\d+(\.\d+)?([eE][+-]?\d+)?|true|false|null)/.exec(text.slice(i, i + 64));
  if (!m) throw new JsonTextError(`a value was expected on line ${lineOf(text, i)}`);
  return { kind: 'scalar', start: i, end: i + m[0].length, value: JSON.parse(m[0]) };
}

/** The document's root value (an empty or blank file is null). */
export function parseJsonc(text: string): JsonNode | null {
  if (skip(text, 0) >= text.length) return null;
  const root = parseValue(text, 0);
  if (skip(text, root.end) < text.length) throw new JsonTextError(`unexpected text after the end on line ${lineOf(text, skip(text, root.end))}`);
  return root;
}

/** The plain value of a node. */
export function valueOf(text: string, node: JsonNode): unknown {
  if (node.kind === 'scalar') return node.value;
  if (node.kind === 'array') return node.items.map((item) => valueOf(text, item));
  return Object.fromEntries(node.members.map((m) => [m.key, valueOf(text, m.value)]));
}

export function member(node: JsonNode | null | undefined, key: string): JsonMember | undefined {
  return node?.kind === 'object' ? node.members.find((m) => m.key === key) : undefined;
}

/** The node at a path of keys, or undefined. */
export function nodeAt(root: JsonNode | null, path: string[]): JsonNode | undefined {
  let node: JsonNode | undefined = root ?? undefined;
  for (const key of path) node = member(node, key)?.value;
  return node;
}

/** The indentation unit the file uses (the first indented key), else two spaces. */
function indentUnit(text: string): string {
  return /\n([ \t]+)["/\]}]/.exec(text)?.[1] ?? '  ';
}

function lineIndent(text: string, at: number): string {
  const lineStart = text.lastIndexOf('\n', at - 1) + 1;
  return /^[ \t]*/.exec(text.slice(lineStart))![0];
}

function format(value: unknown, unit: string, indent: string): string {
  return JSON.stringify(value, null, unit).replace(/\n/g, `\n${indent}`);
}

function splice(text: string, start: number, end: number, insert: string): string {
  return text.slice(0, start) + insert + text.slice(end);
}

/** Inserts an entry (member text or item text) as the last one of a container node. */
function insertLast(text: string, container: JsonNode & { kind: 'object' | 'array' }, entry: (indent: string, unit: string) => string): string {
  const unit = indentUnit(text);
  const indent = lineIndent(text, container.start) + unit;
  const entries = container.kind === 'object' ? container.members.map((m) => m.value) : container.items;
  const last = entries[entries.length - 1];
  const body = entry(indent, unit);
  if (last === undefined) {
    const inner = text.slice(container.start + 1, container.end - 1);
    if (inner.trim() === '') return splice(text, container.start + 1, container.end - 1, `\n${indent}${body}\n${lineIndent(text, container.start)}`);
    return splice(text, container.start + 1, container.start + 1, `\n${indent}${body},`);
  }
  const after = skip(text, last.end);
  if (text[after] === ',') return splice(text, after + 1, after + 1, `\n${indent}${body},`);
  return splice(text, last.end, last.end, `,\n${indent}${body}`);
}

/** Sets path to value: replaces it where it is, or adds what is missing as the last member of its object. */
export function setAt(text: string, path: string[], value: unknown): string {
  const root = parseJsonc(text);
  if (root === null) {
    let nested: unknown = value;
    for (const key of [...path].reverse()) nested = { [key]: nested };
    return `${JSON.stringify(nested, null, 2)}\n`;
  }
  let node: JsonNode = root;
  for (let depth = 0; depth < path.length; depth++) {
    if (node.kind !== 'object') throw new JsonTextError(`${path.slice(0, depth).join('.') || 'the file'} is not an object`);
    const found = member(node, path[depth]!);
    if (found === undefined) {
      let nested: unknown = value;
      for (const key of path.slice(depth + 1).reverse()) nested = { [key]: nested };
      return insertLast(text, node, (indent, unit) => `${JSON.stringify(path[depth])}: ${format(nested, unit, indent)}`);
    }
    node = found.value;
  }
  const unit = indentUnit(text);
  return splice(text, node.start, node.end, format(value, unit, lineIndent(text, node.start)));
}

/** Appends value to the array at path (made when missing). */
export function appendAt(text: string, path: string[], value: unknown): string {
  const node = nodeAt(parseJsonc(text), path);
  if (node === undefined) return setAt(text, path, [value]);
  if (node.kind !== 'array') throw new JsonTextError(`${path.join('.')} is not an array`);
  return insertLast(text, node, (indent, unit) => format(value, unit, indent));
}

/** Takes one entry out of a container: its text, its comma, and the line it stood on. */
function removeEntry(text: string, container: JsonNode & { kind: 'object' | 'array' }, index: number): string {
  const entries = container.kind === 'object' ? container.members.map((m) => ({ start: m.keyStart, end: m.value.end })) : container.items.map((n) => ({ start: n.start, end: n.end }));
  const entry = entries[index]!;
  if (entries.length === 1) {
    const after = skip(text, entry.end);
    const end = text[after] === ',' ? after + 1 : entry.end;
    const inner = text.slice(container.start + 1, container.end - 1);
    if (inner.slice(0, entry.start - container.start - 1).trim() === '' && text.slice(end, container.end - 1).trim() === '') return splice(text, container.start + 1, container.end - 1, '');
    return splice(text, entry.start, end, '');
  }
  if (index < entries.length - 1) {
    // Up to the next entry's own line: "\n  a: 1," goes, "\n  b" stays.
    let start = entry.start;
    while (start > 0 && /[ \t]/.test(text[start - 1]!)) start--;
    if (text[start - 1] === '\n') start--;
    if (text[start - 1] === '\r') start--;
    const comma = skip(text, entry.end);
    let end = comma + 1;
    while (end < text.length && /[ \t]/.test(text[end]!)) end++;
    if (text[end] !== '\n') end = comma + 1;
    return splice(text, start, end, '');
  }
  // The last entry: from the comma after the one before it.
  const previous = entries[index - 1]!;
  const comma = skip(text, previous.end);
  const after = skip(text, entry.end);
  // With a trailing comma of its own, the one before it stays (the list keeps its trailing comma).
  if (text[after] === ',') {
    let start = entry.start;
    while (start > comma + 1 && /\s/.test(text[start - 1]!)) start--;
    return splice(text, start, after + 1, '');
  }
  // A comment between that comma and the entry is the user's: the comma goes, and the entry from its own line.
  if (text.slice(comma + 1, entry.start).trim() !== '') {
    let start = entry.start;
    while (/[ \t]/.test(text[start - 1]!)) start--;
    if (text[start - 1] === '\n') start--;
    if (text[start - 1] === '\r') start--;
    return splice(splice(text, start, entry.end, ''), comma, comma + 1, '');
  }
  return splice(text, comma, entry.end, '');
}

/** Removes the member key of the object at path; unchanged when it is not there. */
export function removeMember(text: string, path: string[], key: string): string {
  const node = nodeAt(parseJsonc(text), path);
  if (node?.kind !== 'object') return text;
  const index = node.members.findIndex((m) => m.key === key);
  return index < 0 ? text : removeEntry(text, node, index);
}

/** Removes the items of the array at path for which keep is false, last first. */
export function removeItems(text: string, path: string[], drop: (value: unknown) => boolean): string {
  let current = text;
  for (;;) {
    const node = nodeAt(parseJsonc(current), path);
    if (node?.kind !== 'array') return current;
    let index = -1;
    for (let i = node.items.length - 1; i >= 0 && index < 0; i--) if (drop(valueOf(current, node.items[i]!))) index = i;
    if (index < 0) return current;
    current = removeEntry(current, node, index);
  }
}

/** The comments of JSONC text (outside strings), each trimmed: part of what a user wrote, which the value does not hold. */
export function commentsOf(text: string): string[] {
  const comments: string[] = [];
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '"') {
      for (i++; i < text.length && text[i] !== '"'; i += text[i] === '\\' ? 2 : 1);
    } else if (text.startsWith('//', i)) {
      const end = text.indexOf('\n', i);
      comments.push(text.slice(i, end < 0 ? text.length : end).trimEnd());
      i = end < 0 ? text.length : end;
    } else if (text.startsWith('/*', i)) {
      const end = text.indexOf('*/', i + 2);
      comments.push(text.slice(i, end < 0 ? text.length : end + 2).trim());
      i = end < 0 ? text.length : end + 1;
    }
  }
  return comments;
}

/** Whether two JSONC texts hold the same value (key order included) and the same comments, layout aside. */
export function sameJsonc(a: string, b: string): boolean {
  try {
    const value = (text: string) => {
      const root = parseJsonc(text);
      return root === null ? null : valueOf(text, root);
    };
    return JSON.stringify(value(a)) === JSON.stringify(value(b)) && JSON.stringify(commentsOf(a)) === JSON.stringify(commentsOf(b));
  } catch {
    return false;
  }
}
