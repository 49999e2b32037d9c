// The process table as the sampler last read it: what it remembers about each
// process between ticks, the stat descriptors it keeps open, and the scan of
// one tick (/proc, or `ps` where there is none) with its environ and cmdline
// reads. ProcessSampler (sampler.ts) builds on it.
//
// What a tick reads, at 4 Hz over a tree of 500 (bench/sampler.ts):
// - each process of a tree: its stat, through a descriptor kept open while
//   it is in the tree (no open and close each tick; bound to that process, so
//   a later process given its pid is never taken for it). In a tree of more
//   than 64 processes, one that slept through its last two reads with nothing
//   changed (state S, same CPU time, memory, parent, group and name) is read
//   once a second (sleepingReadMs) instead of every tick: a large tree is
//   mostly sleepers, and each costs as much to read as a busy process. Its
//   last row stands until then, so its end (as a zombie) or a wake-up shows
//   up to that late. A busy or changing process is read every tick;
// - every other process: its stat once, when it is new. New pids are the ones
//   the kernel handed out since the last tick: after the last tick's
//   /proc/sys/kernel/ns_last_pid, up to the current one. Up to 128 of them
//   are read by number (a thread, which answers there too, is told apart by
//   stat's exit signal) and /proc is not listed; more, and /proc is listed,
//   where a pid outside that range that was outside every tree still names
//   the same process, so it is not read again. Every process is read when a
//   run is tracked, every 10 s, and on each tick where ns_last_pid cannot be
//   read (a crafted proc root);
// - a command line once per process (pid + start time + name, so an exec is
//   seen); an environment once per process that is outside every tree and
//   started after the run did: never for the tree's own members, nor for
//   anything older than the run.

import { closeSync, openSync, readFileSync, readSync } from 'node:fs';

import { commandLine, listPids, parseStatUsage, readLastPid, readStatUsage, TIMED_OUT, type ProcUsage } from '../procfs';
import { runPs, type ProcessRow } from '../ps-table';
import type { Batch, Known, Scan, Shape, Tracked } from './state';

export interface SamplerStats {
  /** Ticks that scanned the process table. */
  scans: number;
  /** Ticks whose scan failed (no /proc, no ps): they reported nothing. */
  failedScans: number;
  /** Ticks that read every process. */
  fullScans: number;
  environReads: number;
  cmdlineReads: number;
  /** stat files read on the last tick (through a kept descriptor or by path). */
  lastStatReads: number;
  /** Sleeping tree members whose last row stood on the last tick instead of being read. */
  lastCarried: number;
  /** Whether the last tick listed /proc (a full scan, or more new pids than it reads one by one). */
  lastListed: boolean;
  /** Whether the last tick worked out the trees' shape again (a process joined, left or moved). */
  lastRelinked: boolean;
  /** Wall time of the last tick, from the scan to the snapshots, and of its scan alone. */
  lastTickMs: number;
  lastScanMs: number;
}

/** A read that timed out (a process stuck in the kernel) is tried again after this, not every tick. */
const RETRY_STUCK_MS = 10_000;
/** Even when ns_last_pid says nothing changed, every process is read this often (a write to ns_last_pid, a pid space that wrapped). */
const FULL_SCAN_MS = 10_000;
/**
 * Up to this many pids handed out since the last tick are read one by one (an
 * absent one costs a failed open); more, and /proc is listed: listing costs
 * about a millisecond per 500 processes, a read by number a few microseconds.
 */
const PROBE_AT_MOST = 128;
/** Below this many tree members every one is read every tick: it costs little, and every change shows at once. */
const LARGE_TREE = 64;
/** Reads in a row that must find a process asleep and unchanged before it is read less often. */
const QUIET_READS = 2;
const SCOPE_ENTRY = Buffer.from('WARDEN_SCOPE=');
const NO_FD = -1;

