// The History view's logic, kept apart from React so it can be tested: the
// filters and the query they make, the paged list and the rule that only the
// newest request may change it, and how a listed run reads in a row.

import type { HistoryQuery } from '../../../../shared/api';
import type { RunPage, RunSummary, VerdictCounts } from '../../../../shared/history';
import type { RunResult, Verdict } from '../../../../shared/result';
import { scriptTitle } from '../../format';

export const PAGE_SIZE = 100;

/** The verdicts a filter offers, with 'oom' (a kill the out-of-memory killer made) apart from other kills, as the badge says. */
export const VERDICTS: (Verdict | 'oom')[] = ['completed', 'failed', 'timed-out', 'stopped', 'oom', 'killed', 'crashed', 'signaled', 'lost', 'spawn-failed'];

/** '' is any run; 'live' is a run not ended yet (queued, running or stopping); 'oom' an out-of-memory kill. */
export type VerdictFilter = '' | 'live' | Verdict | 'oom';

export type RangeKey = 'hour' | 'day' | 'week' | 'month' | 'all';

export const RANGES: { key: RangeKey; label: string; ms: number | null }[] = [
  { key: 'hour', label: 'Last hour', ms: 3_600_000 },
  { key: 'day', label: 'Last 24 h', ms: 86_400_000 },
  { key: 'week', label: 'Last 7 days', ms: 7 * 86_400_000 },
  { key: 'month', label: 'Last 30 days', ms: 30 * 86_400_000 },
  { key: 'all', label: 'All time', ms: null },
];

/** The filters as the inputs hold them (text as typed). */
export interface HistoryFilters {
  verdict: VerdictFilter;
  range: RangeKey;
  session: string;
  exitCode: string;
  text: string;
}

export const NO_FILTERS: HistoryFilters = { verdict: '', range: 'all', session: '', exitCode: '', text: '' };

export function isVerdictFilter(value: string): value is VerdictFilter {
  return value === '' || value === 'live' || (VERDICTS as string[]).includes(value);
}

export function isRangeKey(value: string): value is RangeKey {
  return RANGES.some((r) => r.key === value);
}

/** The exit code typed: undefined when the box is empty, null when it is not a whole number. */
export function parseExitCode(input: string): number | null | undefined {
  const text = input.trim();
  if (text === '') return undefined;
  if (!/^-?\d{1,10}$/.test(text)) return null;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : null;
}

/** Whether any filter narrows the list (an exit code that is not a number narrows nothing). */
export function isFiltered(filters: HistoryFilters): boolean {
  return (
    filters.verdict !== '' ||
    filters.range !== 'all' ||
    filters.session.trim() !== '' ||
    typeof parseExitCode(filters.exitCode) === 'number' ||
    filters.text.trim() !== ''
  );
}

/** The order of the list, kept by the store across pages: by start (newest first by default), elapsed time or peak memory. */
export interface HistorySort {
  key: 'started' | 'elapsed' | 'peak';
  dir: 'asc' | 'desc';
}
export const DEFAULT_HISTORY_SORT: HistorySort = { key: 'started', dir: 'desc' };

/** A click on a sortable header: the other direction on the sorted column, else that column largest (newest) first. */
export function nextHistorySort(current: HistorySort, key: HistorySort['key']): HistorySort {
  return current.key === key ? { key, dir: current.dir === 'asc' ? 'desc' : 'asc' } : { key, dir: 'desc' };
}

/** The first page's query for these filters; `now` (ms since the epoch) anchors the time range. Asks for the counts per verdict too. */
export function queryOf(filters: HistoryFilters, now: number, limit = PAGE_SIZE, sort: HistorySort = DEFAULT_HISTORY_SORT): HistoryQuery {
  const query: HistoryQuery = { limit, counts: true };
  if (sort.key !== 'started' || sort.dir !== 'desc') {
    query.sort = sort.key;
    query.order = sort.dir;
  }
  if (filters.verdict === 'live') query.state = 'live';
  else if (filters.verdict === 'oom') Object.assign(query, { verdict: 'killed', oom: true });
  // "killed" is every other kill: an out-of-memory one has its own word.
  else if (filters.verdict === 'killed') Object.assign(query, { verdict: 'killed', oom: false });
  else if (filters.verdict !== '') query.verdict = filters.verdict;
  const range = RANGES.find((r) => r.key === filters.range);
  if (range?.ms != null) query.since = new Date(now - range.ms).toISOString();
  const session = filters.session.trim();
  if (session !== '') query.session = session;
  const exitCode = parseExitCode(filters.exitCode);
  if (typeof exitCode === 'number') query.exitCode = exitCode;
  const text = filters.text.trim();
  if (text !== '') query.text = text;
  return query;
}

