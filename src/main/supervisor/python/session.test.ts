// Python sessions against the REAL interpreter and runtime/warden_runtime.py:
// the session around the scripts: an interpreter dying between them, the
// queue, refusal, restart and close, and the interleavings table in
// session.ts.
//
// Times are asserted only from what results record, never from the test's own
// stopwatch (except hang guards).

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunResult } from '../../../shared/result';
import { Harness, isDead, waitDead } from '../proc-testkit';
import { until } from '../../../../test/kit/until';
import { pythonHarness } from './testkit';

const t = pythonHarness();
const { py, pidOf } = t;

describe('when the interpreter dies between scripts', () => {
  it('records it on the session and tells the next script, with the first step phrased "If it happens again"', async () => {
    // The crash waits for the test's gate, opened once the script's result is in: between scripts, however slow the machine.
    const gate = t.gate();
    const crash = `def crash():\n    ${gate.waitPy.replace(/\n/g, '\n    ')}\n    os.kill(os.getpid(), signal.SIGSEGV)\n`;
    const r = await py({ code: `import os, signal, threading\nx = 1\n${crash}threading.Thread(target=crash).start()\nprint("done")` });
    expect(r).toMatchObject({ verdict: 'completed', stdout: 'done\n' });
    const pid = r.stdout ? pidOf()! : 0;
    gate.open();
    expect(await waitDead([pid])).toEqual([]);
    await until('the session to see its interpreter dead', () => t.h.supervisor.sessions()[0]!.state === 'dead');
    expect(t.h.supervisor.sessions()[0]).toMatchObject({ state: 'dead', pid: null });
    const next = await py({ code: 'print(x)' });
    expect(next.verdict).toBe('failed');
    expect(next.stderr).toContain("NameError: name 'x' is not defined");
    const note = next.notes.find((n) => n.startsWith('The interpreter died after the previous script'))!;
    expect(note).toContain(`(run ${r.id})`);
    expect(note).toContain('it was ended by SIGSEGV');
    expect(note).toContain("If it happens again, check Python's crash report in stderr (from the line 'Fatal Python error') for the call that crashed in native code");
    expect(note).toContain('the variables from earlier scripts are gone');
    // faulthandler's report from the dead interpreter is kept, at the start of this script's stderr.
    expect(next.stderr).toMatch(/^Fatal Python error: Segmentation fault/);
  });

  it('an os._exit between scripts gets the os._exit() advice as "If it happens again"', async () => {
    const gate = t.gate();
    await py({ code: `import os, threading\ndef leave():\n    ${gate.waitPy.replace(/\n/g, '\n    ')}\n    os._exit(4)\nthreading.Thread(target=leave).start()` });
    const pid = pidOf()!;
    gate.open();
    expect(await waitDead([pid])).toEqual([]);
    await until('the session to see its interpreter dead', () => t.h.supervisor.sessions()[0]!.state === 'dead');
    const next = await py({ code: 'print("fresh")' });
    expect(next.stdout).toBe('fresh\n');
    expect(next.notes.join(' ')).toMatch(/it exited with code 4\. If it happens again, check whether the script ends its interpreter itself, for example with os\._exit\(\)/);
  });
});