/** The scan's half of ProcessSampler: every process it knows, and how a tick reads them. */
export abstract class ProcessTable {
  readonly stats: SamplerStats = {
    scans: 0,
    failedScans: 0,
    fullScans: 0,
    environReads: 0,
    cmdlineReads: 0,
    lastStatReads: 0,
    lastCarried: 0,
    lastListed: false,
    lastRelinked: false,
    lastTickMs: 0,
    lastScanMs: 0,
  };
  protected readonly pageSizeBytes: number;
  protected readonly clockTicksPerSecond: number;
  /** A sleeping member of a large tree is read on one tick in this many. */
  private readonly sleepingEveryTicks: number;
  private readonly maxKeptFds: number;
  protected readonly known = new Map<number, Known>();
  /** The known processes that are in some tree. */
  protected readonly members = new Map<number, Known>();
  /** Pids whose environment holds some WARDEN_SCOPE: the only ones a marker can find. */
  protected readonly marked = new Set<number>();
  /** Pids read and found outside every tree, not read again unless handed out anew. */
  protected readonly outsiders = new Set<number>();
  /** Pids whose environment read timed out, read again when their retry is due. */
  private readonly unsettled = new Set<number>();
  protected shape: Shape | undefined;
  protected reshape = true;
  /** ns_last_pid at the last tick's scan. */
  private lastPid: number | undefined;
  protected fullScanDue = true;
  private nextFullScanAtMs = 0;
  protected commandRetryAtMs = Infinity;
  private keptFds = 0;
  protected tickCount = 0;

  constructor(settings: { pageSizeBytes: number; clockTicksPerSecond: number; sleepingEveryTicks: number }) {
    this.pageSizeBytes = settings.pageSizeBytes;
    this.clockTicksPerSecond = settings.clockTicksPerSecond;
    this.sleepingEveryTicks = settings.sleepingEveryTicks;
    this.maxKeptFds = keptFdBudget();
  }

  /**
   * The processes that can matter this tick, zombies left out (they hold no
   * memory and run nothing): every tree member, every process new since the
   * last tick, and, on a full scan, every process. undefined when /proc
   * cannot be listed.
   */
  protected scanProc(procRoot: string, atMs: number): Scan | undefined {
    const last = readLastPid(procRoot);
    const full = this.fullScanDue || last === undefined || this.lastPid === undefined || atMs >= this.nextFullScanAtMs;
    const table = new Map<number, ProcessRow>();
    const fresh: ProcessRow[] = [];
    let reads = this.readMembers(procRoot, table, this.tickCount);

    // Few new pids (the usual tick): each is read by number, which costs less than listing /proc.
    const handedOut = full || last === undefined || this.lastPid === undefined || last < this.lastPid ? -1 : last - this.lastPid;
    this.stats.lastListed = handedOut < 0 || handedOut > PROBE_AT_MOST;
    if (!this.stats.lastListed) {
      for (let pid = this.lastPid! + 1; pid <= last!; pid++) {
        if (table.has(pid)) continue;
        reads++;
        this.readNew(procRoot, pid, table, fresh);
      }
    } else {
      let pids: number[];
      try {
        pids = listPids(procRoot);
      } catch {
        return undefined;
      }
      if (full) this.outsiders.clear();
      for (const pid of pids) {
        if (table.has(pid) || (!full && this.outsiders.has(pid) && !handedOutBetween(pid, this.lastPid!, last!))) continue;
        reads++;
        this.readNew(procRoot, pid, table, fresh);
      }
      if (full) {
        for (const pid of this.known.keys()) if (!table.has(pid)) this.forget(pid);
      }
    }
    // A process whose environment read timed out is read again when its retry is due.
    for (const pid of this.unsettled) {
      if (table.has(pid) || !(this.known.get(pid)!.environRetryAtMs <= atMs)) continue;
      reads++;
      this.readNew(procRoot, pid, table, fresh);
    }
    this.lastPid = last;
    if (full) {
      this.fullScanDue = false;
      this.reshape = true;
      this.nextFullScanAtMs = atMs + FULL_SCAN_MS;
      this.stats.fullScans++;
    }
    this.stats.lastStatReads = reads;
    return { table, fresh };
  }

