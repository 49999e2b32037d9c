// The renderer's state (zustand): every run this page knows, kept current by
// the API's events. Events are applied in batches, once per animation frame,
// so 50 runs printing hundreds of lines a second cost one render per frame.
// Views read slices with selectors: useWarden((s) => s.runs[id]).

import { create } from 'zustand';
import type { WardenApi } from '../../shared/api';
import type { OutputStream, RunEvent } from '../../shared/events';
import type { RunPage, RunSummary } from '../../shared/history';
import { streamLength } from '../../shared/stream-length';
import { FIRST_ENDED_PAGE, FIRST_LIST } from '../../shared/http-api';
import { UNREACHABLE } from './web-api';
import { OUTPUT_PAGE_MAX_CHARS } from '../../shared/http-api';
import { ALL_HOSTS, LOCAL_HOST, type HostStatus } from '../../shared/hosts';
import type { ProcTreeSnapshot } from '../../shared/proc-tree';
import type { RunResult, SignalSent, StopStep } from '../../shared/result';
import { addMark, type OutputMark } from '../../shared/output-times';
import { addSample, emptySeries, joinSeries, type TelemetryDetail, type TelemetrySeries } from '../../shared/telemetry';
import { addLinkedPage, addPage, nextRanges, NO_PAGES, OUTPUT_PAGE_CHARS, pagesDone, type PagedOutput } from './output-pages';

/** Whether the host answers: 'online' (or an Electron window, always), 'offline' (gone, reconnecting), 'unauthorised' (the login ended). */
export type Connection = 'online' | 'offline' | 'unauthorised';

/** How far a live run's stop sequence has gone, from its signal-sent events. */
export interface StopProgress {
  step: StopStep;
  /** performance.now() when that step's signal was seen. */
  seenAt: number;
  /** When SIGKILL is due, in ms since the run's start (from the engine's signal-sent event). */
  killAtMs?: number;
}

/** How often a live run of a remote host is fetched again, whatever its events said (setHosts). */
const REMOTE_RECONCILE_MS = 5_000;

export interface WardenState {
  api: WardenApi | null;
  /** Every run this page has seen: live ones, those ended while it was open, and any opened from History. */
  runs: Record<string, RunResult>;
  /** Run ids, newest first. */
  order: string[];
  /**
   * Live output, apart from the run's other fields: a chunk of output changes
   * this and nothing else, so views that do not show output (the Runs list)
   * do not re-render for it. Dropped when the run's final result arrives.
   */
  output: Record<string, LiveOutput>;
  /**
   * Ended runs whose output is coming in pages (output-pages.ts): what is
   * held so far. Dropped once both streams are whole, when the run is held
   * whole with it.
   */
  pages: Record<string, PagedOutput>;
  /**
   * Runs held without their output (from a listing or a page of the history):
   * a view that shows output fetches the run whole first (load).
   */
  partial: Record<string, true>;
  /**
   * The ended runs the history holds, as the Runs view pages through them:
   * how many there are (null: not known, no history), the cursor of the next
   * page (null: none), and whether a page is on its way.
   */
  ended: { total: number | null; cursor: string | null; loading: boolean };
  /** performance.now() when each run's elapsedMs was last set, so a live bar moves between events. */
  syncedAt: Record<string, number>;
  trees: Record<string, ProcTreeSnapshot>;
  /** When each piece of a run's output came, as this page saw it live (shared/output-times.ts); version bumps on a new mark. */
  marks: Record<string, { list: OutputMark[]; version: number }>;
  /** Each live run's telemetry as this page saw it (shared/telemetry.ts): the Runs sparklines and the live charts. */
  series: Record<string, TelemetrySeries>;
  signals: Record<string, SignalSent[]>;
  stopProgress: Record<string, StopProgress>;
  /** The last error any view reported; shown until dismissed. */
  error: string | null;
  /** Subscribed to a host's events and it can be reached: actions are offered only then. */
  connected: boolean;
  connection: Connection;
  /** performance.now() when the host went away: live clocks stand still at it until it is back. */
  offlineSince: number | null;
  /**
   * This host and each configured remote with its connection state, as the
   * host last said (components/HostBar.tsx asks); empty until it first did,
   * or when the API relays no remotes.
   */
  hosts: HostStatus[];
  /** The hosts' states as the host said them now: a remote that came back has its runs fetched again. */
  setHosts(hosts: HostStatus[]): void;
  /** The transport says the host went away, came back, or refused this page's login. */
  setConnection(connection: Connection): void;
  /** Reloads the live runs after missed events (a gap, a host that restarted); runs this page saw live and the host no longer lists are fetched whole. */
  resync(): Promise<void>;
  /** Subscribes to the API's events and loads the live runs; returns the disconnect function. */
  connect(api: WardenApi): () => void;
  /**
   * A run fetched into the store: an ended one (or one not known yet) without
   * its output, which then comes in pages (resolves once the first page of
   * each stream is in); a live one whole, its live output merged with the
   * stream by offset.
   */
  load(id: string, options?: LoadOptions): Promise<RunResult | null>;
  /** A live run's series as the host has it (from its first sample), joined before what the page sampled. */
  seedSeries(id: string, host: TelemetryDetail): void;
  /** The next page of ended runs from the history (Runs' "Show more"); resolves once it is in. */
  loadMoreEnded(): Promise<void>;
  /** Records a result the page got from a call (start, stop, wait, extend). */
  put(result: RunResult): void;
  report(error: unknown): void;
  dismissError(): void;
}

