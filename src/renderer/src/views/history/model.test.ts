import { describe, expect, it } from 'vitest';
import type { RunSummary } from '../../../../shared/history';
import type { RunResult } from '../../../../shared/result';
import {
  EMPTY_LIST,
  NO_FILTERS,
  appendRuns,
  elapsedNow,
  exitText,
  filtersKey,
  firstLine,
  isFiltered,
  listReducer,
  parseExitCode,
  queryOf,
  DEFAULT_HISTORY_SORT,
  nextHistorySort,
  countChips,
  withLive,
  type ListState,
  isVerdictFilter,
  mergeFirstPage,
  placeFromQuery,
  queryOfPlace,
} from './model';

function summary(id: string, over: Partial<RunSummary> = {}): RunSummary {
  return {
    id,
    hostId: 'h',
    kind: 'command',
    argv: ['echo', id],
    command: `echo ${id}`,
    cwd: '/tmp',
    state: 'ended',
    verdict: 'completed',
    exitCode: 0,
    signal: null,
    startedAt: '2025-01-01T00:00:00.000Z',
    endedAt: '2025-01-01T00:00:01.000Z',
    elapsedMs: 1000,
    limitMs: null,
    advice: null,
    stdoutTruncated: 0,
    stderrTruncated: 0,
    peakRssBytes: 1024,
    peakProcesses: 1,
    outputBytes: 0,
    ...over,
  };
}

const NOW = Date.parse('2025-06-01T12:00:00.000Z');

describe('sorting and counts', () => {
  it('asks the store for the order, and leaves the default order unsaid', () => {
    expect(queryOf(NO_FILTERS, NOW, 100, { key: 'elapsed', dir: 'desc' })).toMatchObject({ sort: 'elapsed', order: 'desc' });
    expect(queryOf(NO_FILTERS, NOW, 100, { key: 'started', dir: 'asc' })).toMatchObject({ sort: 'started', order: 'asc' });
    expect(queryOf(NO_FILTERS, NOW, 100, DEFAULT_HISTORY_SORT)).not.toHaveProperty('sort');
    expect(nextHistorySort(DEFAULT_HISTORY_SORT, 'started')).toEqual({ key: 'started', dir: 'asc' });
    expect(nextHistorySort(DEFAULT_HISTORY_SORT, 'peak')).toEqual({ key: 'peak', dir: 'desc' });
  });

  it('keeps the first page\'s counts across later pages, and shows the verdicts that have runs', () => {
    const first = listReducer(listReducer(EMPTY_LIST, { type: 'request', seq: 1, append: false }), { type: 'page', seq: 1, append: false, page: { runs: [], nextCursor: 'c', counts: { failed: 3, live: 1, total: 4 } } });
    const next = listReducer(listReducer(first, { type: 'request', seq: 2, append: true }), { type: 'page', seq: 2, append: true, page: { runs: [], nextCursor: null } });
    expect(next.counts).toEqual({ failed: 3, live: 1, total: 4 });
    expect(countChips(next.counts)).toEqual([
      { verdict: 'live', count: 1 },
      { verdict: 'failed', count: 3 },
    ]);
    expect(countChips(null)).toEqual([]);
  });

  it('counts out-of-memory kills in their own chip, and only the other kills as killed', () => {
    expect(countChips({ killed: 3, oom: 2, total: 3 })).toEqual([
      { verdict: 'oom', count: 2 },
      { verdict: 'killed', count: 1 },
    ]);
    expect(countChips({ killed: 2, oom: 2, total: 2 })).toEqual([{ verdict: 'oom', count: 2 }]);
    expect(countChips({ killed: 2, total: 2 })).toEqual([{ verdict: 'killed', count: 2 }]);
  });
});

describe('queryOf', () => {
  it('asks for a page of 100 with no filters', () => {
    expect(queryOf(NO_FILTERS, NOW)).toEqual({ limit: 100, counts: true });
  });

  it('turns each filter into its query field', () => {
    const query = queryOf({ verdict: 'failed', range: 'day', session: ' work ', exitCode: ' 3 ', text: '  numpy import ' }, NOW);
    expect(query).toEqual({ limit: 100, counts: true, verdict: 'failed', since: '2025-05-31T12:00:00.000Z', session: 'work', exitCode: 3, text: 'numpy import' });
  });

  it('asks for live runs by state, not verdict', () => {
    expect(queryOf({ ...NO_FILTERS, verdict: 'live' }, NOW)).toEqual({ limit: 100, counts: true, state: 'live' });
  });

  it('asks for out-of-memory kills apart from the other kills', () => {
    expect(queryOf({ ...NO_FILTERS, verdict: 'oom' }, NOW)).toEqual({ limit: 100, counts: true, verdict: 'killed', oom: true });
    expect(queryOf({ ...NO_FILTERS, verdict: 'killed' }, NOW)).toEqual({ limit: 100, counts: true, verdict: 'killed', oom: false });
    expect(isVerdictFilter('oom')).toBe(true);
  });

  it('anchors each range at now', () => {
    expect(queryOf({ ...NO_FILTERS, range: 'hour' }, NOW).since).toBe('2025-06-01T11:00:00.000Z');
    expect(queryOf({ ...NO_FILTERS, range: 'week' }, NOW).since).toBe('2025-05-25T12:00:00.000Z');
    expect(queryOf({ ...NO_FILTERS, range: 'month' }, NOW).since).toBe('2025-05-02T12:00:00.000Z');
  });

  it('leaves out an exit code that is not a number', () => {
    expect(queryOf({ ...NO_FILTERS, exitCode: '3x' }, NOW)).toEqual({ limit: 100, counts: true });
  });
});

