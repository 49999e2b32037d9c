// Ends whatever is left in a run's scope after its main process exits: the
// process group, then every process carrying the run's WARDEN_SCOPE marker
// (setsid, double forks and daemons leave the group but keep the marker).
// A TERM pass, then KILL passes until a scan finds nothing alive. Every step
// is bounded and the whole has a budget; it reports, it never throws.

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';

import type { Proc, TeardownReport } from '../../shared/result';
import { environHas, environValue, isAliveInProc, listPids, readBounded, readCommand, readLastPid, readStat, TIMED_OUT, type ProcStat } from './procfs';

export interface TeardownTarget {
  /** The full marker value, `hostId.runId`; with `scopePrefix`, its beginning (`hostId.`: every run of a host). */
  scope: string;
  scopePrefix?: boolean;
  /**
   * The run's process group; null when there is none of its own to end (a
   * Python script: the interpreter leads the group and must survive), so only
   * the marker is swept.
   */
  pgid: number | null;
  /**
   * A child subreaper the run's processes were started under: its
   * descendants (orphans re-parented to it included) are in the scope, marker
   * or not. Spare it with sparePids.
   */
  adopter?: number;
  /** Never signalled, even when found in the scope (the session's interpreter). */
  sparePids?: number[];
  /**
   * The last pid handed out (ns_last_pid) before the scope's first process
   * started: everything in the scope got a later pid, so a scan reads only the
   * pids handed out since (wrapping at pid_max) instead of every process. Only
   * for scopes younger than a pid wrap-around (a Python script of a session).
   */
  pidsAfter?: number;
  /** null when there is no /proc (macOS, or forced in tests): the group alone is used. */
  procRoot: string | null;
  /** Processes started before this (clock ticks after boot) cannot carry the marker. */
  notBeforeTicks?: number;
  budgetMs: number;
  passGapMs: number;
  /**
   * What this teardown cannot see, when something started after the main
   * process (no cgroup holds the run and no subreaper adopts its orphans): the
   * report then says so and does not claim to be complete.
   */
  blindSpot?: string;
  /** Bound on one file read, so a process stuck in the kernel costs only itself. */
  readTimeoutMs?: number;
  onSignal?: (target: number, signal: NodeJS.Signals) => void;
}

const POLL_MS = 5;
const execFileAsync = promisify(execFile);

export async function teardown(target: TeardownTarget): Promise<TeardownReport> {
  const started = performance.now();
  try {
    return target.procRoot === null
      ? await teardownGroupOnly(target, started)
      : await teardownWithProc(target, target.procRoot, started);
  } catch (error) {
    // Teardown is best effort: a failure is reported, never thrown.
    void error;
    return { killed: [], survivors: [], elapsedMs: performance.now() - started, complete: false };
  }
}

function send(target: TeardownTarget, pidOrGroup: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(pidOrGroup, signal);
    target.onSignal?.(pidOrGroup, signal);
    return true;
  } catch {
    return false; // ESRCH: already gone; EPERM: not ours to end
  }
}

interface Scan {
  procs: Map<number, ProcStat>;
  /** Each marked process's WARDEN_SCOPE value (group members that dropped it have none). */
  scopes: Map<number, string>;
  /** False when some process could not be checked for the marker in time. */
  complete: boolean;
}

async function scanScope(target: TeardownTarget, procRoot: string, deadline: number): Promise<Scan> {
  const marker = `WARDEN_SCOPE=${target.scope}`;
  const procs = new Map<number, ProcStat>();
  const scopes = new Map<number, string>();
  const candidates: ProcStat[] = [];
  for (const pid of candidatePids(procRoot, target.pidsAfter)) {
    if (pid === process.pid || target.sparePids?.includes(pid)) continue;
    const stat = readStat(procRoot, pid);
    if (stat === undefined || stat.state === 'Z' || stat.state === 'X') continue;
    if (stat.pgid === target.pgid) procs.set(pid, stat);
    else if (target.notBeforeTicks === undefined || stat.startTicks >= target.notBeforeTicks) candidates.push(stat);
  }
  if (target.adopter !== undefined) {
    // Everything below the subreaper, by parentage: it adopts every orphan of the tree.
    const parent = new Map([...procs.values(), ...candidates].map((s) => [s.pid, s.ppid]));
    const below = (pid: number): boolean => {
      for (let at = parent.get(pid), hops = 0; at !== undefined && hops < 256; at = parent.get(at), hops++) {
        if (at === target.adopter) return true;
      }
      return false;
    };
    for (const stat of candidates) if (below(stat.pid)) procs.set(stat.pid, stat);
  }
  const readTimeout = Math.max(1, Math.min(target.readTimeoutMs ?? 500, deadline - performance.now()));
  let complete = true;
  await Promise.all(
    candidates.map(async (stat) => {
      const environ = await readBounded(`${procRoot}/${stat.pid}/environ`, readTimeout);
      if (environ === TIMED_OUT) complete = false;
      else if (environ !== undefined && !target.scopePrefix && environHas(environ, marker)) procs.set(stat.pid, stat);
      else if (environ !== undefined && target.scopePrefix) {
        const value = environValue(environ, 'WARDEN_SCOPE');
        if (value !== undefined && value.startsWith(target.scope)) {
          procs.set(stat.pid, stat);
          scopes.set(stat.pid, value);
        }
      }
    }),
  );
  return { procs, scopes, complete };
}

