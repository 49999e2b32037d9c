// A run's output into the store: a live run's snapshot with the stream's
// chunks merged onto it by offset (live-output.ts), gaps in the stream
// filled (from the output route, else the run whole), and an ended run's
// output in pages (output-pages.ts), the first ones at once, the rest after
// the first paint.

import type { WardenApi } from '../../../shared/api';
import { OUTPUT_PAGE_MAX_CHARS } from '../../../shared/http-api';
import { addMark } from '../../../shared/output-times';
import type { RunResult } from '../../../shared/result';
import { addLinkedPage, addPage, nextRanges, NO_PAGES, OUTPUT_PAGE_CHARS, pagesDone, type PagedOutput } from '../output-pages';
import { appendAt, endOf, mergeChunks, snapshotBase, type LiveOutput } from './live-output';
import { linkedStream } from './run-fields';
import { LINKED_CONTEXT_LINES, messageOf, PAGES_AT_ONCE, schedule, withoutKey, type LoadOptions, type OutputEvent, type OutputSlice, type Slice, type Store, type WardenState } from './state';

/** Snapshots fetched in a row for one gap before the page gives up and says so. */
const MAX_REFETCHES = 5;

/** A gap in a run's stream: what is missing is fetched (fillGap) and the held chunks merged onto it. */
export function refetch(store: Store, id: string): void {
  setTimeout(() => void fillGap(store, id), 0);
}

/** Chunks held for a run merged onto `start` by offset, their times marked; where a gap remains, if one does (-1: none). */
function mergeHeld(state: WardenState, id: string, start: LiveOutput, events: OutputEvent[]): { changed: Partial<WardenState>; gapAt: number } {
  const { output, gapAt } = mergeChunks(start, events);
  const marks = state.marks[id];
  const list = [...(marks?.list ?? [])];
  let marked = false;
  const merged = gapAt < 0 ? events.length : gapAt;
  for (const event of events.slice(0, merged)) {
    if (event.atMs !== undefined && addMark(list, event.stream, event.offset, event.atMs)) marked = true;
  }
  const changed: Partial<WardenState> = { output: { ...state.output, [id]: output } };
  if (marked) changed.marks = { ...state.marks, [id]: { list, version: (marks?.version ?? 0) + 1 } };
  return { changed, gapAt };
}

/** A gap still there after a fetch: fetched again, a few times, then said (never skipped in silence). */
function stillGap(store: Store, id: string, events: OutputEvent[]): void {
  const tries = (store.refetches.get(id) ?? 0) + 1;
  store.refetches.set(id, tries);
  if (tries <= MAX_REFETCHES) {
    store.held.set(id, events);
    refetch(store, id);
  } else {
    store.refetches.delete(id);
    store.get().report(new Error(`Part of run ${id}'s live output could not be fetched from the host; the whole output shows when it ends.`));
  }
}

/**
 * A gap in a live run's stream: the characters missing, from the output
 * route, when what the host keeps of that stream is the stream itself
 * (nothing cut, so a page's offsets are the stream's); else the run whole,
 * merged by offset (put). The chunks that come meanwhile are held.
 */
async function fillGap(store: Store, id: string): Promise<void> {
  const { get, set, held } = store;
  const api = get().api;
  const current = get().output[id];
  const first = held.get(id)?.[0];
  const end = first && current ? endOf(current, first.stream) : 0;
  const missing = first ? first.offset - end : 0;
  if (!api?.output || !current || !first || missing <= 0 || missing > OUTPUT_PAGE_MAX_CHARS) return void get().load(id);
  let text: string;
  try {
    const page = await api.output(id, { stream: first.stream, offset: end, limit: missing });
    text = page.text;
    // Asked after the page: a stream with nothing cut now had nothing cut then (a cut stays), so the page's offsets were the stream's.
    const bare = await api.get(id, { output: 'none' });
    const cut = bare ? (first.stream === 'stdout' ? bare.stdoutTruncated : bare.stderrTruncated) : 1;
    if (!bare || bare.state === 'ended' || cut > 0 || page.offset !== end || page.text.length !== missing) return void get().load(id);
  } catch {
    return void get().load(id);
  }
  const events = held.get(id);
  // Meanwhile the run ended, or a snapshot took the held chunks: nothing is left to fill.
  if (!events) return;
  held.delete(id);
  let gapAt = -1;
  set((state) => {
    const base = state.output[id];
    if (!base) return {};
    const filled = appendAt(base, first.stream, end, text);
    if (filled === 'gap') {
      gapAt = 0;
      return {};
    }
    const merged = mergeHeld(state, id, filled, events);
    gapAt = merged.gapAt;
    return merged.changed;
  });
  if (gapAt >= 0) stillGap(store, id, events.slice(gapAt));
  else store.refetches.delete(id);
}

