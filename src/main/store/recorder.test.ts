// The recorder against a real Supervisor running real commands, and a real
// database file: live rows, batching, the cap, events, and failing storage.

import { droppedMarker } from '../../shared/stream-length';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunResult } from '../../shared/result';
import type { RunEvent } from '../../shared/events';
import { Supervisor } from '../supervisor/supervisor';
import type { StoreWriteError } from './errors';
import { attachRecorder } from './recorder';
import { all, value } from './sql';
import { openStore, type HistoryStore } from './store';
import { removeTempDirs, tempStateDir } from './store-testkit';
import Libsql from 'libsql';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { until } from '../../../test/kit/until';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
  removeTempDirs();
});

function setup(options: Parameters<typeof attachRecorder>[2] = {}) {
  const dir = tempStateDir();
  const store = openStore({ dir, busyTimeoutMs: 50 });
  const supervisor = new Supervisor();
  const errors: StoreWriteError[] = [];
  const recorder = attachRecorder(store, supervisor, { onError: (e) => errors.push(e), ...options });
  cleanups.push(() => store.close(), () => recorder.close(200), () => supervisor.shutdown());
  return { dir, store, supervisor, recorder, errors };
}

const outputRows = (store: HistoryStore, id: string) =>
  all<{ stream: string; seq: number; offset: number; chars: number; final: number }>(store.db, 'SELECT stream, seq, offset, chars, final FROM run_output WHERE run_id = ? ORDER BY stream, seq', id);