describe('the queue, refusal and sessions', () => {
  it('a second script waits in the queue with a visible position, or is refused at once', async () => {
    // The first holds the session until the test's gate opens, not for a time the checks below might outlast.
    const gate = t.gate();
    const first = t.h.supervisor.start({ code: `${gate.waitPy}\nprint("first")`, session: 'q' });
    const second = t.h.supervisor.start({ code: 'print("second")', session: 'q' });
    const third = t.h.supervisor.start({ code: 'print("third")', session: 'q' });
    expect(second).toMatchObject({ state: 'queued', queuePosition: 1, elapsedMs: 0 });
    expect(third).toMatchObject({ state: 'queued', queuePosition: 2 });
    expect(() => t.h.supervisor.start({ code: 'print("refused")', session: 'q', onBusy: 'refuse' })).toThrow(/session "q" is busy with run [0-9a-f]+ and 2 queued; the script was refused/);
    // Its interpreter cannot have said ready yet: it was spawned by this very start().
    expect(t.h.supervisor.sessions().find((s) => s.name === 'q')).toMatchObject({ state: 'starting', queued: 2, running: first.id });
    await until('the interpreter to be ready', () => t.h.supervisor.sessions().find((s) => s.name === 'q')!.state !== 'starting');
    expect(t.h.supervisor.sessions().find((s) => s.name === 'q')).toMatchObject({ state: 'busy', queued: 2, running: first.id });
    // Stopping a queued script removes it: it never runs, and the next moves up.
    t.h.supervisor.stop(second.id);
    const stopped = await t.h.result(second.id);
    expect(stopped).toMatchObject({ verdict: 'stopped', exitCode: null, signal: null, stdout: '' });
    expect(stopped.notes[0]).toMatch(/queue \(position 1\): it never ran/);
    expect(t.h.supervisor.get(third.id)).toMatchObject({ state: 'queued', queuePosition: 1 });
    gate.open();
    const results = [await t.h.result(first.id), await t.h.result(third.id)];
    expect(results.map((r) => [r.verdict, r.stdout])).toEqual([['completed', 'first\n'], ['completed', 'third\n']]);
    expect(Date.parse(results[1]!.startedAt)).toBeGreaterThanOrEqual(Date.parse(results[0]!.endedAt!));
    // Idle again: a refusing request runs.
    expect((await py({ code: 'print("ok")', session: 'q', onBusy: 'refuse' })).stdout).toBe('ok\n');
  });

  it('the session is free when a script\'s end is announced: a refusing script sent then is not refused', async () => {
    const first = t.h.supervisor.start({ code: 'print("one")', session: 'free' });
    let second: RunResult | Error | undefined;
    let stateAtEnd: string | undefined;
    const unsubscribe = t.h.supervisor.subscribe((e) => {
      if (e.type !== 'ended' || e.runId !== first.id) return;
      stateAtEnd = t.h.supervisor.sessions().find((s) => s.name === 'free')?.state;
      try {
        second = t.h.supervisor.start({ code: 'print("two")', session: 'free', onBusy: 'refuse' });
      } catch (error) {
        second = error as Error;
      }
    });
    await t.h.result(first.id);
    unsubscribe();
    expect(stateAtEnd).toBe('idle');
    expect(second).not.toBeInstanceOf(Error);
    expect((await t.h.result((second as RunResult).id)).stdout).toBe('two\n');
  });

  it('sessions are listed, restarted (variables gone) and closed (scripts stopped, interpreter ended)', async () => {
    await py({ code: 'a = 1', session: 'one' });
    await py({ code: 'b = 2', session: 'two' });
    const listed = t.h.supervisor.sessions();
    expect(listed.map((s) => s.name).sort()).toEqual(['one', 'two']);
    for (const s of listed) {
      expect(s).toMatchObject({ state: 'idle', scriptsRun: 1, queued: 0, running: null });
      expect(s.pid).toBeGreaterThan(0);
      expect(s.pythonVersion).toMatch(/^3\.\d+\.\d+$/);
      expect(new Date(s.startedAt!).toISOString()).toBe(s.startedAt);
    }
    const onePid = pidOf('one')!;
    await t.h.supervisor.restartSession('one');
    expect(await waitDead([onePid])).toEqual([]);
    const after = await py({ code: 'print(a)', session: 'one' });
    expect(after.stderr).toContain("NameError: name 'a' is not defined");
    expect(after.notes.some((n) => n.includes('the session was restarted'))).toBe(true);
    expect(pidOf('one')).not.toBe(onePid);

    const twoPid = pidOf('two')!;
    const running = t.h.supervisor.start({ code: 'import time\nprint("running", flush=True)\ntime.sleep(30)', session: 'two' });
    const queued = t.h.supervisor.start({ code: 'print("never")', session: 'two' });
    await until('the script to run', () => t.h.supervisor.get(running.id)!.stdout.includes('running'));
    const closed = await t.h.supervisor.closeSession('two');
    expect(closed).toMatchObject({ name: 'two', state: 'closed' });
    expect(await t.h.result(running.id)).toMatchObject({ verdict: 'stopped', signal: 'SIGINT', stop: { reason: 'user', endedBy: 'interrupt' } });
    expect(await t.h.result(queued.id)).toMatchObject({ verdict: 'stopped', stdout: '' });
    expect(await waitDead([twoPid])).toEqual([]);
    expect(t.h.supervisor.sessions().map((s) => s.name)).toEqual(['one']);
    await expect(t.h.supervisor.restartSession('nope')).rejects.toThrow(/No session named "nope"/);
    expect(() => t.h.supervisor.start({ code: '', session: 'bad name' })).toThrow(/session name/);
  });

  it('restarting a session while a script runs kills it; shutdown closes every session', async () => {
    const { id } = t.h.supervisor.start({ code: 'import time\nprint("run", flush=True)\ntime.sleep(30)', session: 'r' });
    await until('the script to run', () => t.h.supervisor.get(id)!.stdout.includes('run'));
    const pid = pidOf('r')!;
    await t.h.supervisor.restartSession('r');
    const r = await t.h.result(id);
    expect(r).toMatchObject({ verdict: 'stopped', signal: 'SIGKILL', stop: { reason: 'user', endedBy: 'kill' } });
    expect(r.notes.some((n) => n.includes('session was restarted'))).toBe(true);
    expect(isDead(pid)).toBe(true);
    await py({ code: 'pass', session: 'r' });
    const live = pidOf('r')!;
    await t.h.supervisor.shutdown();
    expect(await waitDead([live])).toEqual([]);
    expect(t.h.supervisor.sessions()).toEqual([]);
  });
});

