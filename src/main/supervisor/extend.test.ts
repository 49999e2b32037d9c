// Moving a live run's deadline later, with real processes and the real Python
// runtime. Times are asserted only as orderings the engine guarantees (a stop
// cannot come before the limit in force), never from a stopwatch.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../shared/events';
import { MAX_LIMIT_MS, MAX_TIMER_MS, timerDelay } from './deadline';
import { WardenInputError } from './errors';
import { Harness } from './proc-testkit';

let h: Harness;
beforeEach(() => {
  h = new Harness();
});
afterEach(async () => {
  await h.cleanup();
});

type Extended = Extract<RunEvent, { type: 'limit-extended' }>;

function extensions(): Extended[] {
  const seen: Extended[] = [];
  h.supervisor.subscribe((e) => {
    if (e.type === 'limit-extended') seen.push(e);
  });
  return seen;
}

/** Lets the run go on for about `ms` (a yielded wait), then returns its snapshot. */
const after = (id: string, ms: number) => h.supervisor.wait(id, { timeoutMs: ms });

function nextEvent(runId: string, match: (e: RunEvent) => boolean): Promise<RunEvent> {
  return new Promise((resolve) => {
    const off = h.supervisor.subscribe((event) => {
      if (event.runId === runId && match(event)) {
        off();
        resolve(event);
      }
    });
  });
}

const NOTE = /^The limit was extended by (.+) (at [\d.]+ s|while it was queued) \(to (.+)\)\.$/;