/** What a view that opens a run needs first: a link to a line far down its output fetches the page holding it with the first ones. */
export interface LoadOptions {
  /** 'all': the merged view's line, the stream's own when one stream alone has output. */
  line?: { stream: 'all' | 'stdout' | 'stderr'; line: number };
}

/** Lines before a linked line the page that brings it starts at: the view shows it with what led there. */
export const LINKED_CONTEXT_LINES = 200;
/** Pages asked at once while the rest of an ended run's output comes (they join in order as they come). */
export const PAGES_AT_ONCE = 4;

/** A live run's output as the page holds it, and how many lines each stream has had (which never goes down, whatever the page's cap drops). */
export interface LiveOutput {
  stdout: string;
  stderr: string;
  stdoutLines: number;
  stderrLines: number;
  /**
   * Whether each stream's text ends mid-line, read from the chunks as they
   * come: checking the end of the whole text (endsWith) would make V8 flatten
   * the concatenated string, copying all of a run's output for every chunk.
   */
  stdoutOpen?: boolean;
  stderrOpen?: boolean;
  /** Where each stream's text ends in the run's output, in characters (dropped ones counted): the offset the next chunk must start at. */
  stdoutEnd: number;
  stderrEnd: number;
}

/** A live run's output as a snapshot holds it: the base the stream's chunks are merged onto. */
export function baseOf(run: Pick<RunResult, 'stdout' | 'stderr' | 'stdoutTruncated' | 'stderrTruncated'>): LiveOutput {
  return {
    stdout: run.stdout,
    stderr: run.stderr,
    stdoutLines: lineCount(run.stdout),
    stderrLines: lineCount(run.stderr),
    stdoutEnd: streamLength(run.stdout, run.stdoutTruncated ?? 0),
    stderrEnd: streamLength(run.stderr, run.stderrTruncated ?? 0),
  };
}

/**
 * An ended run sent as a summary (no output, outputChars): its output as the
 * page holds it when that is exactly the run's whole output, else null (then
 * it is fetched in pages when a view shows it). Exact: the engine kept every
 * character (nothing truncated), the page streamed to the same end, and the
 * page cut nothing (its text is as long as its end); a run that printed
 * nothing is exact with nothing held.
 */
export function exactOutput(live: LiveOutput | undefined, result: RunResult): { stdout: string; stderr: string } | null {
  const chars = result.outputChars;
  if (!chars || result.stdoutTruncated > 0 || result.stderrTruncated > 0) return null;
  if (!live) return chars.stdout === 0 && chars.stderr === 0 ? { stdout: '', stderr: '' } : null;
  const whole = (text: string, end: number, total: number) => end === total && text.length === end;
  return whole(live.stdout, live.stdoutEnd, chars.stdout) && whole(live.stderr, live.stderrEnd, chars.stderr) ? { stdout: live.stdout, stderr: live.stderr } : null;
}

/**
 * A chunk of a stream at `offset` merged onto what the page holds: the part
 * it already has is skipped (a snapshot taken after the chunk was sent holds
 * it), the rest appended. 'gap': the chunk starts past the end held, so
 * something between is missing and must be fetched, never skipped.
 */