  /** Reads each tree member (a sleeper in a large tree on its turn only); a member that ended is forgotten. */
  private readMembers(procRoot: string, table: Map<number, ProcessRow>, tick: number): number {
    let reads = 0;
    let carried = 0;
    const spread = this.sleepingEveryTicks > 1 && this.members.size > LARGE_TREE;
    for (const [pid, known] of this.members) {
      // Staggered by pid, so each tick reads its share of the sleepers.
      if (spread && known.row !== undefined && known.quietReads >= QUIET_READS && (tick + pid) % this.sleepingEveryTicks !== 0) {
        table.set(pid, known.row);
        carried++;
        continue;
      }
      reads++;
      // Past the descriptor budget it is read by path, where the pid may name another process now.
      const row = known.fd !== NO_FD ? readStatFd(known.fd) : readStatUsage(procRoot, pid);
      if (row === undefined || row.state === 'Z' || row.state === 'X' || row.startTicks !== known.startTicks) {
        this.forget(pid);
        this.reshape = true;
        continue;
      }
      if (row.comm !== known.comm) {
        this.ranExec(pid, known, row);
        this.reshape = true; // its command line is read again
      }
      if (known.row !== undefined && known.row.ppid !== row.ppid) this.reshape = true; // reparented
      known.quietReads = isQuiet(known.row, row) ? known.quietReads + 1 : 0;
      known.row = row;
      table.set(pid, row);
    }
    this.stats.lastCarried = carried;
    return reads;
  }

  /** Reads a process that was in no tree; a pid now naming another process, or one that ran exec, is remembered afresh. */
  private readNew(procRoot: string, pid: number, table: Map<number, ProcessRow>, fresh: ProcessRow[]): void {
    // undefined: it exited since the listing, or it is another user's and cannot be read.
    const row = readStatUsage(procRoot, pid);
    // A thread (exit signal -1) answers at /proc/TID too, but is no process of its own.
    if (row === undefined || row.state === 'Z' || row.state === 'X' || row.pid !== pid || row.exitSignal === -1) return;
    const known = this.known.get(pid);
    if (known !== undefined) {
      if (known.startTicks !== row.startTicks) this.forget(pid);
      else if (known.comm !== row.comm) this.ranExec(pid, known, row);
    }
    table.set(pid, row);
    fresh.push(row);
  }

  /** One `ps` listing, every process: each tick is a full scan. */
  protected async scanPs(): Promise<Scan | undefined> {
    const table = await runPs({ pageSizeBytes: this.pageSizeBytes, clockTicksPerSecond: this.clockTicksPerSecond });
    if (table === undefined) return undefined;
    for (const [pid, known] of this.known) {
      const row = table.get(pid);
      if (row === undefined) this.forget(pid);
      else if (row.comm !== known.comm) this.ranExec(pid, known, row);
    }
    this.reshape = true;
    this.stats.fullScans++;
    return { table, fresh: [] };
  }

  /** It ran exec: another command line, maybe another environment. */
  private ranExec(pid: number, known: Known, row: ProcessRow): void {
    known.comm = row.comm;
    known.command = known.scopes = undefined;
    known.commandRetryAtMs = known.environRetryAtMs = NaN;
    this.marked.delete(pid);
    this.unsettled.delete(pid);
  }

  /** Drops what was remembered about a process: it is gone, or its pid names another one now. */
  private forget(pid: number): void {
    const known = this.known.get(pid);
    if (known !== undefined && known.fd !== NO_FD) this.closeFd(known);
    this.known.delete(pid);
    this.members.delete(pid);
    this.marked.delete(pid);
    this.unsettled.delete(pid);
  }

  protected forgetAll(): void {
    for (const pid of [...this.known.keys()]) this.forget(pid);
    this.outsiders.clear();
    this.shape = undefined;
    this.reshape = true;
    this.lastPid = undefined;
    this.fullScanDue = true;
    this.commandRetryAtMs = Infinity;
  }

  private closeFd(known: Known): void {
    try {
      closeSync(known.fd);
    } catch {
      // already closed
    }
    known.fd = NO_FD;
    this.keptFds--;
  }