describe('extend a command run', () => {
  it('sleep 3 with a 1 s limit extended by 5 s after ~300 ms completes, with limitMs 6000 and a note', async () => {
    const seen = extensions();
    const { id } = h.supervisor.start({ argv: ['sleep', '3'], limitMs: 1000 });
    expect((await after(id, 300)).state).toBe('running');
    const snap = h.supervisor.extend(id, 5000);
    expect(snap).toMatchObject({ state: 'running', limitMs: 6000 });
    expect(h.supervisor.get(id)!.limitMs).toBe(6000);
    const r = await h.result(id);
    expect(r).toMatchObject({ verdict: 'completed', exitCode: 0, limitMs: 6000 });
    expect(r.stop).toBeUndefined();
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ type: 'limit-extended', runId: id, limitMs: 6000, byMs: 5000 });
    expect(seen[0]!.atMs).toBeGreaterThanOrEqual(300);
    const note = r.notes.find((n) => NOTE.test(n));
    expect(note).toMatch(/^The limit was extended by 5 s at [\d.]+ s \(to 6 s\)\.$/);
  });

  it('sleep 30 with a 1 s limit extended by 1 s times out at the new limit: no stop before 2 s', async () => {
    const { id } = h.supervisor.start({ argv: ['sleep', '30'], limitMs: 1000 });
    await after(id, 300);
    h.supervisor.extend(id, 1000);
    const r = await h.result(id);
    expect(r).toMatchObject({ verdict: 'timed-out', limitMs: 2000 });
    expect(r.stop).toMatchObject({ reason: 'deadline', endedBy: 'interrupt' });
    expect(r.stop!.requestedAtMs).toBeGreaterThanOrEqual(2000);
    expect(r.elapsedMs).toBeGreaterThanOrEqual(2000);
    expect(r.notes[0]).toMatch(/^Stopped at the 2 s limit/);
    expect(r.advice).toContain('(now 2 s)');
  });

  it('extensions add up', async () => {
    const { id } = h.supervisor.start({ argv: ['sleep', '30'], limitMs: 200 });
    h.supervisor.extend(id, 100);
    expect(h.supervisor.extend(id, 300).limitMs).toBe(600);
    const r = await h.result(id);
    expect(r).toMatchObject({ verdict: 'timed-out', limitMs: 600 });
    expect(r.stop!.requestedAtMs).toBeGreaterThanOrEqual(600);
    expect(r.notes.filter((n) => NOTE.test(n)).map((n) => n.replace(/at [\d.]+ s/, 'at T'))).toEqual([
      'The limit was extended by 0.1 s at T (to 0.3 s).',
      'The limit was extended by 0.3 s at T (to 0.6 s).',
    ]);
  });

  it('a run without a limit gets one: its elapsed time plus byMs', async () => {
    const seen = extensions();
    const { id } = h.supervisor.start({ argv: ['sleep', '30'] });
    await after(id, 100);
    const snap = h.supervisor.extend(id, 300);
    expect(snap.limitMs).toBeGreaterThanOrEqual(400);
    expect(snap.limitMs).toBe(seen[0]!.limitMs);
    const r = await h.result(id);
    expect(r).toMatchObject({ verdict: 'timed-out', limitMs: snap.limitMs });
    expect(r.stop!.requestedAtMs).toBeGreaterThanOrEqual(snap.limitMs!);
  });

  it('the verdict compares the ending with the limit in force: exit 137 before the extended limit is "before" it', async () => {
    const { id } = h.supervisor.start({ argv: ['bash', '-c', 'sleep 0.5; exit 137'], limitMs: 300 });
    h.supervisor.extend(id, 5000);
    const r = await h.result(id);
    expect(r).toMatchObject({ verdict: 'failed', exitCode: 137, limitMs: 5300 });
    expect(r.notes[0]).toMatch(/^Exit code 137 after [\d.]+ s, before the 5\.3 s limit\. This usually means/);
  });

  it('is refused once the deadline fired (stopping), and the limit stays', async () => {
    const { id } = h.supervisor.start({ argv: ['bash', '-c', 'trap "" INT TERM; while :; do sleep 0.05; done'], limitMs: 200, terminateAfterMs: 20_000, graceMs: 30_000 });
    await nextEvent(id, (e) => e.type === 'signal-sent' && e.signal === 'SIGINT');
    expect(() => h.supervisor.extend(id, 5000)).toThrow(WardenInputError);
    expect(() => h.supervisor.extend(id, 5000)).toThrow(/already being stopped; its limit can no longer be extended\.$/);
    expect(h.supervisor.get(id)).toMatchObject({ state: 'stopping', limitMs: 200 });
    h.supervisor.stop(id, { force: true });
    const r = await h.result(id);
    expect(r).toMatchObject({ verdict: 'timed-out', limitMs: 200 });
    expect(r.notes.some((n) => NOTE.test(n))).toBe(false);
  });

  it('is refused for a run a client is stopping', async () => {
    const { id } = h.supervisor.start({ argv: ['bash', '-c', 'trap "" INT TERM; while :; do sleep 0.05; done'], limitMs: 10_000, terminateAfterMs: 20_000, graceMs: 30_000 });
    await after(id, 50);
    h.supervisor.stop(id);
    expect(() => h.supervisor.extend(id, 1000)).toThrow(/already being stopped/);
    h.supervisor.stop(id, { force: true });
    expect((await h.result(id)).verdict).toBe('stopped');
  });

  it('is refused for an ended run, an unknown run, and a byMs that is not a positive finite number', async () => {
    const r = await h.run({ argv: ['true'], limitMs: 1000 });
    expect(() => h.supervisor.extend(r.id, 1000)).toThrow(new WardenInputError(`Run ${r.id} has ended; its limit can no longer be extended.`));
    expect(() => h.supervisor.extend('nosuchrun123', 1000)).toThrow(expect.objectContaining({ kind: 'not-found', message: 'No run with id "nosuchrun123".' }));
    const { id } = h.supervisor.start({ argv: ['sleep', '30'], limitMs: 5000 });
    for (const byMs of [0, -100, Number.NaN, Number.POSITIVE_INFINITY, '1000', null, MAX_LIMIT_MS + 1]) {
      let error: unknown;
      try {
        h.supervisor.extend(id, byMs as number);
      } catch (e) {
        error = e;
      }
      expect(error, String(byMs)).toBeInstanceOf(WardenInputError);
      expect((error as Error).message).toMatch(/^byMs must be a number of milliseconds above 0/);
      expect((error as Error).message).not.toContain('\n');
    }
    expect(() => h.supervisor.extend(id, MAX_LIMIT_MS)).toThrow(/over the longest Warden can time/);
    expect(h.supervisor.get(id)!.limitMs).toBe(5000);
    // Past one timer's reach (24.8 days) is fine: the deadline re-arms in steps.
    expect(h.supervisor.extend(id, 40 * 24 * 3_600_000).limitMs).toBe(5000 + 40 * 24 * 3_600_000);
    h.supervisor.stop(id, { force: true });
  });
});