export function appendAt(current: LiveOutput, stream: OutputStream, offset: number, text: string): LiveOutput | 'gap' {
  const endKey = stream === 'stdout' ? 'stdoutEnd' : 'stderrEnd';
  const end = current[endKey];
  if (offset > end) return 'gap';
  if (offset + text.length <= end && text !== '') return current;
  const fresh = text.slice(end - offset);
  if (fresh === '') return current;
  const before = current[stream];
  // Lines the stream has had, counted by the chunk: the page's cap may drop some of them, never from this count.
  const key = stream === 'stdout' ? 'stdoutLines' : 'stderrLines';
  const openKey = stream === 'stdout' ? 'stdoutOpen' : 'stderrOpen';
  const wasOpen = current[openKey] ?? (before !== '' && !before.endsWith('\n'));
  const isOpen = !fresh.endsWith('\n');
  const lines = current[key] - (wasOpen ? 1 : 0) + newlinesIn(fresh) + (isOpen ? 1 : 0);
  return { ...current, [stream]: capLive(before + fresh), [key]: lines, [openKey]: isOpen, [endKey]: end + fresh.length };
}

/** Lines a text holds: its newlines, and one more for an unfinished last line. */
export function lineCount(text: string): number {
  if (text === '') return 0;
  const n = newlinesIn(text);
  return text.endsWith('\n') ? n : n + 1;
}

