// The registry with many real runs at once, client stops, wait with a time
// bound, and the typed event stream (docs/architecture.md, "Runs" and "The host
// and its API": stop, wait returning the running snapshot, live events).

import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../shared/events';
import { Harness } from './proc-testkit';
import { PATIENCE_MS, within } from '../../../test/kit/until';

let h: Harness;
beforeEach(() => {
  h = new Harness();
});
afterEach(async () => {
  await h.cleanup();
});

/** Resolves at the first event matching `match`, or rejects after `guardMs` (a hang guard). */
function nextEvent(match: (e: RunEvent) => boolean, guardMs = PATIENCE_MS): Promise<RunEvent> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error('the expected event never came'));
    }, guardMs);
    const off = h.supervisor.subscribe((e) => {
      if (!match(e)) return;
      clearTimeout(timer);
      off();
      resolve(e);
    });
  });
}

describe('many runs at once', () => {
  it('50 concurrent runs each printing its own token: every result complete, no output crosses runs', async () => {
    const lines = 20_000;
    const tokens = Array.from({ length: 50 }, (_, i) => `tok${i}x${randomBytes(4).toString('hex')}`);
    const started = tokens.map((token) => ({
      token,
      id: h.supervisor.start({
        // Both streams, from two writers, through real pipes, at the same time as 49 other runs.
        // No time limit: on a loaded machine 50 runs at once take as long as they take.
        argv: ['bash', '-c', `yes ${token} | head -n ${lines} & yes err-${token} | head -n ${lines} >&2; wait`],
      }).id,
    }));
    expect(new Set(started.map((s) => s.id)).size).toBe(50);
    const results = await Promise.all(started.map((s) => h.result(s.id)));
    results.forEach((r, i) => {
      const { token, id } = started[i]!;
      expect(r.id).toBe(id);
      expect(r.verdict, `${token}: ${r.notes.join(' ')}`).toBe('completed');
      expect(r.stdoutTruncated).toBe(0);
      const out = r.stdout.split('\n');
      const err = r.stderr.split('\n');
      expect(out.pop()).toBe('');
      expect(err.pop()).toBe('');
      expect(out.length, `${token} stdout line count`).toBe(lines);
      expect(err.length, `${token} stderr line count`).toBe(lines);
      expect(out.filter((l) => l !== token), `${token} stdout holds only its own token`).toEqual([]);
      expect(err.filter((l) => l !== `err-${token}`), `${token} stderr holds only its own token`).toEqual([]);
    });
    expect(h.supervisor.list().filter((r) => r.state !== 'ended')).toEqual([]);
  });
});