/** A few thousand stat opens of missing pids cost less than listing a busy /proc. */
const PID_RANGE_WALK_MAX = 2048;

/**
 * The pids a scan looks at: every process, or with `after`, only the pids
 * handed out since, up to the last one now (read at each scan: a scope can
 * fork during teardown). A short range is walked pid by pid.
 */
function candidatePids(procRoot: string, after: number | undefined): number[] {
  const last = after === undefined ? undefined : readLastPid(procRoot);
  if (after === undefined || last === undefined) return listPids(procRoot);
  if (last === after) return [];
  if (last > after && last - after <= PID_RANGE_WALK_MAX) {
    const pids: number[] = [];
    for (let pid = after + 1; pid <= last; pid++) pids.push(pid);
    return pids;
  }
  // Pids wrap at pid_max: after the wrap the range is (after, pid_max] and [1, last].
  return listPids(procRoot).filter(last > after ? (pid) => pid > after && pid <= last : (pid) => pid > after || pid <= last);
}

/** What is in the scope now, without signalling anything. */
export async function listScope(target: TeardownTarget): Promise<Proc[]> {
  return (await listMarked(target)).map(({ pid, ppid, pgid, command }) => ({ pid, ppid, pgid, command }));
}

/** The same, with each process's marker value (one scan finds every run of a host with `scopePrefix`). */
export async function listMarked(target: TeardownTarget): Promise<(Proc & { scope?: string })[]> {
  if (target.procRoot === null) return target.pgid === null ? [] : ((await psGroupMembers(target.pgid, 1000)) ?? []);
  const deadline = performance.now() + Math.min(target.budgetMs, 2000);
  const scan = await scanScope(target, target.procRoot, deadline);
  const procs = await describe(target.procRoot, [...scan.procs.values()], 200);
  return procs.map((p) => {
    const scope = scan.scopes.get(p.pid);
    return scope === undefined ? p : { ...p, scope };
  });
}

async function describe(procRoot: string, stats: ProcStat[], timeoutMs: number): Promise<Proc[]> {
  return Promise.all(
    stats.map(async (s) => ({ pid: s.pid, ppid: s.ppid, pgid: s.pgid, command: await readCommand(procRoot, s, timeoutMs) })),
  );
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * True when no process or thread has been created in this pid namespace since
 * the main process: the last pid handed out is still the main process's (the
 * group leader's), and that pid is free, so the main process is gone and
 * nothing was forked after it. Everything in a scope descends from the main
 * process, so the scope is empty and the /proc scan can be skipped. This is the
 * common case of a short command that starts nothing, where the scan would be
 * most of the engine's own cost. Any doubt (another process started anywhere,
 * no ns_last_pid) means the full scan.
 */
function nothingStartedSince(procRoot: string, pgid: number | null): boolean {
  return pgid !== null && readLastPid(procRoot) === pgid && !existsSync(`${procRoot}/${pgid}`);
}