function newlinesIn(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/** Text of an error for a person: the API's one-line message. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}


/**
 * Live output kept per stream in the page: past this, the oldest part of the
 * middle is dropped (the head stays, as the engine keeps it) with a marker, so
 * a run printing without end cannot grow the page without bound. The ended
 * result, with the engine's own head and tail, replaces it.
 */
export const LIVE_OUTPUT_CAP = 4_000_000;
const LIVE_HEAD = 1_000_000;
const LIVE_MARKER = /^\n\[warden: ([\d,]+) characters not shown while live\]\n/;

export function capLive(text: string, cap = LIVE_OUTPUT_CAP, head = LIVE_HEAD): string {
  if (text.length <= cap) return text;
  const rest = text.slice(head);
  const previous = LIVE_MARKER.exec(rest);
  const already = previous ? Number(previous[1]!.replace(/,/g, '')) : 0;
  const body = previous ? rest.slice(previous[0].length) : rest;
  // Down to half the room: the next trim is far off, so views that split appended text incrementally rarely start over.
  const keep = Math.floor((cap - head) / 2);
  const dropped = already + Math.max(0, body.length - keep);
  return `${text.slice(0, head)}\n[warden: ${dropped.toLocaleString('en-US')} characters not shown while live]\n${body.slice(body.length - keep)}`;
}

/** performance.now() when the host went away, while it is away: liveElapsed stops there. */
let frozenAt: number | null = null;

/** Ended runs asked of the history per page (the Runs view's first page and each "Show more"). */
export const ENDED_PAGE_SIZE = FIRST_ENDED_PAGE.limit;
/** How long connect waits for the event stream to say it is open before taking its snapshot anyway (a gap is then fetched). */
const OPEN_WAIT_MS = 2000;
/** Snapshots fetched in a row for one gap before the page gives up and says so. */
const MAX_REFETCHES = 5;

/** A process the history counts but does not list (a summary has the teardown's counts only). */
const UNLISTED_PROC = Object.freeze({ pid: 0, ppid: 0, pgid: 0, command: '' });

/** A run of a history page as the store holds it: the result's fields without output (partial until a view loads it whole). */
export function fromSummary(summary: RunSummary): RunResult {
  const run: RunResult = {
    id: summary.id,
    ...(summary.host !== undefined ? { host: summary.host } : {}),
    kind: summary.kind,
    ...(summary.argv !== undefined ? { argv: summary.argv } : {}),
    ...(summary.code !== undefined ? { code: summary.code } : {}),
    ...(summary.session !== undefined ? { session: summary.session } : {}),
    cwd: summary.cwd,
    ...(summary.owner ? { owner: summary.owner } : {}),
    state: summary.state,
    ...(summary.verdict !== undefined ? { verdict: summary.verdict } : {}),
    exitCode: summary.exitCode,
    signal: summary.signal,
    startedAt: summary.startedAt,
    ...(summary.endedAt !== undefined ? { endedAt: summary.endedAt } : {}),
    elapsedMs: summary.elapsedMs,
    limitMs: summary.limitMs,
    advice: summary.advice,
    notes: [],
    stdout: '',
    stderr: '',
    stdoutTruncated: summary.stdoutTruncated,
    stderrTruncated: summary.stderrTruncated,
    ...(summary.oom ? { oom: summary.oom } : {}),
    ...(summary.peakRssBytes !== null ? { peak: { rssBytes: summary.peakRssBytes, processes: summary.peakProcesses ?? 0, ...(summary.peakSource ? { source: summary.peakSource } : {}) } } : {}),
  };
  if (summary.leftBehind || summary.survived) {
    run.teardown = {
      killed: Array.from({ length: summary.leftBehind ?? 0 }, () => UNLISTED_PROC),
      survivors: Array.from({ length: summary.survived ?? 0 }, () => UNLISTED_PROC),
      elapsedMs: 0,
      complete: true,
    };
  }
  return run;
}

type OutputEvent = Extract<RunEvent, { type: 'output' }>;

export const useWarden = create<WardenState>()((set, get) => {
  let queue: RunEvent[] = [];
  let scheduled = false;
  /**
   * Output chunks of runs whose snapshot is on its way (load): merged onto it
   * by offset when it comes. A run with no snapshot held and none asked for
   * keeps nothing: a view that shows its output loads it first, and holds
   * from the moment it asks.
   */
  const held = new Map<string, OutputEvent[]>();
  /** Snapshots fetched again in a row for a run whose stream still had a gap past them. */
  const refetches = new Map<string, number>();
  let lastReconcile = 0;
  /** Resolves once the event stream is open: a snapshot taken after it meets the stream with nothing missing between. */
  let opened: Promise<void> = Promise.resolve();

  /** Listed runs into the store: a run held whole keeps its output; one not held is kept partial (no output). */
  const merge = (listed: RunResult[]) => {
    const now = performance.now();
    set((state) => {
      const runs = { ...state.runs };
      const syncedAt = { ...state.syncedAt };
      const partial = { ...state.partial };
      let output = state.output;
      for (const run of listed) {
        const known = runs[run.id];
        const whole = known !== undefined && !partial[run.id];
        if (whole && known.state === 'ended') continue;
        if (whole && run.state !== 'ended') {
          const { outputChars: _omitted, ...fields } = run;
          runs[run.id] = { ...fields, stdout: known.stdout, stderr: known.stderr, stdoutTruncated: known.stdoutTruncated, stderrTruncated: known.stderrTruncated };
        } else {
          runs[run.id] = run;
          partial[run.id] = true;
          if (run.state === 'ended' && output[run.id]) output = withoutKey(output, run.id);
        }
        syncedAt[run.id] = now;
      }
      const order = [...new Set([...state.order, ...listed.map((r) => r.id)])].sort((a, b) => (runs[b]?.startedAt ?? '').localeCompare(runs[a]?.startedAt ?? ''));
      return { runs, syncedAt, partial, output, order };
    });
  };

  /** The host's live and recent runs (without output) and the history's first page of ended ones; the ids the host listed, or null when it could not be asked. */
  const loadList = async (api: WardenApi, withHistory = true): Promise<Set<string> | null> => {
    let list: RunResult[];
    let page: RunPage | null;
    try {
      [list, page] = await Promise.all([
        // Every connected host's runs: the local host relays its remotes' (src/shared/hosts.ts).
        api.list(FIRST_LIST),
        // A host without a history answers an empty page; one that fails to answer leaves the live list alone.
        withHistory ? api.history(FIRST_ENDED_PAGE).catch(() => null) : null,
      ]);
    } catch (error) {
      get().report(error);
      return null;
    }
    merge([...list, ...(page?.runs ?? []).map(fromSummary)]);
    if (page) {
      const total = page.counts ? page.counts.total - (page.counts.live ?? 0) : null;
      set({ ended: { total, cursor: page.nextCursor, loading: false } });
    }
    return new Set(list.map((r) => r.id));
  };

  const schedule = (fn: () => void) => {
    if (typeof requestAnimationFrame === 'function') requestAnimationFrame(fn);
    else setTimeout(fn, 16);
  };

  /** A gap in a run's stream: what is missing is fetched (fillGap) and the held chunks merged onto it. */
  const refetch = (id: string) => {
    setTimeout(() => void fillGap(id), 0);
  };

  /** Chunks held for a run merged onto `base` by offset, their times marked; where a gap remains, if one does (-1: none). */
  const mergeHeld = (state: WardenState, id: string, start: LiveOutput, events: OutputEvent[]): { changed: Partial<WardenState>; gapAt: number } => {
    let base = start;
    let gapAt = -1;
    const marks = state.marks[id];
    const list = [...(marks?.list ?? [])];
    let marked = false;
    for (let i = 0; i < events.length; i++) {
      const event = events[i]!;
      const merged = appendAt(base, event.stream, event.offset, event.text);
      if (merged === 'gap') {
        gapAt = i;
        break;
      }
      base = merged;
      if (event.atMs !== undefined && addMark(list, event.stream, event.offset, event.atMs)) marked = true;
    }
    const changed: Partial<WardenState> = { output: { ...state.output, [id]: base } };
    if (marked) changed.marks = { ...state.marks, [id]: { list, version: (marks?.version ?? 0) + 1 } };
    return { changed, gapAt };
  };

  /** A gap still there after a fetch: fetched again, a few times, then said (never skipped in silence). */
  const stillGap = (id: string, events: OutputEvent[]) => {
    const tries = (refetches.get(id) ?? 0) + 1;
    refetches.set(id, tries);
    if (tries <= MAX_REFETCHES) {
      held.set(id, events);
      refetch(id);
    } else {
      refetches.delete(id);
      get().report(new Error(`Part of run ${id}'s live output could not be fetched from the host; the whole output shows when it ends.`));
    }
  };

  /**
   * A gap in a live run's stream: the characters missing, from the output
   * route, when what the host keeps of that stream is the stream itself
   * (nothing cut, so a page's offsets are the stream's); else the run whole,
   * merged by offset (put). The chunks that come meanwhile are held.
   */
  const fillGap = async (id: string) => {
    const api = get().api;
    const current = get().output[id];
    const first = held.get(id)?.[0];
    const end = first && current ? (first.stream === 'stdout' ? current.stdoutEnd : current.stderrEnd) : 0;
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
    if (gapAt >= 0) stillGap(id, events.slice(gapAt));
    else refetches.delete(id);
  };

  /** A run's snapshot (live) or result (ended) whole, put into the store. */
  const fetchWhole = async (api: WardenApi, id: string): Promise<RunResult | null> => {
    try {
      await opened;
      const run = await api.get(id);
      if (run) get().put(run);
      else held.delete(id);
      return run;
    } catch (error) {
      held.delete(id);
      get().report(error);
      return null;
    }
  };

  /** Ended runs whose pages are being fetched: a second load of one joins the first. */
  const paging = new Map<string, Promise<RunResult | null>>();

  /** Both streams held whole: the run is held whole with them, as a get would have answered it. */
  const finishPages = (id: string, paged: PagedOutput) => {
    set((state) => {
      const run = state.runs[id];
      const pages = withoutKey(state.pages, id);
      if (!run || !state.partial[id]) return { pages };
      const { outputChars: _omitted, ...fields } = run;
      return { pages, runs: { ...state.runs, [id]: { ...fields, stdout: paged.stdout, stderr: paged.stderr } }, partial: withoutKey(state.partial, id) };
    });
  };

  /** The pages after the first, a few asked at once and added in order as they come (the view shows how far it is). */
  const fetchRest = async (api: WardenApi, id: string) => {
    // A frame first: the first page is painted before the rest is asked for.
    await new Promise<void>((resolve) => schedule(() => setTimeout(resolve, 0)));
    for (;;) {
      const have = get().pages[id];
      if (!have) return;
      const ranges = nextRanges(have, PAGES_AT_ONCE);
      if (ranges.length === 0) return finishPages(id, have);
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
        if (error === null && pagesDone(next)) return finishPages(id, next);
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
  };

  /**
   * An ended run, or one not known yet: its fields without its output and the
   * first page of each stream, asked at once; the rest after the first paint.
   * A run that turns out live is fetched whole instead (its stream meets the
   * snapshot by offset), and so is any run whose pages cannot be had.
   */
  const loadPaged = (api: WardenApi, id: string, known: boolean, whole: () => Promise<RunResult | null>, options: LoadOptions = {}): Promise<RunResult | null> => {
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
      if (pagesDone(paged)) finishPages(id, paged);
      else {
        set((state) => ({ pages: { ...state.pages, [id]: paged } }));
        void fetchRest(api, id);
      }
      return get().runs[id] ?? run;
    })().finally(() => paging.delete(id));
    paging.set(id, loading);
    return loading;
  };

  const flush = () => {
    scheduled = false;
    const events = queue;
    queue = [];
    if (events.length === 0) return;
    const now = performance.now();
    let endedNow = 0;
    set((state) => {
      // Copy-on-write per field: a frame of output events changes `output` only, so
      // views that select runs, order or trees are not re-rendered for it.
      const changed: Partial<WardenState> = {};
      const draft = <K extends 'runs' | 'syncedAt' | 'output' | 'marks' | 'trees' | 'series' | 'signals' | 'stopProgress' | 'partial'>(key: K): WardenState[K] => {
        if (!(key in changed)) (changed as Record<string, unknown>)[key] = { ...state[key] };
        return changed[key] as WardenState[K];
      };
      const runOf = (id: string) => (changed.runs ?? state.runs)[id];
      let order = state.order;
      for (const event of events) {
        const id = event.runId;
        switch (event.type) {
          case 'started': {
            const known = runOf(id);
            if (!known) order = [id, ...order.filter((o) => o !== id)];
            const partial = (changed.partial ?? state.partial)[id] === true;
            draft('runs')[id] = known && !partial ? { ...event.snapshot, stdout: known.stdout, stderr: known.stderr } : event.snapshot;
            if (partial) delete draft('partial')[id];
            // Its first snapshot is where its stream starts: the chunks that follow are merged onto it.
            if (!(changed.output ?? state.output)[id] && !held.has(id)) draft('output')[id] = baseOf(event.snapshot);
            draft('syncedAt')[id] = now;
            break;
          }
          case 'output': {
            const waiting = held.get(id);
            if (waiting) {
              waiting.push(event);
              break;
            }
            const current = (changed.output ?? state.output)[id];
            // No snapshot held: nothing shows this run's output (a view that does loads it first).
            if (!current) break;
            const next = appendAt(current, event.stream, event.offset, event.text);
            if (next === 'gap') {
              held.set(id, [event]);
              refetch(id);
              break;
            }
            if (next !== current) draft('output')[id] = next;
            if (event.atMs !== undefined) {
              const known = (changed.marks ?? state.marks)[id];
              const list = known?.list ?? [];
              if (addMark(list, event.stream, event.offset, event.atMs)) draft('marks')[id] = { list, version: (known?.version ?? 0) + 1 };
            }
            break;
          }
          case 'tree': {
            draft('trees')[id] = event.snapshot;
            const run = runOf(id);
            const at = Date.parse(event.snapshot.sampledAt) - Date.parse(run?.startedAt ?? '');
            if (run && Number.isFinite(at)) {
              const series = draft('series');
              const s = event.snapshot;
              series[id] = addSample(series[id] ?? emptySeries(), [Math.max(0, at), s.cpuPercent, s.rssBytes, s.processes]);
            }
            break;
          }
          case 'signal-sent': {
            const signals = draft('signals');
            signals[id] = [...(signals[id] ?? []), { signal: event.signal, atMs: event.atMs } as SignalSent];
            // Teardown signals and those a person sent to one process are no step of the stop sequence.
            const step = event.step === 'teardown' || event.step === 'user' ? undefined : event.step;
            if (step) draft('stopProgress')[id] = { step, seenAt: now, ...(event.killAtMs !== undefined ? { killAtMs: event.killAtMs } : {}) };
            const run = runOf(id);
            if (run && run.state === 'running' && step) draft('runs')[id] = { ...run, state: 'stopping' };
            break;
          }
          case 'limit-extended': {
            const run = runOf(id);
            if (run) draft('runs')[id] = { ...run, limitMs: event.limitMs };
            break;
          }
          // A service's live state: ready or not, its ports, its lease, its input pipe closed.
          case 'ready':
          case 'ports':
          case 'lease-renewed':
          case 'main-exited':
          case 'input': {
            const run = runOf(id);
            if (run && run.state !== 'ended') draft('runs')[id] = withServiceEvent(run, event);
            break;
          }
          case 'ended': {
            const before = runOf(id);
            if (!before) order = [id, ...order];
            if (before?.state !== 'ended') endedNow++;
            draft('syncedAt')[id] = now;
            const live = (changed.output ?? state.output)[id];
            const partial = (changed.partial ?? state.partial)[id] === true;
            if (event.result.outputChars === undefined) {
              // A whole result carries its output.
              draft('runs')[id] = event.result;
              if (partial) delete draft('partial')[id];
            } else {
              // A summary: the output streamed here is kept when it is the whole of it (chunks waiting for a snapshot mean it is not).
              const exact = held.has(id) || partial ? null : exactOutput(live, event.result);
              if (exact) {
                const { outputChars: _omitted, ...fields } = event.result;
                draft('runs')[id] = { ...fields, ...exact };
              } else {
                // Without output, as a listing holds a run: a view that shows it fetches the output in pages (load).
                draft('runs')[id] = event.result;
                if (!partial) draft('partial')[id] = true;
              }
            }
            if (live) delete draft('output')[id];
            held.delete(id);
            break;
          }
        }
      }
      if (order !== state.order) changed.order = order;
      if (endedNow > 0 && state.ended.total !== null) changed.ended = { ...state.ended, total: state.ended.total + endedNow };
      return changed;
    });
  };

  return {
    api: null,
    runs: {},
    order: [],
    output: {},
    pages: {},
    partial: {},
    ended: { total: null, cursor: null, loading: false },
    syncedAt: {},
    trees: {},
    marks: {},
    series: {},
    signals: {},
    stopProgress: {},
    error: null,
    connected: false,
    connection: 'online',
    offlineSince: null,
    hosts: [],

    setHosts(hosts) {
      // A remote run's events cross a link, where one can be lost (a stream that stalls without an error): each live
      // remote run is fetched again every REMOTE_RECONCILE_MS, so a lost end or step leaves it stale that long at most.
      const now = Date.now();
      if (now - lastReconcile >= REMOTE_RECONCILE_MS) {
        lastReconcile = now;
        const reachable = new Set(hosts.filter((h) => h.state === 'connected').map((h) => h.name));
        for (const run of Object.values(get().runs)) {
          const at = run.id.lastIndexOf('@');
          if (at > 0 && run.state !== 'ended' && reachable.has(run.id.slice(at + 1))) void get().load(run.id);
        }
      }
      const before = new Map(get().hosts.map((h) => [h.name, h]));
      const same = hosts.length === before.size && hosts.every((h) => before.get(h.name)?.state === h.state && before.get(h.name)?.lastError === h.lastError && before.get(h.name)?.connections === h.connections);
      if (same) return;
      set({ hosts });
      // A remote connected again (or for the first time, or it dropped and came back between two looks): its runs are fetched, those that ended meanwhile with them.
      if (hosts.some((h) => h.state === 'connected' && (before.get(h.name)?.state !== 'connected' || before.get(h.name)?.connections !== h.connections))) void get().resync();
    },

    connect(api) {
      set({ api, connected: true });
      // Subscribe first; the snapshot is taken once the stream is open, and the two meet by offset.
      let markOpen: () => void = () => undefined;
      opened = new Promise<void>((resolve) => (markOpen = resolve));
      const fallback = setTimeout(markOpen, OPEN_WAIT_MS);
      const unsubscribe = api.subscribe(
        (event) => {
          queue.push(event);
          if (!scheduled) {
            scheduled = true;
            schedule(flush);
          }
        },
        {
          onOpen: () => {
            clearTimeout(fallback);
            markOpen();
          },
        },
      );
      // The list at once for the first paint (it holds no output, so nothing is merged onto it), and again
      // once the stream is open: a run that changed between the two answers comes right from the second.
      const listNow = loadList(api, true);
      void opened.then(async () => {
        await listNow;
        await loadList(api, false);
      });
      return () => {
        clearTimeout(fallback);
        unsubscribe();
        set({ connected: false });
      };
    },

    setConnection(connection) {
      const state = get();
      if (state.connection === connection) return;
      const offline = connection !== 'online';
      frozenAt = offline ? (state.offlineSince ?? performance.now()) : null;
      set({ connection, connected: !offline && state.api !== null, offlineSince: offline ? frozenAt : null });
      // Back: a banner that said the host could not be reached is stale now.
      if (!offline && state.error === UNREACHABLE) set({ error: null });
      // Back: what happened meanwhile comes from the replayed events; the clocks restart from fresh snapshots.
      if (!offline && state.connection !== 'online') void get().resync();
    },

    async resync() {
      const api = get().api;
      if (!api) return;
      const listed = await loadList(api);
      if (!listed) return;
      const { runs, output } = get();
      // A remote that cannot be reached now lists nothing: its runs keep what was last seen, marked unreachable, until it is back.
      const reachable = new Set([LOCAL_HOST, ...get().hosts.filter((h) => h.state === 'connected').map((h) => h.name)]);
      const stale = Object.values(runs).filter((run) => run.state !== 'ended' && !listed.has(run.id) && reachable.has(run.host ?? LOCAL_HOST));
      // Live here, unknown to the host now (it restarted): their stored result says how they ended (lost).
      // Live runs whose output the page shows: fetched again and merged by offset (events may have been missed).
      const shown = Object.keys(output).filter((id) => listed.has(id) && runs[id]?.state !== 'ended');
      await Promise.all([...stale.map((run) => run.id), ...shown].map((id) => get().load(id)));
    },

    async load(id, options) {
      const api = get().api;
      if (!api) return null;
      const known = get().runs[id];
      const whole = async (): Promise<RunResult | null> => {
        // From the moment it is asked for, the run's chunks wait for the snapshot, which holds all that came before.
        if (!held.has(id)) held.set(id, []);
        return fetchWhole(api, id);
      };
      if (api.output && (known === undefined || (known.state === 'ended' && get().partial[id]))) return loadPaged(api, id, known !== undefined, whole, options);
      return whole();
    },

    seedSeries(id, host) {
      set((state) => ({ series: { ...state.series, [id]: joinSeries(host, state.series[id]) } }));
    },

    async loadMoreEnded() {
      const { api, ended } = get();
      if (!api || ended.loading || ended.cursor === null) return;
      set({ ended: { ...ended, loading: true } });
      try {
        const page = await api.history({ state: 'ended', limit: ENDED_PAGE_SIZE, cursor: ended.cursor, host: ALL_HOSTS });
        merge(page.runs.map(fromSummary));
        set((state) => ({ ended: { ...state.ended, cursor: page.nextCursor, loading: false } }));
      } catch (error) {
        set((state) => ({ ended: { ...state.ended, loading: false } }));
        get().report(error);
      }
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
        const current = state.output[result.id];
        const fresh = baseOf(result);
        const base = current && current.stdoutEnd >= fresh.stdoutEnd && current.stderrEnd >= fresh.stderrEnd ? current : fresh;
        const merged = mergeHeld(state, result.id, base, events ?? []);
        gapAt = merged.gapAt;
        return { ...next, ...merged.changed };
      });
      // Still a gap past this snapshot (it was taken before those chunks' predecessors): fetched again, never skipped.
      if (gapAt >= 0 && events) stillGap(result.id, events.slice(gapAt));
      else if (result.state !== 'ended' && result.outputChars === undefined) refetches.delete(result.id);
    },

    report(error) {
      set({ error: messageOf(error) });
    },

    dismissError() {
      set({ error: null });
    },
  };
});

