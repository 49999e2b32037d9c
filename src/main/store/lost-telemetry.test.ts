// A live run's telemetry in the history (live-telemetry.ts): a host killed
// with SIGKILL leaves its run's series up to its last write, recovery makes it
// the lost run's one 'telemetry' event beside its peak, and a run that ends
// normally stores each sample once.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { addSample, emptySeries, TELEMETRY_EVENT, type TelemetryDetail, type TelemetryPoint, type TelemetrySeries } from '../../shared/telemetry';
import { DEFAULT_PROC_ROOT } from '../supervisor/options';
import { Supervisor } from '../supervisor/supervisor';
import { CHUNK_POINTS, LIVE_TELEMETRY_EVENT, readLiveSeries, writeLiveSeries, type StoredSeries } from './live-telemetry';
import { attachRecorder } from './recorder';
import { insertEvent, upsertRun } from './rows';
import { all, run, transaction, value } from './sql';
import { openStore, type HistoryStore } from './store';
import { fakeResult, removeTempDirs, startChild, tempStateDir, type Child } from './store-testkit';
import { until } from '../../../test/kit/until';

const children: Child[] = [];
const cleanups: (() => unknown)[] = [];

afterEach(async () => {
  for (const c of children.splice(0)) {
    c.proc.kill('SIGKILL');
    await c.exited;
  }
  for (const fn of cleanups.splice(0).reverse()) await fn();
  removeTempDirs();
});

function open(dir: string): HistoryStore {
  const store = openStore({ dir });
  cleanups.push(() => store.isClosed || store.close());
  return store;
}

const chunkRows = (store: HistoryStore, id: string) => Number(value<number>(store.db, 'SELECT count(*) FROM run_events WHERE run_id = ? AND kind = ?', id, LIVE_TELEMETRY_EVENT));

function telemetryOf(store: HistoryStore, id: string): TelemetryDetail[] {
  return store.events(id).filter((e) => e.kind === TELEMETRY_EVENT).map((e) => e.detail as unknown as TelemetryDetail);
}

function expectOrdered(points: TelemetryPoint[]): void {
  // Time-ordered, no moment twice.
  for (let i = 1; i < points.length; i++) expect(points[i]![0], `point ${i} of ${JSON.stringify(points.map((p) => p[0]))}`).toBeGreaterThan(points[i - 1]![0]);
}

// About 16 MiB more every 0.4 s, twelve times, then idle: a ramp the sampler (2 Hz) sees step by
// step. It begins when the test creates the file `gate`: once the history holds the run small.
const ramp = (gate: string) =>
  `import os, time\nprint("ready", flush=True)\nwhile not os.path.exists(${JSON.stringify(gate)}):\n    time.sleep(0.02)\nb = []\nfor i in range(12):\n    b.append(bytearray(16 << 20))\n    time.sleep(0.4)\ntime.sleep(300)`;

const rssOf = (points: TelemetryPoint[]) => points.map((p) => p[2]);