describe('recording runs', () => {
  it('has a run live in the store as soon as start() returns, and whole after the end', async () => {
    const { store, supervisor } = setup();
    const snapshot = supervisor.start({ argv: ['bash', '-c', 'echo out; echo err >&2; sleep 0.3; exit 3'] });
    const live = store.get(snapshot.id);
    expect(live).toMatchObject({ id: snapshot.id, state: 'running', exitCode: null, argv: snapshot.argv });
    expect(live?.verdict).toBeUndefined();
    expect(store.list({ state: 'live' }).runs.map((r) => r.id)).toEqual([snapshot.id]);
    const result = await supervisor.wait(snapshot.id);
    expect(result.verdict).toBe('failed');
    expect(store.get(snapshot.id)).toEqual(result);
    expect(store.list({ verdict: 'failed' }).runs.map((r) => r.id)).toEqual([snapshot.id]);
    expect(store.list({ text: 'echo' }).runs.map((r) => r.id)).toEqual([snapshot.id]);
    // A short run may or may not have been sampled: its telemetry is its own test.
    expect(store.events(snapshot.id).map((e) => e.kind).filter((k) => k !== 'telemetry' && k !== 'output-times')).toEqual(['started', 'exit', 'teardown', 'ended']);
  });

  it('keeps when each piece of output came, so both streams can be read in the order they were written', async () => {
    const { dir, store, supervisor } = setup();
    // Each piece waits until the engine has read the one before (the test opens its gate then),
    // so no two are ever read as one chunk, however late a loaded machine reads them.
    const script = 'for i in 1 2 3; do sleep 0.15; echo out$i; until [ -e "$1/out$i" ]; do sleep 0.01; done; sleep 0.15; echo err$i >&2; until [ -e "$1/err$i" ]; do sleep 0.01; done; done';
    const snapshot = supervisor.start({ argv: ['bash', '-c', script, 'pieces', dir] });
    supervisor.subscribe((e) => {
      if (e.type === 'output' && e.runId === snapshot.id) writeFileSync(join(dir, e.text.trim()), '');
    });
    await supervisor.wait(snapshot.id);
    const event = store.events(snapshot.id).find((e) => e.kind === 'output-times')!;
    const marks = (event.detail as { marks: [number, number, number][] }).marks;
    expect(marks.map((m) => m[0])).toEqual([0, 1, 0, 1, 0, 1]);
    expect(marks.map((m) => m[1])).toEqual([0, 0, 5, 5, 10, 10]);
    expect(marks.every((m, i) => i === 0 || m[2] >= marks[i - 1]![2])).toBe(true);
    expect(marks[5]![2]).toBeGreaterThan(600);
    expect((event.detail as { lines: number[] }).lines).toEqual([3, 3]);
  });

  it("keeps the sampler's CPU, memory and process count over the run as its telemetry", async () => {
    const { dir, store, supervisor } = setup();
    // Grows by about 20 MB every 0.3 s, in a child, for about 2 s, once the sampler has seen it
    // small, and ends once the sampler has seen it grown: the series holds both, however late a
    // loaded machine takes its samples.
    const grow = join(dir, 'grow');
    const end = join(dir, 'end');
    const script = `import os, time\ndef wait(path):\n    while not os.path.exists(path): time.sleep(0.02)\nwait(${JSON.stringify(grow)})\nb = []\nfor i in range(7):\n    b.append(bytearray(20_000_000)); time.sleep(0.3)\nwait(${JSON.stringify(end)})`;
    const snapshot = supervisor.start({ argv: ['bash', '-c', 'python3 -c "$1"; true', 'ramp', script] });
    const sampled: number[] = [];
    supervisor.subscribe((e) => {
      if (e.type === 'tree' && e.runId === snapshot.id && e.snapshot.processes >= 2) sampled.push(e.snapshot.rssBytes);
    });
    await until('a sample of the run before it grows', () => sampled.length > 0);
    writeFileSync(grow, '');
    await until('a sample of the run grown by 140 MB', () => Math.max(...sampled) > sampled[0]! + 140_000_000, { progress: () => sampled.length });
    writeFileSync(end, '');
    await supervisor.wait(snapshot.id);
    const events = store.events(snapshot.id).filter((e) => e.kind === 'telemetry');
    expect(events).toHaveLength(1);
    const { stepMs, points } = events[0]!.detail as { stepMs: number; points: [number, number, number, number][] };
    expect(stepMs).toBe(1000);
    expect(points.length).toBeGreaterThanOrEqual(2);
    expect(points.every((p, i) => i === 0 || p[0] > points[i - 1]![0])).toBe(true);
    // Memory grows over the run; the series shows it (its largest point beyond its first).
    expect(Math.max(...points.map((p) => p[2]))).toBeGreaterThan(points[0]![2] + 20_000_000);
    expect(Math.max(...points.map((p) => p[3]))).toBeGreaterThanOrEqual(2);
  });

  it("keeps a live run's peak so far in its row, so a run its host loses keeps its memory figure", async () => {
    const { store, supervisor } = setup();
    const snapshot = supervisor.start({ argv: ['python3', '-c', 'import time\nb = bytearray(60_000_000)\ntime.sleep(30)'] });
    // Live: the stored row (the list's figure, and the snapshot recovery makes a lost run from) has the sampler's peak.
    await until('the peak so far to be stored', () => (store.get(snapshot.id)?.peak?.rssBytes ?? 0) > 60_000_000);
    expect(store.get(snapshot.id)?.state).toBe('running');
    expect(store.get(snapshot.id)?.peak?.processes).toBeGreaterThanOrEqual(1);
    expect(store.list({ state: 'live' }).runs.find((r) => r.id === snapshot.id)?.peakRssBytes).toBeGreaterThan(60_000_000);
    supervisor.stop(snapshot.id, { force: true });
    const result = await supervisor.wait(snapshot.id);
    // The end's result is the stored one, whole.
    expect(store.get(snapshot.id)).toEqual(result);
  });

  it('stores output as it comes, in batches: few rows for many chunks', async () => {
    const { dir, store, supervisor } = setup({ flushIntervalMs: 100 });
    // 400 lines, each written and flushed apart: hundreds of chunks. Then it waits for the test
    // (not for a time): the run is live for as long as the test looks at it.
    const gate = join(dir, 'end-now');
    const began = performance.now();
    const snapshot = supervisor.start({ argv: ['bash', '-c', 'for i in $(seq 1 400); do echo "line $i"; sleep 0.002; done; until [ -e "$1" ]; do sleep 0.05; done', 'loop', gate] });
    let chunks = 0;
    const off = supervisor.subscribe((e) => {
      if (e.type === 'output' && e.runId === snapshot.id) chunks++;
    });
    // However slowly a loaded machine runs the loop: the wait goes on while lines come.
    await until('the last line to be stored', () => (store.get(snapshot.id)?.stdout ?? '').includes('line 400'), { progress: () => chunks });
    off();
    // At most one batch per flush interval, however slowly a loaded machine runs
    // the loop (the loop's own pace decides how many intervals it spans).
    const intervals = Math.ceil((performance.now() - began) / 100) + 1;
    const rows = outputRows(store, snapshot.id);
    expect(chunks).toBeGreaterThan(rows.length);
    expect(rows.length).toBeLessThanOrEqual(intervals);
    expect(store.get(snapshot.id)?.state).toBe('running');
    writeFileSync(gate, '');
    const result = await supervisor.wait(snapshot.id);
    // A read through the store finds the end (written after the answer, writer row 4): one final row.
    expect(store.get(snapshot.id)?.stdout).toBe(result.stdout);
    expect(outputRows(store, snapshot.id)).toEqual([{ stream: 'stdout', seq: 0, offset: 0, chars: result.stdout.length, final: 1 }]);
  });

  it('stores output over the cap capped with its marker, live and at the end', async () => {
    const { dir, store, supervisor } = setup({ liveCapChars: 1000, flushIntervalMs: 50 });
    // 16,010 characters, then wait for the test: live storage keeps the first 500 and a moving tail.
    // seq writes in 4 KiB blocks: chunks far bigger than the 500-character tail.
    const gate = join(dir, 'end-now');
    const script = 'seq -f "x%06g" 1000 2999; echo tail-mark; until [ -e "$1" ]; do sleep 0.05; done';
    const snapshot = supervisor.start({ argv: ['bash', '-c', script, 'cap', gate], outputCapChars: 2000 });
    await until('the tail to be stored', () => (store.get(snapshot.id)?.stdout ?? '').includes('tail-mark'));
    const live = store.get(snapshot.id)!;
    expect(live.stdout.startsWith('x001000\nx001001\n')).toBe(true);
    expect(live.stdout).toMatch(/\n\[warden: [\d,]+ characters dropped here\]\n/);
    // Stored live: the head and a tail of at least half the cap, at most one batch more; the rest is counted as dropped.
    const stored = outputRows(store, snapshot.id).reduce((sum, r) => sum + r.chars, 0);
    expect(stored).toBeLessThanOrEqual(2000);
    expect(stored).toBeGreaterThanOrEqual(1000);
    expect(live.stdoutTruncated + stored).toBe(2000 * 8 + 'tail-mark\n'.length);
    expect(live.stdout.endsWith('x002999\ntail-mark\n')).toBe(true);
    expect(live.state).toBe('running');
    writeFileSync(gate, '');
    const result = await supervisor.wait(snapshot.id);
    expect(result.stdoutTruncated).toBeGreaterThan(0);
    const ended = store.get(snapshot.id)!;
    expect(ended.stdout).toBe(result.stdout);
    expect(ended.stdoutTruncated).toBe(result.stdoutTruncated);
    expect(ended.notes).toEqual(result.notes);
  });

  it('records each signal sent, when, and the teardown', async () => {
    const { store, supervisor } = setup();
    const snapshot = supervisor.start({ argv: ['bash', '-c', 'trap "" INT; sleep 30'], limitMs: 200, graceMs: 300, terminateAfterMs: 100 });
    const result = await supervisor.wait(snapshot.id);
    expect(result.verdict).toBe('timed-out');
    const events = store.events(snapshot.id);
    const signals = events.filter((e) => e.kind === 'signal-sent');
    expect(signals.map((e) => e.detail.signal)).toEqual(result.stop!.signals.map((s) => s.signal));
    expect(signals.map((e) => Math.round(e.atMs!))).toEqual(result.stop!.signals.map((s) => s.atMs));
    expect(events.at(-1)).toMatchObject({ kind: 'ended', detail: { verdict: 'timed-out' } });
    expect(store.get(snapshot.id)).toEqual(result);
  });

  it('records a limit extension in the timeline; the live row and the ended run show the new limit', async () => {
    const { store, supervisor, recorder } = setup();
    const snapshot = supervisor.start({ argv: ['sleep', '30'], limitMs: 1000 });
    expect(store.get(snapshot.id)?.limitMs).toBe(1000);
    supervisor.extend(snapshot.id, 500);
    // Live: the timeline entry, and the row's limit (in the list and the stored snapshot). Written
    // now, in the same turn as the extension, so the run is live whatever the machine's pace (the
    // deadline cannot fire in between); the batch's timing is the next tests'.
    expect(recorder.flush()).toBe(true);
    expect(store.events(snapshot.id).some((e) => e.kind === 'limit-extended')).toBe(true);
    expect(store.get(snapshot.id)).toMatchObject({ state: 'running', limitMs: 1500 });
    expect(store.list({ state: 'live' }).runs.find((r) => r.id === snapshot.id)?.limitMs).toBe(1500);
    const result = await supervisor.wait(snapshot.id);
    expect(result).toMatchObject({ verdict: 'timed-out', limitMs: 1500 });
    const events = store.events(snapshot.id);
    const extended = events.filter((e) => e.kind === 'limit-extended');
    expect(extended).toHaveLength(1);
    expect(extended[0]).toMatchObject({ runId: snapshot.id, detail: { limitMs: 1500, byMs: 500 } });
    expect(extended[0]!.atMs).toBeGreaterThanOrEqual(0);
    expect(extended[0]!.atMs).toBeLessThanOrEqual(result.stop!.requestedAtMs);
    // In order: started, the extension, then the deadline's signals.
    expect(events.map((e) => e.kind).slice(0, 3)).toEqual(['started', 'limit-extended', 'signal-sent']);
    expect(store.get(snapshot.id)).toEqual(result);
    expect(store.get(snapshot.id)!.limitMs).toBe(1500);
    expect(store.list({ verdict: 'timed-out' }).runs[0]!.limitMs).toBe(1500);
  });

  it('writes the end after the answer, and a read right after the answer finds the run whole', async () => {
    const { store, supervisor } = setup();
    const snapshot = supervisor.start({ argv: ['bash', '-c', 'head -c 300000 /dev/zero | tr "\\0" a; echo; exit 3'] });
    // Subscribed after the recorder: what the row says once the recorder has handled the end.
    let rowAtEnd: string | undefined;
    supervisor.subscribe((e) => {
      if (e.type === 'ended' && e.runId === snapshot.id) rowAtEnd = value<string>(store.db, 'SELECT state FROM runs WHERE id = ?', snapshot.id);
    });
    const result = await supervisor.wait(snapshot.id);
    expect(rowAtEnd).toBe('running');
    // Read at once, before the turn that writes it: the read writes it first.
    expect(store.get(snapshot.id)).toEqual(result);
    expect(store.list({ limit: 1 }).runs[0]).toMatchObject({ id: snapshot.id, state: 'ended', verdict: 'failed' });
    expect(store.events(snapshot.id).at(-1)?.kind).toBe('ended');
  });

  it('records many concurrent runs, each whole', async () => {
    const { store, supervisor } = setup();
    const ids = Array.from({ length: 20 }, (_, i) => supervisor.start({ argv: ['bash', '-c', `echo run ${i}; exit ${i % 3}`] }).id);
    const results = await Promise.all(ids.map((id) => supervisor.wait(id)));
    for (const r of results) expect(store.get(r.id)).toEqual(r);
    expect(store.countsByVerdict().total).toBe(20);
  });
});