describe('parseExitCode and isFiltered', () => {
  it('reads whole numbers only', () => {
    expect(parseExitCode('')).toBeUndefined();
    expect(parseExitCode('  ')).toBeUndefined();
    expect(parseExitCode('0')).toBe(0);
    expect(parseExitCode('-2')).toBe(-2);
    expect(parseExitCode('1.5')).toBeNull();
    expect(parseExitCode('abc')).toBeNull();
    expect(parseExitCode('1e3')).toBeNull();
  });

  it('counts only filters that narrow the list', () => {
    expect(isFiltered(NO_FILTERS)).toBe(false);
    expect(isFiltered({ ...NO_FILTERS, text: '   ' })).toBe(false);
    expect(isFiltered({ ...NO_FILTERS, exitCode: 'x' })).toBe(false);
    expect(isFiltered({ ...NO_FILTERS, exitCode: '0' })).toBe(true);
    expect(isFiltered({ ...NO_FILTERS, range: 'hour' })).toBe(true);
    expect(isFiltered({ ...NO_FILTERS, verdict: 'live' })).toBe(true);
  });

  it('keys filters by what they ask for', () => {
    expect(filtersKey({ ...NO_FILTERS, text: ' abc ' })).toBe(filtersKey({ ...NO_FILTERS, text: 'abc' }));
    expect(filtersKey({ ...NO_FILTERS, exitCode: 'x' })).toBe(filtersKey(NO_FILTERS));
    expect(filtersKey({ ...NO_FILTERS, exitCode: '0' })).not.toBe(filtersKey(NO_FILTERS));
  });
});

describe('listReducer', () => {
  const page = (ids: string[], nextCursor: string | null = null) => ({ runs: ids.map((id) => summary(id)), nextCursor });

  it('replaces the list with the first page and appends the next', () => {
    let state: ListState = listReducer(EMPTY_LIST, { type: 'request', seq: 1, append: false });
    expect(state).toMatchObject({ loading: true, replacing: true, loaded: false });
    state = listReducer(state, { type: 'page', seq: 1, page: page(['a', 'b'], 'c1'), append: false });
    expect(state).toMatchObject({ loading: false, loaded: true, nextCursor: 'c1' });
    state = listReducer(state, { type: 'request', seq: 2, append: true });
    expect(state).toMatchObject({ loading: true, replacing: false, loaded: true });
    state = listReducer(state, { type: 'page', seq: 2, page: page(['b', 'c']), append: true });
    expect(state.runs.map((r) => r.id)).toEqual(['a', 'b', 'c']);
    expect(state.nextCursor).toBeNull();
  });

  it('drops an answer that came back after a newer request', () => {
    let state = listReducer(EMPTY_LIST, { type: 'request', seq: 1, append: false });
    state = listReducer(state, { type: 'request', seq: 2, append: false });
    state = listReducer(state, { type: 'page', seq: 2, page: page(['new']), append: false });
    const after = listReducer(state, { type: 'page', seq: 1, page: page(['stale'], 'x'), append: false });
    expect(after).toBe(state);
    expect(after.runs.map((r) => r.id)).toEqual(['new']);
    expect(listReducer(state, { type: 'failed', seq: 1, error: 'boom' })).toBe(state);
  });

  it('drops a next page that arrives after the filters changed', () => {
    let state = listReducer(EMPTY_LIST, { type: 'request', seq: 1, append: false });
    state = listReducer(state, { type: 'page', seq: 1, page: page(['a'], 'c1'), append: false });
    state = listReducer(state, { type: 'request', seq: 2, append: true });
    state = listReducer(state, { type: 'request', seq: 3, append: false });
    state = listReducer(state, { type: 'page', seq: 2, page: page(['b']), append: true });
    expect(state.runs.map((r) => r.id)).toEqual(['a']);
    expect(state.loading).toBe(true);
    state = listReducer(state, { type: 'page', seq: 3, page: page(['z']), append: false });
    expect(state.runs.map((r) => r.id)).toEqual(['z']);
  });

  it('keeps the list when a next page fails, and clears it when a new list fails', () => {
    let state = listReducer(EMPTY_LIST, { type: 'request', seq: 1, append: false });
    state = listReducer(state, { type: 'page', seq: 1, page: page(['a'], 'c1'), append: false });
    const more = listReducer(listReducer(state, { type: 'request', seq: 2, append: true }), { type: 'failed', seq: 2, error: 'boom' });
    expect(more).toMatchObject({ error: 'boom', loading: false, nextCursor: 'c1' });
    expect(more.runs).toHaveLength(1);
    const fresh = listReducer(listReducer(state, { type: 'request', seq: 2, append: false }), { type: 'failed', seq: 2, error: 'boom' });
    expect(fresh).toMatchObject({ error: 'boom', loading: false, loaded: true, nextCursor: null, runs: [] });
  });
});