/** What History's link carries: its filters, its order and whose history, as the page shows them. */
export interface HistoryPlace {
  filters: HistoryFilters;
  sort: HistorySort;
  /** '' every host; else one host's name. */
  host: string;
}

const SORT_KEYS: HistorySort['key'][] = ['started', 'elapsed', 'peak'];

/**
 * History's place from its link's query (#/history?verdict=failed&range=day&q=numpy):
 * each known field that reads right, the others left at their defaults, so a
 * link edited by hand or from an older page still opens.
 */
export function placeFromQuery(query: string | undefined): HistoryPlace {
  const params = new URLSearchParams(query ?? '');
  const verdict = params.get('verdict') ?? '';
  const range = params.get('range') ?? 'all';
  const [sortKey, sortDir] = (params.get('sort') ?? '').split(':');
  const sort: HistorySort = SORT_KEYS.includes(sortKey as HistorySort['key']) && (sortDir === 'asc' || sortDir === 'desc') ? { key: sortKey as HistorySort['key'], dir: sortDir } : DEFAULT_HISTORY_SORT;
  return {
    filters: {
      verdict: isVerdictFilter(verdict) ? verdict : '',
      range: isRangeKey(range) ? range : 'all',
      session: (params.get('session') ?? '').slice(0, 64),
      exitCode: (params.get('exit') ?? '').slice(0, 12),
      text: (params.get('q') ?? '').slice(0, 1000),
    },
    sort,
    host: (params.get('host') ?? '').slice(0, 64),
  };
}

/** The link's query for a place: only what differs from the defaults, in a fixed order ('' when nothing does). */
export function queryOfPlace(place: HistoryPlace): string {
  const params = new URLSearchParams();
  const { filters, sort, host } = place;
  if (filters.verdict !== '') params.set('verdict', filters.verdict);
  if (filters.range !== 'all') params.set('range', filters.range);
  if (filters.session.trim() !== '') params.set('session', filters.session.trim());
  if (filters.exitCode.trim() !== '') params.set('exit', filters.exitCode.trim());
  if (filters.text.trim() !== '') params.set('q', filters.text.trim());
  if (sort.key !== DEFAULT_HISTORY_SORT.key || sort.dir !== DEFAULT_HISTORY_SORT.dir) params.set('sort', `${sort.key}:${sort.dir}`);
  if (host !== '') params.set('host', host);
  return params.toString();
}

/** A key that changes exactly when the query would (apart from the moving clock). */
export function filtersKey(filters: HistoryFilters): string {
  const exitCode = parseExitCode(filters.exitCode);
  return JSON.stringify([filters.verdict, filters.range, filters.session.trim(), typeof exitCode === 'number' ? exitCode : null, filters.text.trim()]);
}

/** The list as the view shows it. */
export interface ListState {
  /** The newest request's number; answers to any other are stale and dropped. */
  seq: number;
  runs: RunSummary[];
  nextCursor: string | null;
  /** A request is in flight. */
  loading: boolean;
  /** The in-flight request replaces the list (a filter changed) rather than extending it. */
  replacing: boolean;
  /** The first page for the current filters has arrived. */
  loaded: boolean;
  error: string | null;
  /** Runs per verdict matching the filters but the verdict, from the first page. */
  counts: VerdictCounts | null;
  /** The request in flight asks the same filters again (Refresh, the view shown again): its answer is merged over the rows shown. */
  refreshing: boolean;
  /**
   * The rows shown are the same filters' last answer, not the newest: a
   * refresh could not be had (the host away), so they stay on screen, greyed,
   * rather than an error in their place.
   */
  stale: boolean;
}

export const EMPTY_LIST: ListState = { seq: 0, runs: [], nextCursor: null, loading: false, replacing: false, loaded: false, error: null, counts: null, refreshing: false, stale: false };

export type ListAction =
  /** `refresh`: the same filters asked again (Refresh, a page shown again): the rows on screen stay until the answer. */
  | { type: 'request'; seq: number; append: boolean; refresh?: boolean }
  | { type: 'page'; seq: number; page: RunPage; append: boolean; sort?: HistorySort }
  | { type: 'failed'; seq: number; error: string };

