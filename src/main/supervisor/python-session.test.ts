// Python sessions against the REAL interpreter and runtime/warden_runtime.py:
// scripts stopped at their limit keep their output, their line and the
// interpreter; a script that will not stop is killed after the grace; a dying
// interpreter gets the advice that fits its ending. Times are asserted only
// from what results record, never from the test's own stopwatch (except hang
// guards).

import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PythonRunRequest } from '../../shared/request';
import type { RunResult } from '../../shared/result';
import { Harness, isDead, waitDead } from './proc-testkit';

let h: Harness;
beforeEach(() => {
  h = new Harness();
});
afterEach(async () => {
  await h.cleanup();
});

const py = (request: PythonRunRequest) => h.run(request);
const pidOf = (session = 'default') => h.supervisor.sessions().find((s) => s.name === session)?.pid ?? null;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const TRACEBACK_ADVICE = 'Check the traceback above for the call that crashed in native code, such as an extension module the script uses.';
const NATIVE_ADVICE = 'Check whether native code the script calls crashes, such as an extension module it uses.';

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
    expect(h.supervisor.sessions()[0]).toMatchObject({ name: 'default', state: 'idle', scriptsRun: 3, queued: 0 });
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
    await sleep(300);
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
    const r = await py({ code, limitMs: 1000, graceMs: 500 });
    expect(r).toMatchObject({ verdict: 'timed-out', signal: 'SIGKILL', exitCode: null });
    expect(r.stdout.startsWith('stubborn\ncaught\n')).toBe(true);
    expect(r.stop?.endedBy).toBe('kill');
    const signals = r.stop!.signals;
    expect(signals.filter((s) => s.signal === 'SIGINT').length).toBeGreaterThanOrEqual(1);
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
    const { id } = h.supervisor.start({ code: 'import time\nprint("working", flush=True)\ntime.sleep(30)' });
    // Wait for its output so the script is surely running.
    for (let i = 0; i < 200 && !h.supervisor.get(id)!.stdout.includes('working'); i++) await sleep(20);
    h.supervisor.stop(id);
    const r = await h.result(id);
    expect(r).toMatchObject({ verdict: 'stopped', signal: 'SIGINT', exitCode: null, stdout: 'working\n' });
    expect(r.stop).toMatchObject({ reason: 'user', endedBy: 'interrupt' });
    expect(r.stderr).toContain('File "<script>", line 3');
  });

  it('a forced client stop kills the interpreter at once; the next script runs in a fresh one', async () => {
    await py({ code: 'x = 1' });
    const pid = pidOf()!;
    const { id } = h.supervisor.start({ code: 'import time\nprint("busy", flush=True)\ntime.sleep(30)' });
    for (let i = 0; i < 200 && !h.supervisor.get(id)!.stdout.includes('busy'); i++) await sleep(20);
    h.supervisor.stop(id, { force: true });
    const r = await h.result(id);
    expect(r).toMatchObject({ verdict: 'stopped', signal: 'SIGKILL', stdout: 'busy\n', stop: { reason: 'user', endedBy: 'kill', signals: [{ signal: 'SIGKILL' }] } });
    expect(await waitDead([pid])).toEqual([]);
    const next = await py({ code: 'print("x" in globals())' });
    expect(next.stdout).toBe('False\n');
    expect(next.notes.some((n) => n.includes('fresh interpreter') && n.includes('killed by a forced stop'))).toBe(true);
    expect(r.notes.some((n) => n.startsWith('The stop was forced'))).toBe(true);
    expect(r.stop!.forcedAtMs).toBeTypeOf('number');
  });

  it('an interrupt the script sends itself is failed, with a note that Warden did not send it', async () => {
    const r = await py({ code: 'import os, signal, time\nos.kill(os.getpid(), signal.SIGINT)\ntime.sleep(5)' });
    expect(r).toMatchObject({ verdict: 'failed', exitCode: 1, signal: null });
    expect(r.stop).toBeUndefined();
    expect(r.notes.join('\n')).toMatch(/interrupted \(KeyboardInterrupt\) at File "<script>", line [23] by a SIGINT Warden did not send/);
    expect(r.advice).toContain('os.kill(os.getpid(), signal.SIGINT)');
  });
});

