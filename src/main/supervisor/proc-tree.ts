// Samples the process table while runs are live and reports each run's tree:
// its main process and descendants, plus the processes carrying its
// WARDEN_SCOPE marker that left the tree. As VS Code's process explorer: one
// scan per tick into one map from pid to row, then parent links. On Linux the
// scan reads /proc, never spawning `ps`; without /proc it reads one `ps` per
// tick (ps-table.ts), which cannot find processes by their marker.
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
// While no process joins, leaves or moves in a tree, the trees' shape from the
// last tick is used again, and a node whose subtree did not change is the
// same object as in the last snapshot.

import { closeSync, existsSync, openSync, readFileSync, readSync } from 'node:fs';
import { endianness } from 'node:os';

import type { ProcNode, ProcTreeSnapshot } from '../../shared/proc-tree';
import type { PeakFigures } from '../../shared/result';
import { commandLine, listPids, parseStatUsage, readAllBounded, readLastPid, readStatUsage, TIMED_OUT, type ProcUsage } from './procfs';
import { runPs, type ProcessRow } from './ps-table';

export type { ProcessRow } from './ps-table';

export interface ProcessSamplerOptions {
  /** Samples per second while a run is tracked (default 2). */
  rateHz?: number;
  /**
   * Where /proc is. null reads `ps` instead, as where there is no /proc
   * (macOS); tests pass null to force that path on Linux. Default: /proc when
   * it exists, else null.
   */
  procRoot?: string | null;
  /** Bound on one batch of cmdline or environ reads, so a process stuck in the kernel costs only itself (default 200 ms). */
  readTimeoutMs?: number;
  /** Default: the kernel's, from /proc/self/auxv, else 4096. */
  pageSizeBytes?: number;
  /** The unit of stat's CPU times. Default: the kernel's, from /proc/self/auxv, else 100. */
  clockTicksPerSecond?: number;
  /**
   * In a tree of more than 64 processes, a process asleep and unchanged over
   * its last two reads is read at least this often rather than every tick
   * (default 1000 ms). 0 reads every process on every tick.
   */
  sleepingReadMs?: number;
}

export interface TrackTarget {
  /** The run's main process: its descendants are the tree. */
  rootPid: number;
  /** The full WARDEN_SCOPE value, `hostId.runId`; null when the run has no marker to look for. */
  scope: string | null;
  /**
   * Processes started before this (clock ticks after boot) cannot carry the
   * run's marker, so their environments are never read. Default: the main
   * process's start, read when tracking begins.
   */
  notBeforeTicks?: number;
}

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

export type SampleListener = (snapshots: ProcTreeSnapshot[]) => void;

/**
 * What is remembered about one process between ticks (same pid and start).
 * Every field is set when it is made, with a value of its lasting type (-1
 * for no descriptor, NaN for no time), so all share one shape and V8 never
 * has to widen a field and throw away the code compiled for it: the sampler
 * reads these hundreds of times a tick.
 */
interface Known {
  startTicks: number;
  comm: string;
  /** In some tree at the last tick: read every tick (sleepers less often). */
  member: boolean;
  /** A member's last row, standing on ticks it is not read. */
  row: ProcessRow | undefined;
  /** Reads in a row that found it asleep and unchanged. */
  quietReads: number;
  /** Its stat file, kept open while it is in a tree; -1 when none is. */
  fd: number;
  command: string | undefined;
  /** After a read that timed out: when to try again (NaN: not waiting). */
  commandRetryAtMs: number;
  /** Every WARDEN_SCOPE value in its environment; undefined until read. */
  scopes: string[] | undefined;
  environRetryAtMs: number;
  /** The row its CPU figure was last measured from, when, and on which tick. */
  cpuRow: ProcessRow | undefined;
  cpuAtMs: number;
  cpuTick: number;
  cpuPercentNow: number;
  /** Its node in the last snapshot of that run, given again while nothing in its subtree changes. */
  node: ProcNode | undefined;
  nodeRun: Tracked | undefined;
}

/** The processes of a scan: every row, and those read this tick that were in no tree. */
interface Scan {
  table: Map<number, ProcessRow>;
  fresh: ProcessRow[];
}

