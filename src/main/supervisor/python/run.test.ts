// Python sessions against the REAL interpreter and runtime/warden_runtime.py:
// how one script ends: ordinary endings, its output and events, an
// interpreter dying under it (the advice that fits), teardown after it.
//
// Times are asserted only from what results record, never from the test's own
// stopwatch (except hang guards).

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Harness, isDead, waitDead } from '../proc-testkit';
import { until } from '../../../../test/kit/until';
import { pythonHarness } from './testkit';
import { readCoreSettings } from '../core-dump';

const t = pythonHarness();
const { py, pidOf } = t;

const TRACEBACK_ADVICE = "Check Python's crash report in stderr (from the line 'Fatal Python error') for the call that crashed in native code, such as an extension module the script uses.";
/** The same, when the crash report names the script's line (the crash parser reads faulthandler's report). */
const tracebackAdviceAt = (line: number) => `Check Python's crash report in stderr (from the line 'Fatal Python error'): it crashed in native code called from line ${line} of the script, such as an extension module the script uses.`;
const NATIVE_ADVICE = 'Check whether native code the script calls crashes, such as an extension module it uses.';

describe('ordinary endings', () => {
  it('an exception is failed with exit code 1 and the traceback in stderr; a syntax error too', async () => {
    const r = await py({ code: 'print("a")\n1 / 0' });
    expect(r).toMatchObject({ verdict: 'failed', exitCode: 1, signal: null, stdout: 'a\n' });
    expect(r.stderr).toContain('File "<script>", line 2');
    expect(r.stderr).toContain('ZeroDivisionError');
    expect(r.notes).toEqual(['The script raised ZeroDivisionError: division by zero']);
    expect(r.advice).toBe('Look at line 2 of the script first: it raised ZeroDivisionError: division by zero there. The traceback is at the end of stderr.');
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
    // The thread prints once the test saw the script end (a gate), then says it did (another).
    const ended = t.gate();
    const printed = t.gate();
    const late = `def late():\n    ${ended.waitPy.replace(/\n/g, '\n    ')}\n    print("late", flush=True)\n    ${printed.openPy}\n`;
    const r = await py({ code: `import threading\n${late}threading.Thread(target=late).start()\nprint("on time")` });
    expect(r.stdout).toBe('on time\n');
    ended.open();
    await until('the thread to print', () => printed.isOpen);
    const next = await py({ code: 'print("next")' });
    expect(next.stdout).toBe('late\nnext\n');
    expect(next.notes.some((n) => n.includes("between the previous script's end and this script's start"))).toBe(true);
  });

  it('emits live output events for a script', async () => {
    const texts: string[] = [];
    const unsubscribe = t.h.supervisor.subscribe((e) => {
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
      expect(scope).toBe(`${t.h.supervisor.hostId}.${r.id}`);
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
    expect(r).toMatchObject({ verdict: 'crashed', signal, exitCode: null, stdout: 'before the crash\n', advice: tracebackAdviceAt(3) });
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

  it("a crashed interpreter's core report: the kernel's pattern, and whether the interpreter's core file is there", async () => {
    const settings = readCoreSettings()!;
    const r = await py({ code: 'import os, resource, signal\nresource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))\nos.kill(os.getpid(), signal.SIGSEGV)' });
    expect(r).toMatchObject({ verdict: 'crashed', signal: 'SIGSEGV' });
    expect(r.core?.pattern).toBe(settings.pattern);
    // Its limit was 0: no file, unless a program the pattern pipes to decides.
    expect(r.core?.dumped).toBe(settings.pattern.startsWith('|') ? null : false);
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
    t.h.extraPids.push(keptChild);
    expect(isDead(keptChild)).toBe(false);
    expect(kept.notes.join(' ')).toContain('kept running as asked');
  });
});
