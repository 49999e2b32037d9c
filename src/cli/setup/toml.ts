// Codex's config.toml, for `warden setup codex`: Warden's server is added
// as text (a marked block appended, or one entry in an inline
// `mcp_servers = { ... }` table, which no [table] may extend), so every
// byte the user had stays; and every result is parsed again (smol-toml, a
// maintained TOML 1.0 parser) and must hold exactly what the user had plus
// or minus Warden's entry, else nothing is written.

import { parse, TomlError } from 'smol-toml';
import { UsageError } from '../parse';

export const TOML_BEGIN = '# warden setup: begin (warden setup codex --remove takes this block out)';
export const TOML_END = '# warden setup: end';

type Table = Record<string, unknown>;

/** The parsed file; a file that is not TOML is one line naming where. */
export function parseToml(text: string, shown: string): Table {
  try {
    return parse(text) as Table;
  } catch (error) {
    const where = error instanceof TomlError ? `line ${error.line}: ${error.message.split('\n')[0]}` : String(error);
    throw new UsageError(`${shown} is not valid TOML (${where}); nothing was changed.`);
  }
}

/** A value as text with object keys sorted: two values are the same content when these are equal. */
export function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v) || v instanceof Date) return v;
    return Object.fromEntries(Object.keys(v as Table).sort().map((k) => [k, (v as Table)[k]]));
  });
}

/** Where a string, comment or bracket of TOML text starts and ends, for the scanners below. */
function skipString(text: string, at: number): number {
  const quote = text[at]!;
  const triple = text.startsWith(quote.repeat(3), at);
  if (triple) {
    const end = text.indexOf(quote.repeat(3), at + 3);
    if (end < 0) return text.length;
    let close = end + 3;
    while (text[close] === quote && close < end + 5) close++; // up to two quotes may end the content
    return close;
  }
  for (let i = at + 1; i < text.length; i++) {
    if (quote === '"' && text[i] === '\\') i++;
    else if (text[i] === quote || text[i] === '\n') return i + 1;
  }
  return text.length;
}

/** The comments of TOML text (outside strings), each trimmed: part of what a user wrote, though no parser returns them. */
export function tomlComments(text: string): string[] {
  const comments: string[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"' || c === "'") i = skipString(text, i) - 1;
    else if (c === '#') {
      const end = text.indexOf('\n', i);
      comments.push(text.slice(i, end < 0 ? text.length : end).trimEnd());
      i = end < 0 ? text.length : end;
    }
  }
  return comments;
}

/** Whether two TOML texts hold the same content and the same comments (layout aside). */
export function sameToml(a: string, b: string): boolean {
  try {
    return canonical(parse(a)) === canonical(parse(b)) && canonical(tomlComments(a)) === canonical(tomlComments(b));
  } catch {
    return false;
  }
}

/** The marked block in the text, with the newline after its end line. */
export function blockRange(text: string): { start: number; end: number } | null {
  const start = text.indexOf(TOML_BEGIN);
  if (start < 0) return null;
  const endMark = text.indexOf(TOML_END, start);
  if (endMark < 0) throw new UsageError(`the Warden block in the Codex config has no end line (${TOML_END}); fix it by hand.`);
  let end = endMark + TOML_END.length;
  if (text[end] === '\n') end++;
  return { start, end };
}

/** The inline `mcp_servers = { ... }` of the root table: the offsets just inside its braces. */
export function inlineServers(text: string): { open: number; close: number } | null {
  for (let i = 0, lineStart = true; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\n') {
      lineStart = true;
      continue;
    }
    if (lineStart && /\s/.test(c)) continue;
    if (lineStart && c === '[') return null; // the first table header: past the root table
    if (lineStart) {
      const head = /^(?:mcp_servers|"mcp_servers"|'mcp_servers')\s*=\s*\{/.exec(text.slice(i));
      if (head) {
        const open = i + head[0].length;
        const close = matchingBrace(text, open);
        return close < 0 ? null : { open, close };
      }
    }
    lineStart = false;
    if (c === '"' || c === "'") i = skipString(text, i) - 1;
    else if (c === '#') i = Math.max(i, text.indexOf('\n', i) - 1);
    if (i < 0) return null;
  }
  return null;
}

/** The offset of the `}` closing the inline table whose content starts at `from`; -1 when none. */
function matchingBrace(text: string, from: number): number {
  let depth = 0;
  for (let i = from; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"' || c === "'") i = skipString(text, i) - 1;
    else if (c === '{' || c === '[') depth++;
    else if (c === ']') depth--;
    else if (c === '}') {
      if (depth === 0) return i;
      depth--;
    }
  }
  return -1;
}

/** The entries of an inline table's content (between its braces) as offsets, split at its own commas. */
export function inlineEntries(text: string, open: number, close: number): { start: number; end: number; key: string }[] {
  const entries: { start: number; end: number; key: string }[] = [];
  let depth = 0;
  let start = open;
  const push = (end: number) => {
    const body = text.slice(start, end);
    if (body.trim() === '') return;
    const key = body.slice(0, body.indexOf('=')).trim().replace(/^(["'])(.*)\1$/, '$2');
    entries.push({ start, end, key });
  };
  for (let i = open; i < close; i++) {
    const c = text[i]!;
    if (c === '"' || c === "'") i = skipString(text, i) - 1;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
    else if (c === ',' && depth === 0) {
      push(i);
      start = i + 1;
    }
  }
  push(close);
  return entries;
}

/** `text` with `entry` (`key = value`) added as the last member of the inline table. */
export function addInline(text: string, range: { open: number; close: number }, entry: string): string {
  let last = range.close;
  while (last > range.open && /\s/.test(text[last - 1]!)) last--;
  return `${text.slice(0, last)}${last === range.open ? ' ' : ', '}${entry} ${text.slice(range.close)}`;
}

/** `text` without the inline table's member `key`, and the comma that went with it. */
export function removeInline(text: string, range: { open: number; close: number }, key: string): string {
  const entries = inlineEntries(text, range.open, range.close);
  const index = entries.findIndex((e) => e.key === key);
  if (index < 0) return text;
  if (entries.length === 1) return text.slice(0, range.open) + text.slice(range.close);
  // The last one goes with the comma before it, any other with the comma after it.
  if (index === entries.length - 1) {
    const entry = entries[index]!;
    const spaceBeforeBrace = /\s*$/.exec(text.slice(entry.start, entry.end))![0];
    return text.slice(0, entries[index - 1]!.end) + spaceBeforeBrace + text.slice(entry.end);
  }
  return text.slice(0, entries[index]!.start) + text.slice(entries[index + 1]!.start);
}