/** The trees' shape, kept while no process joins, leaves or moves. */
interface Shape {
  children: Map<number, number[]>;
  /** Each run's main process and its descendants by parent links. */
  descent: Map<Tracked, Set<number>>;
  inSomeDescent: Set<number>;
  /** Each run's whole tree: its descendants, and what its marker finds, with theirs. */
  members: Map<Tracked, Set<number>>;
  inAnyTree: Set<number>;
}

/** One run's nodes in build order, from its shape. */
interface Layout {
  rootPids: number[];
  kids: Map<number, number[]>;
  /** Parents before children. */
  order: number[];
}

/** Files to read for some processes, in one batch. */
interface Batch {
  pids: number[];
  knowns: Known[];
  paths: string[];
}

interface Tracked {
  runId: string;
  rootPid: number;
  scope: string | null;
  notBeforeTicks: number | undefined;
  /** Tells the main process from a later process given its pid. */
  rootStartTicks: number | undefined;
  rootPgid: number | undefined;
  layout: Layout | undefined;
  peak: PeakFigures | undefined;
  latest: ProcTreeSnapshot | undefined;
}

const DEFAULT_RATE_HZ = 2;
const DEFAULT_READ_TIMEOUT_MS = 200;
/** A read that timed out (a process stuck in the kernel) is tried again after this, not every tick. */
const RETRY_STUCK_MS = 10_000;
/** The shortest window a CPU figure is measured over (see cpuPercent). */
const MIN_CPU_WINDOW_MS = 100;
/** Even when ns_last_pid says nothing changed, every process is read this often (a write to ns_last_pid, a pid space that wrapped). */
const FULL_SCAN_MS = 10_000;
const DEFAULT_SLEEPING_READ_MS = 1000;
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
const NO_PIDS: number[] = [];

export class ProcessSampler {
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
  private readonly procRoot: string | null;
  private readonly intervalMs: number;
  private readonly readTimeoutMs: number;
  private readonly pageSizeBytes: number;
  private readonly clockTicksPerSecond: number;
  /** A sleeping member of a large tree is read on one tick in this many. */
  private readonly sleepingEveryTicks: number;
  private readonly maxKeptFds: number;
  private readonly runs = new Map<string, Tracked>();
  private readonly known = new Map<number, Known>();
  /** The known processes that are in some tree. */
  private readonly members = new Map<number, Known>();
  /** Pids whose environment holds some WARDEN_SCOPE: the only ones a marker can find. */
  private readonly marked = new Set<number>();
  /** Pids read and found outside every tree, not read again unless handed out anew. */
  private readonly outsiders = new Set<number>();
  /** Pids whose environment read timed out, read again when their retry is due. */
  private readonly unsettled = new Set<number>();
  private shape: Shape | undefined;
  private reshape = true;
  /** ns_last_pid at the last tick's scan. */
  private lastPid: number | undefined;
  private fullScanDue = true;
  private nextFullScanAtMs = 0;
  private commandRetryAtMs = Infinity;
  private keptFds = 0;
  private tickCount = 0;
  private readonly listeners = new Set<SampleListener>();
  private timer: NodeJS.Timeout | undefined;
  /** Ticks run one at a time; a timer tick due while one runs is skipped. */
  private queue: Promise<unknown> = Promise.resolve();
  private busy = false;

  constructor(options: ProcessSamplerOptions = {}) {
    this.procRoot = options.procRoot === undefined ? (existsSync('/proc/self/stat') ? '/proc' : null) : options.procRoot;
    const rateHz = options.rateHz ?? DEFAULT_RATE_HZ;
    if (!(rateHz > 0 && rateHz <= 1000)) throw new RangeError(`rateHz must be above 0 and at most 1000, not ${rateHz}`);
    this.intervalMs = 1000 / rateHz;
    this.readTimeoutMs = options.readTimeoutMs ?? DEFAULT_READ_TIMEOUT_MS;
    const aux = options.pageSizeBytes === undefined || options.clockTicksPerSecond === undefined ? kernelConstants() : {};
    this.pageSizeBytes = options.pageSizeBytes ?? aux.pageSizeBytes ?? 4096;
    this.clockTicksPerSecond = options.clockTicksPerSecond ?? aux.clockTicksPerSecond ?? 100;
    this.sleepingEveryTicks = Math.max(1, Math.floor((options.sleepingReadMs ?? DEFAULT_SLEEPING_READ_MS) / this.intervalMs));
    this.maxKeptFds = keptFdBudget();
  }