/**
 * The stream a link's line can be fetched by, ahead of the pages before it:
 * the stream named, or for the merged view the one stream with output; none
 * when both have output (the merged order needs both up to it) or the kept
 * text was cut (its lines are then numbered from the stream's end).
 */
export function linkedStream(stream: 'all' | 'stdout' | 'stderr', run: Pick<RunResult, 'outputChars' | 'stdoutTruncated' | 'stderrTruncated'>): 'stdout' | 'stderr' | null {
  const chars = run.outputChars ?? { stdout: 0, stderr: 0 };
  const named = stream === 'all' ? (chars.stderr === 0 ? 'stdout' : chars.stdout === 0 ? 'stderr' : null) : stream;
  if (named === null) return null;
  return (named === 'stdout' ? run.stdoutTruncated : run.stderrTruncated) > 0 ? null : named;
}

function withoutKey<T>(record: Record<string, T>, key: string): Record<string, T> {
  const copy = { ...record };
  delete copy[key];
  return copy;
}

/** A run's output as the page knows it now: what streamed in while live, else what its pages brought so far, else the run's own. */
export function useRunOutput(run: Pick<RunResult, 'id' | 'stdout' | 'stderr'>): { stdout: string; stderr: string; stdoutLines?: number; stderrLines?: number } {
  const live = useWarden((s) => s.output[run.id]);
  const paged = useWarden((s) => s.pages[run.id]);
  return live ?? paged ?? run;
}