  /** Keeps a tree member's stat open for the next ticks, unless that would take too many descriptors. */
  private keepFd(procRoot: string, row: ProcessRow, known: Known): void {
    if (known.fd !== NO_FD || this.keptFds >= this.maxKeptFds) return;
    let fd: number;
    try {
      fd = openSync(`${procRoot}/${row.pid}/stat`, 'r');
    } catch {
      return;
    }
    // The pid may have been handed to another process since the row was read.
    if (readStatFd(fd)?.startTicks !== row.startTicks) {
      closeSync(fd);
      return;
    }
    known.fd = fd;
    this.keptFds++;
  }

  /** Tree members keep their stat open; every other process read is an outsider until its pid is handed out again. */
  protected keepMembers(procRoot: string, table: Map<number, ProcessRow>, inAnyTree: Set<number>): void {
    for (const row of table.values()) {
      const known = this.known.get(row.pid);
      if (inAnyTree.has(row.pid)) {
        const member = known ?? this.remember(row);
        if (!member.member) {
          member.member = true;
          member.row = row;
          this.members.set(row.pid, member);
          this.outsiders.delete(row.pid);
        }
        if (member.fd === NO_FD) this.keepFd(procRoot, row, member);
      } else {
        if (known !== undefined && known.member) {
          known.member = false; // it left the tree
          this.members.delete(row.pid);
          if (known.fd !== NO_FD) this.closeFd(known);
        }
        this.outsiders.add(row.pid);
      }
    }
  }

  /**
   * The environments to read: of each process given outside every tree that
   * started after some run did and was not read before. Only these may carry
   * a run's marker and not be found by parent links.
   */
  protected environsDue(procRoot: string, fresh: ProcessRow[], runs: Tracked[], inSomeDescent: Set<number> | undefined, atMs: number): Batch {
    const asked: Batch = { pids: [], knowns: [], paths: [] };
    let notBefore = Infinity;
    for (const run of runs) {
      if (run.scope !== null) notBefore = Math.min(notBefore, run.notBeforeTicks ?? -Infinity);
    }
    if (notBefore === Infinity) return asked;
    for (const row of fresh) {
      if (row.startTicks < notBefore || inSomeDescent?.has(row.pid) === true || row.pid === process.pid) continue;
      const known = this.known.get(row.pid) ?? this.remember(row);
      if (known.scopes !== undefined || known.environRetryAtMs > atMs) continue; // NaN > atMs: not waiting
      asked.pids.push(row.pid);
      asked.knowns.push(known);
      asked.paths.push(`${procRoot}/${row.pid}/environ`);
    }
    this.stats.environReads += asked.paths.length;
    return asked;
  }

  /** Records what each environment holds; true when a process with some marker was found. */
  protected applyEnvirons(asked: Batch, environs: (Buffer | undefined | typeof TIMED_OUT)[], atMs: number): boolean {
    let found = false;
    for (let i = 0; i < environs.length; i++) {
      const environ = environs[i];
      const pid = asked.pids[i]!;
      const known = asked.knowns[i]!;
      if (this.known.get(pid) !== known) continue; // forgotten while it was read
      if (environ === TIMED_OUT) {
        known.environRetryAtMs = atMs + RETRY_STUCK_MS;
        this.unsettled.add(pid);
        continue;
      }
      this.unsettled.delete(pid);
      // Unreadable (another user's, or gone): it cannot be shown as in scope.
      known.scopes = environ === undefined ? [] : scopesIn(environ);
      if (known.scopes.length > 0) {
        this.marked.add(pid);
        found = true;
      }
    }
    return found;
  }

  /** The command lines to read: of tree members not read before (or whose read timed out a while ago). */
  protected commandsDue(procRoot: string, table: Map<number, ProcessRow>, inAnyTree: Set<number>, atMs: number): Batch {
    const asked: Batch = { pids: [], knowns: [], paths: [] };
    this.commandRetryAtMs = Infinity;
    for (const pid of inAnyTree) {
      const known = this.known.get(pid) ?? this.remember(table.get(pid)!);
      // A read that timed out left `[comm]`; NaN <= atMs: not waiting.
      if (known.command !== undefined && !(known.commandRetryAtMs <= atMs)) {
        if (known.commandRetryAtMs < this.commandRetryAtMs) this.commandRetryAtMs = known.commandRetryAtMs;
        continue;
      }
      asked.pids.push(pid);
      asked.knowns.push(known);
      asked.paths.push(`${procRoot}/${pid}/cmdline`);
    }
    this.stats.cmdlineReads += asked.paths.length;
    return asked;
  }