describe('client stop, wait and events', () => {
  it('a client stop of a sleeping command is stopped (reason user), not timed-out, after SIGINT', async () => {
    const { id } = h.supervisor.start({ argv: ['bash', '-c', 'echo up; sleep 30'], limitMs: 60_000 });
    await nextEvent((e) => e.runId === id && e.type === 'output');
    const snapshot = h.supervisor.stop(id);
    expect(snapshot.id).toBe(id);
    const r = await h.result(id);
    expect(r.verdict).toBe('stopped');
    expect(r.stop).toMatchObject({ reason: 'user', endedBy: 'interrupt' });
    // SIGCONT follows at once; it is not recorded when the interrupt already ended the whole group (nothing left to receive it).
    const signals = r.stop!.signals.map((s) => s.signal);
    expect(signals[0]).toBe('SIGINT');
    expect(['SIGINT', 'SIGCONT']).toEqual(expect.arrayContaining(signals));
    expect(r.signal).toBe('SIGINT');
    expect(r.stdout).toBe('up\n');
    expect(r.advice).toBeNull();
    // The stop was asked for well before the 60 s limit.
    expect(r.stop!.requestedAtMs).toBeLessThan(60_000);
    expect(r.notes.join(' ')).toMatch(/Stopped on request/);
  });

  it('a forced stop goes straight to SIGKILL and is still stopped', async () => {
    // A grace far longer than the test's patience: an interrupt first would show as a hang.
    const { id } = h.supervisor.start({ argv: ['bash', '-c', 'trap "" INT TERM; echo up; sleep 30'], graceMs: 600_000 });
    await nextEvent((e) => e.runId === id && e.type === 'output');
    h.supervisor.stop(id, { force: true });
    const r = await h.result(id);
    expect(r.verdict).toBe('stopped');
    expect(r.stop).toMatchObject({ reason: 'user', endedBy: 'kill' });
    // At once, not after the grace (which the test could not have waited out), with no terminate step.
    const kill = r.stop!.signals.find((s) => s.signal === 'SIGKILL');
    expect(kill, JSON.stringify(r.stop)).toBeDefined();
    expect(r.stop!.signals.map((s) => s.signal)).not.toContain('SIGTERM');
    expect(r.signal).toBe('SIGKILL');
    // Recorded as a force kill, at the time it was asked for.
    expect(r.stop!.forcedAtMs).toBe(kill!.atMs);
  });

  it('wait(id, { timeoutMs: 100 }) on a running run returns its running snapshot; wait(id) the final result', async () => {
    const { id } = h.supervisor.start({ argv: ['sleep', '30'] });
    const snap = await within('wait(id, { timeoutMs: 100 }) to yield', h.supervisor.wait(id, { timeoutMs: 100 }));
    expect(snap.id).toBe(id);
    expect(snap.state).toBe('running');
    expect(snap.verdict).toBeUndefined();
    expect(snap.endedAt).toBeUndefined();
    expect(snap.exitCode).toBeNull();
    expect(h.supervisor.get(id)?.state).toBe('running');
    h.supervisor.stop(id);
    const r = await h.result(id);
    expect(r.state).toBe('ended');
    expect(r.verdict).toBe('stopped');
  });

  it('events for a run come in order: started, output, signal-sent, ended, with output equal to the result', async () => {
    const events: RunEvent[] = [];
    const off = h.supervisor.subscribe((e) => events.push(e));
    const other = h.supervisor.start({ argv: ['bash', '-c', 'echo other run'] });
    const { id } = h.supervisor.start({ argv: ['bash', '-c', 'echo hello; echo oops >&2; sleep 30'], limitMs: 500, graceMs: 3_000 });
    const r = await h.result(id);
    await h.result(other.id);
    off();
    // Tree samples come between started and ended whenever the sampler ticks; checked apart.
    const all = events.filter((e) => e.runId === id);
    const trees = all.flatMap((e, i) => (e.type === 'tree' ? [i] : []));
    expect(trees.every((i) => i > 0 && i < all.length - 1)).toBe(true);
    const mine = all.filter((e) => e.type !== 'tree');
    const kinds = mine.map((e) => e.type).filter((t, i, all) => i === 0 || all[i - 1] !== t);
    expect(kinds).toEqual(['started', 'output', 'signal-sent', 'ended']);
    const started = mine[0] as Extract<RunEvent, { type: 'started' }>;
    expect(started.snapshot).toMatchObject({ id, state: 'running' });
    const text = (stream: string) =>
      mine.flatMap((e) => (e.type === 'output' && e.stream === stream ? [e.text] : [])).join('');
    expect(text('stdout')).toBe('hello\n');
    expect(text('stderr')).toBe('oops\n');
    const sent = mine.flatMap((e) => (e.type === 'signal-sent' ? [e] : []));
    expect(sent.map((e) => e.signal)).toEqual(['SIGINT', 'SIGCONT']);
    expect(sent.every((e) => e.step === 'interrupt')).toBe(true);
    const ended = mine[mine.length - 1] as Extract<RunEvent, { type: 'ended' }>;
    expect(ended.result).toEqual(r);
    expect(r.verdict).toBe('timed-out');
    // The other run's events carry its own id only.
    expect(events.filter((e) => e.runId === other.id && e.type === 'output').map((e) => (e as { text: string }).text).join('')).toBe('other run\n');
  });

  it('shutdown stops live runs with reason shutdown and returns their results', async () => {
    const a = h.supervisor.start({ argv: ['bash', '-c', 'echo up; exec sleep 30'] });
    const b = h.supervisor.start({ argv: ['bash', '-c', 'echo up; sleep 30'] });
    // Both running their commands (each printed), not a fixed time after the start.
    await Promise.all([a, b].map((run) => nextEvent((e) => e.runId === run.id && e.type === 'output')));
    const results = await within('shutdown', h.supervisor.shutdown());
    expect(results.map((r) => r.id).sort()).toEqual([a.id, b.id].sort());
    for (const r of results) {
      expect(r.verdict).toBe('stopped');
      expect(r.stop?.reason).toBe('shutdown');
    }
    expect(() => h.supervisor.start({ argv: ['true'] })).toThrow(/shutting down/);
  });
});