describe('rows', () => {
  it('appends without repeating a run', () => {
    expect(appendRuns([summary('a')], [summary('a'), summary('b')]).map((r) => r.id)).toEqual(['a', 'b']);
  });

  it('shows a listed live run as the page knows it now', () => {
    const listed = summary('a', { state: 'running', verdict: undefined, exitCode: null, endedAt: undefined, elapsedMs: 10, peakRssBytes: 5000 });
    const live = { id: 'a', state: 'ended', verdict: 'failed', exitCode: 3, signal: null, endedAt: 'x', elapsedMs: 900, limitMs: 1000, peak: { rssBytes: 9000, processes: 2 } } as RunResult;
    expect(withLive(listed, live)).toMatchObject({ state: 'ended', verdict: 'failed', exitCode: 3, elapsedMs: 900, peakRssBytes: 9000 });
    expect(withLive(listed, { ...live, peak: undefined })).toMatchObject({ peakRssBytes: 5000 });
    expect(withLive(listed, undefined)).toBe(listed);
    const ended = summary('b');
    expect(withLive(ended, live)).toBe(ended);
  });

  it('moves a live run’s elapsed time on from when the page got it', () => {
    expect(elapsedNow({ state: 'running', elapsedMs: 1000 }, 500, 2500)).toBe(3000);
    expect(elapsedNow({ state: 'running', elapsedMs: 1000 }, undefined, 2500)).toBe(1000);
    expect(elapsedNow({ state: 'ended', elapsedMs: 1000 }, 500, 2500)).toBe(1000);
  });

  it('says what a run runs in one line', () => {
    expect(firstLine({ command: "bash -c 'exit 3'", argv: ['bash', '-c', 'exit 3'], code: undefined })).toBe("bash -c 'exit 3'");
    // A script by its first line that is not an import or a comment (as Runs and the detail title it).
    expect(firstLine({ command: null, argv: undefined, code: '\n\n  import numpy as np\nprint(1)' })).toBe('print(1)');
    expect(firstLine({ command: null, argv: undefined, code: 'import numpy as np\n' })).toBe('import numpy as np');
    expect(firstLine({ command: null, argv: undefined, code: '' })).toBe('');
  });

  it('shows the exit code, else the signal', () => {
    expect(exitText({ exitCode: 0, signal: null })).toBe('0');
    expect(exitText({ exitCode: null, signal: 'SIGKILL' })).toBe('SIGKILL');
    expect(exitText({ exitCode: null, signal: null })).toBe('–');
  });
});

describe("History's link", () => {
  it('carries only what differs from the defaults, and reads back to the same place', () => {
    const place = { filters: { verdict: 'oom' as const, range: 'day' as const, session: ' work ', exitCode: ' 3 ', text: ' numpy import ' }, sort: { key: 'peak' as const, dir: 'asc' as const }, host: 'gpu' };
    const query = queryOfPlace(place);
    expect(query).toBe('verdict=oom&range=day&session=work&exit=3&q=numpy+import&sort=peak%3Aasc&host=gpu');
    expect(placeFromQuery(query)).toEqual({ filters: { verdict: 'oom', range: 'day', session: 'work', exitCode: '3', text: 'numpy import' }, sort: { key: 'peak', dir: 'asc' }, host: 'gpu' });
    expect(queryOfPlace({ filters: NO_FILTERS, sort: DEFAULT_HISTORY_SORT, host: '' })).toBe('');
    expect(queryOfPlace({ filters: NO_FILTERS, sort: { key: 'started', dir: 'asc' }, host: '' })).toBe('sort=started%3Aasc');
  });

  it('opens a link edited by hand with what reads right, the rest at its defaults', () => {
    expect(placeFromQuery('verdict=nonsense&range=year&sort=size:up&q=x')).toEqual({ filters: { ...NO_FILTERS, text: 'x' }, sort: DEFAULT_HISTORY_SORT, host: '' });
    expect(placeFromQuery('sort=elapsed:sideways')).toMatchObject({ sort: DEFAULT_HISTORY_SORT });
    expect(placeFromQuery(undefined)).toEqual({ filters: NO_FILTERS, sort: DEFAULT_HISTORY_SORT, host: '' });
    expect(placeFromQuery(`q=${'x'.repeat(2000)}`).filters.text).toHaveLength(1000);
  });
});