  /** Starts sampling a run's tree; sampling starts with the first tracked run. Tracking an id again replaces it. */
  track(runId: string, target: TrackTarget): void {
    const root = this.procRoot !== null ? readStatUsage(this.procRoot, target.rootPid) : undefined;
    const alive = root !== undefined && root.state !== 'Z' && root.state !== 'X';
    this.runs.set(runId, {
      runId,
      rootPid: target.rootPid,
      scope: target.scope,
      notBeforeTicks: target.notBeforeTicks ?? (alive ? root.startTicks : undefined),
      rootStartTicks: alive ? root.startTicks : undefined,
      rootPgid: alive ? root.pgid : undefined,
      layout: undefined,
      peak: undefined,
      latest: undefined,
    });
    // Its tree may hold processes this sampler took for outsiders, or older than any run before.
    this.fullScanDue = true;
    this.reshape = true;
    // The first sample at once: a short run may be over before a full interval.
    this.schedule(0);
  }

  /**
   * Stops sampling a run; sampling stops with the last one. Returns the run's
   * peak figures, undefined when no sample was taken while it was tracked.
   */
  untrack(runId: string): PeakFigures | undefined {
    const run = this.runs.get(runId);
    this.runs.delete(runId);
    this.reshape = true;
    for (const known of this.known.values()) {
      if (known.nodeRun === run) known.node = known.nodeRun = undefined; // its last snapshot is not kept alive from here
    }
    if (this.runs.size === 0) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.forgetAll();
    }
    return run?.peak && { ...run.peak };
  }

  /** The run's last snapshot, undefined before its first sample. */
  latest(runId: string): ProcTreeSnapshot | undefined {
    return this.runs.get(runId)?.latest;
  }

  /** Called after every tick with the snapshot of each run tracked then. Returns the unsubscribe. */
  onSample(listener: SampleListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** True while some run is tracked, so the table is being sampled. */
  get sampling(): boolean {
    return this.runs.size > 0;
  }

  /** Samples now (after a tick under way) and returns every tracked run's snapshot. */
  sample(): Promise<ProcTreeSnapshot[]> {
    const next = this.queue.then(() => this.tick());
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** Untracks every run and stops; every descriptor it kept is closed. */
  close(): void {
    for (const runId of [...this.runs.keys()]) this.untrack(runId);
    this.forgetAll();
    this.listeners.clear();
  }

  private schedule(delayMs: number): void {
    if (this.timer !== undefined || this.runs.size === 0) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.busy) return this.schedule(this.intervalMs);
      const started = performance.now();
      void this.sample().finally(() => this.schedule(Math.max(0, this.intervalMs - (performance.now() - started))));
    }, delayMs);
    // Sampling never keeps the process alive by itself: the runs do.
    this.timer.unref();
  }

  private async tick(): Promise<ProcTreeSnapshot[]> {
    if (this.runs.size === 0) return [];
    this.busy = true;
    this.tickCount++;
    const started = performance.now();
    try {
      const scan = this.procRoot !== null ? this.scanProc(this.procRoot, started) : await this.scanPs();
      if (scan === undefined) {
        this.stats.failedScans++;
        return [];
      }
      this.stats.scans++;
      this.stats.lastScanMs = performance.now() - started;
      const snapshots = await this.snapshots(scan, performance.now());
      this.stats.lastTickMs = performance.now() - started;
      // Every run it sampled was untracked while it read files: nothing to tell.
      if (snapshots.length === 0) return snapshots;
      for (const listener of this.listeners) {
        try {
          listener(snapshots);
        } catch {
          // A listener's failure is its own; the next tick comes anyway.
        }
      }
      return snapshots;
    } finally {
      this.busy = false;
    }
  }

  /**
   * The processes that can matter this tick, zombies left out (they hold no
   * memory and run nothing): every tree member, every process new since the
   * last tick, and, on a full scan, every process. undefined when /proc
   * cannot be listed.
   */
  private scanProc(procRoot: string, atMs: number): Scan | undefined {
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
  private async scanPs(): Promise<Scan | undefined> {
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

  private forgetAll(): void {
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

  /**
   * The tick after the scan. Kept to the awaits alone: the work is in small
   * synchronous steps, which V8 compiles quickly and keeps compiled (a large
   * async function costs tens of milliseconds to compile, again after each
   * deoptimisation).
   */
  private async snapshots(scan: Scan, atMs: number): Promise<ProcTreeSnapshot[]> {
    const { table, fresh } = scan;
    const runs = [...this.runs.values()];
    // A new process under a tree changes its shape; one anywhere else does not.
    if (!this.reshape && this.shape !== undefined && joinsATree(fresh, this.shape.inAnyTree)) this.reshape = true;
    let shape = this.reshape ? undefined : this.shape;
    let links = shape === undefined ? linkRows(table, runs) : undefined;

    // New processes, and members that left every tree by parent links (reparented to init): the marker may find them.
    const unlinked = links === undefined ? fresh : [...fresh, ...this.unlinkedMembers(table, links.inSomeDescent)];
    if (this.procRoot !== null && unlinked.length > 0) {
      const asked = this.environsDue(this.procRoot, unlinked, runs, links?.inSomeDescent, atMs);
      if (asked.paths.length > 0 && this.applyEnvirons(asked, await readAllBounded(asked.paths, this.readTimeoutMs), atMs)) {
        // A process its marker finds joins a tree.
        shape = undefined;
        links ??= linkRows(table, runs);
      }
    }
    const relinked = shape === undefined;
    if (shape === undefined) {
      shape = this.membersOf(runs, table, links!);
      this.shape = shape;
      for (const run of runs) run.layout = undefined;
    }
    this.reshape = false;
    this.stats.lastRelinked = relinked;

    if (this.procRoot !== null) {
      if (relinked || atMs >= this.commandRetryAtMs) {
        const asked = this.commandsDue(this.procRoot, table, shape.inAnyTree, atMs);
        if (asked.paths.length > 0) this.applyCommands(asked, await readAllBounded(asked.paths, this.readTimeoutMs), atMs);
      }
      // Untracked while it read: it must not open descriptors nobody will close.
      if (this.runs.size > 0) {
        if (relinked) this.keepMembers(this.procRoot, table, shape.inAnyTree);
        else for (const row of fresh) this.outsiders.add(row.pid); // none of them joined a tree
      }
    }
    return this.buildSnapshots(runs, table, shape, atMs);
  }

  /** The rows of last tick's members that are no run's descendants now. */
  private unlinkedMembers(table: Map<number, ProcessRow>, inSomeDescent: Set<number>): ProcessRow[] {
    const rows: ProcessRow[] = [];
    for (const pid of this.members.keys()) {
      const row = table.get(pid);
      if (row !== undefined && !inSomeDescent.has(pid)) rows.push(row);
    }
    return rows;
  }

  /** Each run's whole tree: its descendants, and the processes its marker finds, with theirs. */
  private membersOf(runs: Tracked[], table: Map<number, ProcessRow>, links: Links): Shape {
    const members = new Map<Tracked, Set<number>>();
    let inAnyTree = links.inSomeDescent;
    for (const run of runs) {
      const tree = links.descent.get(run)!;
      const found: number[] = [];
      if (run.scope !== null) {
        const notBefore = run.notBeforeTicks ?? -Infinity;
        for (const pid of this.marked) {
          const row = table.get(pid);
          if (row !== undefined && !tree.has(pid) && !(row.startTicks < notBefore) && this.known.get(pid)!.scopes!.includes(run.scope)) found.push(pid);
        }
      }
      if (found.length === 0) {
        members.set(run, tree);
        continue;
      }
      const all = closure([...tree, ...found], links.children);
      members.set(run, all);
      if (inAnyTree === links.inSomeDescent) inAnyTree = new Set(inAnyTree);
      for (const pid of all) inAnyTree.add(pid);
    }
    return { children: links.children, descent: links.descent, inSomeDescent: links.inSomeDescent, members, inAnyTree };
  }

  /** Tree members keep their stat open; every other process read is an outsider until its pid is handed out again. */
  private keepMembers(procRoot: string, table: Map<number, ProcessRow>, inAnyTree: Set<number>): void {
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
  private environsDue(procRoot: string, fresh: ProcessRow[], runs: Tracked[], inSomeDescent: Set<number> | undefined, atMs: number): Batch {
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
  private applyEnvirons(asked: Batch, environs: (Buffer | undefined | typeof TIMED_OUT)[], atMs: number): boolean {
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
  private commandsDue(procRoot: string, table: Map<number, ProcessRow>, inAnyTree: Set<number>, atMs: number): Batch {
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

  private applyCommands(asked: Batch, cmdlines: (Buffer | undefined | typeof TIMED_OUT)[], atMs: number): void {
    for (let i = 0; i < cmdlines.length; i++) {
      const cmdline = cmdlines[i];
      const known = asked.knowns[i]!;
      known.command = commandLine(cmdline instanceof Buffer ? cmdline : undefined, known.comm);
      known.commandRetryAtMs = cmdline === TIMED_OUT ? atMs + RETRY_STUCK_MS : NaN;
      if (known.commandRetryAtMs < this.commandRetryAtMs) this.commandRetryAtMs = known.commandRetryAtMs;
    }
  }

  private remember(row: ProcessRow): Known {
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

  private buildSnapshots(runs: Tracked[], table: Map<number, ProcessRow>, shape: Shape, atMs: number): ProcTreeSnapshot[] {
    const sampledAt = new Date().toISOString();
    // Read once a tick, and only when a process seen for the first time needs it (its CPU since it started).
    let uptime: number | undefined | null = null;
    const procRoot = this.procRoot;
    const uptimeSeconds = () => (uptime === null ? (uptime = procRoot === null ? undefined : readUptime(procRoot)) : uptime);
    const snapshots: ProcTreeSnapshot[] = [];
    for (const run of runs) {
      if (this.runs.get(run.runId) !== run) continue; // untracked or replaced while the tick read files
      run.layout ??= layoutOf(run, table, shape.members.get(run)!);
      const snapshot = this.buildSnapshot(run, table, run.layout, shape.descent.get(run)!, atMs, uptimeSeconds, sampledAt);
      run.latest = snapshot;
      snapshots.push(snapshot);
    }
    return snapshots;
  }

  /**
   * The run's nested tree. A node whose process and subtree did not change
   * since the last tick is the same object as in the last snapshot: a large,
   * mostly sleeping tree allocates little per tick, and a view can skip
   * every subtree whose node it has drawn already. Nodes are never mutated.
   */
  private buildSnapshot(
    run: Tracked,
    table: Map<number, ProcessRow>,
    layout: Layout,
    descent: Set<number>,
    atMs: number,
    uptimeSeconds: () => number | undefined,
    sampledAt: string,
  ): ProcTreeSnapshot {
    const nodes = new Map<number, ProcNode>();
    let rssBytes = 0;
    let cpuPercent = 0;
    // Children before their parents.
    for (let i = layout.order.length - 1; i >= 0; i--) {
      const pid = layout.order[i]!;
      const row = table.get(pid)!;
      const known = this.known.get(pid) ?? this.remember(row);
      const kidPids = layout.kids.get(pid) ?? NO_PIDS;
      const command = row.command ?? known.command ?? `[${row.comm}]`;
      const cpu = this.cpuPercent(row, known, atMs, uptimeSeconds);
      const rss = row.rssPages * this.pageSizeBytes;
      const escaped = !descent.has(pid) || (run.rootPgid !== undefined && row.pgid !== run.rootPgid);
      const last = known.nodeRun === run ? known.node : undefined;
      let node: ProcNode;
      if (last !== undefined && last.ppid === row.ppid && last.pgid === row.pgid && last.command === command && last.state === row.state
        && last.cpuPercent === cpu && last.rssBytes === rss && last.escaped === escaped && sameChildren(last.children, kidPids, nodes)) {
        node = last;
      } else {
        const children: ProcNode[] = [];
        for (const kid of kidPids) children.push(nodes.get(kid)!);
        node = { pid, ppid: row.ppid, pgid: row.pgid, command, state: row.state, cpuPercent: cpu, rssBytes: rss, escaped, children };
        known.node = node;
        known.nodeRun = run;
      }
      nodes.set(pid, node);
      rssBytes += rss;
      cpuPercent += cpu;
    }
    const roots: ProcNode[] = [];
    for (const pid of layout.rootPids) roots.push(nodes.get(pid)!);

    const processes = nodes.size;
    run.peak = run.peak === undefined
      ? { rssBytes, processes }
      : { rssBytes: Math.max(run.peak.rssBytes, rssBytes), processes: Math.max(run.peak.processes, processes) };
    return {
      runId: run.runId,
      rootPid: run.rootPid,
      sampledAt,
      roots,
      processes,
      rssBytes,
      cpuPercent,
      peak: { ...run.peak },
      source: this.procRoot !== null ? 'proc' : 'ps',
    };
  }

  /** Percent of one core since the previous tick; a process in two runs' trees is measured once per tick. */
  private cpuPercent(row: ProcessRow, known: Known, atMs: number, uptimeSeconds: () => number | undefined): number {
    // Measured already this tick, or a standing row with nothing new to measure.
    if (known.cpuTick === this.tickCount || row === known.cpuRow) return known.cpuPercentNow;
    known.cpuTick = this.tickCount;
    let percent = 0;
    if (known.cpuRow !== undefined) {
      // CPU times count in clock ticks (10 ms): over a shorter window the
      // figure is mostly rounding (a 5 ms window reads 0 or 200%), so a
      // sample soon after the last one (sample() between two timer ticks)
      // keeps the last figure and the last reference point.
      if (atMs - known.cpuAtMs < MIN_CPU_WINDOW_MS) return known.cpuPercentNow;
      percent = ((row.cpuTicks - known.cpuRow.cpuTicks) * 100_000) / this.clockTicksPerSecond / (atMs - known.cpuAtMs);
    } else if (Number.isFinite(row.startTicks)) {
      // First sight: its average since it started, once that is long enough to mean something.
      const lifetimeSeconds = (uptimeSeconds() ?? NaN) - row.startTicks / this.clockTicksPerSecond;
      if (lifetimeSeconds * 1000 >= MIN_CPU_WINDOW_MS) percent = (row.cpuTicks * 100) / this.clockTicksPerSecond / lifetimeSeconds;
    }
    known.cpuRow = row;
    known.cpuAtMs = atMs;
    // A counter never runs backwards for one process: a negative or missing figure is ps's rounding or format.
    known.cpuPercentNow = Number.isFinite(percent) ? Math.max(0, percent) : 0;
    return known.cpuPercentNow;
  }
}

/** The parent links of a scan, and each run's main process with its descendants. */
interface Links {
  children: Map<number, number[]>;
  descent: Map<Tracked, Set<number>>;
  inSomeDescent: Set<number>;
}

function linkRows(table: Map<number, ProcessRow>, runs: Tracked[]): Links {
  const children = new Map<number, number[]>();
  for (const row of table.values()) {
    const siblings = children.get(row.ppid);
    if (siblings === undefined) children.set(row.ppid, [row.pid]);
    else siblings.push(row.pid);
  }
  const descent = new Map<Tracked, Set<number>>();
  let inSomeDescent: Set<number> | undefined;
  for (const run of runs) {
    const root = table.get(run.rootPid);
    const alive = root !== undefined && (run.rootStartTicks === undefined || root.startTicks === run.rootStartTicks);
    if (alive) run.rootPgid ??= root.pgid;
    const tree = alive ? closure([run.rootPid], children) : new Set<number>();
    descent.set(run, tree);
    if (inSomeDescent === undefined) inSomeDescent = tree; // one run, the usual case: no copy
    else {
      if (inSomeDescent === descent.get(runs[0]!)) inSomeDescent = new Set(inSomeDescent);
      for (const pid of tree) inSomeDescent.add(pid);
    }
  }
  return { children, descent, inSomeDescent: inSomeDescent ?? new Set() };
}

/** True when a new process's parent is in a tree. */
function joinsATree(fresh: ProcessRow[], inAnyTree: Set<number>): boolean {
  for (const row of fresh) if (inAnyTree.has(row.ppid)) return true;
  return false;
}

/** The run's roots (its main process first, then the escaped by pid), each node's children by pid, and the build order. */
function layoutOf(run: Tracked, table: Map<number, ProcessRow>, members: Set<number>): Layout {
  const kids = new Map<number, number[]>();
  const rootPids: number[] = [];
  for (const pid of members) {
    const ppid = table.get(pid)!.ppid;
    if (ppid === pid || !members.has(ppid)) {
      rootPids.push(pid);
      continue;
    }
    const siblings = kids.get(ppid);
    if (siblings === undefined) kids.set(ppid, [pid]);
    else siblings.push(pid);
  }
  rootPids.sort(byNumber);
  const at = rootPids.indexOf(run.rootPid);
  if (at > 0) rootPids.unshift(...rootPids.splice(at, 1));
  for (const siblings of kids.values()) siblings.sort(byNumber);
  // Parents before children, without recursion, however deep the tree; a crafted cycle is never reached.
  const order: number[] = [];
  const stack = [...rootPids].reverse();
  while (stack.length > 0) {
    const pid = stack.pop()!;
    order.push(pid);
    const children = kids.get(pid);
    if (children !== undefined) for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return { rootPids, kids, order };
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

function byNumber(a: number, b: number): number {
  return a - b;
}

/** The very same child nodes, in the same order, as this tick's children. */
function sameChildren(last: ProcNode[], kidPids: number[], nodes: Map<number, ProcNode>): boolean {
  if (last.length !== kidPids.length) return false;
  for (let i = 0; i < last.length; i++) if (last[i] !== nodes.get(kidPids[i]!)) return false;
  return true;
}

/** The pids given and all their descendants by ppid links; safe against a cycle in a crafted table. */
function closure(starts: number[], children: Map<number, number[]>): Set<number> {
  const found = new Set<number>();
  const stack = [...starts];
  while (stack.length > 0) {
    const pid = stack.pop()!;
    if (found.has(pid)) continue;
    found.add(pid);
    const kids = children.get(pid);
    if (kids !== undefined) for (const kid of kids) stack.push(kid);
  }
  return found;
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

function readUptime(procRoot: string): number | undefined {
  try {
    const seconds = Number.parseFloat(readFileSync(`${procRoot}/uptime`, 'latin1'));
    return Number.isFinite(seconds) ? seconds : undefined;
  } catch {
    return undefined;
  }
}

const AT_PAGESZ = 6;
const AT_CLKTCK = 17;
const WORD_32_ARCHES = new Set(['arm', 'ia32', 'mips', 'mipsel', 'ppc']);

/**
 * The page size and clock tick rate from the auxiliary vector the kernel gave
 * this process: the values getconf prints, without spawning it.
 */
export function kernelConstants(auxvPath = '/proc/self/auxv'): { pageSizeBytes?: number; clockTicksPerSecond?: number } {
  let auxv: Buffer;
  try {
    auxv = readFileSync(auxvPath);
  } catch {
    return {};
  }
  const word = WORD_32_ARCHES.has(process.arch) ? 4 : 8;
  const little = endianness() === 'LE';
  const at = (offset: number): number => {
    if (word === 4) return little ? auxv.readUInt32LE(offset) : auxv.readUInt32BE(offset);
    return Number(little ? auxv.readBigUInt64LE(offset) : auxv.readBigUInt64BE(offset));
  };
  const found: { pageSizeBytes?: number; clockTicksPerSecond?: number } = {};
  for (let offset = 0; offset + 2 * word <= auxv.length; offset += 2 * word) {
    const type = at(offset);
    if (type === 0) break; // AT_NULL ends the vector
    if (type === AT_PAGESZ) found.pageSizeBytes = at(offset + word);
    if (type === AT_CLKTCK) found.clockTicksPerSecond = at(offset + word);
  }
  return found;
}