describe('ordinary endings', () => {
  it('an exception is failed with exit code 1 and the traceback in stderr; a syntax error too', async () => {
    const r = await py({ code: 'print("a")\n1 / 0' });
    expect(r).toMatchObject({ verdict: 'failed', exitCode: 1, signal: null, stdout: 'a\n' });
    expect(r.stderr).toContain('File "<script>", line 2');
    expect(r.stderr).toContain('ZeroDivisionError');
    expect(r.notes).toEqual(['The script raised ZeroDivisionError: division by zero']);
    expect(r.advice).toMatch(/traceback in stderr/);
    const syntax = await py({ code: 'def (' });
    expect(syntax).toMatchObject({ verdict: 'failed', exitCode: 1 });
    expect(syntax.stderr).toContain('SyntaxError');
  });

  it('keeps each script\'s output to itself, including output without a final newline and from subprocesses', async () => {
    const a = await py({ code: 'import sys, subprocess\nsys.stdout.write("no newline")\nsys.stderr.write("err no newline")\nsubprocess.run(["echo", "from child"])' });
    expect(a.stdout).toBe('no newlinefrom child\n');
    expect(a.stderr).toBe('err no newline');
    const b = await py({ code: 'print("second")' });
    expect(b.stdout).toBe('second\n');
    expect(b.stderr).toBe('');
    const big = await py({ code: 'import sys\nsys.stdout.write("x" * 300000)\nsys.stdout.write("\\x00warden-end:fake:abc\\x00\\n")' });
    expect(big.stdout).toBe(`${'x'.repeat(300_000)}\0warden-end:fake:abc\0\n`);
  });

  it('output a thread writes after its script ended goes to the next script, with a note (PROTOCOL.md)', async () => {
    const r = await py({ code: 'import threading\nthreading.Timer(0.2, lambda: print("late", flush=True)).start()\nprint("on time")' });
    expect(r.stdout).toBe('on time\n');
    await sleep(600);
    const next = await py({ code: 'print("next")' });
    expect(next.stdout).toBe('late\nnext\n');
    expect(next.notes.some((n) => n.includes("between the previous script's end and this script's start"))).toBe(true);
  });

  it('emits live output events for a script', async () => {
    const texts: string[] = [];
    const unsubscribe = h.supervisor.subscribe((e) => {
      if (e.type === 'output' && e.stream === 'stdout') texts.push(e.text);
    });
    const r = await py({ code: 'print("live one")\nprint("live two")' });
    unsubscribe();
    expect(texts.join('')).toBe(r.stdout);
    expect(r.stdout).toBe('live one\nlive two\n');
  });

  it('runs in the cwd and env given when the interpreter starts, with the script\'s own scope marker', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warden-py-'));
    try {
      const r = await py({ code: 'import os\nprint(os.getcwd())\nprint(os.environ["GREETING"])\nprint(os.environ["WARDEN_SCOPE"])', cwd: dir, env: { GREETING: 'hello' }, session: 'where' });
      const [cwd, greeting, scope] = r.stdout.trim().split('\n');
      expect(cwd).toBe(dir);
      expect(greeting).toBe('hello');
      expect(scope).toBe(`${h.supervisor.hostId}.${r.id}`);
      expect(r).toMatchObject({ cwd: dir, session: 'where', kind: 'python' });
      expect(r.argv).toBeUndefined();
      const later = await py({ code: 'pass', cwd: tmpdir(), session: 'where' });
      expect(later.cwd).toBe(dir);
      expect(later.notes.join(' ')).toMatch(/already running .* cwd and env were not applied/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('spawn-failed with the exact cause when python3 is not on PATH, or the runtime dies at start', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'warden-nopy-'));
    const noPython = new Harness({ baseEnv: { PATH: empty } });
    try {
      const r = await noPython.run({ code: 'print(1)' });
      expect(r).toMatchObject({ verdict: 'spawn-failed', exitCode: 127, advice: 'python3 not found on PATH.', kind: 'python' });
    } finally {
      await noPython.cleanup();
    }
    const broken = join(empty, 'broken_runtime.py');
    writeFileSync(broken, 'import sys\nsys.stderr.write("runtime exploded\\n")\nsys.exit(3)\n');
    const badRuntime = new Harness({ python: { runtimePath: broken } });
    try {
      const r = await badRuntime.run({ code: 'print(1)' });
      expect(r.verdict).toBe('spawn-failed');
      expect(r.exitCode).toBe(126);
      expect(r.advice).toMatch(/exited with code 3 before it was ready: runtime exploded\.$/);
      expect(badRuntime.supervisor.sessions()[0]?.state).toBe('dead');
    } finally {
      await badRuntime.cleanup();
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

describe('when the interpreter dies under a script', () => {
  const crashes: { name: string; code: string; signal: string }[] = [
    { name: 'a real segfault (ctypes.string_at(0))', code: 'import ctypes\nctypes.string_at(0)', signal: 'SIGSEGV' },
    { name: 'a real fatal error (os.abort())', code: 'import os\nos.abort()', signal: 'SIGABRT' },
    { name: 'SIGBUS sent with os.kill', code: 'import os, signal\nos.kill(os.getpid(), signal.SIGBUS)', signal: 'SIGBUS' },
    { name: 'SIGFPE sent with os.kill', code: 'import os, signal\nos.kill(os.getpid(), signal.SIGFPE)', signal: 'SIGFPE' },
    { name: 'SIGILL sent with os.kill', code: 'import os, signal\nos.kill(os.getpid(), signal.SIGILL)', signal: 'SIGILL' },
  ];
  it.each(crashes)('$name: crashed, faulthandler\'s traceback kept, the traceback advice', async ({ code, signal }) => {
    expect((await py({ code: 'x = 1' })).verdict).toBe('completed');
    const pid = pidOf()!;
    const r = await py({ code: `print("before the crash", flush=True)\n${code}` });
    expect(r).toMatchObject({ verdict: 'crashed', signal, exitCode: null, stdout: 'before the crash\n', advice: TRACEBACK_ADVICE });
    expect(r.stderr).toContain('Fatal Python error: ');
    expect(r.stderr).toContain('File "<script>", line 3');
    expect(r.notes.some((n) => n.startsWith(`Crashed with ${signal}`))).toBe(true);
    expect(r.notes.some((n) => n.includes('variables from earlier scripts are gone'))).toBe(true);
    expect(isDead(pid)).toBe(true);
    const next = await py({ code: 'print(x)' });
    expect(next.stderr).toContain("NameError: name 'x' is not defined");
    expect(next.notes.some((n) => n.includes(`died under run ${r.id}`) && n.includes('fresh interpreter'))).toBe(true);
  });

  it('a segfault after a progress line with no newline on stderr still gets the traceback advice', async () => {
    const r = await py({ code: 'import ctypes, sys\nsys.stderr.write("50%")\nsys.stderr.flush()\nctypes.string_at(0)' });
    expect(r).toMatchObject({ verdict: 'crashed', signal: 'SIGSEGV', advice: TRACEBACK_ADVICE });
    expect(r.stderr).toMatch(/^50%Fatal Python error: /);
  });

  it('a segfault after faulthandler.disable() gets the native-code advice, without "above"', async () => {
    const r = await py({ code: 'import ctypes, faulthandler\nprint("disabled", flush=True)\nfaulthandler.disable()\nctypes.string_at(0)' });
    expect(r).toMatchObject({ verdict: 'crashed', signal: 'SIGSEGV', stdout: 'disabled\n', advice: NATIVE_ADVICE });
    expect(r.advice).not.toContain('above');
    expect(r.stderr).not.toContain('Fatal Python error');
  });

  it('SIGTERM the script sends itself is signaled, with the os.kill() advice', async () => {
    const r = await py({ code: 'import os, signal\nos.kill(os.getpid(), signal.SIGTERM)' });
    expect(r).toMatchObject({ verdict: 'signaled', signal: 'SIGTERM', exitCode: null });
    expect(r.advice).toMatch(/^Check whether the script ends its interpreter itself, for example with os\.kill\(\);/);
    expect(r.notes.some((n) => n.startsWith('Ended by SIGTERM') && n.includes('Warden did not send it'))).toBe(true);
  });

  it('os._exit(3) is failed with exit code 3 and the os._exit() advice', async () => {
    const r = await py({ code: 'import os\nprint("bye", flush=True)\nos._exit(3)' });
    expect(r).toMatchObject({ verdict: 'failed', exitCode: 3, signal: null, stdout: 'bye\n' });
    expect(r.advice).toBe('Check whether the script ends its interpreter itself, for example with os._exit().');
    expect(r.notes[0]).toMatch(/^The Python interpreter exited with code 3 after [\d.]+ s, while the script ran\.$/);
  });

  it('a SIGKILL nobody here sent is killed, with the memory advice for the script', async () => {
    const r = await py({ code: 'import os, signal\nos.kill(os.getpid(), signal.SIGKILL)' });
    expect(r).toMatchObject({ verdict: 'killed', signal: 'SIGKILL' });
    expect(r.advice).toMatch(/^Check whether the script uses too much memory/);
  });
});

describe('when the interpreter dies between scripts', () => {
  it('records it on the session and tells the next script, with the first step phrased "If it happens again"', async () => {
    const r = await py({ code: 'import os, signal, threading\nx = 1\nthreading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGSEGV)).start()\nprint("done")' });
    expect(r).toMatchObject({ verdict: 'completed', stdout: 'done\n' });
    const pid = r.stdout ? pidOf()! : 0;
    expect(await waitDead([pid])).toEqual([]);
    for (let i = 0; i < 100 && h.supervisor.sessions()[0]!.state !== 'dead'; i++) await sleep(20);
    expect(h.supervisor.sessions()[0]).toMatchObject({ state: 'dead', pid: null });
    const next = await py({ code: 'print(x)' });
    expect(next.verdict).toBe('failed');
    expect(next.stderr).toContain("NameError: name 'x' is not defined");
    const note = next.notes.find((n) => n.startsWith('The interpreter died after the previous script'))!;
    expect(note).toContain(`(run ${r.id})`);
    expect(note).toContain('it was ended by SIGSEGV');
    expect(note).toContain('If it happens again, check the traceback above for the call that crashed in native code');
    expect(note).toContain('the variables from earlier scripts are gone');
    // faulthandler's report from the dead interpreter is kept, at the start of this script's stderr.
    expect(next.stderr).toMatch(/^Fatal Python error: Segmentation fault/);
  });

  it('an os._exit between scripts gets the os._exit() advice as "If it happens again"', async () => {
    await py({ code: 'import os, threading\nthreading.Timer(0.2, lambda: os._exit(4)).start()' });
    const pid = pidOf()!;
    expect(await waitDead([pid])).toEqual([]);
    await sleep(100);
    const next = await py({ code: 'print("fresh")' });
    expect(next.stdout).toBe('fresh\n');
    expect(next.notes.join(' ')).toMatch(/it exited with code 4\. If it happens again, check whether the script ends its interpreter itself, for example with os\._exit\(\)/);
  });
});

describe('the queue, refusal and sessions', () => {
  it('a second script waits in the queue with a visible position, or is refused at once', async () => {
    const first = h.supervisor.start({ code: 'import time\ntime.sleep(1.5)\nprint("first")', session: 'q' });
    const second = h.supervisor.start({ code: 'print("second")', session: 'q' });
    const third = h.supervisor.start({ code: 'print("third")', session: 'q' });
    expect(second).toMatchObject({ state: 'queued', queuePosition: 1, elapsedMs: 0 });
    expect(third).toMatchObject({ state: 'queued', queuePosition: 2 });
    expect(() => h.supervisor.start({ code: 'print("refused")', session: 'q', onBusy: 'refuse' })).toThrow(/session "q" is busy with run [0-9a-f]+ and 2 queued; the script was refused/);
    // Its interpreter cannot have said ready yet: it was spawned by this very start().
    expect(h.supervisor.sessions().find((s) => s.name === 'q')).toMatchObject({ state: 'starting', queued: 2, running: first.id });
    for (let i = 0; i < 200 && h.supervisor.sessions().find((s) => s.name === 'q')!.state === 'starting'; i++) await sleep(20);
    expect(h.supervisor.sessions().find((s) => s.name === 'q')).toMatchObject({ state: 'busy', queued: 2, running: first.id });
    // Stopping a queued script removes it: it never runs, and the next moves up.
    h.supervisor.stop(second.id);
    const stopped = await h.result(second.id);
    expect(stopped).toMatchObject({ verdict: 'stopped', exitCode: null, signal: null, stdout: '' });
    expect(stopped.notes[0]).toMatch(/queue \(position 1\): it never ran/);
    expect(h.supervisor.get(third.id)).toMatchObject({ state: 'queued', queuePosition: 1 });
    const results = [await h.result(first.id), await h.result(third.id)];
    expect(results.map((r) => [r.verdict, r.stdout])).toEqual([['completed', 'first\n'], ['completed', 'third\n']]);
    expect(Date.parse(results[1]!.startedAt)).toBeGreaterThanOrEqual(Date.parse(results[0]!.endedAt!));
    // Idle again: a refusing request runs.
    expect((await py({ code: 'print("ok")', session: 'q', onBusy: 'refuse' })).stdout).toBe('ok\n');
  });

  it('the session is free when a script\'s end is announced: a refusing script sent then is not refused', async () => {
    const first = h.supervisor.start({ code: 'print("one")', session: 'free' });
    let second: RunResult | Error | undefined;
    let stateAtEnd: string | undefined;
    const unsubscribe = h.supervisor.subscribe((e) => {
      if (e.type !== 'ended' || e.runId !== first.id) return;
      stateAtEnd = h.supervisor.sessions().find((s) => s.name === 'free')?.state;
      try {
        second = h.supervisor.start({ code: 'print("two")', session: 'free', onBusy: 'refuse' });
      } catch (error) {
        second = error as Error;
      }
    });
    await h.result(first.id);
    unsubscribe();
    expect(stateAtEnd).toBe('idle');
    expect(second).not.toBeInstanceOf(Error);
    expect((await h.result((second as RunResult).id)).stdout).toBe('two\n');
  });

  it('sessions are listed, restarted (variables gone) and closed (scripts stopped, interpreter ended)', async () => {
    await py({ code: 'a = 1', session: 'one' });
    await py({ code: 'b = 2', session: 'two' });
    const listed = h.supervisor.sessions();
    expect(listed.map((s) => s.name).sort()).toEqual(['one', 'two']);
    for (const s of listed) {
      expect(s).toMatchObject({ state: 'idle', scriptsRun: 1, queued: 0, running: null });
      expect(s.pid).toBeGreaterThan(0);
      expect(s.pythonVersion).toMatch(/^3\.\d+\.\d+$/);
      expect(new Date(s.startedAt!).toISOString()).toBe(s.startedAt);
    }
    const onePid = pidOf('one')!;
    await h.supervisor.restartSession('one');
    expect(await waitDead([onePid])).toEqual([]);
    const after = await py({ code: 'print(a)', session: 'one' });
    expect(after.stderr).toContain("NameError: name 'a' is not defined");
    expect(after.notes.some((n) => n.includes('the session was restarted'))).toBe(true);
    expect(pidOf('one')).not.toBe(onePid);

    const twoPid = pidOf('two')!;
    const running = h.supervisor.start({ code: 'import time\ntime.sleep(30)', session: 'two' });
    const queued = h.supervisor.start({ code: 'print("never")', session: 'two' });
    await sleep(200);
    const closed = await h.supervisor.closeSession('two');
    expect(closed).toMatchObject({ name: 'two', state: 'closed' });
    expect(await h.result(running.id)).toMatchObject({ verdict: 'stopped', signal: 'SIGINT', stop: { reason: 'user', endedBy: 'interrupt' } });
    expect(await h.result(queued.id)).toMatchObject({ verdict: 'stopped', stdout: '' });
    expect(await waitDead([twoPid])).toEqual([]);
    expect(h.supervisor.sessions().map((s) => s.name)).toEqual(['one']);
    await expect(h.supervisor.restartSession('nope')).rejects.toThrow(/No session named "nope"/);
    expect(() => h.supervisor.start({ code: '', session: 'bad name' })).toThrow(/session name/);
  });

  it('restarting a session while a script runs kills it; shutdown closes every session', async () => {
    const { id } = h.supervisor.start({ code: 'import time\nprint("run", flush=True)\ntime.sleep(30)', session: 'r' });
    for (let i = 0; i < 200 && !h.supervisor.get(id)!.stdout.includes('run'); i++) await sleep(20);
    const pid = pidOf('r')!;
    await h.supervisor.restartSession('r');
    const r = await h.result(id);
    expect(r).toMatchObject({ verdict: 'stopped', signal: 'SIGKILL', stop: { reason: 'user', endedBy: 'kill' } });
    expect(r.notes.some((n) => n.includes('session was restarted'))).toBe(true);
    expect(isDead(pid)).toBe(true);
    await py({ code: 'pass', session: 'r' });
    const live = pidOf('r')!;
    await h.supervisor.shutdown();
    expect(await waitDead([live])).toEqual([]);
    expect(h.supervisor.sessions()).toEqual([]);
  });
});

describe('teardown after each script', () => {
  it('ends a subprocess the script left running; keepDescendants leaves it', async () => {
    const r = await py({ code: 'import subprocess\np = subprocess.Popen(["sleep", "300"])\nprint("child", p.pid)' });
    const child = Number(/child (\d+)/.exec(r.stdout)![1]);
    expect(r.verdict).toBe('completed');
    expect(r.teardown?.killed.map((p) => p.pid)).toContain(child);
    expect(await waitDead([child])).toEqual([]);
    const interp = pidOf()!;
    expect(isDead(interp)).toBe(false);

    // A double fork into a new session leaves the interpreter's group and tree, and keeps the script's marker.
    const escaped = await py({ code: 'subprocess.run(["setsid", "bash", "-c", "sleep 300 & echo escapee $!"])' });
    const escapee = Number(/escapee (\d+)/.exec(escaped.stdout)![1]);
    expect(escaped.teardown?.killed.map((p) => p.pid)).toContain(escapee);
    expect(await waitDead([escapee])).toEqual([]);

    const kept = await py({ code: 'q = subprocess.Popen(["sleep", "300"])\nprint("child", q.pid)', keepDescendants: true });
    const keptChild = Number(/child (\d+)/.exec(kept.stdout)![1]);
    h.extraPids.push(keptChild);
    expect(isDead(keptChild)).toBe(false);
    expect(kept.notes.join(' ')).toContain('kept running as asked');
  });
});

describe('interleavings (the table in python-session.ts)', () => {
  it('row 7: a stop while the interpreter starts ends the script unrun; the interpreter serves the next', async () => {
    const { id } = h.supervisor.start({ code: 'print("never")', session: 'early' });
    expect(h.supervisor.sessions()[0]).toMatchObject({ name: 'early', state: 'starting' });
    h.supervisor.stop(id);
    const r = await h.result(id);
    expect(r).toMatchObject({ verdict: 'stopped', stdout: '', exitCode: null, signal: null });
    expect(r.notes[0]).toMatch(/while the session's interpreter started: it never ran/);
    const next = await py({ code: 'print("ran")', session: 'early' });
    expect(next.stdout).toBe('ran\n');
    expect(next.notes).toEqual([]);
  });

  it('row 8: a client stop during the deadline sequence changes nothing; a forced one kills at once', async () => {
    const code = 'import time\nwhile True:\n    try:\n        time.sleep(30)\n    except KeyboardInterrupt:\n        pass';
    const { id } = h.supervisor.start({ code, limitMs: 300, graceMs: 10_000 });
    for (let i = 0; i < 200 && h.supervisor.get(id)!.state !== 'stopping'; i++) await sleep(20);
    h.supervisor.stop(id);
    expect(h.supervisor.get(id)!.stop?.reason).toBe('deadline');
    h.supervisor.stop(id, { force: true });
    const r = await h.result(id);
    expect(r).toMatchObject({ verdict: 'timed-out', signal: 'SIGKILL', stop: { reason: 'deadline', endedBy: 'kill' } });
    const kill = r.stop!.signals.find((s) => s.signal === 'SIGKILL')!;
    expect(kill.atMs - r.stop!.requestedAtMs).toBeLessThan(10_000);
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