/** A run's snapshot (live) or result (ended) whole, put into the store. */
async function fetchWhole(store: Store, api: WardenApi, id: string): Promise<RunResult | null> {
  try {
    await store.opened;
    const run = await api.get(id);
    if (run) store.get().put(run);
    else store.held.delete(id);
    return run;
  } catch (error) {
    store.held.delete(id);
    store.get().report(error);
    return null;
  }
}

/** Both streams held whole: the run is held whole with them, as a get would have answered it. */
function finishPages({ set }: Store, id: string, paged: PagedOutput): void {
  set((state) => {
    const run = state.runs[id];
    const pages = withoutKey(state.pages, id);
    if (!run || !state.partial[id]) return { pages };
    const { outputChars: _omitted, ...fields } = run;
    return { pages, runs: { ...state.runs, [id]: { ...fields, stdout: paged.stdout, stderr: paged.stderr } }, partial: withoutKey(state.partial, id) };
  });
}

/** The pages after the first, a few asked at once and added in order as they come (the view shows how far it is). */
async function fetchRest(store: Store, api: WardenApi, id: string): Promise<void> {
  const { get, set } = store;
  // A frame first: the first page is painted before the rest is asked for.
  await new Promise<void>((resolve) => schedule(() => setTimeout(resolve, 0)));
  for (;;) {
    const have = get().pages[id];
    if (!have) return;
    const ranges = nextRanges(have, PAGES_AT_ONCE);
    if (ranges.length === 0) return finishPages(store, id, have);
    let error: string | null = null;
    try {
      const answers = await Promise.all(ranges.map((range) => api.output!(id, range)));
      const now = get().pages[id];
      if (!now) return;
      let next = now;
      for (let i = 0; i < answers.length && error === null; i++) {
        const joined = addPage(next, answers[i]!);
        // A page that adds nothing would be asked for again without end.
        if (joined === next || answers[i]!.text === '') error = `The host answered no output at ${ranges[i]!.stream} character ${ranges[i]!.offset.toLocaleString('en-US')}; the rest of this run's output is not shown.`;
        else next = joined;
      }
      if (error === null && pagesDone(next)) return finishPages(store, id, next);
      if (next !== now) set((state) => ({ pages: { ...state.pages, [id]: next } }));
    } catch (e) {
      error = messageOf(e);
    }
    if (error !== null) {
      const reason = error;
      set((state) => (state.pages[id] ? { pages: { ...state.pages, [id]: { ...state.pages[id]!, error: reason } } } : {}));
      return;
    }
  }
}

/**
 * An ended run, or one not known yet: its fields without its output and the
 * first page of each stream, asked at once; the rest after the first paint.
 * A run that turns out live is fetched whole instead (its stream meets the
 * snapshot by offset), and so is any run whose pages cannot be had.
 */
