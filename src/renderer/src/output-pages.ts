// An ended run's output as the page fetches it: in pages of each stream
// (GET /runs/ID/output, or the window's IPC op of the same name), so the
// detail of a run of megabytes paints its first lines from the first page
// while the rest comes. Pure: what is held, what to ask for next, and how a
// page joins what is held. The store (store.ts) does the asking.

import type { OutputPage, OutputRange } from '../../shared/api';

/**
 * Characters asked per page: 256 Ki. The first page of each stream is all the
 * view waits for, and 256 Ki characters (about 5,000 lines of 50, many
 * screens) come as ~260 KB of JSON, parsed in a few ms; a run the engine kept
 * 2,000,000 characters of comes in 8 pages, not the 31 of the route's 64 Ki
 * default, so the rest is not slowed by round trips either.
 */
export const OUTPUT_PAGE_CHARS = 262_144;

/** What the page holds of an ended run's output while its pages come. */
export interface PagedOutput {
  stdout: string;
  stderr: string;
  /** How long each stream's kept text is (the pages' `total`): the held text is whole at that length. */
  stdoutTotal: number;
  stderrTotal: number;
  /** Why the rest did not come (one line), when a page failed: what is held stays shown. */
  error?: string;
}

export const NO_PAGES: PagedOutput = Object.freeze({ stdout: '', stderr: '', stdoutTotal: 0, stderrTotal: 0 });

/** Whether both streams are held whole. */
export function pagesDone(paged: PagedOutput): boolean {
  return paged.stdout.length >= paged.stdoutTotal && paged.stderr.length >= paged.stderrTotal;
}

/** Characters held and characters in all, of both streams (the view's "loading N of M"). */
export function pagesProgress(paged: PagedOutput): { held: number; total: number } {
  return { held: paged.stdout.length + paged.stderr.length, total: paged.stdoutTotal + paged.stderrTotal };
}

/**
 * The page to ask for next, or null when both streams are whole. The stream
 * held to the smaller share of its length goes first: the merged view can
 * only place a line once the other stream is held past its time, so the two
 * are best held to about the same point of the run.
 */
export function nextRange(paged: PagedOutput, limit = OUTPUT_PAGE_CHARS): Required<OutputRange> | null {
  const share = (held: number, total: number) => (total === 0 ? 1 : held / total);
  const out = paged.stdout.length < paged.stdoutTotal ? share(paged.stdout.length, paged.stdoutTotal) : Infinity;
  const err = paged.stderr.length < paged.stderrTotal ? share(paged.stderr.length, paged.stderrTotal) : Infinity;
  if (out === Infinity && err === Infinity) return null;
  const stream = out <= err ? 'stdout' : 'stderr';
  return { stream, offset: paged[stream].length, limit };
}

/**
 * A page joined to what is held: appended when it starts where its stream's
 * held text ends (a page that starts elsewhere, as one answered twice, is
 * left out: it would double or skip characters). Its `total` is the stream's
 * length: an ended run's does not change.
 */
export function addPage(paged: PagedOutput, page: Pick<OutputPage, 'stream' | 'offset' | 'text' | 'total'>): PagedOutput {
  const held = paged[page.stream];
  if (page.offset !== held.length) return paged;
  const totalKey = page.stream === 'stdout' ? 'stdoutTotal' : 'stderrTotal';
  return { ...paged, [page.stream]: held + page.text, [totalKey]: page.total };
}
