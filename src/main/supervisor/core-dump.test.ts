// Whether a crash left a core dump: core_pattern resolved per row, then real
// processes that crash under Warden with and without a core size limit.

import { accessSync, constants, mkdtempSync, readFileSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { crashOf, culpritOf, inspectCore, readCoreSettings, resolveCorePattern } from './core-dump';
import { Harness } from './proc-testkit';

describe('core_pattern for one crashed process', () => {
  const p = { pid: 4242, signalNumber: 11, cwd: '/work/run' };
  const file = (pattern: string, usesPid = false, of: { pid?: number; signalNumber: number; cwd: string } = p) => {
    const r = resolveCorePattern({ pattern, usesPid }, of, 'box');
    if (r.kind !== 'file') throw new Error(`not a file: ${JSON.stringify(r)}`);
    return r;
  };

  it('a pipe names its program, which keeps the dump', () => {
    expect(resolveCorePattern({ pattern: '|/usr/lib/systemd/systemd-coredump %P %u %g %s %t %c %h', usesPid: false }, p)).toEqual({ kind: 'pipe', program: '/usr/lib/systemd/systemd-coredump' });
    expect(resolveCorePattern({ pattern: '| /usr/share/apport/apport -p%p', usesPid: false }, p)).toEqual({ kind: 'pipe', program: '/usr/share/apport/apport' });
  });

  it("'core' is in the crashed process's directory; core_uses_pid adds .PID", () => {
    expect(file('core')).toMatchObject({ dir: '/work/run', shown: '/work/run/core' });
    expect(file('core').name.test('core')).toBe(true);
    expect(file('core').name.test('core.4242')).toBe(false);
    expect(file('core', true)).toMatchObject({ shown: '/work/run/core.4242' });
    expect(file('core', true).name.test('core.4242')).toBe(true);
    expect(file('core', true).name.test('core.4243')).toBe(false);
  });

  it('fills what it knows (pid, signal, host, %%), matches what it cannot (%t, %e) by kind', () => {
    const r = file('/var/crash/core.%e.%p.%s.%h.%t.100%%');
    expect(r.dir).toBe('/var/crash');
    expect(r.shown).toBe('/var/crash/core.%e.4242.11.box.%t.100%');
    expect(r.name.test('core.python3.4242.11.box.1764644400.100%')).toBe(true);
    expect(r.name.test('core.python3.4242.11.box.notatime.100%')).toBe(false);
    expect(r.name.test('core.python3.999.11.box.1764644400.100%')).toBe(false);
  });

  it("a shell's child, whose pid is not known, is matched by any pid", () => {
    const r = file('/cores/core.%p', false, { signalNumber: 6, cwd: '/x' });
    expect(r.name.test('core.31337')).toBe(true);
    expect(r.name.test('core.')).toBe(false);
  });

  it('a directory it cannot fill in (%e, %t) leaves nowhere to look', () => {
    expect(resolveCorePattern({ pattern: '/cores/%e/core', usesPid: false }, p)).toEqual({ kind: 'unknown' });
    expect(resolveCorePattern({ pattern: '/cores/%p/core', usesPid: false }, p)).toMatchObject({ kind: 'file', dir: '/cores/4242' });
    expect(resolveCorePattern({ pattern: '', usesPid: false }, p)).toEqual({ kind: 'unknown' });
  });

  it('is asked only after a crash: the main process (its pid), or a shell child by 128 + n', () => {
    expect(crashOf('crashed', null, 'SIGSEGV', 10)).toEqual({ pid: 10, signalNumber: 11 });
    expect(crashOf('crashed', null, 'SIGABRT', undefined)).toEqual({ signalNumber: 6 });
    expect(crashOf('failed', 139, null, 10)).toEqual({ signalNumber: 11 });
    expect(crashOf('failed', 137, null, 10)).toBeNull();
    expect(crashOf('failed', 1, null, 10)).toBeNull();
    expect(crashOf('signaled', null, 'SIGTERM', 10)).toBeNull();
    expect(crashOf('timed-out', null, 'SIGSEGV', 10)).toBeNull();
    // A shell's report of the command that crashed: its pid when the shell names it, whatever the shell exited with.
    expect(crashOf('failed', 3, null, 10, { pid: 812, signal: 'SIGSEGV' })).toEqual({ pid: 812, signalNumber: 11 });
    expect(crashOf('failed', 3, null, 10, { pid: null, signal: 'SIGABRT' })).toEqual({ signalNumber: 6 });
    expect(crashOf('failed', 3, null, 10, { pid: 812, signal: 'SIGKILL' })).toBeNull();
    expect(crashOf('completed', 0, null, 10, { pid: 812, signal: 'SIGSEGV' })).toBeNull();
    expect(crashOf('failed', 139, null, 10, { pid: 812, signal: 'SIGSEGV' })).toEqual({ pid: 812, signalNumber: 11 });
  });
});

function writable(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

describe('a real crash under Warden', () => {
  let h: Harness;
  let dir: string;
  const settings = readCoreSettings();
  const hardLimit = (): string => {
    const out = readFileSync('/proc/self/limits', 'utf8');
    return /^Max core file size\s+\S+\s+(\S+)/m.exec(out)?.[1] ?? '0';
  };
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'warden-core-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  beforeEach(() => {
    h = new Harness();
  });
  afterEach(async () => {
    await h.cleanup();
  });

  const crashing = (raise: boolean) =>
    [
      'import os, resource, signal',
      raise ? 'soft, hard = resource.getrlimit(resource.RLIMIT_CORE); resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))' : 'resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))',
      'os.kill(os.getpid(), signal.SIGSEGV)',
    ].join('\n');

  it('says where the core went: the file when one was written, or the program the pattern pipes to', async () => {
    expect(settings, 'core_pattern could not be read').not.toBeNull();
    const cwd = mkdtempSync(join(dir, 'raised-'));
    const r = await h.run({ argv: ['python3', '-c', crashing(true)], cwd });
    expect(r).toMatchObject({ verdict: 'crashed', signal: 'SIGSEGV' });
    expect(r.core?.pattern).toBe(settings!.pattern);
    if (settings!.pattern.startsWith('|')) {
      expect(r.core).toMatchObject({ dumped: null, where: settings!.pattern.slice(1).trim().split(/\s+/)[0] });
    } else if (hardLimit() === '0') {
      // The process could not raise its limit: no file.
      expect(r.core?.dumped).toBe(false);
    } else if (!isAbsolute(settings!.pattern) || writable(dirname(settings!.pattern))) {
      expect(r.core?.dumped, JSON.stringify(r.core)).toBe(true);
      expect(readFileSync(r.core!.where!).length).toBeGreaterThan(0);
      if (!isAbsolute(settings!.pattern)) expect(readdirSync(cwd).map((name) => join(cwd, name))).toContain(r.core!.where);
      rmSync(r.core!.where!);
    } else {
      console.log(`core_pattern ${settings!.pattern} names a directory this user cannot write: no dump to find`);
    }
  });

  it('--core: a run from a host whose own limit is 0 runs under the hard limit, and its core report says so', async () => {
    if (spawnSync('prlimit', ['--version']).status !== 0) return void console.log('prlimit is not installed: the host cannot be given a core limit of 0 here');
    const soft = /^Max core file size\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1] ?? '0';
    // This process is the host: its soft limit of 0 (as a login with ulimit -c 0 gives) is every run's, unless asked.
    expect(spawnSync('prlimit', ['--pid', String(process.pid), '--core=0:']).status).toBe(0);
    try {
      const cwd = mkdtempSync(join(dir, 'core-'));
      const script = 'import os, resource, signal\nprint(resource.getrlimit(resource.RLIMIT_CORE)[0], flush=True)\nos.kill(os.getpid(), signal.SIGSEGV)';
      const plain = await h.run({ argv: ['python3', '-c', script], cwd });
      expect(plain.stdout.trim()).toBe('0');
      expect(plain.core?.limitBytes).toBe(0);
      const raised = await h.run({ argv: ['python3', '-c', script], cwd, core: true });
      expect(raised.verdict).toBe('crashed');
      const hard = hardLimit();
      // Python says RLIM_INFINITY as -1.
      expect(raised.stdout.trim()).toBe(hard === 'unlimited' ? '-1' : hard);
      expect(raised.core?.limitBytes).toBe(hard === 'unlimited' ? null : Number(hard));
      for (const name of readdirSync(cwd)) rmSync(join(cwd, name), { force: true });
    } finally {
      spawnSync('prlimit', ['--pid', String(process.pid), `--core=${soft === 'unlimited' ? 'unlimited' : soft}:`]);
    }
  });

  it('says none was written when the crashed process had a core limit of 0', async () => {
    if (settings?.pattern.startsWith('|')) return void console.log('core_pattern pipes dumps to a program here: only it knows');
    const cwd = mkdtempSync(join(dir, 'zero-'));
    const r = await h.run({ argv: ['python3', '-c', crashing(false)], cwd });
    expect(r).toMatchObject({ verdict: 'crashed', signal: 'SIGSEGV' });
    expect(r.core).toMatchObject({ dumped: false, pattern: settings!.pattern });
    expect(readdirSync(cwd)).toEqual([]);
  });

  it("an earlier crash's core in the same place is not this one's", () => {
    const cwd = mkdtempSync(join(dir, 'earlier-'));
    const startedWallMs = Date.now();
    writeFileSync(join(cwd, 'core'), 'an earlier dump');
    // Written 400 ms before this run started, as by a run just before it in the same directory.
    utimesSync(join(cwd, 'core'), new Date(startedWallMs - 400), new Date(startedWallMs - 400));
    const settings = { pattern: 'core', usesPid: false, limitBytes: 0, hardLimitBytes: null };
    expect(inspectCore(settings, { pid: 1, signalNumber: 11, cwd, startedWallMs })).toEqual({ dumped: false, pattern: 'core', limitBytes: 0, where: join(cwd, 'core') });
    utimesSync(join(cwd, 'core'), new Date(startedWallMs + 5), new Date(startedWallMs + 5));
    expect(inspectCore(settings, { pid: 1, signalNumber: 11, cwd, startedWallMs })).toMatchObject({ dumped: true, where: join(cwd, 'core') });
  });

  it("is left out when nothing crashed, and is there for a shell's crashed child (139)", async () => {
    const ok = await h.run({ argv: ['true'] });
    expect(ok.core).toBeUndefined();
    const cwd = mkdtempSync(join(dir, 'shell-'));
    const r = await h.run({ argv: ['bash', '-c', `python3 -c 'import os, signal; os.kill(os.getpid(), signal.SIGSEGV)'; exit $?`], cwd });
    expect(r).toMatchObject({ verdict: 'failed', exitCode: 139 });
    expect(r.core?.pattern).toBe(settings!.pattern);
  });
});

