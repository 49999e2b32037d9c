// One test per row of the interleavings table at the top of run.ts: where a
// stop, a timer, an exit or output can land relative to each other, with
// real processes and real signals.

import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RunEvent } from '../../shared/events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Harness, isDead, printedPids, waitDead } from './proc-testkit';
import { until } from '../../../test/kit/until';

let harness: Harness;
afterEach(async () => {
  vi.restoreAllMocks();
  await harness.cleanup();
});

function nextEvent(h: Harness, runId: string, match: (e: RunEvent) => boolean): Promise<RunEvent> {
  return new Promise((resolve) => {
    const off = h.supervisor.subscribe((event) => {
      if (event.runId === runId && match(event)) {
        off();
        resolve(event);
      }
    });
  });
}


describe('interleavings (run.ts table)', () => {
  it('1: an exit before the limit clears the deadline: no signal, verdict by the exit', async () => {
    harness = new Harness();
    const r = await harness.run({ argv: ['bash', '-c', 'exit 5'], limitMs: 300 });
    await new Promise((resolve) => setTimeout(resolve, 400)); // past where the timer would have fired
    expect(r.verdict).toBe('failed');
    expect(r.stop).toBeUndefined();
    expect(harness.supervisor.get(r.id)!.stop).toBeUndefined();
  });

  it('2: a deadline timer that fires early is re-armed, so the stop is never before the limit', async () => {
    harness = new Harness();
    const realSetTimeout = globalThis.setTimeout;
    const shortened: number[] = [];
    vi.spyOn(globalThis, 'setTimeout').mockImplementation(((fn: () => void, ms?: number) => {
      // The deadline's own timer, armed for the time left of the 500 ms limit (the sampler's and
      // the others' timers are shorter): make the first one fire 150 ms early.
      const deadline = shortened.length === 0 && ms !== undefined && ms > 400 && ms <= 500;
      if (deadline) shortened.push(ms);
      return realSetTimeout(fn, deadline ? ms - 150 : ms);
    }) as typeof setTimeout);
    const r = await harness.run({ argv: ['sleep', '30'], limitMs: 500 });
    vi.restoreAllMocks();
    expect(shortened).toHaveLength(1);
    expect(r.verdict).toBe('timed-out');
    expect(r.stop!.requestedAtMs).toBeGreaterThanOrEqual(500);
    expect(r.stop!.signals[0]!.atMs).toBeGreaterThanOrEqual(500);
  });

  it('3: a client stop during the deadline sequence starts nothing new; force sends SIGKILL at once', async () => {
    harness = new Harness();
    // The limit leaves bash ample time to set its trap before the deadline's SIGINT.
    const { id } = harness.supervisor.start({ argv: ['bash', '-c', 'trap "" INT TERM; echo ready; while :; do sleep 0.05; done'], limitMs: 1_000, graceMs: 30_000, terminateAfterMs: 20_000 });
    await nextEvent(harness, id, (e) => e.type === 'signal-sent' && e.signal === 'SIGCONT');
    harness.supervisor.stop(id);
    expect(harness.supervisor.get(id)!.stop!.signals.map((s) => s.signal)).toEqual(['SIGINT', 'SIGCONT']);
    harness.supervisor.stop(id, { force: true });
    const r = await harness.result(id);
    expect(r.verdict).toBe('timed-out');
    expect(r.stop).toMatchObject({ reason: 'deadline', endedBy: 'kill' });
    expect(r.stop!.signals.map((s) => s.signal)).toEqual(['SIGINT', 'SIGCONT', 'SIGKILL']);
  });

  it('4: a client stop after the main process exited is ignored; the verdict comes from the exit', async () => {
    harness = new Harness();
    // The leftover holds stdout, so the run sits in its drain after the exit, until the test ends the leftover.
    const { id } = harness.supervisor.start({ argv: ['bash', '-c', 'sleep 300 & echo "bg $!"; exit 3'], drainMs: 600_000 });
    // A live snapshot has no exit code (row 13), but its elapsed time stops at the main process's exit.
    let last = -1;
    await until('the main process to exit', () => {
      const now = harness.supervisor.get(id)!.elapsedMs;
      const still = now === last;
      last = now;
      return still;
    }, { everyMs: 30 });
    expect(harness.supervisor.get(id)!.state).not.toBe('ended');
    harness.supervisor.stop(id, { force: true });
    process.kill(printedPids(harness.supervisor.get(id)!.stdout).bg!, 'SIGKILL');
    const r = await harness.result(id);
    expect(r.verdict).toBe('failed');
    expect(r.exitCode).toBe(3);
    expect(r.stop).toBeUndefined();
  });

  it('5: a client stop before a failed spawn is known is ignored; the verdict is spawn-failed', async () => {
    harness = new Harness();
    const { id } = harness.supervisor.start({ argv: ['warden-no-such-command-xyz'] });
    harness.supervisor.stop(id);
    const r = await harness.result(id);
    expect(r.verdict).toBe('spawn-failed');
    expect(r.exitCode).toBe(127);
    expect(r.stop).toBeUndefined();
  });

  // Row 6 needs a step to fire in the instant between an exit and its handling:
  // it is driven deterministically through StopSequence in deadline.test.ts.

  it('7: output a descendant writes after the main exit is kept, up to the drain bound', async () => {
    harness = new Harness();
    // A drain bound far above what the late line needs, even on a loaded machine: the run ends when the pipe closes.
    const r = await harness.run({ argv: ['bash', '-c', '(sleep 0.3; echo late) & echo early'], drainMs: 600_000 });
    expect(r.stdout).toBe('early\nlate\n');
    expect(r.notes.join(' ')).not.toMatch(/pipes were closed/);
  });

  it('8: a main process that never exits after SIGKILL still ends the run, by the backstop', { timeout: 180_000 }, async () => {
    harness = new Harness();
    const realKill = process.kill.bind(process);
    let pgid = 0;
    // Stand in for a process stuck in the kernel: the group's SIGKILL does not reach it.
    vi.spyOn(process, 'kill').mockImplementation(((pid: number, signal?: string | number) => {
      if (pid === -pgid && signal === 'SIGKILL') return true;
      return realKill(pid, signal);
    }) as typeof process.kill);
    // Stopped once it has set its trap (it prints after): a stop before would end it at SIGINT.
    const { id } = harness.supervisor.start({ argv: ['bash', '-c', 'trap "" INT TERM; echo "main $$"; while :; do sleep 0.05; done'], graceMs: 300, drainMs: 100 });
    await until('the main process to print its pid', () => harness.supervisor.get(id)!.stdout.includes('main '));
    const main = printedPids(harness.supervisor.get(id)!.stdout).main!;
    pgid = main;
    harness.supervisor.stop(id);
    const r = await harness.result(id);
    vi.restoreAllMocks();
    expect(r.verdict).toBe('stopped');
    expect(r.stop!.endedBy).toBe('kill');
    expect(r.exitCode).toBeNull();
    expect(r.signal).toBeNull();
    expect(r.notes.join(' ')).toMatch(/did not exit 5 s after SIGKILL/);
    // Teardown, which signals pids one by one too, still ended it.
    expect(await waitDead([main])).toEqual([]);
  });

  it('9: wait with a timeout returns the running snapshot, then the result when it ends', async () => {
    harness = new Harness();
    // It ends when the test says (a gate file), not after a time the first wait might outlast.
    const dir = mkdtempSync(join(tmpdir(), 'warden-row9-'));
    const gate = join(dir, 'end-now');
    const { id } = harness.supervisor.start({ argv: ['bash', '-c', 'echo started; until [ -e "$1" ]; do sleep 0.02; done; echo done', 'row9', gate] });
    const early = await harness.supervisor.wait(id, { timeoutMs: 100 });
    expect(early.state).toBe('running');
    expect(early.verdict).toBeUndefined();
    writeFileSync(gate, '');
    const late = await harness.supervisor.wait(id, { timeoutMs: 600_000 });
    rmSync(dir, { recursive: true, force: true });
    expect(late.state).toBe('ended');
    expect(late.stdout).toBe('started\ndone\n');
  });

  it('13: between the main exit and the end (drain, teardown) a snapshot is still running, with no exit code or signal', async () => {
    harness = new Harness();
    // A background child keeps stdout open: the run drains for 1.5 s after bash exits 3.
    const { id } = harness.supervisor.start({ argv: ['bash', '-c', '(sleep 30) & echo out; exit 3'], drainMs: 1500 });
    const printed = nextEvent(harness, id, (e) => e.type === 'output');
    await printed;
    const mixed: string[] = [];
    let live = 0;
    for (;;) {
      const r = await harness.supervisor.wait(id, { timeoutMs: 0 });
      if (r.state === 'ended') {
        expect(r.exitCode).toBe(3);
        break;
      }
      live += 1;
      if (r.exitCode !== null || r.signal !== null || r.verdict !== undefined) mixed.push(`${r.state} exitCode=${r.exitCode} signal=${r.signal} verdict=${r.verdict}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(live).toBeGreaterThan(0);
    expect(mixed).toEqual([]);
  });

  it('12: an extension before the deadline fires re-arms it at the new limit; one after it fired is refused', async () => {
    harness = new Harness();
    const { id } = harness.supervisor.start({ argv: ['sleep', '30'], limitMs: 300 });
    harness.supervisor.extend(id, 300);
    const interrupt = await nextEvent(harness, id, (e) => e.type === 'signal-sent' && e.signal === 'SIGINT');
    expect(interrupt.type === 'signal-sent' && interrupt.atMs).toBeGreaterThanOrEqual(600);
    expect(() => harness.supervisor.extend(id, 300)).toThrow(/already being stopped|has ended/);
    const r = await harness.result(id);
    expect(r).toMatchObject({ verdict: 'timed-out', limitMs: 600 });
    expect(r.stop!.requestedAtMs).toBeGreaterThanOrEqual(600);
  });

  it('10: shutdown stops live runs with reason shutdown and refuses new ones', async () => {
    harness = new Harness();
    const { id } = harness.supervisor.start({ argv: ['sleep', '30'] });
    const results = await harness.supervisor.shutdown();
    expect(results.map((r) => r.id)).toEqual([id]);
    expect(results[0]!.verdict).toBe('stopped');
    expect(results[0]!.stop!.reason).toBe('shutdown');
    expect(() => harness.supervisor.start({ argv: ['true'] })).toThrow(/shutting down/);
  });

  it('11: a forker in scope that ignores TERM is rescanned until nothing it started is alive', async () => {
    harness = new Harness();
    const r = await harness.run({
      argv: ['bash', '-c', 'setsid bash -c \'trap "" TERM; echo "forker $$"; while :; do sleep 300 & sleep 0.01; done\' & sleep 0.3; echo bye'],
      drainMs: 200,
    });
    const { forker } = printedPids(r.stdout);
    expect(forker).toBeGreaterThan(0);
    expect(r.teardown!.survivors).toEqual([]);
    expect(r.teardown!.killed.some((p) => p.pid === forker)).toBe(true);
    expect(r.teardown!.killed.filter((p) => p.command === 'sleep 300').length).toBeGreaterThan(0);
    expect(isDead(forker!)).toBe(true);
  });

  it("13: a service's main process exits 0 while a setsid child still starts: it stays running until ready, then goes on", async () => {
    harness = new Harness();
    const { id } = harness.supervisor.start({
      argv: ['bash', '-c', '( setsid bash -c \'sleep 0.5; echo "listening $$"; exec sleep 300\' & ); exit 0'],
      ready: { probes: ['log:/listening/'] },
    });
    const mainExited = await nextEvent(harness, id, (e) => e.type === 'main-exited');
    expect(mainExited).toMatchObject({ mainExit: { exitCode: 0, signal: null } });
    expect(harness.supervisor.get(id)!.state).toBe('running');
    const ready = await harness.supervisor.wait(id, { until: 'ready', timeoutMs: 10_000 });
    expect(ready).toMatchObject({ state: 'running', ready: { line: expect.stringMatching(/^listening \d+$/) } });
    const { listening } = printedPids(ready.stdout);
    expect(isDead(listening!)).toBe(false);
    // 14: the stop reaches it by pid, though it left the group.
    harness.supervisor.stop(id);
    const r = await harness.result(id);
    expect(r).toMatchObject({ verdict: 'stopped', exitCode: 0, mainExit: { exitCode: 0 } });
    expect(await waitDead([listening!])).toEqual([]);
  });

  it('15: a lease that runs out while the main process is gone still ends every process of the service', async () => {
    harness = new Harness({ cgroupRoot: '/nonexistent-cgroup-root' });
    const { id } = harness.supervisor.start({
      argv: ['bash', '-c', '( setsid bash -c \'echo "server $$"; exec sleep 300\' & ); exit 0'],
      ready: { probes: ['log:/never/'], timeoutMs: 60_000 },
      leaseMs: 1500,
    });
    await nextEvent(harness, id, (e) => e.type === 'main-exited');
    const r = await harness.result(id);
    expect(r).toMatchObject({ verdict: 'stopped', stop: { reason: 'lease' } });
    const { server } = printedPids(r.stdout);
    expect(await waitDead([server!])).toEqual([]);
  });

  it('16: readiness that passes in the same moment the main process exits is told first; the end follows', async () => {
    harness = new Harness();
    const seen: string[] = [];
    const { id } = harness.supervisor.start({ argv: ['bash', '-c', 'echo ready-now; exit 0'], ready: { probes: ['log:/ready-now/'] } });
    harness.supervisor.subscribe((e) => {
      if (e.runId === id && (e.type === 'ready' || e.type === 'ended')) seen.push(e.type);
    });
    const r = await harness.result(id);
    expect(r).toMatchObject({ verdict: 'completed', ready: { line: 'ready-now' } });
    expect(r.mainExit).toBeUndefined();
    expect(seen).toEqual(['ready', 'ended']);
  });
});
