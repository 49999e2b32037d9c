// The plain parts of a search that the host works out before and between
// scans: where a stream's kept text leaves characters out, which stretch of
// it one scan takes (whole lines, with the context lines around it), and the
// cursor that carries a search from one call to the next.

import { InputError } from '../../../shared/errors';
import { MAX_CONTEXT, MAX_PATTERN_CHARS, type SearchStream } from '../../../shared/search';
import { droppedMarker } from '../../../shared/stream-length';
import { keptMarkerAt } from '../../supervisor/output';

/** Where a kept text leaves `dropped` characters out: the marker's [start, end), start being the line break before it. */
export function gapIn(text: string, dropped: number): { start: number; end: number } | null {
  const start = keptMarkerAt(text, dropped);
  return start < 0 ? null : { start, end: start + droppedMarker(dropped).length };
}

/** The start of the line holding `at` (a line start itself when text[at - 1] is a line break). */
function lineStartOf(text: string, at: number): number {
  return at <= 0 ? 0 : text.lastIndexOf('\n', at - 1) + 1;
}

/**
 * The stretch one scan takes from `from` (a line start): about `budget`
 * characters, ended at the next line start (or the text's end), and the
 * region around it holding `context` lines before and after.
 */
export function regionFor(text: string, from: number, budget: number, context: number): { base: number; scanFrom: number; scanTo: number; end: number } {
  let scanTo = text.length;
  if (from + budget < text.length) {
    const lineEnd = text.indexOf('\n', Math.max(from, from + budget - 1));
    scanTo = lineEnd < 0 ? text.length : lineEnd + 1;
  }
  let base = from;
  for (let i = 0; i < context && base > 0; i++) base = lineStartOf(text, base - 1);
  let end = scanTo;
  for (let i = 0; i < context && end < text.length; i++) {
    const lineEnd = text.indexOf('\n', end);
    end = lineEnd < 0 ? text.length : lineEnd + 1;
  }
  return { base, scanFrom: from, scanTo, end };
}

/** What a search is, as a cursor carries it. */
export interface SearchSpec {
  pattern: string;
  literal: boolean;
  ignoreCase: boolean;
  stream: SearchStream;
  context: number;
}

/**
 * Where a search goes on: the runs it looks in (newest first), the index of
 * the run it is in, and per stream of that run the offset (a line start of
 * the kept text) and that line's number. The runs after it start at 0.
 */
export interface SearchCursor {
  spec: SearchSpec;
  runs: string[];
  /** A search of one run (id given): its cursor also continues in what a live run prints next. */
  single: boolean;
  index: number;
  at: { stdout: [number, number]; stderr: [number, number] };
}

const CURSOR_VERSION = 1;

export function encodeCursor(cursor: SearchCursor): string {
  const { spec, runs, single, index, at } = cursor;
  const flags = (spec.literal ? 1 : 0) | (spec.ignoreCase ? 2 : 0) | (single ? 4 : 0);
  const packed = [CURSOR_VERSION, spec.pattern, flags, spec.stream, spec.context, runs, index, at.stdout, at.stderr];
  return Buffer.from(JSON.stringify(packed), 'utf8').toString('base64url');
}

const BAD_CURSOR = 'cursor is not one a search answered: pass it back exactly as an answer gave it (it holds the search), or search again without it.';

/** A cursor an answer gave, read back; anything else is one line of bad input. */
export function decodeCursor(text: string): SearchCursor {
  let packed: unknown;
  try {
    if (!/^[A-Za-z0-9_-]{1,16384}$/.test(text)) throw new Error('not base64url');
    packed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw new InputError(BAD_CURSOR);
  }
  const whole = (n: unknown, min = 0): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= min;
  const place = (p: unknown): p is [number, number] => Array.isArray(p) && p.length === 2 && whole(p[0]) && whole(p[1], 1);
  if (!Array.isArray(packed) || packed.length !== 9) throw new InputError(BAD_CURSOR);
  const [version, pattern, flags, stream, context, runs, index, stdout, stderr] = packed as unknown[];
  const ok =
    version === CURSOR_VERSION &&
    typeof pattern === 'string' &&
    pattern.length > 0 &&
    pattern.length <= MAX_PATTERN_CHARS &&
    whole(flags) &&
    flags < 8 &&
    (stream === 'stdout' || stream === 'stderr' || stream === 'both') &&
    whole(context) &&
    context <= MAX_CONTEXT &&
    Array.isArray(runs) &&
    runs.length > 0 &&
    runs.length <= 1000 &&
    runs.every((id) => typeof id === 'string' && /^[0-9a-f]{6,32}$/.test(id)) &&
    whole(index) &&
    index < runs.length &&
    place(stdout) &&
    place(stderr);
  if (!ok) throw new InputError(BAD_CURSOR);
  return {
    spec: { pattern: pattern as string, literal: ((flags as number) & 1) !== 0, ignoreCase: ((flags as number) & 2) !== 0, stream: stream as SearchStream, context: context as number },
    runs: runs as string[],
    single: ((flags as number) & 4) !== 0,
    index: index as number,
    at: { stdout: stdout as [number, number], stderr: stderr as [number, number] },
  };
}