describe('the list kept across a refresh and an outage', () => {
  const summary = (id: string, minute: number, over: Partial<RunSummary> = {}): RunSummary => ({
    id, hostId: 'h', kind: 'command', command: id, cwd: '/', state: 'ended', verdict: 'completed', exitCode: 0, signal: null,
    startedAt: new Date(Date.UTC(2025, 5, 1, 0, minute)).toISOString(), elapsedMs: minute * 10, limitMs: null, advice: null,
    stdoutTruncated: 0, stderrTruncated: 0, peakRssBytes: minute, peakProcesses: 1, outputBytes: 0, ...over,
  });
  const loaded = (runs: RunSummary[], nextCursor: string | null = 'c'): ListState => ({ ...EMPTY_LIST, seq: 1, runs, nextCursor, loaded: true });

  it('keeps the rows shown past a first page asked again, and the cursor past them', () => {
    const shown = [summary('e', 5), summary('d', 4), summary('c', 3), summary('b', 2), summary('a', 1)];
    let state = listReducer(loaded(shown, 'after-a'), { type: 'request', seq: 2, append: false, refresh: true });
    expect(state).toMatchObject({ refreshing: true, loaded: true, runs: shown });
    // A run started meanwhile: the first page is f, e, d; the rows after d stay.
    state = listReducer(state, { type: 'page', seq: 2, append: false, page: { runs: [summary('f', 6), summary('e', 5), summary('d', 4)], nextCursor: 'after-d' } });
    expect(state.runs.map((r) => r.id)).toEqual(['f', 'e', 'd', 'c', 'b', 'a']);
    expect(state).toMatchObject({ nextCursor: 'after-a', refreshing: false, stale: false });
  });

  it('takes a first page that is the whole list as the whole list', () => {
    const state = listReducer(listReducer(loaded([summary('b', 2), summary('a', 1)]), { type: 'request', seq: 2, append: false, refresh: true }), { type: 'page', seq: 2, append: false, page: { runs: [summary('b', 2)], nextCursor: null } });
    expect(state.runs.map((r) => r.id)).toEqual(['b']);
    expect(state.nextCursor).toBeNull();
  });

  it("merges by the order asked: a sort by peak keeps the rows below the page's last peak", () => {
    const sort = { key: 'peak' as const, dir: 'desc' as const };
    const shown = [summary('x', 9), summary('y', 5), summary('z', 2)];
    expect(mergeFirstPage(shown, [summary('w', 10), summary('x', 9)], sort, true).map((r) => r.id)).toEqual(['w', 'x', 'y', 'z']);
    expect(mergeFirstPage(shown, [summary('w', 10), summary('x', 9)], { key: 'peak', dir: 'asc' }, true).map((r) => r.id)).toEqual(['w', 'x']);
    // A tie on the value goes by id, as the history pages it.
    const tie = [summary('q', 3), summary('p', 3, { peakRssBytes: 3 })];
    expect(mergeFirstPage(tie, [summary('r', 3)], { key: 'peak', dir: 'desc' }, true).map((r) => r.id)).toEqual(['r', 'q', 'p']);
    expect(mergeFirstPage(shown, [], sort, true)).toEqual([]);
  });

  it('keeps the rows on a refresh that fails, greyed (stale), the error said; a new list that fails shows none', () => {
    const shown = [summary('b', 2), summary('a', 1)];
    const failed = listReducer(listReducer(loaded(shown), { type: 'request', seq: 2, append: false, refresh: true }), { type: 'failed', seq: 2, error: 'The Warden host could not be reached.' });
    expect(failed).toMatchObject({ runs: shown, stale: true, error: 'The Warden host could not be reached.', loading: false, refreshing: false });
    // Asked again and answered: current, not stale.
    const back = listReducer(listReducer(failed, { type: 'request', seq: 3, append: false, refresh: true }), { type: 'page', seq: 3, append: false, page: { runs: shown, nextCursor: null } });
    expect(back).toMatchObject({ stale: false, error: null });
    const other = listReducer(listReducer(loaded(shown), { type: 'request', seq: 2, append: false }), { type: 'failed', seq: 2, error: 'x' });
    expect(other).toMatchObject({ runs: [], stale: false, error: 'x' });
    // A refresh asked before anything was shown is a new list.
    expect(listReducer(EMPTY_LIST, { type: 'request', seq: 1, append: false, refresh: true }).refreshing).toBe(false);
  });
});
