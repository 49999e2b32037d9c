// An ended run's output as the page fetches it: in pages of each stream
// (GET /runs/ID/output, or the window's IPC op of the same name), so the
// detail of a run of megabytes paints its first lines from the first page
// while the rest comes. A link to a line far down fetches the page that holds
// it first (by line: the host says where it starts): the view shows the head,
// as many pending lines as lie between, and the linked page, each at its own
// line, until the pages between close the gap; nothing moves when they do.
// Pure: what is held, what to ask for next, how a page joins what is held,
// and the text a view shows of it. The store (store/output-slice.ts) does the asking.

import type { OutputPage } from '../../shared/api';

/**
 * Characters asked per page: 256 Ki. The first page of each stream is all the
 * view waits for, and 256 Ki characters (about 5,000 lines of 50, many
 * screens) come as ~260 KB of JSON, parsed in a few ms; a run the engine kept
 * 2,000,000 characters of comes in 8 pages, not the 31 of the route's 64 Ki
 * default, so the rest is not slowed by round trips either.
 */
export const OUTPUT_PAGE_CHARS = 262_144;

/** The page a link to a line far down brought first, ahead of the pages before it. */
export interface LinkedPage {
  stream: 'stdout' | 'stderr';
  /** Where it starts in the stream (a line's start), and the 1-based line that is. */
  offset: number;
  firstLine: number;
  text: string;
  /** What the view shows before it while the gap is open: the stream's held text when the page came (it stays the same object, so the view's line index is built once). */
  head: string;
}

/** What the page holds of an ended run's output while its pages come. */
export interface PagedOutput {
  stdout: string;
  stderr: string;
  /** How long each stream's kept text is (the pages' `total`): the held text is whole at that length. */
  stdoutTotal: number;
  stderrTotal: number;
  /** Why the rest did not come (one line), when a page failed: what is held stays shown. */
  error?: string;
  /** A linked line's page, while the held text has not reached it. */
  linked?: LinkedPage;
}

export const NO_PAGES: PagedOutput = Object.freeze({ stdout: '', stderr: '', stdoutTotal: 0, stderrTotal: 0 });

/** Whether both streams are held whole. */
export function pagesDone(paged: PagedOutput): boolean {
  return paged.stdout.length >= paged.stdoutTotal && paged.stderr.length >= paged.stderrTotal;
}

/** Where the held text of a stream must stop while a linked page lies ahead (its offset), else its total. */
function endOf(paged: PagedOutput, stream: 'stdout' | 'stderr'): number {
  const total = stream === 'stdout' ? paged.stdoutTotal : paged.stderrTotal;
  return paged.linked?.stream === stream ? Math.min(total, paged.linked.offset) : total;
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
export function nextRange(paged: PagedOutput, limit = OUTPUT_PAGE_CHARS): { stream: 'stdout' | 'stderr'; offset: number; limit: number } | null {
  return nextRanges(paged, 1, limit)[0] ?? null;
}

/**
 * Up to `count` pages to ask for at once, one after another in the stream
 * nextRange picks (so they join in order when they come), none past a linked
 * page ahead (the held text then takes it over) nor past the stream's end.
 */
export function nextRanges(paged: PagedOutput, count: number, limit = OUTPUT_PAGE_CHARS): { stream: 'stdout' | 'stderr'; offset: number; limit: number }[] {
  const share = (held: number, total: number) => (total === 0 ? 1 : held / total);
  const outEnd = endOf(paged, 'stdout');
  const errEnd = endOf(paged, 'stderr');
  const out = paged.stdout.length < outEnd ? share(paged.stdout.length, paged.stdoutTotal) : Infinity;
  const err = paged.stderr.length < errEnd ? share(paged.stderr.length, paged.stderrTotal) : Infinity;
  if (out === Infinity && err === Infinity) return [];
  const stream = out <= err ? 'stdout' : 'stderr';
  const end = stream === 'stdout' ? outEnd : errEnd;
  const ranges: { stream: 'stdout' | 'stderr'; offset: number; limit: number }[] = [];
  // Short of a linked page ahead: not into it (the held text takes it over as it is).
  const ahead = paged.linked?.stream === stream;
  for (let offset = paged[stream].length; offset < end && ranges.length < count; offset += limit) ranges.push({ stream, offset, limit: ahead ? Math.min(limit, end - offset) : limit });
  return ranges;
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
  const next: PagedOutput = { ...paged, [page.stream]: held + page.text, [totalKey]: page.total };
  return joinLinked(next);
}

/** The held text reached the linked page: the page joins it (its characters are the stream's from there), and the gap is gone. */
function joinLinked(paged: PagedOutput): PagedOutput {
  const linked = paged.linked;
  if (!linked) return paged;
  const held = paged[linked.stream];
  if (held.length < linked.offset) return paged;
  const { linked: _closed, ...rest } = paged;
  return held.length === linked.offset ? { ...rest, [linked.stream]: held + linked.text } : rest;
}

/**
 * A linked line's page, brought ahead of the pages before it: kept apart until
 * the held text reaches it. A page that starts where the held text ends (or
 * within it) is no jump: it joins the held text as any page does.
 */
export function addLinkedPage(paged: PagedOutput, page: Pick<OutputPage, 'stream' | 'offset' | 'text' | 'total'> & { firstLine: number }): PagedOutput {
  const held = paged[page.stream];
  if (page.offset <= held.length) return addPage(paged, { ...page, text: page.text.slice(held.length - page.offset), offset: held.length });
  const totalKey = page.stream === 'stdout' ? 'stdoutTotal' : 'stderrTotal';
  return { ...paged, [totalKey]: page.total, linked: { stream: page.stream, offset: page.offset, firstLine: page.firstLine, text: page.text, head: held } };
}

/** A text as the view shows it while more is to come: whole lines only (a line cut at a page's edge waits for its end). */
export function wholeLines(text: string): string {
  if (text === '' || text.endsWith('\n')) return text;
  const nl = text.lastIndexOf('\n');
  return nl < 0 ? '' : text.slice(0, nl + 1);
}

/** Lines a text holds that ends on a newline (or is empty). */
function newlines(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/** The lines a view shows as still to come, 0-based and exclusive at the end, of the stream with a linked page ahead. */
export interface PendingLines {
  stream: 'stdout' | 'stderr';
  from: number;
  to: number;
}

/**
 * The text a view shows of a stream: the held text (whole lines only until
 * the stream is whole); with a linked page ahead, the head it had then, an
 * empty line for each line still to come before the page (pending), and the
 * page: every line at its own line number.
 */
export function viewText(paged: PagedOutput, stream: 'stdout' | 'stderr'): { text: string; pending: PendingLines | null } {
  const total = stream === 'stdout' ? paged.stdoutTotal : paged.stderrTotal;
  const linked = paged.linked;
  if (!linked || linked.stream !== stream) {
    const held = paged[stream];
    return { text: held.length >= total ? held : wholeLines(held), pending: null };
  }
  const head = wholeLines(linked.head);
  const before = newlines(head);
  const gap = Math.max(0, linked.firstLine - 1 - before);
  const end = linked.offset + linked.text.length >= total ? linked.text : wholeLines(linked.text);
  return { text: `${head}${'\n'.repeat(gap)}${end}`, pending: gap > 0 ? { stream, from: before, to: before + gap } : null };
}
