// Python sessions against the REAL interpreter and runtime/warden_runtime.py:
// the stop of a script at its limit or on request: output, line and
// interpreter kept; a script that will not stop is killed after the grace.
//
// Times are asserted only from what results record, never from the test's own
// stopwatch (except hang guards).

import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../../../shared/events';
import type { RunResult } from '../../../shared/result';
import { waitDead } from '../proc-testkit';
import { until } from '../../../../test/kit/until';
import { pythonHarness, signalPending, sleep } from './testkit';

const t = pythonHarness();
const { py, pidOf } = t;

/** Asserts a script was stopped at its 1 s limit by the interrupt, at `line`, with `before` kept. */
function expectStoppedAtLimit(r: RunResult, line: number | string, stdout: string): void {
  expect(r).toMatchObject({ kind: 'python', verdict: 'timed-out', exitCode: null, signal: 'SIGINT', limitMs: 1000, stdout });
  expect(r.stop).toMatchObject({ reason: 'deadline', endedBy: 'interrupt' });
  expect(r.stop!.requestedAtMs).toBeGreaterThanOrEqual(1000);
  expect(r.stop!.signals[0]).toMatchObject({ signal: 'SIGINT' });
  expect(r.notes).toContain(r.notes.find((n) => n.startsWith('Stopped at the 1 s limit')));
  const at = new RegExp(`File "<script>", line ${line}\\b`);
  expect(r.stderr).toMatch(at);
  expect(r.stderr).not.toContain('warden_runtime');
  expect(r.notes.join('\n')).toMatch(at);
}

type SignalSent = Extract<RunEvent, { type: 'signal-sent' }>;

/** The signal-sent events of the supervisor's runs, as a view of the stop would get them. */
function signalEvents(): SignalSent[] {
  const seen: SignalSent[] = [];
  t.h.supervisor.subscribe((e) => {
    if (e.type === 'signal-sent') seen.push(e);
  });
  return seen;
}