  protected applyCommands(asked: Batch, cmdlines: (Buffer | undefined | typeof TIMED_OUT)[], atMs: number): void {
    for (let i = 0; i < cmdlines.length; i++) {
      const cmdline = cmdlines[i];
      const known = asked.knowns[i]!;
      known.command = commandLine(cmdline instanceof Buffer ? cmdline : undefined, known.comm);
      known.commandRetryAtMs = cmdline === TIMED_OUT ? atMs + RETRY_STUCK_MS : NaN;
      if (known.commandRetryAtMs < this.commandRetryAtMs) this.commandRetryAtMs = known.commandRetryAtMs;
    }
  }

  protected remember(row: ProcessRow): Known {
    let known = this.known.get(row.pid);
    if (known === undefined) {
      known = {
        startTicks: row.startTicks,
        comm: row.comm,
        member: false,
        row: undefined,
        quietReads: 0,
        fd: NO_FD,
        command: undefined,
        commandRetryAtMs: NaN,
        scopes: undefined,
        environRetryAtMs: NaN,
        cpuRow: undefined,
        cpuAtMs: NaN,
        cpuTick: 0,
        cpuPercentNow: -0, // a double from the start: the figures are doubles
        node: undefined,
        nodeRun: undefined,
      };
      this.known.set(row.pid, known);
    }
    return known;
  }
}

/** Asleep, and nothing the tree shows changed since the last read. */
function isQuiet(before: ProcessRow | undefined, now: ProcessRow): boolean {
  return before !== undefined && now.state === 'S' && before.state === 'S' && now.cpuTicks === before.cpuTicks
    && now.rssPages === before.rssPages && now.ppid === before.ppid && now.pgid === before.pgid && now.comm === before.comm;
}

/** True when `pid` was handed out after `before` and up to `last`, ns_last_pid wrapping at pid_max. */
function handedOutBetween(pid: number, before: number, last: number): boolean {
  if (before === last) return false;
  return before < last ? pid > before && pid <= last : pid > before || pid <= last;
}

const fdBuffer = Buffer.allocUnsafe(4096);

/** Reads a kept stat descriptor again from its start; undefined once the process is gone (ESRCH). */
function readStatFd(fd: number): ProcUsage | undefined {
  try {
    const n = readSync(fd, fdBuffer, 0, fdBuffer.length, 0);
    return parseStatUsage(fdBuffer, n);
  } catch {
    return undefined;
  }
}

/**
 * How many stat descriptors to keep open: a quarter of this process's soft
 * limit on open files, at most 4096, so the sampler never starves the runs
 * it watches of pipes. Past it, stat is opened and closed each tick.
 */
function keptFdBudget(): number {
  try {
    const line = readFileSync('/proc/self/limits', 'latin1').split('\n').find((l) => l.startsWith('Max open files'));
    const soft = Number(line?.slice('Max open files'.length).trim().split(/\s+/)[0]);
    return Number.isFinite(soft) ? Math.min(4096, Math.floor(soft / 4)) : 4096; // 'unlimited'
  } catch {
    return 256;
  }
}

/**
 * Every WARDEN_SCOPE value in an environment (normally one). Cached per
 * process, the values answer for any run tracked later, where a yes/no for
 * one marker would have to be read again. `scopesIn(env).includes(s)` is
 * `environHas(env, 'WARDEN_SCOPE=' + s)`.
 */
export function scopesIn(environ: Buffer): string[] {
  const scopes: string[] = [];
  for (let at = environ.indexOf(SCOPE_ENTRY); at >= 0; at = environ.indexOf(SCOPE_ENTRY, at + 1)) {
    if (at > 0 && environ[at - 1] !== 0) continue; // inside another entry
    const end = environ.indexOf(0, at);
    scopes.push(environ.toString('utf8', at + SCOPE_ENTRY.length, end < 0 ? environ.length : end));
  }
  return scopes;
}
