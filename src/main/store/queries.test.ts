// Listing, paging, searching and counting stored runs.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunResult } from '../../shared/result';
import { ftsQuery, StoreQueryError } from './queries';
import { openStore, type HistoryStore } from './store';
import { fakeResult, removeTempDirs, tempStateDir } from './store-testkit';

let store: HistoryStore;
let runs: RunResult[];
const T0 = Date.UTC(2025, 5, 1);
const at = (minutes: number) => new Date(T0 + minutes * 60_000).toISOString();

beforeEach(() => {
  store = openStore({ dir: tempStateDir() });
  runs = [
    fakeResult({ startedAt: at(0), argv: ['make', 'test'], verdict: 'completed', exitCode: 0, stdout: 'all 12 tests passed\n' }),
    fakeResult({ startedAt: at(1), argv: ['npm', 'run', 'build'], verdict: 'failed', exitCode: 2, stderr: 'error TS2304: Cannot find name foo\n' }),
    fakeResult({ startedAt: at(2), kind: 'python', argv: undefined, code: 'import numpy\nprint(numpy.zeros(3))', session: 'default', verdict: 'failed', exitCode: 1, stderr: "ModuleNotFoundError: No module named 'numpy'\n" }),
    fakeResult({ startedAt: at(3), argv: ['sleep', '600'], verdict: 'timed-out', exitCode: null, signal: 'SIGINT', limitMs: 1000 }),
    fakeResult({ startedAt: at(4), kind: 'python', argv: undefined, code: 'x = 1', session: 'analysis', verdict: 'completed', exitCode: 0 }),
    fakeResult({ startedAt: at(5), argv: ['pytest', '-x'], verdict: 'failed', exitCode: 1, stdout: 'FAILED tests/test_io.py::test_read_no_such_file\n' }),
  ];
  for (const r of runs) store.recordResult(r, 'host-a');
});

afterEach(() => {
  store.close();
  removeTempDirs();
});

const ids = (page: { runs: { id: string }[] }) => page.runs.map((r) => r.id);
const idsOf = (...indexes: number[]) => indexes.map((i) => runs[i]!.id);

