// Retention: at most N runs and B bytes of output, oldest first, never a live run.

import { afterEach, describe, expect, it } from 'vitest';
import { Supervisor } from '../supervisor/supervisor';
import { attachRecorder } from './recorder';
import { all, run } from './sql';
import { openStore, type HistoryStore } from './store';
import { fakeResult, removeTempDirs, tempStateDir } from './store-testkit';

const stores: HistoryStore[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) if (!s.isClosed) s.close();
  removeTempDirs();
});

function fresh(): HistoryStore {
  const store = openStore({ dir: tempStateDir() });
  stores.push(store);
  return store;
}

const T0 = Date.UTC(2025, 0, 1);
const at = (i: number) => new Date(T0 + i * 1000).toISOString();
const remaining = (store: HistoryStore) => store.list({ limit: 1000 }).runs.map((r) => r.id).reverse();

describe('prune', () => {
  it('keeps at most maxRuns, deleting the oldest first, with their output, events and search rows', () => {
    const store = fresh();
    const runs = Array.from({ length: 10 }, (_, i) => fakeResult({ startedAt: at(i), stdout: `unique${i}word\n` }));
    for (const r of runs) store.recordResult(r);
    const report = store.prune({ maxRuns: 4 });
    expect(report).toMatchObject({ removedRuns: 6, keptRuns: 4 });
    expect(remaining(store)).toEqual(runs.slice(6).map((r) => r.id));
    expect(all(store.db, 'SELECT 1 FROM run_output WHERE run_id = ?', runs[0]!.id)).toEqual([]);
    expect(all(store.db, 'SELECT 1 FROM run_events WHERE run_id = ?', runs[0]!.id)).toEqual([]);
    expect(store.list({ text: 'unique0word' }).runs).toEqual([]);
    expect(store.list({ text: 'unique9word' }).runs).toHaveLength(1);
    expect(store.prune({ maxRuns: 4 }).removedRuns).toBe(0);
  });

  it('keeps at most maxBytes of output, oldest first', () => {
    const store = fresh();
    const runs = Array.from({ length: 10 }, (_, i) => fakeResult({ startedAt: at(i), stdout: 'x'.repeat(1000), stderr: '' }));
    for (const r of runs) store.recordResult(r);
    const report = store.prune({ maxBytes: 3500 });
    expect(report).toMatchObject({ removedRuns: 7, removedBytes: 7000, keptRuns: 3, keptBytes: 3000 });
    expect(remaining(store)).toEqual(runs.slice(7).map((r) => r.id));
  });

  it('never deletes a live run, however old', () => {
    const store = fresh();
    const live = fakeResult({ startedAt: at(0), state: 'running', verdict: undefined, exitCode: null, stdout: 'x'.repeat(5000) });
    store.recordResult(live);
    const ended = Array.from({ length: 5 }, (_, i) => fakeResult({ startedAt: at(i + 1) }));
    for (const r of ended) store.recordResult(r);
    const report = store.prune({ maxRuns: 1, maxBytes: 0 });
    expect(report.removedRuns).toBe(5);
    expect(remaining(store)).toEqual([live.id]);
  });

  it('uses 50,000 runs and 2 GiB by default and refuses nonsense limits', () => {
    const store = fresh();
    for (let i = 0; i < 3; i++) store.recordResult(fakeResult({ startedAt: at(i) }));
    expect(store.prune()).toMatchObject({ removedRuns: 0, keptRuns: 3 });
    expect(() => store.prune({ maxRuns: -1 })).toThrow(/maxRuns must be a whole number/);
  });

  it('forgets host records that ended and have no runs left', () => {
    const store = fresh();
    run(store.db, 'INSERT INTO hosts (host_id, pid, started_at, heartbeat_at, ended_at) VALUES (?, 1, 0, 0, 1)', 'gone');
    run(store.db, 'INSERT INTO hosts (host_id, pid, started_at, heartbeat_at, ended_at) VALUES (?, 1, 0, 0, 1)', 'has-runs');
    store.recordResult(fakeResult(), 'has-runs');
    expect(store.prune().removedHosts).toBe(1);
    expect(all<{ host_id: string }>(store.db, 'SELECT host_id FROM hosts').map((h) => h.host_id)).toEqual(['has-runs']);
  });

  it('runs by itself as the recorder writes ended runs, leaving the live one', async () => {
    const store = fresh();
    const supervisor = new Supervisor();
    const pruned: number[] = [];
    const recorder = attachRecorder(store, supervisor, { retention: { maxRuns: 3, everyEnds: 2 }, onPrune: (r) => pruned.push(r.removedRuns) });
    const live = supervisor.start({ argv: ['sleep', '30'] });
    for (let i = 0; i < 6; i++) await supervisor.wait(supervisor.start({ argv: ['true'] }).id);
    // The last end is written a turn after its answer, and the prune runs the turn after that.
    for (let turn = 0; turn < 2; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(pruned.length).toBeGreaterThan(0);
    const kept = store.list().runs;
    expect(kept.length).toBe(3);
    expect(kept.map((r) => r.id)).toContain(live.id);
    supervisor.stop(live.id, { force: true });
    await supervisor.wait(live.id);
    await recorder.close();
  });
});
