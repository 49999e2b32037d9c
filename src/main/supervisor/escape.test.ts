// Nothing escapes by dropping the marker: a process that removes WARDEN_SCOPE
// from its environment and leaves the run's process group (setsid), or a
// double fork with an empty environment, is still torn down where the run
// has a cgroup of its own; where it has none, the teardown report says what
// it could not see instead of claiming it is complete.

import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { detectMemoryBackend } from './cgroup';
import { Harness } from './proc-testkit';
import { until } from '../../../test/kit/until';
import { reaperOnce } from './reaper';
import { NO_CGROUP } from './run';

const detection = detectMemoryBackend();
// WARDEN_CGROUPS=0 runs these files the way a machine without a writable cgroup would.
const cgroups = detection.ok && process.env.WARDEN_CGROUPS !== '0';
if (!cgroups) console.log(`cgroup teardown tests skipped: ${detection.ok ? 'WARDEN_CGROUPS=0' : detection.reason}`);

let harness: Harness | undefined;
const strays: number[] = [];
afterEach(async () => {
  for (const pid of strays.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  await harness?.cleanup();
  harness = undefined;
});

function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) [ZX]/s.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** Waits until every pid is gone (a zombie is gone); returns those still alive after the hang guard. */
async function waitDead(pids: number[]): Promise<number[]> {
  await until('the escapees to end', () => !pids.some(alive)).catch(() => undefined);
  return pids.filter(alive);
}

// Two ways out: the marker dropped and a new session; a double fork with an empty environment.
// Each waits until its child has exec'd sleep (or is gone): before that the child is a fork
// of the shell, named by the shell's command line.
const EXECED = 'while kill -0 $p 2>/dev/null && [ "$(cat /proc/$p/comm 2>/dev/null)" != sleep ]; do sleep 0.01; done';
const ESCAPE = [
  `env -u WARDEN_SCOPE setsid sleep 311 </dev/null >/dev/null 2>&1 & p=$!; ${EXECED}; echo "esc $p"`,
  `env -i /usr/bin/setsid /bin/sh -c 'sleep 312 </dev/null >/dev/null 2>&1 & p=$!; ${EXECED}; echo "dbl $p"'`,
].join('; ');

const pidsOf = (text: string) => [...text.matchAll(/(?:esc|dbl) (\d+)/g)].map((m) => Number(m[1]));