describe('interleavings (the table in session.ts)', () => {
  it('row 7: a stop while the interpreter starts ends the script unrun; the interpreter serves the next', async () => {
    const { id } = t.h.supervisor.start({ code: 'print("never")', session: 'early' });
    expect(t.h.supervisor.sessions()[0]).toMatchObject({ name: 'early', state: 'starting' });
    t.h.supervisor.stop(id);
    const r = await t.h.result(id);
    expect(r).toMatchObject({ verdict: 'stopped', stdout: '', exitCode: null, signal: null });
    expect(r.notes[0]).toMatch(/while the session's interpreter started: it never ran/);
    const next = await py({ code: 'print("ran")', session: 'early' });
    expect(next.stdout).toBe('ran\n');
    expect(next.notes).toEqual([]);
  });

  it('row 8: a client stop during the deadline sequence changes nothing; a forced one kills at once', async () => {
    const code = 'import time\nwhile True:\n    try:\n        time.sleep(30)\n    except KeyboardInterrupt:\n        pass';
    // A grace the test could not wait out: a forced stop that waited for it would show as a hang.
    const { id } = t.h.supervisor.start({ code, limitMs: 300, graceMs: 600_000 });
    await until('the deadline to fire', () => t.h.supervisor.get(id)!.state === 'stopping');
    t.h.supervisor.stop(id);
    expect(t.h.supervisor.get(id)!.stop?.reason).toBe('deadline');
    t.h.supervisor.stop(id, { force: true });
    const r = await t.h.result(id);
    expect(r).toMatchObject({ verdict: 'timed-out', signal: 'SIGKILL', stop: { reason: 'deadline', endedBy: 'kill' } });
    expect(r.stop!.signals.map((s) => s.signal)).toContain('SIGKILL');
  });

  it('row 10: an interpreter that never says ready is killed at the bound; the script is spawn-failed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warden-py-'));
    const silent = join(dir, 'silent_runtime.py');
    writeFileSync(silent, 'import os, time\nprint(os.getpid(), flush=True)\ntime.sleep(60)\n');
    const slow = new Harness({ python: { runtimePath: silent, readyTimeoutMs: 500 } });
    try {
      const r = await slow.run({ code: 'print(1)' });
      expect(r).toMatchObject({ verdict: 'spawn-failed', exitCode: 126, advice: 'The Python runtime did not report ready within 0.5 s; it was killed.' });
      expect(slow.supervisor.sessions()[0]).toMatchObject({ state: 'dead', pid: null });
    } finally {
      await slow.cleanup();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
