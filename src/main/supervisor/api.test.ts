// engineApi: the engine as a WardenApi, with and without a history store.
// Real commands and a real database file.

import { afterEach, describe, expect, it } from 'vitest';
import { attachRecorder } from '../store/recorder';
import { openStore } from '../store/store';
import { removeTempDirs, tempStateDir } from '../store/store-testkit';
import { engineApi } from './api';
import { WardenInputError } from './errors';
import { Harness } from './proc-testkit';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
  removeTempDirs();
});

function harness(): Harness {
  const h = new Harness();
  cleanups.push(() => h.cleanup());
  return h;
}

describe('engineApi', () => {
  it('get: the live run, else the stored result of a run this host never held, else null', async () => {
    const store = openStore({ dir: tempStateDir() });
    cleanups.push(() => store.close());
    // An earlier host recorded a run.
    const earlier = harness();
    const recorder = attachRecorder(store, earlier.supervisor);
    const past = await earlier.run({ argv: ['bash', '-c', 'echo from the past; exit 2'] });
    await recorder.close();

    const h = harness();
    const api = engineApi(h.supervisor, { store });
    expect(h.supervisor.get(past.id)).toBeUndefined();
    expect(await api.get(past.id)).toEqual(past);
    expect(await api.get('nosuchrun123')).toBeNull();
    const live = await api.start({ argv: ['sleep', '30'] });
    expect(await api.get(live.id)).toMatchObject({ id: live.id, state: 'running' });

    expect((await api.history()).runs.map((r) => r.id)).toEqual([past.id]);
    expect((await api.history({ verdict: 'failed', since: past.startedAt })).runs.map((r) => r.id)).toEqual([past.id]);
    // With the times its output came (for the UI's merged log); a short run may also have been sampled (telemetry).
    expect((await api.timeline(past.id)).map((e) => e.kind).filter((k) => k !== 'telemetry')).toEqual(['started', 'output-times', 'exit', 'teardown', 'ended']);
    expect(await api.timeline('nosuchrun123')).toEqual([]);
    // A query the store refuses is the caller's input error.
    await expect(api.history({ cursor: 'not a cursor' })).rejects.toThrow(WardenInputError);
    expect(await api.host()).toMatchObject({ hostId: h.supervisor.hostId, pid: process.pid, history: true, accepting: true, port: null });
  });

  it('without a store: no history, empty timelines, get only what is in memory', async () => {
    const h = harness();
    const api = engineApi(h.supervisor);
    const r = await api.wait((await api.start({ argv: ['bash', '-c', 'echo hi'] })).id);
    expect(await api.get(r.id)).toEqual(r);
    expect(await api.get('nosuchrun123')).toBeNull();
    expect(await api.history({ limit: 5 })).toEqual({ runs: [], nextCursor: null });
    expect(await api.timeline(r.id)).toEqual([]);
    const info = await api.host();
    expect(info).toMatchObject({ hostId: h.supervisor.hostId, pid: process.pid, version: 'unknown', stateDir: '', history: false, accepting: true, port: null });
    expect(Number.isNaN(Date.parse(info.startedAt))).toBe(false);
    await h.supervisor.shutdown();
    expect((await api.host()).accepting).toBe(false);
  });

  it('host() answers from the given function when there is one', async () => {
    const h = harness();
    const info = { hostId: 'h1', pid: 1, version: '1.2.3', stateDir: '/s', startedAt: new Date(0).toISOString(), accepting: true, history: true, port: 4000 };
    expect(await engineApi(h.supervisor, { host: () => info }).host()).toEqual(info);
  });

  it('wait takes the options, extend moves the deadline; bad input rejects with WardenInputError', async () => {
    const h = harness();
    const api = engineApi(h.supervisor);
    const { id } = await api.start({ argv: ['bash', '-c', 'echo one; sleep 0.3; echo two'], limitMs: 200 });
    expect(await api.extend(id, 5000)).toMatchObject({ limitMs: 5200 });
    const first = await api.wait(id, { timeoutMs: 100, output: 'unseen' });
    const rest = await api.wait(id, { output: 'unseen' });
    expect(first.stdout + rest.stdout).toBe('one\ntwo\n');
    expect(rest).toMatchObject({ verdict: 'completed', limitMs: 5200 });
    await expect(api.extend(id, 1000)).rejects.toThrow(WardenInputError);
    await expect(api.extend('nosuchrun123', 1000)).rejects.toMatchObject({ kind: 'not-found' });
    await expect(api.wait(id, { timeoutMs: -5 })).rejects.toThrow(WardenInputError);
  });
});
