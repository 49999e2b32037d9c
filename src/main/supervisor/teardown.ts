// Ends whatever is left in a run's scope after its main process exits: the
// process group, then every process carrying the run's WARDEN_SCOPE marker
// (setsid, double forks and daemons leave the group but keep the marker).
// A TERM pass, then KILL passes until a scan finds nothing alive. Every step
// is bounded and the whole has a budget; it reports, it never throws.

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';

import type { Proc, TeardownReport } from '../../shared/result';
import { environHas, environValue, isAliveInProc, listPids, outOfDescriptors, readBounded, readCommand, readLastPid, readStatChecked, TIMED_OUT, UNCHECKED, type ProcStat } from './procfs';

export interface TeardownTarget {
  /** The full marker value, `hostId.runId`; with `scopePrefix`, its beginning (`hostId.`: every run of a host). */
  scope: string;
  scopePrefix?: boolean;
  /** With scopePrefix: marker values left alone (runs whose descendants were kept). */
  excludeScopes?: ReadonlySet<string>;
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
  /**
   * The cgroup every process of the run was born in (no process can leave
   * one): when it holds none, nothing of the run is left, and /proc is not
   * scanned for the marker.
   */
  wholeRunIn?: { pids(): number[] };
  /** Bound on one file read, so a process stuck in the kernel costs only itself. */
  readTimeoutMs?: number;
  onSignal?: (target: number, signal: NodeJS.Signals) => void;
}

const POLL_MS = 5;
const execFileAsync = promisify(execFile);

export async function teardown(target: TeardownTarget): Promise<TeardownReport> {
  const started = performance.now();
  try {
    if (emptyCgroup(target)) return { killed: [], survivors: [], elapsedMs: performance.now() - started, complete: true };
    return target.procRoot === null
      ? await teardownGroupOnly(target, started)
      : await teardownWithProc(target, target.procRoot, started);
  } catch (error) {
    // Teardown is best effort: a failure is reported, never thrown.
    void error;
    return { killed: [], survivors: [], elapsedMs: performance.now() - started, complete: false };
  }
}

/** Whether the cgroup that holds the whole run is empty: a read of its cgroup.procs instead of a look at every process. */
function emptyCgroup(target: TeardownTarget): boolean {
  return target.wholeRunIn !== undefined && target.wholeRunIn.pids().length === 0;
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
  /** Processes that could not be looked at for lack of file descriptors (-1: not even /proc could be listed). */
  unchecked: number;
}

/**
 * What one look at /proc found: every live process's stat, and the environ of
 * each that started at or after `notBeforeTicks` (others cannot carry a
 * marker of a scope that began later). Teardowns that end together share one
 * (sharedSnapshot): 500 runs ending at once read each process's environ once
 * per pass, not 500 times.
 */