describe('escapees that drop the marker', () => {
  it.skipIf(!cgroups)('are torn down through the run\'s own cgroup, and the report is complete', async () => {
    harness = new Harness();
    const r = await harness.run({ argv: ['bash', '-c', ESCAPE] });
    const pids = pidsOf(r.stdout);
    strays.push(...pids);
    expect(pids).toHaveLength(2);
    expect(r.verdict).toBe('completed');
    expect(await waitDead(pids)).toEqual([]);
    expect(r.teardown!.killed.map((p) => p.pid)).toEqual(expect.arrayContaining(pids));
    // Named as the report names every process: parent, group and command, read before the cgroup's kill.
    for (const pid of pids) {
      const named = r.teardown!.killed.find((p) => p.pid === pid)!;
      expect(named.command).toMatch(/^sleep 31[12]$/);
      expect(named.ppid).toBeGreaterThan(0);
      expect(named.pgid).toBeGreaterThan(0);
    }
    expect(r.teardown!.complete).toBe(true);
    expect(r.teardown!.unseen).toBeUndefined();
  });

  it.skipIf(!cgroups)('one started after teardown looked is named too, by its parent and name, never by a placeholder', async () => {
    harness = new Harness();
    // An escaped forker that starts a sleep every few ms: some are born between the look and the
    // cgroup's kill. The run ends once the forker has started its first (it touches the file).
    const started = join(mkdtempSync(join(tmpdir(), 'warden-forker-')), 'started');
    const FORKER = 'env -u WARDEN_SCOPE setsid bash -c \'while :; do sleep 313 & : > "$1"; sleep 0.002; done\' forker "$1" </dev/null >/dev/null 2>&1 & echo "esc $!"; until [ -e "$1" ]; do sleep 0.01; done';
    const r = await harness.run({ argv: ['bash', '-c', FORKER, 'run', started] });
    strays.push(...pidsOf(r.stdout));
    expect(r.teardown!.killed.length).toBeGreaterThan(1);
    for (const named of r.teardown!.killed) {
      expect(named.command, JSON.stringify(named)).not.toMatch(/^\(in the run's cgroup\)$/);
      expect(named.ppid, JSON.stringify(named)).toBeGreaterThan(0);
    }
  });

  it.skipIf(!cgroups)('the command is in its cgroup from its first instruction, and this process stays in its own', async () => {
    const own = readFileSync('/proc/self/cgroup', 'utf8');
    harness = new Harness();
    const r = await harness.run({ argv: ['cat', '/proc/self/cgroup'] });
    const line = r.stdout.split('\n').find((l) => (detection.ok && detection.backend.version === 1 ? /:memory:/.test(l) : l.startsWith('0::')))!;
    expect(line.endsWith(`-${r.id}`)).toBe(true);
    expect(readFileSync('/proc/self/cgroup', 'utf8')).toBe(own);
  });

  it.skipIf(reaperOnce() === null)('without a cgroup, are torn down through the subreaper that adopted them, and the report is complete', async () => {
    harness = new Harness({ cgroupRoot: mkdtempSync(join(tmpdir(), 'warden-no-cgroup-')) });
    const r = await harness.run({ argv: ['bash', '-c', ESCAPE] });
    const pids = pidsOf(r.stdout);
    strays.push(...pids);
    expect(pids).toHaveLength(2);
    expect(r.verdict).toBe('completed');
    expect(r.exitCode).toBe(0);
    expect(await waitDead(pids)).toEqual([]);
    expect(r.teardown!.killed.map((p) => p.pid)).toEqual(expect.arrayContaining(pids));
    expect(r.teardown!.complete).toBe(true);
    expect(r.teardown!.unseen).toBeUndefined();
  });

  it('with neither a cgroup nor a subreaper, the report says what teardown could not see and does not claim complete', async () => {
    harness = new Harness({ cgroupRoot: mkdtempSync(join(tmpdir(), 'warden-no-cgroup-')), reaper: false });
    const r = await harness.run({ argv: ['bash', '-c', ESCAPE] });
    const pids = pidsOf(r.stdout);
    strays.push(...pids);
    expect(pids).toHaveLength(2);
    expect(r.teardown!.complete).toBe(false);
    expect(r.teardown!.unseen).toBe(NO_CGROUP);
    expect(r.notes.join(' ')).not.toMatch(/within its budget/);
  });
});

describe.skipIf(reaperOnce() === null)('a command under the subreaper', () => {
  const noCgroup = () => new Harness({ cgroupRoot: mkdtempSync(join(tmpdir(), 'warden-no-cgroup-')) });

  it('ends as the command ended: its exit status, its signal, its output and its input', async () => {
    harness = noCgroup();
    const exited = await harness.run({ argv: ['bash', '-c', 'read line; echo "got $line"; echo err >&2; exit 3'], stdin: 'hello\n' });
    expect(exited).toMatchObject({ verdict: 'failed', exitCode: 3, signal: null, stdout: 'got hello\n', stderr: 'err\n' });
    const crashed = await harness.run({ argv: ['bash', '-c', 'kill -SEGV $$'] });
    expect(crashed).toMatchObject({ verdict: 'crashed', exitCode: null, signal: 'SIGSEGV' });
  });

  it('the deadline stops the command, not the shim: interrupt first, a timed-out verdict', async () => {
    harness = noCgroup();
    const r = await harness.run({ argv: ['sleep', '30'], limitMs: 300 });
    expect(r.verdict).toBe('timed-out');
    expect(r.signal).toBe('SIGINT');
    expect(r.stop?.endedBy).toBe('interrupt');
  });

  it('leaves nothing behind: the shim exits once the run is over', async () => {
    harness = noCgroup();
    const { id } = harness.supervisor.start({ argv: ['bash', '-c', 'echo "shim $PPID"'] });
    const r = await harness.result(id);
    const shim = Number(/shim (\d+)/.exec(r.stdout)![1]);
    expect(shim).toBeGreaterThan(1);
    expect(await waitDead([shim])).toEqual([]);
  });
});

describe('a Python script\'s escapees', () => {
  const SCRIPT = [
    'import subprocess',
    'p = subprocess.Popen("env -u WARDEN_SCOPE setsid sleep 313 </dev/null >/dev/null 2>&1 & echo $!", shell=True, stdout=subprocess.PIPE, text=True)',
    'print("esc", p.stdout.read().strip(), flush=True)',
  ].join('\n');

  it.skipIf(!cgroups)('are torn down through the session\'s cgroup, and the interpreter stays for the next script', async () => {
    harness = new Harness();
    const r = await harness.run({ code: SCRIPT });
    const pids = pidsOf(r.stdout);
    strays.push(...pids);
    expect(pids).toHaveLength(1);
    expect(r.verdict).toBe('completed');
    expect(await waitDead(pids)).toEqual([]);
    expect(r.teardown!.killed.map((p) => p.pid)).toEqual(expect.arrayContaining(pids));
    expect(r.teardown!.complete).toBe(true);
    const next = await harness.run({ code: 'print("still here")' });
    expect(next).toMatchObject({ verdict: 'completed', stdout: 'still here\n' });
  });

  it('without a cgroup or a subreaper, the report says what teardown could not see', async () => {
    harness = new Harness({ cgroupRoot: mkdtempSync(join(tmpdir(), 'warden-no-cgroup-')), reaper: false });
    const r = await harness.run({ code: SCRIPT });
    strays.push(...pidsOf(r.stdout));
    expect(r.teardown!.complete).toBe(false);
    expect(r.teardown!.unseen).toBe(NO_CGROUP);
  });

  it.skipIf(reaperOnce() === null)('without a cgroup, the subreaper its interpreter runs under finds them by parentage', async () => {
    harness = new Harness({ cgroupRoot: mkdtempSync(join(tmpdir(), 'warden-no-cgroup-')) });
    const r = await harness.run({ code: SCRIPT });
    strays.push(...pidsOf(r.stdout));
    expect(r.teardown!.unseen).toBeUndefined();
    expect(r.teardown!.survivors).toEqual([]);
    expect(pidsOf(r.stdout).length).toBeGreaterThan(0);
    for (const pid of pidsOf(r.stdout)) expect(r.teardown!.killed.map((p) => p.pid)).toContain(pid);
  });
});
