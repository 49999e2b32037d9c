// A page of one stream of a run's output (GET /runs/ID/output, and the
// window's IPC op of the same name): the range [offset, offset + limit) of the
// text the run's result keeps, or the range from the start of a line (a link
// to line 150,000 asks for the page that holds it first), with the line the
// page starts on and the stream's line count. One function for both, so the
// browser and the desktop window page through the same characters.
//
// An ended run's kept text does not change: it is held here with its line
// starts for a while (a few runs, a bounded number of characters), so a view
// paging through 9.5 MB reads the history once, not once per page.

import type { WardenApi } from '../../shared/api';
import { InputError, WardenError } from '../../shared/errors';
import { OUTPUT_PAGE_DEFAULT_CHARS, OUTPUT_PAGE_MAX_CHARS, type OutputPage } from '../../shared/http-api';
import type { RunResult } from '../../shared/result';
import { lastAtOrBefore } from '../../shared/sorted';

/** A range as the host serves it: a stream, an offset or a line, a limit. */
export interface PageRange {
  stream: 'stdout' | 'stderr';
  offset: number;
  /** 1-based: the page starts at this line's start (the offset is then not read). */
  line?: number;
  limit: number;
}

/** Where each line of a text starts: 0, then after every newline that has something after it. */
export function lineStarts(text: string): Uint32Array {
  let n = text === '' ? 0 : 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < text.length - 1; i = text.indexOf('\n', i + 1)) n++;
  const starts = new Uint32Array(n);
  let k = 0;
  if (n > 0) starts[k++] = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < text.length - 1; i = text.indexOf('\n', i + 1)) starts[k++] = i + 1;
  return starts;
}

/** How many line starts are at or before `offset`: the 1-based line the character at `offset` is on (at least 1). */
export function lineAt(starts: Uint32Array, offset: number): number {
  return Math.max(1, lastAtOrBefore(starts, offset) + 1);
}

/** The page of `run` a range asks for: an offset (or a line) past the end gives an empty page at the end. */
export function pageOf(run: RunResult, range: PageRange, starts: Uint32Array = lineStarts(run[range.stream])): OutputPage {
  const all = run[range.stream];
  const from = range.line !== undefined ? (range.line <= starts.length ? starts[range.line - 1]! : all.length) : Math.min(range.offset, all.length);
  const text = all.slice(from, from + range.limit);
  return { id: run.id, stream: range.stream, offset: from, text, next: from + text.length, total: all.length, state: run.state, firstLine: lineAt(starts, from), lines: starts.length };
}

/** Ended runs' kept text and line starts, by the API that answered them: a few, a bounded size, a short while. */
interface Held {
  run: RunResult;
  starts: { stdout?: Uint32Array; stderr?: Uint32Array };
  usedAt: number;
}
const HELD_RUNS = 3;
const HELD_CHARS = 24_000_000;
const HELD_MS = 120_000;
const held = new WeakMap<WardenApi, Map<string, Held>>();
/** Runs being read for their first page: the pages asked at the same moment (a view asks several at once) wait for the one read. */
const reading = new WeakMap<WardenApi, Map<string, Promise<RunResult | null>>>();

function readOnce(api: WardenApi, id: string): Promise<RunResult | null> {
  let pending = reading.get(api);
  if (!pending) reading.set(api, (pending = new Map()));
  let read = pending.get(id);
  if (!read) {
    read = api.get(id).finally(() => pending.delete(id));
    pending.set(id, read);
  }
  return read;
}

function heldOf(api: WardenApi, id: string, now: number): Held | undefined {
  const runs = held.get(api);
  if (!runs) return undefined;
  for (const [key, entry] of runs) if (now - entry.usedAt > HELD_MS) runs.delete(key);
  const entry = runs.get(id);
  if (entry) {
    entry.usedAt = now;
    // Most recently used last: the first is the one to let go.
    runs.delete(id);
    runs.set(id, entry);
  }
  return entry;
}

function hold(api: WardenApi, run: RunResult, now: number): Held {
  let runs = held.get(api);
  if (!runs) held.set(api, (runs = new Map()));
  const entry: Held = { run, starts: {}, usedAt: now };
  runs.set(run.id, entry);
  let chars = 0;
  for (const e of runs.values()) chars += e.run.stdout.length + e.run.stderr.length;
  for (const [key, e] of runs) {
    if (runs.size <= 1 || (runs.size <= HELD_RUNS && chars <= HELD_CHARS)) break;
    runs.delete(key);
    chars -= e.run.stdout.length + e.run.stderr.length;
  }
  return entry;
}

/**
 * A page through the API's own call when it has one (a remote's host, or the
 * host this window attached to: only the page crosses the link), else sliced
 * from the run the API answers (the engine in this process), an ended run's
 * text held a while for the pages after.
 */
export async function outputPage(api: WardenApi, id: string, range: PageRange): Promise<OutputPage> {
  if (api.output) return api.output(id, range);
  const now = Date.now();
  let entry = heldOf(api, id, now);
  if (!entry) {
    const run = await readOnce(api, id);
    if (!run) throw new WardenError('not-found', `No run with id ${JSON.stringify(id)}.`);
    if (run.state !== 'ended') return pageOf(run, range);
    entry = heldOf(api, id, now) ?? hold(api, run, now);
  }
  const starts = (entry.starts[range.stream] ??= lineStarts(entry.run[range.stream]));
  return pageOf(entry.run, range, starts);
}

/** A range as a caller gave it (the IPC op's argument), checked as the HTTP route checks its query: one-line errors. */
export function checkOutputRange(value: unknown): PageRange {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new InputError('A page of output takes { stream, offset?, line?, limit? }.');
  const { stream, offset, line, limit = OUTPUT_PAGE_DEFAULT_CHARS, ...rest } = value as Record<string, unknown>;
  const extra = Object.keys(rest)[0];
  if (extra !== undefined) throw new InputError(`A page of output takes stream, offset or line, and limit, not ${extra.slice(0, 40)}.`);
  if (stream !== 'stdout' && stream !== 'stderr') throw new InputError(`stream is stdout or stderr, not ${JSON.stringify(String(stream)).slice(0, 40)}.`);
  if (offset !== undefined && line !== undefined) throw new InputError('A page of output starts at an offset or at a line, not both.');
  const whole = (key: string, n: unknown, min: number, max: number): number => {
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < min || n > max) throw new InputError(`${key} takes a whole number from ${min} to ${max}, not ${JSON.stringify(n ?? null).slice(0, 40)}.`);
    return n;
  };
  return {
    stream,
    offset: whole('offset', offset === undefined ? 0 : offset, 0, Number.MAX_SAFE_INTEGER),
    ...(line !== undefined ? { line: whole('line', line, 1, Number.MAX_SAFE_INTEGER) } : {}),
    limit: whole('limit', limit, 1, OUTPUT_PAGE_MAX_CHARS),
  };
}