async function teardownWithProc(target: TeardownTarget, procRoot: string, started: number): Promise<TeardownReport> {
  if (nothingStartedSince(procRoot, target.pgid)) {
    return { killed: [], survivors: [], elapsedMs: performance.now() - started, complete: true };
  }
  const deadline = started + target.budgetMs;
  const seen = new Map<number, Proc>();
  let complete = true;

  const sweep = async (signal: NodeJS.Signals): Promise<number[]> => {
    const scan = await scanScope(target, procRoot, deadline);
    complete &&= scan.complete;
    const fresh = [...scan.procs.values()].filter((s) => !seen.has(s.pid));
    for (const proc of await describe(procRoot, fresh, Math.min(200, Math.max(1, deadline - performance.now())))) {
      seen.set(proc.pid, proc);
    }
    const live = [...scan.procs.keys()];
    if (live.length === 0) return live;
    if (target.pgid !== null) send(target, -target.pgid, signal);
    for (const pid of live) send(target, pid, signal);
    if (signal !== 'SIGKILL') {
      // A stopped process only acts on TERM once it runs again.
      if (target.pgid !== null) send(target, -target.pgid, 'SIGCONT');
      for (const pid of live) send(target, pid, 'SIGCONT');
    }
    return live;
  };

  const allDead = (pids: number[]) => pids.every((pid) => !isAliveInProc(procRoot, pid));

  const termed = await sweep('SIGTERM');
  if (termed.length > 0) {
    const gapEnd = Math.min(deadline, performance.now() + target.passGapMs);
    while (performance.now() < gapEnd && !allDead(termed)) await sleep(POLL_MS);
    // Anything alive now, or started since the first scan, gets SIGKILL until a scan finds none.
    while (performance.now() < deadline) {
      const killed = await sweep('SIGKILL');
      if (killed.length === 0) break;
      const settle = Math.min(deadline, performance.now() + 50);
      while (performance.now() < settle && !allDead(killed)) await sleep(POLL_MS);
    }
  }

  const killed: Proc[] = [];
  const survivors: Proc[] = [];
  for (const proc of seen.values()) (isAliveInProc(procRoot, proc.pid) ? survivors : killed).push(proc);
  const elapsedMs = performance.now() - started;
  const blind = target.blindSpot !== undefined ? { unseen: target.blindSpot } : {};
  return { killed, survivors, elapsedMs, complete: complete && survivors.length === 0 && elapsedMs <= target.budgetMs && !target.blindSpot, ...blind };
}

/** Live members of a process group from `ps`, where there is no /proc; undefined when ps fails. */
async function psGroupMembers(pgid: number, timeoutMs: number): Promise<Proc[] | undefined> {
  try {
    const { stdout } = await execFileAsync('ps', ['-A', '-o', 'pid=,ppid=,pgid=,stat=,command='], {
      timeout: Math.max(1, timeoutMs),
      maxBuffer: 64 * 1024 * 1024,
    });
    const members: Proc[] = [];
    for (const line of stdout.split('\n')) {
      const m = /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s?(.*)$/.exec(line);
      if (!m || Number(m[3]) !== pgid || m[4]!.startsWith('Z')) continue;
      members.push({ pid: Number(m[1]), ppid: Number(m[2]), pgid, command: m[5]! });
    }
    return members;
  } catch {
    return undefined;
  }
}

function groupSignalable(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Without /proc only the recorded group can be reached. Members and their
 * liveness come from `ps` (zombies are dead); where ps fails too, the group
 * is signalled blind and reported as one entry.
 */
async function teardownGroupOnly(target: TeardownTarget, started: number): Promise<TeardownReport> {
  // Without /proc and without a group of its own there is nothing to find.
  if (target.pgid === null) return { killed: [], survivors: [], elapsedMs: performance.now() - started, complete: true };
  const pgid = target.pgid;
  const deadline = started + target.budgetMs;
  const remaining = () => Math.max(1, deadline - performance.now());
  const seen = new Map<number, Proc>();
  const alive = async (): Promise<boolean> => {
    const members = await psGroupMembers(pgid, Math.min(1000, remaining()));
    if (members === undefined) return groupSignalable(pgid);
    for (const m of members) if (!seen.has(m.pid)) seen.set(m.pid, m);
    return members.length > 0;
  };
  let live = await alive();
  if (live) {
    send(target, -pgid, 'SIGTERM');
    send(target, -pgid, 'SIGCONT');
    const gapEnd = Math.min(deadline, performance.now() + target.passGapMs);
    while (performance.now() < gapEnd && (live = await alive())) await sleep(POLL_MS * 4);
    while (live && performance.now() < deadline) {
      send(target, -pgid, 'SIGKILL');
      await sleep(POLL_MS * 4);
      live = await alive();
    }
  }
  const current = new Set(((await psGroupMembers(pgid, Math.min(1000, remaining()))) ?? []).map((m) => m.pid));
  const killed: Proc[] = [];
  const survivors: Proc[] = [];
  for (const proc of seen.values()) (current.has(proc.pid) ? survivors : killed).push(proc);
  if (seen.size === 0 && live) {
    survivors.push({ pid: pgid, ppid: 0, pgid: pgid, command: `(process group ${pgid})` });
  }
  const elapsedMs = performance.now() - started;
  return { killed, survivors, elapsedMs, complete: survivors.length === 0 && elapsedMs <= target.budgetMs };
}