export function listReducer(state: ListState, action: ListAction): ListState {
  switch (action.type) {
    case 'request': {
      const refreshing = !action.append && action.refresh === true && state.loaded;
      return { ...state, seq: action.seq, loading: true, replacing: !action.append, refreshing, loaded: action.append || refreshing ? state.loaded : false, error: null };
    }
    case 'page': {
      if (action.seq !== state.seq) return state;
      // A first page asked again over pages already shown: what it answers, then the rows shown after it (a reader back on the list finds it as long as it was).
      const merged = state.refreshing ? mergeFirstPage(state.runs, action.page.runs, action.sort ?? DEFAULT_HISTORY_SORT, action.page.nextCursor !== null) : null;
      return {
        ...state,
        runs: action.append ? appendRuns(state.runs, action.page.runs) : (merged ?? action.page.runs),
        nextCursor: merged && merged.length > action.page.runs.length ? state.nextCursor : action.page.nextCursor,
        counts: action.append ? state.counts : (action.page.counts ?? null),
        loading: false,
        replacing: false,
        refreshing: false,
        loaded: true,
        error: null,
        stale: false,
      };
    }
    case 'failed':
      if (action.seq !== state.seq) return state;
      // The same filters asked again (the host away): the rows stay, greyed, the failure said once.
      if (state.refreshing) return { ...state, loading: false, replacing: false, refreshing: false, error: action.error, stale: true };
      // A failed next page keeps the list; a failed new list must not leave the old filters' runs on show.
      return state.replacing
        ? { ...state, runs: [], nextCursor: null, loading: false, replacing: false, loaded: true, error: action.error }
        : { ...state, loading: false, loaded: true, error: action.error };
  }
}

/** Where a run stands in a sort: its value, then its id (as the history pages them). */
function sortValue(run: RunSummary, sort: HistorySort): number {
  if (sort.key === 'elapsed') return run.elapsedMs;
  if (sort.key === 'peak') return run.peakRssBytes ?? -1;
  return Date.parse(run.startedAt);
}

/**
 * A first page answered again over the rows shown: its runs, then the rows
 * shown that come after its last in the order (none when the page was the
 * whole list), each run once.
 */
export function mergeFirstPage(shown: RunSummary[], fresh: RunSummary[], sort: HistorySort, more: boolean): RunSummary[] {
  const last = fresh[fresh.length - 1];
  if (!more || !last) return fresh;
  const ids = new Set(fresh.map((r) => r.id));
  const sign = sort.dir === 'desc' ? -1 : 1;
  const after = (r: RunSummary) => {
    const a = sortValue(r, sort);
    const b = sortValue(last, sort);
    return a !== b ? sign * (a - b) > 0 : sign * r.id.localeCompare(last.id) > 0;
  };
  return [...fresh, ...shown.filter((r) => !ids.has(r.id) && after(r))];
}

/** The next page after the runs already listed, without any run twice. */
export function appendRuns(listed: RunSummary[], more: RunSummary[]): RunSummary[] {
  const seen = new Set(listed.map((r) => r.id));
  return [...listed, ...more.filter((r) => !seen.has(r.id))];
}

/** A listed run that was live when listed, updated from what the page knows of it now. */
export function withLive(summary: RunSummary, live: RunResult | undefined): RunSummary {
  if (!live || summary.state === 'ended') return summary;
  const livePeak = live.peak?.rssBytes;
  return {
    ...summary,
    state: live.state,
    verdict: live.verdict,
    exitCode: live.exitCode,
    signal: live.signal,
    endedAt: live.endedAt,
    elapsedMs: live.elapsedMs,
    limitMs: live.limitMs,
    peakRssBytes: livePeak === undefined ? summary.peakRssBytes : Math.max(summary.peakRssBytes ?? 0, livePeak),
  };
}

/** A run's elapsed time at `now` (performance.now()): a live one's last figure plus the time since the page got it. */
export function elapsedNow(run: Pick<RunSummary, 'state' | 'elapsedMs'>, syncedAt: number | undefined, now: number): number {
  if (run.state === 'ended' || syncedAt === undefined) return run.elapsedMs;
  return run.elapsedMs + Math.max(0, now - syncedAt);
}

/** What the run runs, as one line: its command, or the first non-empty line of its script. */
export function firstLine(run: Pick<RunSummary, 'command' | 'argv' | 'code'>): string {
  if (run.command) return run.command;
  if (run.argv) return run.argv.join(' ');
  return scriptTitle(run.code ?? '');
}

/** The verdict chips of the counts, in the order of the verdict filter, only those with runs; out-of-memory kills apart from the other kills. */
export function countChips(counts: VerdictCounts | null): { verdict: Verdict | 'live' | 'oom'; count: number }[] {
  if (!counts) return [];
  return (['live', ...VERDICTS] as const).flatMap((verdict) => {
    const count = verdict === 'killed' ? (counts.killed ?? 0) - (counts.oom ?? 0) : (counts[verdict] ?? 0);
    return count > 0 ? [{ verdict, count }] : [];
  });
}

/** The exit code, else the signal that ended it, else a dash. */
export function exitText(run: Pick<RunSummary, 'exitCode' | 'signal'>): string {
  if (run.exitCode !== null) return String(run.exitCode);
  return run.signal ?? '–';
}