describe('failing storage', () => {
  it('on a full disk stores a result with its output cut to fit, with a note, while the engine keeps it whole', async () => {
    const { store, supervisor, recorder } = setup({ retryBaseMs: 20, retryMaxMs: 100 });
    const snapshot = supervisor.start({ argv: ['bash', '-c', 'sleep 0.1; head -c 300000 /dev/zero | tr "\\0" "a"; echo; echo done'] });
    // The database may not grow any more: every write that needs a new page fails SQLITE_FULL.
    store.db.exec(`PRAGMA max_page_count = ${value<number>(store.db, 'PRAGMA page_count')}`);
    const result = await supervisor.wait(snapshot.id);
    expect(result.verdict).toBe('completed');
    expect(result.stdout.length).toBe(300_006);
    // Whole it does not fit; cut (its first and last 16,384 characters, or none) it does, with a note saying so.
    await until('the cut result', () => store.get(snapshot.id)?.state === 'ended');
    const stored = store.get(snapshot.id)!;
    expect(stored.verdict).toBe('completed');
    expect(stored.stdout).toContain(droppedMarker(stored.stdoutTruncated));
    expect(stored.stdout.length - droppedMarker(stored.stdoutTruncated).length + stored.stdoutTruncated).toBe(300_006);
    expect(stored.notes.at(-1)).toMatch(/^Warden's history had no room for this run's whole output \(the disk is full\): (only the first and last 16,384 characters of each stream were stored|its output was not stored)/);
    expect(recorder.status()).toMatchObject({ cutEnds: [snapshot.id], cutEndsCount: 1, unrecorded: [] });
  });

  it('waits out another process holding the write lock: runs start at once, no write is tried while backing off, all are stored once the lock goes', async () => {
    // A long first backoff: no timed retry happens during the test, so every attempt seen is one the writer chose to make.
    const { store, supervisor, errors, recorder } = setup({ retryBaseMs: 60_000, retryMaxMs: 60_000 });
    const other = new Libsql(store.path);
    other.exec('BEGIN IMMEDIATE');
    const first = supervisor.start({ argv: ['bash', '-c', 'echo locked-out'] });
    expect(errors.map((e) => e.code)).toEqual(['SQLITE_BUSY']);
    expect(errors[0]!.retryInMs).toBe(60_000);
    // Backing off: starts and ends of more runs do not wait on the lock again.
    const more = [1, 2, 3].map((i) => supervisor.start({ argv: ['bash', '-c', `echo more ${i}`] }).id);
    const results = await Promise.all([first.id, ...more].map((id) => supervisor.wait(id)));
    expect(results.every((r) => r.verdict === 'completed')).toBe(true);
    expect(errors).toHaveLength(1);
    expect(store.get(first.id)).toBeNull();
    expect(recorder.status()).toMatchObject({ failing: true, pendingEnds: 4 });
    other.exec('ROLLBACK');
    other.close();
    expect(recorder.flush()).toBe(true);
    for (const r of results) expect(store.get(r.id)).toEqual(r);
  });

  it('holds at most maxPendingEndChars of results while it cannot write: the oldest are cut, with a note, the newest kept whole', async () => {
    const { store, supervisor, recorder } = setup({ retryBaseMs: 60_000, retryMaxMs: 60_000, maxPendingEndChars: 160_000 });
    const other = new Libsql(store.path);
    other.exec('BEGIN IMMEDIATE');
    const ids: string[] = [];
    for (let n = 0; n < 3; n++) {
      const id = supervisor.start({ argv: ['bash', '-c', `head -c 60000 /dev/zero | tr "\\0" "${n}"`] }).id;
      await supervisor.wait(id);
      ids.push(id);
    }
    // 180,000 characters waited: the oldest was cut to its first and last 16,384 characters.
    expect(recorder.status()).toMatchObject({ pendingEnds: 3 });
    other.exec('ROLLBACK');
    other.close();
    expect(recorder.flush()).toBe(true);
    const [oldest, ...newer] = ids.map((id) => store.get(id)!);
    expect(oldest!.stdoutTruncated).toBe(60_000 - 32_768);
    expect(oldest!.notes.at(-1)).toMatch(/^Warden's history had no room for this run's whole output \(the history could not be written while more than 160,000 characters of results waited\)/);
    for (const r of newer) expect(r.stdout.length).toBe(60_000);
    expect(recorder.status()).toMatchObject({ cutEnds: [ids[0]], unrecorded: [] });
  });

  it('keeps supervising when the database is closed under it, and reports', async () => {
    const { store, supervisor, errors, recorder } = setup({ retryBaseMs: 20, retryMaxMs: 50 });
    const first = supervisor.start({ argv: ['bash', '-c', 'sleep 0.2; echo after-close'] });
    store.db.close();
    const result: RunResult = await supervisor.wait(first.id);
    expect(result.verdict).toBe('completed');
    expect(result.stdout).toBe('after-close\n');
    // A run started after the failure is supervised as usual.
    const second = await supervisor.wait(supervisor.start({ argv: ['true'] }).id);
    expect(second.verdict).toBe('completed');
    await until('reported errors', () => errors.length >= 2);
    expect(errors.every((e) => e.code === 'CLOSED' && e.retryInMs !== null)).toBe(true);
    expect(errors[0]!.message).toContain('Supervision goes on.');
    const left = await recorder.close(100);
    expect(left.pendingEnds).toBe(2);
  });

  it('never lets a listener failure reach the engine', async () => {
    const { store, supervisor } = setup({ onError: () => { throw new Error('reporter broke'); } });
    store.db.close();
    const result = await supervisor.wait(supervisor.start({ argv: ['true'] }).id);
    expect(result.verdict).toBe('completed');
  });
});