/** A live run's elapsed time now: its last known elapsedMs plus the time since. */
export function liveElapsed(run: RunResult, syncedAt: number | undefined, now = performance.now(), frozen: number | null = frozenAt): number {
  if (run.state === 'ended' || syncedAt === undefined) return run.elapsedMs;
  // While the host is away nothing is known of the run: its clock stands still
  // at the moment the page lost it, whatever `now` is (a clock's timer reading
  // from before that moment would make the frozen figure step once more).
  const at = frozen === null ? now : frozen;
  return run.elapsedMs + Math.max(0, at - syncedAt);
}

/** A live run with a service event applied (the event's own fields; output and the rest as they were). */
export function withServiceEvent(run: RunResult, event: Extract<RunEvent, { type: 'ready' | 'ports' | 'lease-renewed' | 'main-exited' | 'input' }>): RunResult {
  switch (event.type) {
    case 'ready':
      return { ...run, ready: event.ready, ...(event.ready ? { probes: event.ready.probes } : {}) };
    case 'ports':
      return { ...run, ports: event.ports };
    case 'lease-renewed':
      return run.lease ? { ...run, lease: { ...run.lease, endsAtMs: event.endsAtMs } } : run;
    case 'main-exited':
      return { ...run, mainExit: event.mainExit };
    case 'input':
      return event.eof ? { ...run, stdinPipe: 'closed' } : run;
  }
}
