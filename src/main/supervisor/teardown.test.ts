// Teardown of real leftovers after the main process exits (docs/architecture.md,
// "Runs" and the teardown list under "The deadline engine"): processes that
// left the group (setsid, double fork, daemonize) are found by the scope
// marker; a descendant holding the pipes cannot hang the run; keepDescendants
// leaves them alone; without /proc the group alone is enough.
//
// Each command prints the pids of what it started ("name pid" lines), so the
// test checks deadness independently of the engine's own report. PID 1 here
// does not reap orphans: a killed orphan stays a zombie, which counts as dead.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunResult } from '../../shared/result';
import { Harness, isDead, printedPids, procsMatching, waitDead } from './proc-testkit';
import { listScope, type TeardownTarget } from './teardown';
import { PATIENCE_MS, until } from '../../../test/kit/until';

const harnesses: Harness[] = [];
function harness(options: ConstructorParameters<typeof Harness>[0] = {}): Harness {
  const h = new Harness(options);
  harnesses.push(h);
  return h;
}
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.cleanup()));
});

function expectKilled(r: RunResult, pid: number | undefined, commandText: string): void {
  expect(pid, `pid of ${commandText} printed in ${JSON.stringify(r.stdout)}`).toBeGreaterThan(0);
  const entries = procsMatching(r.teardown?.killed, commandText);
  expect(entries.map((p) => p.pid), `teardown.killed ${JSON.stringify(r.teardown)}`).toContain(pid);
  expect(procsMatching(r.teardown?.survivors, commandText)).toEqual([]);
  expect(isDead(pid!), `${commandText} (pid ${pid}) is still alive in /proc`).toBe(true);
}

describe('processes that left the group are found by the marker', () => {
  it('setsid and a bash double fork are in teardown.killed, none survive, and /proc shows them dead', async () => {
    const h = harness();
    const script = [
      'setsid sleep 311 >/dev/null 2>&1 & echo "setsid $!"',
      // Double fork: the subshell exits at once, the setsid bash forks sleep and exits.
      '(setsid bash -c "sleep 312 >/dev/null 2>&1 & echo \\"daemon \\$!\\"" &)',
      // Let both leave the group before the main process exits.
      'sleep 0.3',
      'echo done',
    ].join('; ');
    const r = await h.run({ argv: ['bash', '-c', script] });
    expect(r.verdict).toBe('completed');
    expect(r.stdout).toMatch(/done\n$/);
    const pids = printedPids(r.stdout);
    expect(r.teardown).toBeDefined();
    expect(r.teardown!.survivors).toEqual([]);
    expect(r.teardown!.complete).toBe(true);
    expectKilled(r, pids.setsid, 'sleep 311');
    expectKilled(r, pids.daemon, 'sleep 312');
    expect(r.notes.join(' ')).toMatch(/sleep 311/);
    expect(r.notes.join(' ')).toMatch(/sleep 312/);
  });

  it('a Python double fork with os.setsid that daemonizes into sleep is killed', async () => {
    const h = harness();
    const code = [
      'import os',
      'r, w = os.pipe()',
      'if os.fork() == 0:',
      '    os.setsid()',
      '    if os.fork() == 0:',
      '        null = os.open("/dev/null", os.O_RDWR)',
      '        for fd in (0, 1, 2): os.dup2(null, fd)',
      '        os.write(w, str(os.getpid()).encode()); os.close(w)',
      '        os.execvp("sleep", ["sleep", "317"])',
      '    os._exit(0)',
      'os.wait()',
      'os.close(w)',
      'daemon = os.read(r, 32).decode()',
      'print("daemon", daemon, flush=True)',
    ].join('\n');
    const r = await h.run({ argv: ['python3', '-c', code] });
    expect(r.verdict).toBe('completed');
    const { daemon } = printedPids(r.stdout);
    expect(r.teardown!.survivors).toEqual([]);
    expectKilled(r, daemon, 'sleep 317');
  });

  it('a group member that ignores SIGTERM is ended by the KILL pass', async () => {
    const h = harness();
    const r = await h.run({ argv: ['bash', '-c', '(trap "" TERM; exec sleep 318) >/dev/null 2>&1 & echo "stubborn $!"; sleep 0.1; exit 3'] });
    // Teardown never changes the verdict.
    expect(r).toMatchObject({ verdict: 'failed', exitCode: 3 });
    expect(r.teardown!.survivors).toEqual([]);
    expectKilled(r, printedPids(r.stdout).stubborn, 'sleep 318');
  });
});