function loadPaged(store: Store, api: WardenApi, id: string, known: boolean, whole: () => Promise<RunResult | null>, options: LoadOptions = {}): Promise<RunResult | null> {
  const { get, set, paging } = store;
  const inFlight = paging.get(id);
  if (inFlight) return inFlight;
  const first = (stream: 'stdout' | 'stderr') => api.output!(id, { stream, offset: 0, limit: OUTPUT_PAGE_CHARS });
  // A linked line far down: the page holding it, asked with the first ones (the merged view's line is stdout's when stderr is empty).
  const target = options.line;
  const linkedAsk = (stream: 'stdout' | 'stderr') => (target && target.line > 1 ? api.output!(id, { stream, line: Math.max(1, target.line - LINKED_CONTEXT_LINES), limit: OUTPUT_PAGE_CHARS }).catch(() => null) : Promise.resolve(null));
  const guessed = target ? (target.stream === 'stderr' ? 'stderr' : 'stdout') : null;
  const early = guessed ? linkedAsk(guessed) : Promise.resolve(null);
  const loading = (async (): Promise<RunResult | null> => {
    const asked = api.get(id, { output: 'none' });
    // A run not known yet may be live (then fetched whole): its pages wait for the answer that says it ended.
    const ended = known || (await asked.then((run) => run?.state === 'ended', () => false));
    const notAsked = () => Promise.reject(new Error('not asked'));
    const [bare, out, err] = await Promise.allSettled([asked, ended ? first('stdout') : notAsked(), ended ? first('stderr') : notAsked()]);
    if (bare.status === 'rejected') {
      get().report(bare.reason);
      return null;
    }
    if (bare.value === null) return null;
    if (bare.value.state !== 'ended' || out.status === 'rejected' || err.status === 'rejected') return whole();
    // Held as a listing is (without output, partial) until its pages are all in.
    const run = bare.value.outputChars ? bare.value : { ...bare.value, outputChars: { stdout: 0, stderr: 0 } };
    get().put(run);
    let paged = addPage(addPage(NO_PAGES, out.value), err.value);
    // The merged view's lines are one stream's only when the other is empty, and numbered as kept only when nothing was cut.
    const stream = target ? linkedStream(target.stream, run) : null;
    if (stream !== null && target) {
      const page = await (stream === guessed ? early : linkedAsk(stream));
      if (page && page.firstLine !== undefined && page.text !== '') paged = addLinkedPage(paged, { ...page, firstLine: page.firstLine });
    }
    if (pagesDone(paged)) finishPages(store, id, paged);
    else {
      set((state) => ({ pages: { ...state.pages, [id]: paged } }));
      void fetchRest(store, api, id);
    }
    return get().runs[id] ?? run;
  })().finally(() => paging.delete(id));
  paging.set(id, loading);
  return loading;
}

export const createOutputSlice: Slice<OutputSlice> = (store) => {
  const { set, get, held, refetches } = store;
  return {
    output: {},
    pages: {},

    async load(id, options) {
      const api = get().api;
      if (!api) return null;
      const known = get().runs[id];
      const whole = async (): Promise<RunResult | null> => {
        // From the moment it is asked for, the run's chunks wait for the snapshot, which holds all that came before.
        if (!held.has(id)) held.set(id, []);
        return fetchWhole(store, api, id);
      };
      if (api.output && (known === undefined || (known.state === 'ended' && get().partial[id]))) return loadPaged(store, api, id, known !== undefined, whole, options);
      return whole();
    },

    put(result) {
      const events = held.get(result.id);
      held.delete(result.id);
      let gapAt = -1;
      set((state) => {
        const known = state.runs[result.id];
        const listing = result.outputChars !== undefined;
        const next: Partial<WardenState> = {
          syncedAt: { ...state.syncedAt, [result.id]: performance.now() },
          order: state.order.includes(result.id) ? state.order : [result.id, ...state.order],
        };
        if (listing) {
          next.runs = { ...state.runs, [result.id]: known && !state.partial[result.id] ? { ...result, stdout: known.stdout, stderr: known.stderr, outputChars: undefined } : result };
          if (!known || state.partial[result.id]) next.partial = { ...state.partial, [result.id]: true };
          return next;
        }
        next.runs = { ...state.runs, [result.id]: result };
        if (state.partial[result.id]) next.partial = withoutKey(state.partial, result.id);
        if (known && known.state !== 'ended' && result.state === 'ended' && state.ended.total !== null) next.ended = { ...state.ended, total: state.ended.total + 1 };
        if (result.state === 'ended') {
          // A final result carries the whole output.
          if (state.output[result.id]) next.output = withoutKey(state.output, result.id);
          return next;
        }
        // A live snapshot: the base for its stream unless the page holds more already; the chunks held meanwhile go on top, by offset.
        const base = snapshotBase(state.output[result.id], result);
        const merged = mergeHeld(state, result.id, base, events ?? []);
        gapAt = merged.gapAt;
        return { ...next, ...merged.changed };
      });
      // Still a gap past this snapshot (it was taken before those chunks' predecessors): fetched again, never skipped.
      if (gapAt >= 0 && events) stillGap(store, result.id, events.slice(gapAt));
      else if (result.state !== 'ended' && result.outputChars === undefined) refetches.delete(result.id);
    },
  };
};
