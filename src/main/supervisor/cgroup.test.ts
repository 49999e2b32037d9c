// Per-run memory cgroups against REAL processes and REAL cgroups (v1 on our
// build machines, v2 where a delegated subtree has the memory controller):
// python3 allocating past its limit, a shell's 137, a shell's child killed
// while the shell goes on, teardown through the cgroup, and no cgroup left
// behind. The refusal without a writable memory cgroup is tested by pointing
// the cgroup root at an empty directory.

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, rmdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { killAdvice } from './advice';
import { WardenInputError } from './options';
import { detectMemoryBackend, flatKeyed, memoryBackendOnce, MemoryLimitUnavailable, oomReport, ownCgroupPath, parseMemory, requireMemoryBackend, type RunCgroup } from './cgroup';
import { ownerTagText, ownIdentity } from './cgroup-owner';
import { isDead, killLeftovers, waitDead } from './proc-testkit';
import { until } from '../../../test/kit/until';
import { judge } from './verdict';

const MiB = 1024 * 1024;
const LIMIT = 64 * MiB;
const ALLOC_512 = 'b = bytearray(512*1024*1024)';

describe('parseMemory', () => {
  it.each([
    // Powers of 1024 with or without Kubernetes' i (the grammar's own table is src/shared/size.test.ts).
    ['2Gi', 2 * 1024 * MiB],
    ['512Mi', 512 * MiB],
    ['1G', 1024 * MiB],
    ['500M', 500 * MiB],
    ['256m', 256 * MiB],
    ['1.5GiB', 1536 * MiB],
    ['129e6', 129e6],
    [' 64Mi ', 64 * MiB],
    ['1048576', MiB],
    ['1048576B', MiB],
    ['1Mi', MiB],
    [16 * MiB, 16 * MiB],
    [MiB, MiB],
  ])('%j is %i bytes', (text, n) => {
    expect(parseMemory(text)).toBe(n);
  });

  it.each([
    ['', /^--memory must be a size such as 512M, 2G or 1\.5Gi \(K, M, G, T, with or without i or B, are powers of 1024\), or a number of bytes, not ""\.$/],
    ['abc', /^--memory must be a size such as .*, not "abc"\.$/],
    ['256X', /, not "256X"\.$/],
    ['-1G', /, not "-1G"\.$/],
    ['8Pi', /^--memory must be at most 9007199254740991 bytes \(8 PiB\), not "8Pi"\.$/],
    ['100', /^--memory must be at least 1 MiB, not "100" \(100 B\)\.$/],
    ['1000k', /^--memory must be at least 1 MiB, not "1000k" \(1000 KiB\)\.$/],
    [MiB - 1, /^--memory must be at least 1 MiB, not 1048575 /],
    [0, /^--memory must be at least 1 MiB/],
    [-5, /^--memory must be at least 1 MiB/],
    [1.5 * MiB + 0.5, /^--memory must be a size such as .*, not 1572864.5\.$/],
    [Number.NaN, /^--memory must be a size such as .*, not null\.$/],
  ])('%j is refused with one line', (value, message) => {
    let caught: unknown;
    try {
      parseMemory(value as string | number, '--memory');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(WardenInputError);
    expect((caught as Error).message).toMatch(message);
    expect((caught as Error).message).not.toContain('\n');
  });
});

describe('cgroup files', () => {
  it('reads oom_kill from memory.events (v2) and memory.oom_control (v1)', () => {
    expect(flatKeyed('low 0\nhigh 0\nmax 12\noom 3\noom_kill 2\noom_group_kill 0\n', 'oom_kill')).toBe(2);
    expect(flatKeyed('oom_kill_disable 0\nunder_oom 0\noom_kill 5\n', 'oom_kill')).toBe(5);
    expect(flatKeyed('oom_kill_disable 0\nunder_oom 0\n', 'oom_kill')).toBeNull();
    expect(flatKeyed(undefined, 'oom_kill')).toBeNull();
  });

  it('confirms only when the counter rose', () => {
    expect(oomReport({ killsBefore: 0, killsAfter: 1, peakBytes: 5, limitBytes: 6 })).toEqual({ confirmed: true, peakBytes: 5, limitBytes: 6 });
    expect(oomReport({ killsBefore: 2, killsAfter: 2, limitBytes: 6 })).toEqual({ confirmed: false, limitBytes: 6 });
    expect(oomReport({ killsBefore: null, killsAfter: null })).toEqual({ confirmed: false });
  });

  it('finds its own cgroup in /proc/self/cgroup for v2 and for v1 memory', () => {
    const text = '12:pids:/a\n4:memory,cpu:/process_api/x\n0::/user.slice/user-1000.slice/user@1000.service/app.slice/t.scope\n';
    expect(ownCgroupPath(text, 'memory')).toBe('/process_api/x');
    expect(ownCgroupPath(text, 'v2')).toBe('/user.slice/user-1000.slice/user@1000.service/app.slice/t.scope');
  });
});

describe('no writable memory cgroup', () => {
  it('is refused with one line naming what is missing (cgroup root pointed at an empty directory)', () => {
    const empty = mkdtempSync(join(tmpdir(), 'warden-nocg-'));
    try {
      const found = detectMemoryBackend({ cgroupRoot: empty });
      expect(found.ok).toBe(false);
      const reason = found.ok ? '' : found.reason;
      expect(reason).toMatch(/^No writable memory cgroup, so a memory limit cannot be enforced: /);
      expect(reason).toContain(`cgroup v2 is not mounted at ${empty}`);
      expect(reason).toContain(`cgroup v1's memory controller is not mounted at ${join(empty, 'memory')}`);
      expect(reason).not.toContain('\n');
      expect(() => requireMemoryBackend({ cgroupRoot: empty })).toThrow(MemoryLimitUnavailable);
      expect(() => requireMemoryBackend({ cgroupRoot: empty })).toThrow(WardenInputError);
      // Looked for once: the same answer object the second time.
      expect(memoryBackendOnce({ cgroupRoot: empty })).toBe(memoryBackendOnce({ cgroupRoot: empty }));
      expect(memoryBackendOnce({ cgroupRoot: empty })).toEqual(found);
      // Nothing was made in the directory looked at.
      expect(readdirSync(empty)).toEqual([]);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('names cgroup v2 without a delegated memory controller (a simulated hierarchy)', () => {
    const root = mkdtempSync(join(tmpdir(), 'warden-fakecg-'));
    try {
      writeFileSync(join(root, 'cgroup.controllers'), 'cpu io pids\n');
      writeFileSync(join(root, 'cgroup.subtree_control'), '');
      const found = detectMemoryBackend({ cgroupRoot: root, selfCgroup: '0::/\n' });
      expect(found.ok ? '' : found.reason).toContain(`cgroup v2 at ${root} has no memory controller delegated here`);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('chooses the nearest delegated ancestor with memory on cgroup v2, not its own cgroup that holds processes (a simulated hierarchy)', () => {
    // A regular directory stands in for cgroupfs: writing "+memory" to a
    // cgroup.subtree_control that holds processes is refused by the kernel;
    // here the file then reads back "+memory", not "memory", which the code
    // treats the same way.
    const root = mkdtempSync(join(tmpdir(), 'warden-fakecg-'));
    try {
      const app = join(root, 'user.slice', 'user@1000.service', 'app.slice');
      const own = join(app, 'term.scope');
      mkdirSync(own, { recursive: true });
      writeFileSync(join(root, 'cgroup.controllers'), 'cpu memory pids\n');
      for (const [dir, subtree] of [[join(root, 'user.slice'), 'memory'], [join(root, 'user.slice', 'user@1000.service'), 'memory'], [app, ''], [own, '']] as const) {
        writeFileSync(join(dir, 'cgroup.controllers'), 'memory pids\n');
        writeFileSync(join(dir, 'cgroup.subtree_control'), subtree);
        writeFileSync(join(dir, 'cgroup.procs'), '');
      }
      // app.slice has no processes: the kernel accepts "+memory" there.
      writeFileSync(join(app, 'cgroup.subtree_control'), 'memory\n');
      mkdirSync(join(app, 'w'));
      writeFileSync(join(app, 'w', 'cgroup.subtree_control'), 'memory\n');
      const found = detectMemoryBackend({ cgroupRoot: root, selfCgroup: '0::/user.slice/user@1000.service/app.slice/term.scope\n', parentName: 'w' });
      expect(found.ok).toBe(true);
      if (!found.ok) return;
      expect(found.backend.version).toBe(2);
      expect(found.backend.parent).toBe(join(app, 'w'));
      expect(existsSync(join(own, 'w'))).toBe(false);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

// ---------------------------------------------------------------------------
// Real cgroups

const detection = detectMemoryBackend({ parentName: `warden-test-${process.pid}` });
const backend = detection.ok ? detection.backend : undefined;
const created: string[] = [];
const started: number[] = [];
// Every process a test starts carries this marker, so the cleanup finds even a
// setsid escapee that never joined its cgroup (as with a broken wrapper).
const HOST = `memtest${process.pid}`;
const env = { ...process.env, WARDEN_SCOPE: `${HOST}.t` };

function make(runId: string, limit = LIMIT): RunCgroup {
  const cg = backend!.createRunCgroup(runId, limit);
  created.push(cg.path);
  return cg;
}

interface Ran {
  pid: number;
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
}

/** Spawns argv the way the engine does (no shell, its own group) and waits for it. */
function run(argv: string[]): Promise<Ran> {
  const child = spawn(argv[0]!, argv.slice(1), { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env });
  started.push(child.pid!);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) =>
    child.on('close', (exitCode, signal) => resolve({ pid: child.pid!, exitCode, signal, stdout, stderr })),
  );
}

/** What the engine will do after the exit: counters, teardown through the cgroup, removal. */
async function finish(cg: RunCgroup, killsBefore: number | null, ran: Ran) {
  const oom = await cg.observeOom(killsBefore, ran);
  const kill = await cg.killAll();
  const removed = await cg.remove();
  return { oom, kill, removed };
}

afterEach(async () => {
  const left = created.splice(0).filter((path) => existsSync(path));
  killLeftovers(HOST);
  for (const pid of started.splice(0)) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  // Clean up whatever a failing test left, then fail on it.
  for (const path of left) {
    let procs = '';
    try {
      procs = readFileSync(join(path, 'cgroup.procs'), 'utf8');
    } catch {
      // not a cgroup any more
    }
    const pids = procs.split('\n').filter(Boolean).map(Number);
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    await waitDead(pids);
    try {
      for (const sub of readdirSync(path, { withFileTypes: true }).filter((d) => d.isDirectory())) rmdirSync(join(path, sub.name));
      rmdirSync(path);
    } catch {
      // reported below
    }
  }
  expect(left, 'cgroups this test created and left behind').toEqual([]);
  if (backend) expect(readdirSync(backend.parent, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name)).toEqual([]);
});

afterAll(() => {
  if (!backend) return;
  expect(backend.removeParentIfEmpty()).toBe(true);
  expect(existsSync(backend.parent)).toBe(false);
});

describe.skipIf(!backend)(`real memory cgroups (${backend ? `cgroup v${backend.version} under ${backend.parent}` : `skipped: ${detection.ok ? '' : detection.reason}`})`, () => {
  it('sets the limit so that swap cannot hide it', () => {
    const cg = make('limits');
    const read = (file: string) => readFileSync(join(cg.path, file), 'utf8').trim();
    if (cg.version === 2) {
      expect(read('memory.max')).toBe(String(LIMIT));
      if (existsSync(join(cg.path, 'memory.swap.max'))) expect(read('memory.swap.max')).toBe('0');
    } else {
      expect(read('memory.limit_in_bytes')).toBe(String(LIMIT));
      if (existsSync(join(cg.path, 'memory.memsw.limit_in_bytes'))) expect(read('memory.memsw.limit_in_bytes')).toBe(String(LIMIT));
      else expect(read('memory.swappiness')).toBe('0');
    }
    return cg.remove().then((removed) => expect(removed).toBe(true));
  });

  it('python3 allocating 512 MiB under 64 MiB is killed by SIGKILL with the OOM counter risen: confirmed, with peak and limit', async () => {
    const cg = make('py-oom');
    const before = cg.readOomKills();
    expect(before).toBe(0);
    const ran = await run(cg.wrap(['python3', '-c', ALLOC_512]));
    expect(ran.signal).toBe('SIGKILL');
    const { oom, removed } = await finish(cg, before, ran);
    expect(oom.confirmed).toBe(true);
    expect(oom.limitBytes).toBe(LIMIT);
    expect(oom.peakBytes).toBeGreaterThan(LIMIT / 2);
    expect(oom.peakBytes).toBeLessThanOrEqual(LIMIT);
    const j = judge({ kind: 'command', exitCode: ran.exitCode, signal: ran.signal, elapsedMs: 300, limitMs: null, oom, outputKept: ran.stderr, viaShell: false });
    expect(j.verdict).toBe('killed');
    // The advice names both numbers: the limit and the peak.
    const advice = killAdvice(oom);
    expect(j.advice).toBe(advice);
    expect(advice).toMatch(/^The out-of-memory killer ended it at its 64 MiB memory limit; its peak was \d+(\.\d)? MiB\. /);
    expect(removed).toBe(true);
  });

  it('the same under bash -c (exit 137 from the shell) is also confirmed', async () => {
    const cg = make('sh-oom');
    const before = cg.readOomKills();
    // `; exit $?` keeps bash from exec'ing python3 itself, so bash reports 137.
    const ran = await run(cg.wrap(['bash', '-c', `python3 -c "${ALLOC_512}"; exit $?`]));
    expect(ran.exitCode).toBe(137);
    expect(ran.signal).toBeNull();
    const { oom, removed } = await finish(cg, before, ran);
    expect(oom).toMatchObject({ confirmed: true, limitBytes: LIMIT });
    expect(oom.peakBytes).toBeGreaterThan(0);
    const j = judge({ kind: 'command', exitCode: ran.exitCode, signal: ran.signal, elapsedMs: 300, limitMs: null, oom, outputKept: ran.stderr, viaShell: true });
    expect(j.verdict).toBe('killed');
    expect(j.advice).toContain('at its 64 MiB memory limit; its peak was');
    expect(removed).toBe(true);
  });

  it('a script under its limit completes, the counter stays, and its peak is set', async () => {
    const cg = make('under');
    const before = cg.readOomKills();
    const ran = await run(cg.wrap(['python3', '-c', 'b = bytearray(16*1024*1024); print(len(b))']));
    expect(ran).toMatchObject({ exitCode: 0, signal: null, stdout: `${16 * MiB}\n` });
    const { oom, removed } = await finish(cg, before, ran);
    expect(oom.confirmed).toBe(false);
    expect(oom.peakBytes).toBeGreaterThanOrEqual(16 * MiB);
    expect(oom.peakBytes).toBeLessThan(LIMIT);
    expect(judge({ kind: 'command', exitCode: 0, signal: null, elapsedMs: 100, limitMs: null, oom, outputKept: '', viaShell: false })).toEqual({ verdict: 'completed', advice: null, notes: [] });
    expect(removed).toBe(true);
  });

  it('an OOM kill of a child under a shell that goes on and exits 0 gives a note on the run', async () => {
    const cg = make('child-oom');
    const before = cg.readOomKills();
    const ran = await run(cg.wrap(['bash', '-c', 'python3 -c "bytearray(512<<20)"; echo survived']));
    expect(ran).toMatchObject({ exitCode: 0, signal: null, stdout: 'survived\n' });
    const { oom, removed } = await finish(cg, before, ran);
    expect(oom.confirmed).toBe(true);
    const j = judge({ kind: 'command', exitCode: 0, signal: null, elapsedMs: 300, limitMs: null, oom, outputKept: ran.stdout, viaShell: true });
    expect(j.verdict).toBe('completed');
    expect(j.notes).toHaveLength(1);
    expect(j.notes[0]).toMatch(/^The out-of-memory killer ended a process of this run at its 64 MiB limit; its peak was [\d.]+ MiB\. /);
    expect(removed).toBe(true);
  });

  it('the wrapper keeps every word of argv literal: no shell expansion, quoting or splitting', async () => {
    const cg = make('literal');
    const words = ['$HOME', '*', '; echo pwned', '"q" \'s\'', '', '$(id)', 'a  b', '-n', '\\n'];
    const ran = await run(cg.wrap(['python3', '-c', 'import json, sys; print(json.dumps(sys.argv[1:]))', ...words]));
    expect(ran.exitCode).toBe(0);
    expect(JSON.parse(ran.stdout)).toEqual(words);
    expect((await finish(cg, 0, ran)).removed).toBe(true);
  });

  it('the process is in the cgroup when the command starts, with the same pid (so the same process group)', async () => {
    const cg = make('joined');
    const ran = await run(cg.wrap(['python3', '-c', 'import os; print(os.getpid(), os.getpgrp()); print(open("/proc/self/cgroup").read())']));
    const [pid, pgid] = ran.stdout.split('\n')[0]!.split(' ').map(Number);
    expect(pid).toBe(ran.pid);
    expect(pgid).toBe(ran.pid);
    expect(ran.stdout).toContain(`/${basename(cg.path)}\n`);
    expect((await finish(cg, 0, ran)).removed).toBe(true);
  });

  it('a failure to join is a clear error and the command is not run', async () => {
    const cg = make('nojoin');
    const witness = join(mkdtempSync(join(tmpdir(), 'warden-nojoin-')), 'ran');
    rmdirSync(cg.path); // the cgroup is gone before the command starts
    const ran = await run(cg.wrap(['touch', witness]));
    expect(ran.exitCode).toBe(125);
    expect(existsSync(witness)).toBe(false);
    const cause = cg.joinFailure(ran.exitCode, ran.stderr);
    expect(cause).toBe(`The command was not run: it could not be placed in its memory cgroup ${cg.path} (cannot create cgroup.procs: Directory nonexistent).`);
    // A command's own exit 125 is not taken for it.
    expect(cg.joinFailure(125, 'some error\n')).toBeUndefined();
    expect(cg.joinFailure(0, ran.stderr)).toBeUndefined();
    expect(await cg.remove()).toBe(true);
    rmSync(join(witness, '..'), { recursive: true, force: true });
  });

  it('killAll leaves nothing in the cgroup: forks, setsid escapees and a child cgroup a process made', async () => {
    const cg = make('killall');
    // A shell with background sleeps, a setsid escapee, and a sleep moved into a child cgroup it made.
    const script = `for i in 1 2 3 4 5; do sleep 300 & done; setsid sleep 300 & mkdir "$1/sub"; (echo $BASHPID > "$1/sub/cgroup.procs"; exec sleep 300) & echo ready; wait`;
    const child = spawn(cg.wrap(['bash', '-c', script, 'x', cg.path])[0]!, cg.wrap(['bash', '-c', script, 'x', cg.path]).slice(1), { detached: true, stdio: ['ignore', 'pipe', 'ignore'], env });
    started.push(child.pid!);
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
    // Wait until all 8 are in: bash, 5 sleeps, the escapee, the one in sub.
    const inSub = () => readFileSync(join(cg.path, 'sub', 'cgroup.procs'), 'utf8').trim();
    await until('all 8 processes in the cgroup', () => cg.pids().length >= 8 && inSub() !== '');
    const pids = cg.pids();
    expect(pids.length).toBe(8);
    expect(inSub()).not.toBe('');
    const report = await cg.killAll();
    expect(report.survivors).toEqual([]);
    expect(cg.pids()).toEqual([]);
    expect(await waitDead(pids)).toEqual([]);
    expect(pids.every(isDead)).toBe(true);
    expect(await cg.remove()).toBe(true);
    expect(existsSync(join(cg.path, 'sub'))).toBe(false);
  });

  it('remove() never throws and reports false while a process is still in it; true after killAll', async () => {
    const cg = make('busy');
    const child = spawn(cg.wrap(['sleep', '300'])[0]!, cg.wrap(['sleep', '300']).slice(1), { detached: true, stdio: 'ignore', env });
    started.push(child.pid!);
    await until('the sleep in the cgroup', () => cg.pids().length >= 1);
    expect(await cg.remove({ retryMs: 100 })).toBe(false);
    expect(existsSync(cg.path)).toBe(true);
    await cg.killAll();
    expect(await cg.remove()).toBe(true);
  });

  it("removeStaleCgroups removes a gone Warden's empty cgroups (and ones below them), keeps a live Warden's and busy ones, and leaves alone what it cannot judge", async () => {
    const me = ownIdentity()!;
    // A pid that is certainly gone: a process that has exited and been reaped.
    const gone = (await run(['true'])).pid;
    const owned = (pid: number, startTicks: number, runId: string) => join(backend!.parent, `${ownerTagText({ pid, startTicks, pidNs: me.tag.pidNs })}-${runId}`);
    const stale = owned(gone, me.tag.startTicks, 'stale1');
    mkdirSync(join(stale, 'made-by-a-process'), { recursive: true });
    created.push(stale);
    // This process's pid with another start time: a Warden that had the pid before us.
    const reused = owned(process.pid, me.tag.startTicks - 1, 'reused1');
    mkdirSync(reused);
    created.push(reused);
    const live = make('live'); // owner: this process, alive, nothing joined yet
    expect(basename(live.path)).toBe(`${ownerTagText(me.tag)}-live`);
    // Cannot be judged: an older Warden's name, a gone pid of another PID namespace.
    const older = join(backend!.parent, `${gone}-older1`);
    const foreign = join(backend!.parent, `${ownerTagText({ pid: gone, startTicks: 1, pidNs: me.tag.pidNs + 1 })}-foreign1`);
    for (const dir of [older, foreign]) {
      mkdirSync(dir);
      created.push(dir);
    }
    const busyDir = owned(gone, 1, 'busy1');
    mkdirSync(busyDir);
    created.push(busyDir);
    const child = spawn('/bin/sh', ['-c', 'echo $$ > "$1/cgroup.procs" && exec sleep 300', 'x', busyDir], { detached: true, stdio: 'ignore', env });
    started.push(child.pid!);
    await until('the sleep in the busy cgroup', () => readFileSync(join(busyDir, 'cgroup.procs'), 'utf8').trim() !== '');

    const sweep = await backend!.removeStaleCgroups();
    expect(sweep.removed.sort()).toEqual([stale, reused].sort());
    expect(sweep.busy).toEqual([busyDir]);
    expect(sweep.leftAlone.map((l) => l.path).sort()).toEqual([older, foreign].sort());
    expect(sweep.leftAlone.find((l) => l.path === foreign)!.why).toMatch(/another PID namespace/);
    expect(existsSync(stale)).toBe(false);
    expect(existsSync(reused)).toBe(false);
    expect(existsSync(live.path)).toBe(true);
    expect(existsSync(busyDir)).toBe(true);

    // With kill: the orphan in the busy one is killed and the cgroup removed; the unjudged ones stay.
    const killing = await backend!.removeStaleCgroups({ kill: true });
    expect(killing.killed).toEqual([child.pid]);
    expect(killing.removed).toEqual([busyDir]);
    expect(killing.leftAlone.map((l) => l.path).sort()).toEqual([older, foreign].sort());
    expect(existsSync(live.path)).toBe(true);
    expect(existsSync(older) && existsSync(foreign)).toBe(true);
    expect(await live.remove()).toBe(true);
    for (const dir of [older, foreign]) rmdirSync(dir);
  });
});