describe("a service's timeline", () => {
  it('keeps ready, ports (its first 50 changes), input, a lease renewed and the main exit', async () => {
    const { store, supervisor } = setup();
    // A real run for the row; its service events are told by hand through a source of the same host.
    const snapshot = supervisor.start({ argv: ['sleep', '30'] });
    const listeners = new Set<(event: RunEvent) => void>();
    const source = { hostId: supervisor.hostId, subscribe: (l: (event: RunEvent) => void) => (listeners.add(l), () => listeners.delete(l)) };
    const recorder = attachRecorder(store, source, {});
    cleanups.push(() => recorder.close(200));
    const tell = (event: RunEvent) => listeners.forEach((l) => l(event));
    const id = snapshot.id;
    tell({ type: 'started', runId: id, snapshot });
    tell({ type: 'ready', runId: id, ready: { afterMs: 1800, probes: [], line: 'Local: x', ports: [{ port: 5173, address: '127.0.0.1' }] }, atMs: 1800 });
    for (let i = 0; i < 60; i++) tell({ type: 'ports', runId: id, ports: [{ port: 40000 + i, address: '127.0.0.1', http: i % 2 === 0 }], atMs: 2000 + i });
    tell({ type: 'input', runId: id, text: 'y\n', chars: 2, eof: false, atMs: 3000 });
    tell({ type: 'lease-renewed', runId: id, endsAtMs: 9_000_000, byMs: 1_800_000, atMs: 3100 });
    tell({ type: 'main-exited', runId: id, mainExit: { exitCode: 0, signal: null, atMs: 300 } });
    await until('the service events to be stored', () => store.events(id).some((e) => e.kind === 'main-exited'));
    const events = store.events(id);
    expect(events.find((e) => e.kind === 'ready')).toMatchObject({ atMs: 1800, detail: { ready: true, afterMs: 1800, ports: [5173], line: 'Local: x' } });
    const ports = events.filter((e) => e.kind === 'ports');
    expect(ports).toHaveLength(51);
    expect(ports[0]).toMatchObject({ atMs: 2000, detail: { ports: [{ port: 40000, address: '127.0.0.1', http: true }] } });
    expect(ports[50]).toMatchObject({ detail: { ports: [], more: 'its ports kept changing; later changes are not kept' } });
    expect(events.find((e) => e.kind === 'input')).toMatchObject({ atMs: 3000, detail: { text: 'y\n', chars: 2, eof: false } });
    expect(events.find((e) => e.kind === 'lease-renewed')).toMatchObject({ detail: { endsAtMs: 9_000_000, byMs: 1_800_000 } });
    expect(events.find((e) => e.kind === 'main-exited')).toMatchObject({ atMs: 300, detail: { exitCode: 0, signal: null } });
    supervisor.stop(id, { force: true });
  });
});