describe('the culprit', () => {
  const shell = { signal: 'SIGSEGV', description: 'Segmentation fault', pid: 812, command: './prog', coreDumped: false, line: 4 };
  it.each([
    ['crashed', 'SIGSEGV', 10, { pid: 11, command: 'python3 x.py' }, null, { pid: 11, command: 'python3 x.py', signal: 'SIGSEGV', source: 'exit' }],
    ['killed', 'SIGKILL', 10, undefined, null, { pid: 10, command: 'python3 -c x', signal: 'SIGKILL', source: 'exit' }],
    ['signaled', 'SIGUSR1', undefined, undefined, null, { pid: null, command: 'python3 -c x', signal: 'SIGUSR1', source: 'exit' }],
    ['failed', null, 10, undefined, shell, { pid: 812, command: './prog', signal: 'SIGSEGV', source: 'shell', stderrLine: 4 }],
    ['failed', null, 10, undefined, null, null],
    ['completed', null, 10, undefined, shell, null],
    ['crashed', null, 10, undefined, null, null],
    ['timed-out', 'SIGKILL', 10, undefined, null, null],
  ] as const)('%s %s', (verdict, signal, mainPid, lastRoot, shellCrash, culprit) => {
    expect(culpritOf(verdict, signal, mainPid, lastRoot, ['python3', '-c', 'x'], shellCrash)).toEqual(culprit);
  });
});