describe('a descendant holding the output open', () => {
  it('does not hang the run: the pipes are closed after the default drain bound, and it is torn down', async () => {
    const h = harness();
    const t0 = performance.now();
    // Default drain bound (2 s); the harness's hang guard fails the test instead of waiting for sleep 313.
    const r = await h.run({ argv: ['bash', '-c', 'sleep 313 & echo "bg $!"'] });
    const wallMs = performance.now() - t0;
    expect(r.verdict).toBe('completed');
    expect(r.exitCode).toBe(0);
    expect(r.notes.join(' ')).toMatch(/pipes were closed/);
    // The run's time ends at the main process's exit, not when the pipes were closed: the
    // whole drain (2 s) came after it. (A bound from below: a slow machine only adds to wallMs.)
    expect(wallMs).toBeGreaterThanOrEqual(r.elapsedMs + 2_000 - 50);
    expectKilled(r, printedPids(r.stdout).bg, 'sleep 313');
  });

  it('keepDescendants: true leaves it running (and says so); the default tears the same command down', async () => {
    const h = harness();
    const kept = await h.run({ argv: ['bash', '-c', 'sleep 314 & echo "bg $!"'], keepDescendants: true, drainMs: 200 });
    const keptPid = printedPids(kept.stdout).bg!;
    expect(keptPid).toBeGreaterThan(0);
    h.extraPids.push(keptPid);
    expect(kept.verdict).toBe('completed');
    expect(kept.teardown).toBeUndefined();
    expect(kept.notes.join(' ')).toMatch(/pipes were closed/);
    expect(kept.notes.join(' ')).toMatch(/kept running.*sleep 314/);
    expect(isDead(keptPid), 'the kept descendant should still be alive').toBe(false);

    const torn = await h.run({ argv: ['bash', '-c', 'sleep 314 & echo "bg $!"'], drainMs: 200 });
    expectKilled(torn, printedPids(torn.stdout).bg, 'sleep 314');
    // The kept one is still untouched by the second run's teardown.
    expect(isDead(keptPid)).toBe(false);
  });
});

describe('without /proc', () => {
  it('procRoot: null still ends a group member through the recorded process group', async () => {
    const h = harness({ procRoot: null });
    const r = await h.run({ argv: ['bash', '-c', 'sleep 315 >/dev/null 2>&1 & echo "bg $!"; exit 0'] });
    expect(r.verdict).toBe('completed');
    const { bg } = printedPids(r.stdout);
    expect(r.teardown).toBeDefined();
    expect(r.teardown!.survivors).toEqual([]);
    expect(await waitDead([bg!])).toEqual([]);
    expectKilled(r, bg, 'sleep 315');
  });

  it('procRoot: null and no working ps: the members it ended are named from /proc, each with its pid, parent and command', async () => {
    const h = harness({ procRoot: null });
    // A ps that fails, first on PATH; the run names its programs by absolute path.
    const bin = mkdtempSync(join(tmpdir(), 'warden-no-ps-'));
    writeFileSync(join(bin, 'ps'), '#!/bin/sh\nexit 1\n', { mode: 0o755 });
    const path = process.env.PATH;
    process.env.PATH = `${bin}:${path}`;
    let r: RunResult;
    try {
      r = await h.run({ argv: ['/bin/bash', '-c', '/bin/sleep 317 >/dev/null 2>&1 & echo "bg $!"; exit 0'] });
    } finally {
      process.env.PATH = path;
      rmSync(bin, { recursive: true, force: true });
    }
    expect(r.verdict).toBe('completed');
    const { bg } = printedPids(r.stdout);
    expectKilled(r, bg, 'sleep 317');
    const entry = procsMatching(r.teardown?.killed, 'sleep 317')[0]!;
    expect(entry).toMatchObject({ pid: bg, command: '/bin/sleep 317' });
    expect(entry.ppid).toBeGreaterThan(0);
    expect(r.teardown!.survivors.filter((p) => p.command.startsWith('(process group'))).toEqual([]);
  });
});

// Teardown's choice of processes (scanScope, through listScope, which signals
// nothing): what the scope takes and what it leaves. The mutation run
// (bench/README.md) found these cases untested: a spared process in the run's
// own group, a process that started in the very clock tick the run began, and
// a process below the subreaper that carries another run's marker.

const started: ChildProcess[] = [];
afterEach(() => {
  for (const child of started.splice(0)) {
    // Each test's processes are in groups of their own (detached): end the group, then the leader.
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      child.kill('SIGKILL');
    }
  }
});