describe('list', () => {
  it('lists newest first, as summaries without output', () => {
    const page = store.list();
    expect(ids(page)).toEqual(idsOf(5, 4, 3, 2, 1, 0));
    expect(page.nextCursor).toBeNull();
    const first = page.runs[5]!;
    expect(first).toMatchObject({ id: runs[0]!.id, hostId: 'host-a', kind: 'command', argv: ['make', 'test'], command: 'make test', verdict: 'completed', exitCode: 0, startedAt: at(0) });
    expect(first).not.toHaveProperty('stdout');
    expect(first.outputBytes).toBe(Buffer.byteLength('all 12 tests passed\n'));
  });

  it('filters by verdict, one or several', () => {
    expect(ids(store.list({ verdict: 'failed' }))).toEqual(idsOf(5, 2, 1));
    expect(ids(store.list({ verdict: ['timed-out', 'completed'] }))).toEqual(idsOf(4, 3, 0));
  });

  it('filters by kind, session and exit code', () => {
    expect(ids(store.list({ kind: 'python' }))).toEqual(idsOf(4, 2));
    expect(ids(store.list({ session: 'analysis' }))).toEqual(idsOf(4));
    expect(ids(store.list({ exitCode: 1 }))).toEqual(idsOf(5, 2));
    expect(ids(store.list({ exitCode: 0, kind: 'command' }))).toEqual(idsOf(0));
  });

  it('filters by time: since is inclusive, until exclusive; ms, Date or ISO', () => {
    expect(ids(store.list({ since: at(2), until: at(4) }))).toEqual(idsOf(3, 2));
    expect(ids(store.list({ since: T0 + 4 * 60_000 }))).toEqual(idsOf(5, 4));
    expect(ids(store.list({ until: new Date(T0 + 60_000) }))).toEqual(idsOf(0));
    expect(() => store.list({ since: 'yesterday' })).toThrow(StoreQueryError);
  });

  it('filters live and ended runs', () => {
    const live = fakeResult({ startedAt: at(6), state: 'running', verdict: undefined, exitCode: null, endedAt: undefined });
    store.recordResult(live, 'host-a');
    expect(ids(store.list({ state: 'live' }))).toEqual([live.id]);
    expect(store.list({ state: 'ended' }).runs).toHaveLength(6);
  });

  it('pages with a cursor, without gaps or repeats, and stays stable when runs are added', () => {
    const first = store.list({ limit: 4 });
    expect(ids(first)).toEqual(idsOf(5, 4, 3, 2));
    expect(first.nextCursor).not.toBeNull();
    // A newer run arriving between pages does not shift the next page.
    store.recordResult(fakeResult({ startedAt: at(10) }), 'host-a');
    const second = store.list({ limit: 4, cursor: first.nextCursor });
    expect(ids(second)).toEqual(idsOf(1, 0));
    expect(second.nextCursor).toBeNull();
  });

  it('pages through runs that started in the same millisecond by id', () => {
    const same = [0, 1, 2, 3, 4].map(() => fakeResult({ startedAt: at(20) }));
    for (const r of same) store.recordResult(r);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = store.list({ since: at(20), limit: 2, cursor });
      seen.push(...ids(page));
      // Each page moves the loop on: runs in it, a cursor not given before.
      expect(ids(page).length).toBeGreaterThan(0);
      expect(page.nextCursor === null || page.nextCursor !== cursor).toBe(true);
      expect(seen.length).toBeLessThanOrEqual(same.length);
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(same.map((r) => r.id).sort().reverse());
  });

  it('sorts by elapsed time or peak memory, both ways, and pages in that order', () => {
    const more = [fakeResult({ startedAt: at(10), elapsedMs: 5_000, peak: { rssBytes: 10, processes: 1 } }), fakeResult({ startedAt: at(11), elapsedMs: 90_000, peak: { rssBytes: 5, processes: 1 } })];
    for (const r of more) store.recordResult(r, 'host-a');
    const first = store.list({ sort: 'elapsed', limit: 1 });
    expect(ids(first)).toEqual([more[1]!.id]);
    const second = store.list({ sort: 'elapsed', limit: 1, cursor: first.nextCursor });
    expect(ids(second)).toEqual([more[0]!.id]);
    const all = store.list({ sort: 'elapsed', order: 'asc', limit: 100 });
    const elapsed = all.runs.map((r) => r.elapsedMs);
    expect(elapsed).toEqual([...elapsed].sort((x, y) => x - y));
    expect(ids(store.list({ sort: 'peak', limit: 2 }))).toEqual([more[0]!.id, more[1]!.id]);
    // A cursor of one order does not page another.
    expect(() => store.list({ cursor: first.nextCursor })).toThrow(/sorted by elapsed desc/);
  });

  it('counts the runs per verdict over every filter but the verdict, on the first page when asked', () => {
    // No completed run says "failed", but the counts say where the one that does is.
    const page = store.list({ text: 'failed', verdict: 'completed', counts: true });
    expect(page.runs).toEqual([]);
    expect(page.counts).toEqual({ failed: 1, total: 1 });
    const failedText = store.list({ kind: 'command', verdict: 'completed', counts: true });
    expect(ids(failedText)).toEqual(idsOf(0));
    expect(failedText.counts).toEqual({ completed: 1, failed: 2, 'timed-out': 1, total: 4 });
    expect(store.list({ counts: true, limit: 2 }).counts?.total).toBe(6);
    expect(store.list({ limit: 2 }).counts).toBeUndefined();
  });

  it('refuses a bad cursor or limit with one line', () => {
    expect(() => store.list({ cursor: 'nonsense' })).toThrow(/Not a cursor from this history/);
    expect(() => store.list({ limit: 0 })).toThrow(/limit must be an integer from 1 to 1000/);
  });
});

