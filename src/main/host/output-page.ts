// A page of one stream of a run's output (GET /runs/ID/output, and the
// window's IPC op of the same name): the range [offset, offset + limit) of the
// text the run's result keeps. One function for both, so the browser and the
// desktop window page through the same characters.

import type { OutputRange, WardenApi } from '../../shared/api';
import { InputError, WardenError } from '../../shared/errors';
import { OUTPUT_PAGE_DEFAULT_CHARS, OUTPUT_PAGE_MAX_CHARS, type OutputPage } from '../../shared/http-api';
import type { RunResult } from '../../shared/result';

/** The page of `run` a range asks for: an offset past the end gives an empty page at the end. */
export function pageOf(run: RunResult, range: Required<OutputRange>): OutputPage {
  const all = run[range.stream];
  const from = Math.min(range.offset, all.length);
  const text = all.slice(from, from + range.limit);
  return { id: run.id, stream: range.stream, offset: from, text, next: from + text.length, total: all.length, state: run.state };
}

/**
 * A page through the API's own call when it has one (a remote's host, or the
 * host this window attached to: only the page crosses the link), else sliced
 * from the run the API answers (the engine in this process).
 */
export async function outputPage(api: WardenApi, id: string, range: Required<OutputRange>): Promise<OutputPage> {
  if (api.output) return api.output(id, range);
  const run = await api.get(id);
  if (!run) throw new WardenError('not-found', `No run with id ${JSON.stringify(id)}.`);
  return pageOf(run, range);
}

/** A range as a caller gave it (the IPC op's argument), checked as the HTTP route checks its query: one-line errors. */
export function checkOutputRange(value: unknown): Required<OutputRange> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new InputError('A page of output takes { stream, offset?, limit? }.');
  const { stream, offset = 0, limit = OUTPUT_PAGE_DEFAULT_CHARS, ...rest } = value as Record<string, unknown>;
  const extra = Object.keys(rest)[0];
  if (extra !== undefined) throw new InputError(`A page of output takes stream, offset and limit, not ${extra.slice(0, 40)}.`);
  if (stream !== 'stdout' && stream !== 'stderr') throw new InputError(`stream is stdout or stderr, not ${JSON.stringify(String(stream)).slice(0, 40)}.`);
  const whole = (key: string, n: unknown, min: number, max: number): number => {
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < min || n > max) throw new InputError(`${key} takes a whole number from ${min} to ${max}, not ${JSON.stringify(n ?? null).slice(0, 40)}.`);
    return n;
  };
  return { stream, offset: whole('offset', offset, 0, Number.MAX_SAFE_INTEGER), limit: whole('limit', limit, 1, OUTPUT_PAGE_MAX_CHARS) };
}