describe('stopping a script at its limit', () => {
  it('time.sleep, a busy loop and a blocking socket.recv each stop at a 1 s limit in the same interpreter', async () => {
    const sleepRun = await py({ code: 'import time\nprint("before sleep")\ntime.sleep(30)\nprint("never")', limitMs: 1000 });
    expectStoppedAtLimit(sleepRun, 3, 'before sleep\n');
    const pid = pidOf();
    expect(pid).not.toBeNull();

    const busy = await py({ code: 'print("before loop")\nwhile True:\n    pass\n', limitMs: 1000 });
    // CPython reports the loop's own line for `pass` (it compiles to no instruction of its own).
    expectStoppedAtLimit(busy, '[23]', 'before loop\n');
    expect(pidOf()).toBe(pid);

    const recv = await py({ code: 'import socket\na, b = socket.socketpair()\nprint("before recv")\na.recv(1)\n', limitMs: 1000 });
    expectStoppedAtLimit(recv, 4, 'before recv\n');
    expect(pidOf()).toBe(pid);
    expect(t.h.supervisor.sessions()[0]).toMatchObject({ name: 'default', state: 'idle', scriptsRun: 3, queued: 0 });
  });

  it('keeps variables assigned before the interrupt: x = 41, y = 1, then x + y is 42', async () => {
    expect((await py({ code: 'x = 41' })).verdict).toBe('completed');
    const interrupted = await py({ code: 'import time\ny = 1\ntime.sleep(30)', limitMs: 1000 });
    expect(interrupted.verdict).toBe('timed-out');
    const sum = await py({ code: 'print(x + y)' });
    expect(sum).toMatchObject({ verdict: 'completed', exitCode: 0, stdout: '42\n', stderr: '' });
  });

  it('cancels a script awaiting asyncio.sleep(60) at the limit, at its await line', async () => {
    const r = await py({ code: 'import asyncio\nprint("waiting")\nawait asyncio.sleep(60)\n', limitMs: 1000 });
    expect(r).toMatchObject({ verdict: 'timed-out', signal: 'SIGINT', exitCode: null, stdout: 'waiting\n' });
    expect(r.stop?.endedBy).toBe('interrupt');
    expect(r.stderr).toContain('File "<script>", line 3');
    expect(r.notes.some((n) => n.startsWith('Stopped at the 1 s limit'))).toBe(true);
    expect(r.notes.some((n) => n.includes('cancelled at an await at File "<script>", line 3'))).toBe(true);
    // The interpreter is the same one afterwards.
    const pid = pidOf();
    expect((await py({ code: 'print("still here")' })).stdout).toBe('still here\n');
    expect(pidOf()).toBe(pid);
  });

  it('stops `await asyncio.sleep(1)` then `time.sleep(5)` under a 1 s limit every time over 20 runs', { timeout: 180_000 }, async () => {
    const pid = (await py({ code: 'import asyncio, time' }), pidOf());
    for (let i = 0; i < 20; i++) {
      const r = await py({ code: `await asyncio.sleep(1)\ntime.sleep(5)\nprint("not stopped ${i}")`, limitMs: 1000 });
      expect(r.verdict, `run ${i}: ${r.notes.join(' ')}`).toBe('timed-out');
      expect(r.stop?.endedBy, `run ${i}`).toBe('interrupt');
      expect(r.stdout, `run ${i}`).not.toContain('not stopped');
      // Stopped either at the await (line 1) or in the sleep (line 2), never past it.
      expect(r.stderr, `run ${i}`).toMatch(/File "<script>", line [12]\b/);
    }
    expect(pidOf()).toBe(pid);
  });

  it('a SIGINT sent to the interpreter between scripts does nothing', async () => {
    expect((await py({ code: 'kept = "yes"' })).verdict).toBe('completed');
    const pid = pidOf()!;
    process.kill(pid, 'SIGINT');
    process.kill(pid, 'SIGINT');
    // Delivered (and so handled by the runtime) before the next script is sent.
    await until('the SIGINT to be delivered', () => !signalPending(pid));
    const r = await py({ code: 'print(kept)' });
    expect(r).toMatchObject({ verdict: 'completed', stdout: 'yes\n', notes: [] });
    expect(pidOf()).toBe(pid);
  });

  it('an eager task factory installed by an earlier script does not stop time.sleep(30) being interrupted', async (ctx) => {
    const newEnough = execFileSync('python3', ['-c', 'import sys; print(sys.version_info >= (3, 12))'], { encoding: 'utf8' }).trim() === 'True';
    if (!newEnough) {
      console.log('skipped: asyncio.eager_task_factory needs Python 3.12 or later; python3 here is older');
      ctx.skip();
      return;
    }
    const install = await py({ code: 'import asyncio\nasyncio.get_running_loop().set_task_factory(asyncio.eager_task_factory)\nx = 7' });
    expect(install.verdict).toBe('completed');
    const r = await py({ code: 'import time\nprint("eager")\ntime.sleep(30)', limitMs: 1000 });
    expectStoppedAtLimit(r, 3, 'eager\n');
    expect((await py({ code: 'print(x)' })).stdout).toBe('7\n');
  });

  it('a script that catches KeyboardInterrupt and keeps blocking is killed after the grace; the next gets a NameError', async () => {
    expect((await py({ code: 'x = 41' })).verdict).toBe('completed');
    const pid = pidOf()!;
    const code = [
      'import time',
      'print("stubborn")',
      'while True:',
      '    try:',
      '        time.sleep(30)',
      '    except KeyboardInterrupt:',
      '        print("caught", flush=True)',
    ].join('\n');
    const events = signalEvents();
    const r = await py({ code, limitMs: 1000, graceMs: 500 });
    expect(r).toMatchObject({ verdict: 'timed-out', signal: 'SIGKILL', exitCode: null });
    // A view counts the grace down from the events: each SIGINT names its step and when SIGKILL is due, the SIGKILL its own.
    const firstAt = events[0]!.atMs;
    for (const e of events.filter((x) => x.signal === 'SIGINT')) expect(e).toMatchObject({ step: 'interrupt', killAtMs: Math.round(firstAt + 500) });
    const killEvent = events.find((x) => x.signal === 'SIGKILL')!;
    expect(killEvent).toMatchObject({ step: 'kill', killAtMs: Math.round(killEvent.atMs) });
    // Not forced: the record holds no forcedAtMs at all (a structured clone to the renderer keeps a key set to undefined).
    expect(r.stop).not.toHaveProperty('forcedAtMs');
    expect(r.stdout.startsWith('stubborn\ncaught\n')).toBe(true);
    expect(r.stop?.endedBy).toBe('kill');
    const signals = r.stop!.signals;
    // SIGINT again every 200 ms until the script reports or the grace ends: at 0, 200 and 400 ms of a 500 ms grace.
    const interrupts = signals.filter((s) => s.signal === 'SIGINT');
    expect(interrupts.length).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < interrupts.length; i++) expect(interrupts[i]!.atMs - interrupts[i - 1]!.atMs).toBeGreaterThanOrEqual(199);
    const kill = signals.find((s) => s.signal === 'SIGKILL')!;
    expect(kill.atMs - r.stop!.requestedAtMs).toBeGreaterThanOrEqual(499);
    expect(signals.map((s) => s.signal).every((s) => s === 'SIGINT' || s === 'SIGKILL')).toBe(true);
    expect(r.notes.some((n) => n.startsWith('Stopped at the 1 s limit'))).toBe(true);
    expect(r.notes.some((n) => n.includes('0.5 s grace') && n.includes('variables from earlier scripts are gone'))).toBe(true);
    expect(r.advice).toContain('variables are gone');
    expect(await waitDead([pid])).toEqual([]);

    const next = await py({ code: 'print(x)' });
    expect(next.verdict).toBe('failed');
    expect(next.stderr).toContain("NameError: name 'x' is not defined");
    expect(next.notes.some((n) => n.includes('fresh interpreter') && n.includes('killed') && n.includes('variables from earlier scripts are gone'))).toBe(true);
    expect(pidOf()).not.toBe(pid);
  });

  it('a client stop runs the same sequence at once: stopped, SIGINT, line kept', async () => {
    const { id } = t.h.supervisor.start({ code: 'import time\nprint("working", flush=True)\ntime.sleep(30)' });
    // Wait for its output so the script is surely running.
    await until('the script to run', () => t.h.supervisor.get(id)!.stdout.includes('working'));
    t.h.supervisor.stop(id);
    const r = await t.h.result(id);
    expect(r).toMatchObject({ verdict: 'stopped', signal: 'SIGINT', exitCode: null, stdout: 'working\n' });
    expect(r.stop).toMatchObject({ reason: 'user', endedBy: 'interrupt' });
    expect(r.stderr).toContain('File "<script>", line 3');
  });

  it('a forced client stop kills the interpreter at once; the next script runs in a fresh one', async () => {
    await py({ code: 'x = 1' });
    const pid = pidOf()!;
    const { id } = t.h.supervisor.start({ code: 'import time\nprint("busy", flush=True)\ntime.sleep(30)' });
    await until('the script to run', () => t.h.supervisor.get(id)!.stdout.includes('busy'));
    const events = signalEvents();
    t.h.supervisor.stop(id, { force: true });
    const r = await t.h.result(id);
    expect(r).toMatchObject({ verdict: 'stopped', signal: 'SIGKILL', stdout: 'busy\n', stop: { reason: 'user', endedBy: 'kill', signals: [{ signal: 'SIGKILL' }] } });
    // The SIGKILL is the kill step, due when it was sent (not a grace later).
    const kill = events.filter((e) => e.runId === id && e.step !== 'teardown');
    expect(kill).toEqual([expect.objectContaining({ signal: 'SIGKILL', step: 'kill', killAtMs: Math.round(kill[0]!.atMs) })]);
    expect(await waitDead([pid])).toEqual([]);
    const next = await py({ code: 'print("x" in globals())' });
    expect(next.stdout).toBe('False\n');
    expect(next.notes.some((n) => n.includes('fresh interpreter') && n.includes('killed by a forced stop'))).toBe(true);
    expect(r.notes.some((n) => n.startsWith('The stop was forced'))).toBe(true);
    expect(r.stop!.forcedAtMs).toBeTypeOf('number');
  });

  it('a script that ignores SIGINT is still stopped at its await by the cancel op, and keeps its interpreter', async () => {
    const pid = (await py({ code: 'kept = 1' }), pidOf());
    const code = 'import asyncio, signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint("deaf", flush=True)\nawait asyncio.sleep(30)\n';
    const r = await py({ code, limitMs: 1000, graceMs: 20_000 });
    expect(r).toMatchObject({ verdict: 'timed-out', stdout: 'deaf\n' });
    expect(r.stop).toMatchObject({ reason: 'deadline', endedBy: 'interrupt' });
    expect(r.stderr).toContain('File "<script>", line 4');
    expect(r.notes.some((n) => n.includes('cancelled at an await at File "<script>", line 4'))).toBe(true);
    expect(pidOf()).toBe(pid);
    expect((await py({ code: 'print(kept)' })).stdout).toBe('1\n');
  });

  it('a stop asked for while the finished script\'s leftovers are torn down changes nothing', async () => {
    const pid = (await py({ code: 'x = 1' }), pidOf());
    const { id } = t.h.supervisor.start({ code: 'import subprocess\nx = 42\nsubprocess.Popen(["sleep", "30"])\nprint("left a child")', graceMs: 300 });
    // The script has reported and its run is tearing down the sleep it left: too late for a stop.
    let stateAsked: string | undefined;
    const off = t.h.supervisor.subscribe((e) => {
      if (e.runId === id && e.type === 'signal-sent' && e.step === 'teardown') {
        off();
        stateAsked = t.h.supervisor.get(id)!.state;
        t.h.supervisor.stop(id);
      }
    });
    const r = await t.h.result(id);
    expect(stateAsked).toBe('running');
    expect(r).toMatchObject({ verdict: 'completed', exitCode: 0, stdout: 'left a child\n' });
    expect(r.stop).toBeUndefined();
    expect(r.teardown?.killed.some((p) => p.command.includes('sleep 30'))).toBe(true);
    // No SIGINT or SIGKILL follows for the interpreter (looked for past the 300 ms grace, when a
    // SIGKILL would have come): the next script runs in it, with x.
    await sleep(600);
    expect((await py({ code: 'print(x)' })).stdout).toBe('42\n');
    expect(pidOf()).toBe(pid);
  });

  it('an interrupt the script sends itself is failed, with a note that Warden did not send it', async () => {
    const r = await py({ code: 'import os, signal, time\nos.kill(os.getpid(), signal.SIGINT)\ntime.sleep(5)' });
    expect(r).toMatchObject({ verdict: 'failed', exitCode: 1, signal: null });
    expect(r.stop).toBeUndefined();
    expect(r.notes.join('\n')).toMatch(/interrupted \(KeyboardInterrupt\) at File "<script>", line [23] by a SIGINT Warden did not send/);
    expect(r.advice).toContain('os.kill(os.getpid(), signal.SIGINT)');
  });
});