interface Snapshot {
  stats: ProcStat[];
  environs: Map<number, Buffer | undefined | typeof TIMED_OUT | typeof UNCHECKED>;
  /** Stats that could not be opened for lack of descriptors; -1 when /proc itself could not be listed. */
  unchecked: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function takeSnapshot(procRoot: string, pids: () => number[], notBeforeTicks: number | undefined, readTimeoutMs: number): Promise<Snapshot> {
  let list: number[] | undefined;
  for (const wait of [0, 10, 40, 100]) {
    if (wait > 0) await sleep(wait);
    try {
      list = pids();
      break;
    } catch (error) {
      if (!outOfDescriptors(error)) throw error;
    }
  }
  if (list === undefined) return { stats: [], environs: new Map(), unchecked: -1 };
  const stats: ProcStat[] = [];
  let unchecked = 0;
  for (const pid of list) {
    if (pid === process.pid) continue;
    const stat = readStatChecked(procRoot, pid);
    if (stat === UNCHECKED) unchecked += 1;
    else if (stat !== undefined && stat.state !== 'Z' && stat.state !== 'X') stats.push(stat);
  }
  const environs: Snapshot['environs'] = new Map();
  await Promise.all(
    stats
      .filter((stat) => notBeforeTicks === undefined || stat.startTicks >= notBeforeTicks)
      .map(async (stat) => environs.set(stat.pid, await readBounded(`${procRoot}/${stat.pid}/environ`, readTimeoutMs))),
  );
  return { stats, environs, unchecked };
}

interface Batch {
  procRoot: string;
  notBeforeTicks: number | undefined;
  everyProcess: boolean;
  readTimeoutMs: number;
  promise: Promise<Snapshot>;
  resolve: (snapshot: Snapshot) => void;
  reject: (error: unknown) => void;
}

/** Per proc root: the snapshot being taken, and the next one, which every scan asked for meanwhile joins. */
const batches = new Map<string, { running: Promise<unknown> | null; next: Batch | null }>();
/** Snapshots taken, and scans served (bench (o): how much one snapshot is shared). */
export const scanStats = { snapshots: 0, scans: 0 };

/**
 * A snapshot taken after this call: the one about to start if there is one,
 * else the next, which starts as soon as the one running ends. Every scan
 * sees /proc as it was after it asked (a teardown's KILL pass must see what
 * its TERM pass left), and at most one snapshot per proc root runs at a time.
 */
function sharedSnapshot(procRoot: string, notBeforeTicks: number | undefined, readTimeoutMs: number): Promise<Snapshot> {
  scanStats.scans += 1;
  let slot = batches.get(procRoot);
  if (!slot) batches.set(procRoot, (slot = { running: null, next: null }));
  const state = slot;
  if (state.next) {
    const batch = state.next;
    if (notBeforeTicks === undefined) batch.everyProcess = true;
    else if (batch.notBeforeTicks === undefined || notBeforeTicks < batch.notBeforeTicks) batch.notBeforeTicks = notBeforeTicks;
    batch.readTimeoutMs = Math.max(batch.readTimeoutMs, readTimeoutMs);
    return batch.promise;
  }
  let resolve!: Batch['resolve'];
  let reject!: Batch['reject'];
  const promise = new Promise<Snapshot>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  const batch: Batch = { procRoot, notBeforeTicks, everyProcess: notBeforeTicks === undefined, readTimeoutMs, promise, resolve, reject };
  state.next = batch;
  const run = () => {
    state.next = null;
    scanStats.snapshots += 1;
    const taking = takeSnapshot(procRoot, () => listPids(procRoot), batch.everyProcess ? undefined : batch.notBeforeTicks, batch.readTimeoutMs);
    state.running = taking;
    taking.then(batch.resolve, batch.reject).finally(() => {
      state.running = null;
      if (!state.next) batches.delete(procRoot);
    });
  };
  // Started after the scans of this turn have joined; after the running one when there is one.
  if (state.running === null) setImmediate(run);
  else void state.running.catch(() => undefined).finally(() => setImmediate(run));
  return promise;
}

async function scanScope(target: TeardownTarget, procRoot: string, deadline: number): Promise<Scan> {
  const marker = `WARDEN_SCOPE=${target.scope}`;
  const procs = new Map<number, ProcStat>();
  const scopes = new Map<number, string>();
  const candidates: ProcStat[] = [];
  const readTimeout = Math.max(1, Math.min(target.readTimeoutMs ?? 500, deadline - performance.now()));
  const snapshot =
    target.pidsAfter === undefined
      ? await sharedSnapshot(procRoot, target.notBeforeTicks, readTimeout)
      : // A short range of pids (a Python script): its own small look, no one else's.
        await takeSnapshot(procRoot, () => candidatePids(procRoot, target.pidsAfter), target.notBeforeTicks, readTimeout);
  for (const stat of snapshot.stats) {
    if (target.sparePids?.includes(stat.pid)) continue;
    if (stat.pgid === target.pgid) procs.set(stat.pid, stat);
    else if (target.notBeforeTicks === undefined || stat.startTicks >= target.notBeforeTicks) candidates.push(stat);
  }
  if (target.adopter !== undefined) {
    // Everything below the subreaper, by parentage: it adopts every orphan of the tree.
    const parent = new Map([...procs.values(), ...candidates].map((s) => [s.pid, s.ppid]));
    // A spared process (the session's interpreter) is below the adopter too, though outside a short pid range.
    const below = (pid: number): boolean => {
      for (let at = parent.get(pid), hops = 0; at !== undefined && hops < 256; at = parent.get(at), hops++) {
        if (at === target.adopter || target.sparePids?.includes(at)) return true;
      }
      return false;
    };
    // What carries another run's marker is that run's (an earlier script's descendants, kept as asked).
    const another = (pid: number): boolean => {
      const environ = snapshot.environs.get(pid);
      const value = environ instanceof Buffer ? environValue(environ, 'WARDEN_SCOPE') : undefined;
      return value !== undefined && (target.scopePrefix ? !value.startsWith(target.scope) : value !== target.scope);
    };
    for (const stat of candidates) if (below(stat.pid) && !another(stat.pid)) procs.set(stat.pid, stat);
  }
  let complete = snapshot.unchecked === 0;
  let unchecked = snapshot.unchecked;
  for (const stat of candidates) {
    const environ = snapshot.environs.get(stat.pid);
    if (environ === TIMED_OUT) complete = false;
    else if (environ === UNCHECKED) {
      complete = false;
      if (unchecked >= 0) unchecked += 1;
    } else if (environ !== undefined && !target.scopePrefix && environHas(environ, marker)) procs.set(stat.pid, stat);
    else if (environ !== undefined && target.scopePrefix) {
      const value = environValue(environ, 'WARDEN_SCOPE');
      if (value !== undefined && value.startsWith(target.scope) && !target.excludeScopes?.has(value)) {
        procs.set(stat.pid, stat);
        scopes.set(stat.pid, value);
      }
    }
  }
  return { procs, scopes, complete, unchecked };
}

/** One line for a report: what could not be looked at for lack of descriptors. */
export function uncheckedLine(unchecked: number): string {
  return unchecked < 0
    ? 'could not check: /proc could not be listed (no file descriptor free, EMFILE), so no process of the run could be looked for'
    : `could not check ${unchecked} process${unchecked === 1 ? '' : 'es'} for the run's marker (no file descriptor free, EMFILE): any of them may be the run's and still alive`;
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
  if (emptyCgroup(target)) return [];
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
  let unchecked = 0;

  const sweep = async (signal: NodeJS.Signals): Promise<number[]> => {
    const scan = await scanScope(target, procRoot, deadline);
    complete &&= scan.complete;
    // The worst pass is the one to report: -1 (nothing could be listed) above any count.
    if (scan.unchecked < 0 || (unchecked >= 0 && scan.unchecked > unchecked)) unchecked = scan.unchecked;
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
  const notChecked = unchecked !== 0 ? { unchecked: uncheckedLine(unchecked) } : {};
  return { killed, survivors, elapsedMs, complete: complete && survivors.length === 0 && elapsedMs <= target.budgetMs && !target.blindSpot, ...blind, ...notChecked };
}

/** Live members of a process group from /proc itself (each pid's stat, then its command line); undefined when /proc cannot be read. */
async function procGroupMembers(pgid: number, timeoutMs: number): Promise<Proc[] | undefined> {
  const procRoot = '/proc';
  let pids: number[];
  try {
    pids = listPids(procRoot);
  } catch {
    return undefined;
  }
  const stats: ProcStat[] = [];
  for (const pid of pids) {
    const stat = readStatChecked(procRoot, pid);
    if (stat !== UNCHECKED && stat !== undefined && stat.pgid === pgid && stat.state !== 'Z') stats.push(stat);
  }
  return Promise.all(stats.map(async (stat) => ({ pid: stat.pid, ppid: stat.ppid, pgid, command: await readCommand(procRoot, stat, timeoutMs) })));
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
 * liveness come from `ps` (zombies are dead), else from /proc read directly
 * where it can be; where neither can be read, the group is signalled blind
 * and reported as one entry that says so.
 */
async function teardownGroupOnly(target: TeardownTarget, started: number): Promise<TeardownReport> {
  // Without /proc and without a group of its own there is nothing to find.
  if (target.pgid === null) return { killed: [], survivors: [], elapsedMs: performance.now() - started, complete: true };
  const pgid = target.pgid;
  const deadline = started + target.budgetMs;
  const remaining = () => Math.max(1, deadline - performance.now());
  const seen = new Map<number, Proc>();
  // Where ps fails, /proc may still be readable (procRoot null only says the engine was not to rely on it).
  const readMembers = async (): Promise<Proc[] | undefined> =>
    (await psGroupMembers(pgid, Math.min(1000, remaining()))) ?? (await procGroupMembers(pgid, Math.min(1000, remaining())));
  const alive = async (): Promise<boolean> => {
    const members = await readMembers();
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
  const current = new Set(((await readMembers()) ?? []).map((m) => m.pid));
  const killed: Proc[] = [];
  const survivors: Proc[] = [];
  for (const proc of seen.values()) (current.has(proc.pid) ? survivors : killed).push(proc);
  if (seen.size === 0 && live) {
    survivors.push({ pid: pgid, ppid: 0, pgid: pgid, command: `(process group ${pgid}: its members could be read neither from ps nor from /proc)` });
  }
  const elapsedMs = performance.now() - started;
  return { killed, survivors, elapsedMs, complete: survivors.length === 0 && elapsedMs <= target.budgetMs };
}