describe('full-text search', () => {
  it('finds words in the command, the code, and the ends of stdout and stderr', () => {
    expect(ids(store.list({ text: 'pytest' }))).toEqual(idsOf(5));
    expect(ids(store.list({ text: 'numpy' }))).toEqual(idsOf(2));
    expect(ids(store.list({ text: 'ModuleNotFoundError' }))).toEqual(idsOf(2));
    expect(ids(store.list({ text: 'TS2304' }))).toEqual(idsOf(1));
    expect(ids(store.list({ text: 'tests passed' }))).toEqual(idsOf(0));
  });

  it('requires every word, matches words of 3+ characters as prefixes, and takes punctuation literally', () => {
    expect(ids(store.list({ text: 'Module numpy' }))).toEqual(idsOf(2));
    expect(ids(store.list({ text: 'numpy pytest' }))).toEqual([]);
    expect(ids(store.list({ text: 'no_such_file' }))).toEqual(idsOf(5));
    // FTS5 syntax in what a person types is searched, not parsed.
    expect(() => store.list({ text: 'AND OR NOT ( " *' })).not.toThrow();
    expect(ids(store.list({ text: "'numpy'" }))).toEqual(idsOf(2));
  });

  it('combines with the other filters and with paging', () => {
    expect(ids(store.list({ text: 'numpy', verdict: 'completed' }))).toEqual([]);
    expect(ids(store.list({ text: 'tests', verdict: 'failed' }))).toEqual(idsOf(5));
    const first = store.list({ text: 'hello', limit: 1 });
    expect(first.runs).toHaveLength(1);
  });

  it('searches only the end of a long output', () => {
    const long = fakeResult({ startedAt: at(30), stdout: `needle-at-start ${'x '.repeat(10_000)} haystack-at-end` });
    store.recordResult(long);
    expect(ids(store.list({ text: 'haystack' }))).toEqual([long.id]);
    expect(ids(store.list({ text: 'needle' }))).toEqual([]);
  });

  it('builds quoted FTS5 queries', () => {
    expect(ftsQuery('  ')).toBeNull();
    expect(ftsQuery('ab "cd"')).toBe('"ab" """cd""" *');
  });
});

describe('get', () => {
  it('returns the whole result contract as recorded', () => {
    for (const r of runs) expect(store.get(r.id)).toEqual(r);
    expect(store.get('nope')).toBeNull();
  });

  it('keeps output with NUL, emoji and a dropped-characters marker exactly', () => {
    const r = fakeResult({ stdout: 'a\0b 😀 \n[warden: 12 characters dropped here]\nend', stderr: '\u00e9\0', stdoutTruncated: 12 });
    store.recordResult(r);
    expect(store.get(r.id)).toEqual(r);
  });
});

describe('out-of-memory kills', () => {
  it('are filtered apart from other kills, counted beside them, and each peak says what it is', () => {
    const oom = fakeResult({ argv: ['python3', 'big.py'], verdict: 'killed', exitCode: null, signal: 'SIGKILL', oom: { confirmed: true, peakBytes: 64 << 20, limitBytes: 64 << 20 }, peak: { rssBytes: 64 << 20, processes: 1, source: 'cgroup' } });
    const killed = fakeResult({ argv: ['sleep', '9'], verdict: 'killed', exitCode: null, signal: 'SIGKILL', oom: { confirmed: false, limitBytes: 64 << 20 }, peak: { rssBytes: 5 << 20, processes: 1, source: 'sampled' } });
    const plain = fakeResult({ argv: ['sleep', '8'], verdict: 'killed', exitCode: null, signal: 'SIGKILL' });
    for (const r of [oom, killed, plain]) store.recordResult(r, 'host-a');
    expect(ids(store.list({ oom: true }))).toEqual([oom.id]);
    expect(ids(store.list({ verdict: 'killed', oom: false }))).toEqual([plain.id, killed.id]);
    expect(store.list({ verdict: 'killed', counts: true }).counts).toMatchObject({ killed: 3, oom: 1, total: 9 });
    expect(store.list({ oom: false, counts: true }).counts).toMatchObject({ killed: 3, oom: 1 });
    expect(store.list({ verdict: 'completed', counts: true }).counts).not.toHaveProperty('live');
    const listed = store.list({ verdict: 'killed' }).runs;
    expect(listed.find((r) => r.id === oom.id)?.peakSource).toBe('cgroup');
    expect(listed.find((r) => r.id === killed.id)?.peakSource).toBe('sampled');
    expect(listed.find((r) => r.id === plain.id)).not.toHaveProperty('peakSource');
  });

  it('have no count where there are none', () => {
    expect(store.list({ counts: true }).counts).not.toHaveProperty('oom');
  });
});

describe('countsByVerdict', () => {
  it('counts per verdict, with live runs apart, over a time range', () => {
    store.recordResult(fakeResult({ startedAt: at(6), state: 'running', verdict: undefined, exitCode: null }), 'host-a');
    expect(store.countsByVerdict()).toEqual({ completed: 2, failed: 3, 'timed-out': 1, live: 1, total: 7 });
    expect(store.countsByVerdict({ since: at(2), until: at(5) })).toEqual({ failed: 1, 'timed-out': 1, completed: 1, total: 3 });
  });
});