const scope = `choice-${process.pid}-${Date.now()}`;

function start(script: string, env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn('bash', ['-c', script], { detached: true, env, stdio: ['ignore', 'pipe', 'ignore'] });
  started.push(child);
  return child;
}

/** The pids a script prints, one a line, once it has printed `n` of them. */
async function printed(child: ChildProcess, n: number): Promise<number[]> {
  let out = '';
  for await (const chunk of child.stdout!) {
    out += String(chunk);
    const pids = out.split('\n').filter(Boolean).map(Number);
    if (pids.length >= n) return pids;
  }
  throw new Error(`the script ended after printing ${JSON.stringify(out)}`);
}

function stat(pid: number): string[] {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return text.slice(text.lastIndexOf(')') + 2).split(' ');
}

/** Waits until each pid runs `sleep`: exec'd, so its environ is its own. */
async function execd(pids: number[]): Promise<void> {
  await until(`each of ${pids.join(' ')} to run sleep`, () => pids.every((pid) => readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'sleep'));
}

// The scan's time budget is a hang guard here: these tests ask what it chooses, never how fast.
const base = (more: Partial<TeardownTarget>): TeardownTarget => ({ scope, pgid: null, procRoot: '/proc', budgetMs: PATIENCE_MS, passGapMs: 10, ...more });
const pids = async (target: TeardownTarget): Promise<number[]> => (await listScope(target)).map((p) => p.pid).sort((a, b) => a - b);

describe('teardown\'s choice: what the scope takes and leaves', () => {
  it('a spared process in the run\'s own group is left out, the rest of the group is taken', async () => {
    const leader = start('sleep 30 & echo $!; sleep 30 & echo $!; wait', { PATH: process.env.PATH });
    const [a, b] = await printed(leader, 2);
    const pgid = leader.pid!;
    expect(await pids(base({ pgid, scope: `${scope}-group` }))).toEqual([pgid, a!, b!].sort((x, y) => x - y));
    expect(await pids(base({ pgid, scope: `${scope}-group`, sparePids: [pgid] }))).toEqual([a!, b!].sort((x, y) => x - y));
  });

  it('a marked process that began in the very clock tick the run began is taken; one tick earlier is not the run\'s', async () => {
    // Outside the run's group (pgid null), so only the marker and the start time decide.
    const child = start('exec sleep 30', { PATH: process.env.PATH, WARDEN_SCOPE: `${scope}-tick` });
    await execd([child.pid!]);
    const startTicks = Number(stat(child.pid!)[19]);
    expect(await pids(base({ scope: `${scope}-tick`, notBeforeTicks: startTicks }))).toEqual([child.pid]);
    expect(await pids(base({ scope: `${scope}-tick`, notBeforeTicks: startTicks + 1 }))).toEqual([]);
  });

  it('below the subreaper: an unmarked orphan is taken, one carrying another run\'s marker is left to that run', async () => {
    const adopter = start(
      `WARDEN_SCOPE=${scope}-other sleep 30 & echo $!; env -u WARDEN_SCOPE sleep 30 & echo $!; wait`,
      { PATH: process.env.PATH },
    );
    const [other, unmarked] = await printed(adopter, 2);
    await execd([other!, unmarked!]);
    expect(await pids(base({ scope: `${scope}-mine`, adopter: adopter.pid! }))).toEqual([unmarked]);
    // The other run's own scope takes its process (and, by adoption, the unmarked one too).
    expect(await pids(base({ scope: `${scope}-other`, adopter: adopter.pid! }))).toEqual([other!, unmarked!].sort((x, y) => x - y));
  });

  it('without a subreaper, an unmarked child of a spared process is not the run\'s (a Python session in a cgroup)', async () => {
    // The interpreter is spared and no subreaper adopts anything: only the marker decides.
    const interpreter = start('env -u WARDEN_SCOPE sleep 30 & echo $!; wait', { PATH: process.env.PATH });
    const [child] = await printed(interpreter, 1);
    await execd([child!]);
    expect(await pids(base({ scope: `${scope}-spared`, sparePids: [interpreter.pid!] }))).toEqual([]);
    // With a subreaper (here one that is gone), what is below the spared process is the run's.
    expect(await pids(base({ scope: `${scope}-spared`, sparePids: [interpreter.pid!], adopter: 4_194_399 }))).toEqual([child]);
  });
});