describe.skipIf(DEFAULT_PROC_ROOT === null)('a live run\'s telemetry in the history', () => {
  it('keeps the series of a run whose host was killed with SIGKILL, up to the peak it stored, as the lost run\'s telemetry', async () => {
    const dir = tempStateDir();
    const gate = join(dir, 'ramp-now');
    const host = startChild(['host', dir, JSON.stringify({ code: ramp(gate) })]);
    children.push(host);
    const { runs } = await host.nextJson<{ runs: string[] }>();
    const id = runs[0]!;
    const reader = open(dir);
    // Waited on, not timed: two seconds of the run small in the history (its first second is
    // over), then the ramp, until the history holds a third point and the run past 90 MiB (five
    // steps and the interpreter), at least two steps above the first point.
    const live = () => readLiveSeries(reader.db, id)?.points ?? [];
    await until('two points of the run before its ramp', () => live().length >= 2);
    writeFileSync(gate, '');
    await until(
      'the ramp past 90 MiB in the history',
      () => live().length >= 3 && (reader.get(id)?.peak?.rssBytes ?? 0) > 90 * 2 ** 20 && Math.max(...rssOf(live())) >= live()[0]![2] + 32 * 2 ** 20,
      { progress: () => [live().length, reader.get(id)?.peak?.rssBytes] },
    );
    host.proc.kill('SIGKILL');
    await host.exited;
    children.splice(children.indexOf(host), 1);
    reader.close();

    const store = open(dir);
    store.registerHost('recoverer-lost-telemetry');
    const report = await store.recoverLostRuns({ tearDown: true });
    expect(report.recovered.map((r) => r.id)).toEqual([id]);
    const lost = store.get(id)!;
    expect(lost.verdict).toBe('lost');

    // One series, as an ended run has; the chunks it was stored in are gone.
    const stored = telemetryOf(store, id);
    expect(stored).toHaveLength(1);
    expect(chunkRows(store, id)).toBe(0);
    const { stepMs, points } = stored[0]!;
    expect(stepMs).toBe(1000);
    expect(points.length).toBeGreaterThanOrEqual(3);
    expectOrdered(points);
    // Its highest point is the peak stored beside it (both were written in one transaction): the RSS sum, or,
    // where the run had a memory cgroup, the cgroup's own counter (another figure, said as such), with the ramp reached in both.
    const peak = lost.peak!;
    const highest = Math.max(...points.map((p) => p[2]));
    expect(peak.rssBytes).toBeGreaterThan(90 * 2 ** 20);
    if (peak.source === 'cgroup') expect(highest).toBeGreaterThan(90 * 2 ** 20);
    else expect(highest).toBe(peak.rssBytes);
    expect(Math.max(...points.map((p) => p[3]))).toBe(peak.processes);
    // And it shows the ramp, not only its end: its first second is at least two steps (32 MiB) below its highest.
    expect(points[0]![2]).toBeLessThanOrEqual(highest - 32 * 2 ** 20);
  });

  it('stores a live run\'s series while it runs, and once (no sample twice) when it ends', async () => {
    const dir = tempStateDir();
    const store = open(dir);
    const supervisor = new Supervisor();
    const recorder = attachRecorder(store, supervisor, { liveTelemetryEveryMs: 300 });
    cleanups.push(() => supervisor.shutdown(), () => recorder.close(200));
    // Four steps of 8 MiB, then on until the test lets it end: it is live for as long as the test looks.
    const gate = join(dir, 'end-now');
    const script = `import os, time\nb = []\nfor i in range(4):\n    b.append(bytearray(8 << 20))\n    time.sleep(0.4)\nwhile not os.path.exists(${JSON.stringify(gate)}):\n    time.sleep(0.05)`;
    const snapshot = supervisor.start({ argv: ['python3', '-c', script] });
    // Live: the chunks are in the history, and its readers see none of them. Waited on (the run
    // goes on until the gate): three points, the ramp's top among them.
    const live = () => readLiveSeries(store.db, snapshot.id)?.points ?? [];
    await until('three points stored live, the ramp among them', () => live().length >= 3 && Math.max(...rssOf(live())) > 32 * 2 ** 20, { progress: () => live().length });
    expect(chunkRows(store, snapshot.id)).toBeGreaterThan(0);
    expect(store.events(snapshot.id).some((e) => e.kind === LIVE_TELEMETRY_EVENT)).toBe(false);
    writeFileSync(gate, '');
    const result = await supervisor.wait(snapshot.id);
    expect(result.verdict).toBe('completed');
    const stored = telemetryOf(store, snapshot.id);
    expect(stored).toHaveLength(1);
    expect(chunkRows(store, snapshot.id)).toBe(0);
    const { points } = stored[0]!;
    expect(points.length).toBeGreaterThanOrEqual(3);
    expectOrdered(points);
    // The ramp is in it, and, where the peak is the RSS sum sampled, nothing above it (a memory cgroup's counter is
    // another figure: it counts the pages charged to the run, not the libraries its processes share with others).
    const highest = Math.max(...points.map((p) => p[2]));
    expect(highest).toBeGreaterThan(32 * 2 ** 20);
    if (result.peak!.source !== 'cgroup') expect(highest).toBeLessThanOrEqual(result.peak!.rssBytes);
    else expect(result.peak!.rssBytes).toBeGreaterThan(24 * 2 ** 20);
  });

  it('writes a series in chunks that join back to it exactly, across full chunks and thinning', () => {
    const store = open(tempStateDir());
    const run = fakeResult({ state: 'running', verdict: undefined });
    transaction(store.db, () => upsertRun(store.db, 'host-a', run, null));
    let series: TelemetrySeries = emptySeries();
    let stored: StoredSeries | undefined;
    let thinned = 0;
    let rowsMax = 0;
    // Two samples a second for long enough to fill chunks and thin twice (a bound of 300 points here).
    for (let i = 0; i < 1500; i++) {
      const before = series.stepMs;
      series = addSample(series, [i * 500, (i * 7) % 100, 1_000_000 + ((i * 7919) % 5000) * 1000, 1 + (i % 4)], 300);
      if (series.stepMs !== before) thinned++;
      // Written every few samples, as the recorder hands it over.
      if (i % 5 === 4 || i === 1499) {
        const current = stored;
        const detail = { stepMs: series.stepMs, points: series.points };
        stored = transaction(store.db, () => writeLiveSeries(store.db, run.id, detail, current, Date.now()));
        expect(readLiveSeries(store.db, run.id)).toEqual(detail);
        rowsMax = Math.max(rowsMax, all(store.db, 'SELECT id FROM run_events WHERE run_id = ? AND kind = ?', run.id, LIVE_TELEMETRY_EVENT).length);
      }
    }
    expect(thinned).toBeGreaterThanOrEqual(2);
    // Bounded: the chunks hold about the series' own points, not every sample since the start.
    const storedPoints = all<{ detail: string }>(store.db, 'SELECT detail FROM run_events WHERE run_id = ? AND kind = ?', run.id, LIVE_TELEMETRY_EVENT)
      .reduce((n, row) => n + (JSON.parse(row.detail) as TelemetryDetail).points.length, 0);
    expect(storedPoints).toBeLessThanOrEqual(series.points.length + Math.ceil(300 / CHUNK_POINTS) + 2);
    expect(rowsMax).toBeLessThanOrEqual(Math.ceil(300 / CHUNK_POINTS) + 2);
  });

  it('writes the open chunk again as a new row when the history lost it, and never touches another run\'s event', () => {
    const store = open(tempStateDir());
    const a = fakeResult({ state: 'running', verdict: undefined });
    const b = fakeResult({ state: 'running', verdict: undefined });
    transaction(store.db, () => {
      upsertRun(store.db, 'host-a', a, null);
      upsertRun(store.db, 'host-a', b, null);
    });
    let series: TelemetrySeries = emptySeries();
    for (let i = 0; i < 6; i++) series = addSample(series, [i * 1000, 5, 1_000_000 + i, 1]);
    const first = transaction(store.db, () => writeLiveSeries(store.db, a.id, { stepMs: series.stepMs, points: series.points }, undefined, Date.now()));
    // The history replaced under the run (salvaged, or adopted from another file): its chunk is gone, and
    // another run's event takes the row number it had (SQLite gives the highest number again).
    run(store.db, 'DELETE FROM run_events WHERE run_id = ? AND kind = ?', a.id, LIVE_TELEMETRY_EVENT);
    insertEvent(store.db, b.id, Date.now(), 1, 'signal-sent', { signal: 'SIGINT' });
    for (let i = 6; i < 9; i++) series = addSample(series, [i * 1000, 5, 1_000_000 + i, 1]);
    transaction(store.db, () => writeLiveSeries(store.db, a.id, { stepMs: series.stepMs, points: series.points }, first, Date.now()));
    expect(store.events(b.id).map((e) => [e.kind, e.detail])).toEqual([['signal-sent', { signal: 'SIGINT' }]]);
    expect(readLiveSeries(store.db, a.id)).toEqual({ stepMs: 1000, points: series.points });
  });
});
