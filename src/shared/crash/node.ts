// Node's report of an uncaught error: where it was thrown (file:line, the
// source line and a caret), the error's name and message, its stack (`at`
// lines, innermost first), its own properties in braces (a [cause] nested
// there, indented deeper), then "Node.js vN". A value thrown that is no Error
// has no stack: only the place, the value, and a hint to --trace-uncaught.

import type { Found, FoundFrame, LanguageScan } from './report';

const AT = /^(\s+)at (.+)$/;
const CARET = /^\s*\^+\s*$/;
const PLACE = /^(.+):(\d+)$/;
/** "TypeError: ...", "Error [ERR_MODULE_NOT_FOUND]: ...", "AggregateError: ..." */
const NAMED = /^(?:Uncaught )?[A-Z][\w$.]*(?: \[[\w$]+\])?:(?: |$)/;
const NOT_AN_ERROR_HINT = /^\(Use `node --trace-uncaught \.\.\.` to show where the exception was thrown\)$/;
const ELIDED = /^\s+\.\.\. \d+ lines? matching cause stack trace \.\.\.$/;

/** Node's own modules, installed packages and engine built-ins are not the user's code; [eval] (node -e) is. */
export function isNodeUserFile(file: string): boolean {
  return !/^node:|^internal\/|\/node_modules\/|^<anonymous>$|^native$|^\[eval\]-wrapper$|^evalmachine\.<anonymous>$/.test(file);
}

/** "readConfig (/tmp/crash.js:4:24)", "file:///tmp/a.mjs:2:1", "async main (/x.js:3:5)", "JSON.parse (<anonymous>)". */
export function parseNodeFrame(text: string, at: number): FoundFrame | null {
  const body = text.replace(/^async /, '');
  const wrapped = /^(.*?) \((.+)\)$/.exec(body);
  const fn = wrapped ? wrapped[1]! : undefined;
  const location = wrapped ? wrapped[2]! : body;
  const m = /^(.+?):(\d+):(\d+)$/.exec(location);
  if (!m) return null;
  const file = m[1]!;
  return { file, line: Number(m[2]), column: Number(m[3]), ...(fn !== undefined ? { fn: fn.replace(/^new /, '') } : {}), at, user: isNodeUserFile(file) };
}

/** What follows "at " in a stack: a place, or a built-in's (JSON.parse (<anonymous>)). */
function isFrameText(text: string): boolean {
  const body = text.replace(/ \{$/, '');
  return parseNodeFrame(body, 0) !== null || / \((?:<anonymous>|native|index \d+)\)$/.test(body);
}

/** The header above the error (file:line, source, caret, blank) ending just before line `errorAt`, or null. */
function headerBefore(lines: readonly string[], errorAt: number): { at: number; file: string; line: number } | null {
  const caret = lines[errorAt - 1] === '' ? errorAt - 2 : errorAt - 1;
  if (caret < 2 || !CARET.test(lines[caret]!)) return null;
  const m = PLACE.exec(lines[caret - 2]!);
  return m ? { at: caret - 2, file: m[1]!, line: Number(m[2]) } : null;
}

/** The stack starting at line `k`: the error above it, its frames, its braces. */
function stack(lines: readonly string[], k: number, indent: string): Found {
  let top = k;
  while (top > 0 && lines[top - 1] !== '' && !AT.test(lines[top - 1]!)) top--;
  let errorAt = top;
  for (let i = top; i < k; i++) {
    if (NAMED.test(lines[i]!)) {
      errorAt = i;
      break;
    }
  }
  if (errorAt === k) errorAt = Math.max(0, k - 1);
  const frames: FoundFrame[] = [];
  let end = k;
  for (let j = k; j < lines.length; j++) {
    const line = lines[j]!;
    const m = AT.exec(line);
    if (m && m[1] === indent && isFrameText(m[2]!)) {
      const frame = parseNodeFrame(m[2]!.replace(/ \{$/, ''), j);
      if (frame) frames.unshift(frame);
      end = j;
      continue;
    }
    if (ELIDED.test(line)) {
      end = j;
      continue;
    }
    break;
  }
  // The error's own properties: from the brace after the last frame to the one that closes it at the margin.
  if (lines[end]!.endsWith(' {')) {
    for (let j = end + 1; j < lines.length; j++) {
      if (lines[j] === '}') {
        end = j;
        break;
      }
    }
  }
  const header = headerBefore(lines, top);
  const start = header?.at ?? top;
  // Thrown from the user's code but no frame of it left (a callback of Node's own): the header's place.
  if (header && !frames.some((f) => f.user) && isNodeUserFile(header.file)) frames.push({ file: header.file, line: header.line, at: header.at, sourceAt: header.at + 1, user: true });
  return { report: { language: 'node', how: 'threw', error: lines[errorAt]!.replace(/^Uncaught /, ''), errorAt, frames }, start, end };
}

/** A thrown value that is no Error: its place, the value, Node's hint. */
function thrownValue(lines: readonly string[], hint: number): Found | null {
  for (let c = hint - 1; c >= Math.max(2, hint - 20); c--) {
    if (!CARET.test(lines[c]!)) continue;
    const m = PLACE.exec(lines[c - 2]!);
    if (!m || c + 1 >= hint) return null;
    const file = m[1]!;
    const frame: FoundFrame = { file, line: Number(m[2]), at: c - 2, sourceAt: c - 1, user: isNodeUserFile(file) };
    return { report: { language: 'node', how: 'threw', error: lines[c + 1]!, errorAt: c + 1, frames: [frame] }, start: c - 2, end: hint };
  }
  return null;
}

export const scanNode: LanguageScan = (lines) => {
  let last: Found | null = null;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const m = AT.exec(line);
    let found: Found | null = null;
    // Node indents an uncaught error's stack by four spaces (a [cause]'s by more, a Rust backtrace's "at" lines by thirteen).
    if (m && m[1] === '    ' && i > 0 && !AT.test(lines[i - 1]!) && lines[i - 1] !== '' && isFrameText(m[2]!)) found = stack(lines, i, m[1]!);
    else if (NOT_AN_ERROR_HINT.test(line)) found = thrownValue(lines, i);
    if (found) {
      last = found;
      i = found.end;
    }
  }
  return last;
};