describe('extend a Python script', () => {
  it('a script sleeping 2 s with a 1 s limit extended by 3 s completes, keeping its interpreter', async () => {
    const seen = extensions();
    const { id } = h.supervisor.start({ code: 'import time\nprint("started", flush=True)\ntime.sleep(2)\nprint("done")', limitMs: 1000 });
    // Extended once the script runs (on a loaded machine the interpreter may take longer than any fixed wait).
    await nextEvent(id, (e) => e.type === 'output');
    expect(h.supervisor.get(id)!.state).toBe('running');
    expect(h.supervisor.extend(id, 3000).limitMs).toBe(4000);
    const r = await h.result(id);
    expect(r).toMatchObject({ kind: 'python', verdict: 'completed', limitMs: 4000, stdout: 'started\ndone\n' });
    expect(r.stop).toBeUndefined();
    expect(seen.map((e) => [e.runId, e.limitMs, e.byMs])).toEqual([[id, 4000, 3000]]);
    expect(r.notes.find((n) => NOTE.test(n))).toMatch(/^The limit was extended by 3 s at [\d.]+ s \(to 4 s\)\.$/);
  });

  it('an extended script still times out at its new limit', async () => {
    const { id } = h.supervisor.start({ code: 'import time\ntime.sleep(30)', limitMs: 500 });
    await after(id, 100);
    h.supervisor.extend(id, 700);
    const r = await h.result(id);
    expect(r).toMatchObject({ verdict: 'timed-out', limitMs: 1200 });
    expect(r.stop!.requestedAtMs).toBeGreaterThanOrEqual(1200);
    expect(r.notes[0]).toMatch(/^Stopped at the 1\.2 s limit/);
  });

  it('a queued script just gets the bigger limit', async () => {
    const busy = h.supervisor.start({ code: 'import time\ntime.sleep(0.5)' });
    const queued = h.supervisor.start({ code: 'import time\ntime.sleep(1)\nprint("ok")', limitMs: 300 });
    expect(queued.state).toBe('queued');
    expect(h.supervisor.extend(queued.id, 2000)).toMatchObject({ state: 'queued', limitMs: 2300 });
    await h.result(busy.id);
    const r = await h.result(queued.id);
    expect(r).toMatchObject({ verdict: 'completed', limitMs: 2300, stdout: 'ok\n' });
    expect(r.notes).toContain('The limit was extended by 2 s while it was queued (to 2.3 s).');
  });

  it('is refused once its stop has begun, and after it ended', async () => {
    const code = 'import time\nwhile True:\n    try:\n        time.sleep(10)\n    except KeyboardInterrupt:\n        pass';
    const { id } = h.supervisor.start({ code, limitMs: 200, graceMs: 30_000 });
    await nextEvent(id, (e) => e.type === 'signal-sent' && e.signal === 'SIGINT');
    expect(() => h.supervisor.extend(id, 5000)).toThrow(/already being stopped/);
    h.supervisor.stop(id, { force: true });
    const r = await h.result(id);
    expect(r).toMatchObject({ verdict: 'timed-out', limitMs: 200 });
    expect(() => h.supervisor.extend(id, 5000)).toThrow(/has ended/);
  });
});

describe('limits past one timer\'s reach', () => {
  it('a deadline is armed for at most 24.8 days at a time, and re-armed for the rest', () => {
    expect(timerDelay(5)).toBe(5);
    expect(timerDelay(-3)).toBe(0);
    expect(timerDelay(40 * 24 * 3_600_000)).toBe(MAX_TIMER_MS);
    expect(MAX_LIMIT_MS).toBeGreaterThan(365 * 24 * 3_600_000);
  });

  it('a run takes a limit of 30 days, and says it has one', async () => {
    const { id, limitMs } = h.supervisor.start({ argv: ['sleep', '30'], limitMs: 30 * 24 * 3_600_000 });
    expect(limitMs).toBe(30 * 24 * 3_600_000);
    const stopped = await (h.supervisor.stop(id, { force: true }), h.supervisor.wait(id));
    expect(stopped.verdict).toBe('stopped');
  });
});
