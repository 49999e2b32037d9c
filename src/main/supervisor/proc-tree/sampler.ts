// Samples the process table while runs are live and reports each run's tree:
// its main process and descendants, plus the processes carrying its
// WARDEN_SCOPE marker that left the tree. As VS Code's process explorer: one
// scan per tick into one map from pid to row, then parent links. On Linux the
// scan reads /proc, never spawning `ps`; without /proc it reads one `ps` per
// tick (ps-table.ts), which cannot find processes by their marker.
//
// What a tick reads, and how little: scan.ts.
//
// While no process joins, leaves or moves in a tree, the trees' shape from the
// last tick is used again, and a node whose subtree did not change is the
// same object as in the last snapshot.

import { existsSync } from 'node:fs';

import type { ProcNode, ProcTreeSnapshot } from '../../../shared/proc-tree';
import type { PeakFigures } from '../../../shared/result';
import { readAllBounded, readStatUsage } from '../procfs';
import type { ProcessRow } from '../ps-table';
import { kernelConstants, readUptime } from './kernel';
import { closure, joinsATree, layoutOf, linkRows, type Links } from './layout';
import { ProcessTable } from './scan';
import type { Known, Layout, Scan, Shape, Tracked } from './state';

export type { ProcessRow } from '../ps-table';

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

export type SampleListener = (snapshots: ProcTreeSnapshot[]) => void;

const DEFAULT_RATE_HZ = 2;
const DEFAULT_READ_TIMEOUT_MS = 200;
/** The shortest window a CPU figure is measured over (see cpuPercent). */
const MIN_CPU_WINDOW_MS = 100;
const DEFAULT_SLEEPING_READ_MS = 1000;
const NO_PIDS: number[] = [];

export class ProcessSampler extends ProcessTable {
  private readonly procRoot: string | null;
  private readonly intervalMs: number;
  private readonly readTimeoutMs: number;
  private readonly runs = new Map<string, Tracked>();
  private readonly listeners = new Set<SampleListener>();
  private timer: NodeJS.Timeout | undefined;
  /** Ticks run one at a time; a timer tick due while one runs is skipped. */
  private queue: Promise<unknown> = Promise.resolve();
  private busy = false;

  constructor(options: ProcessSamplerOptions = {}) {
    const rateHz = options.rateHz ?? DEFAULT_RATE_HZ;
    if (!(rateHz > 0 && rateHz <= 1000)) throw new RangeError(`rateHz must be above 0 and at most 1000, not ${rateHz}`);
    const intervalMs = 1000 / rateHz;
    const aux = options.pageSizeBytes === undefined || options.clockTicksPerSecond === undefined ? kernelConstants() : {};
    super({
      pageSizeBytes: options.pageSizeBytes ?? aux.pageSizeBytes ?? 4096,
      clockTicksPerSecond: options.clockTicksPerSecond ?? aux.clockTicksPerSecond ?? 100,
      sleepingEveryTicks: Math.max(1, Math.floor((options.sleepingReadMs ?? DEFAULT_SLEEPING_READ_MS) / intervalMs)),
    });
    this.procRoot = options.procRoot === undefined ? (existsSync('/proc/self/stat') ? '/proc' : null) : options.procRoot;
    this.intervalMs = intervalMs;
    this.readTimeoutMs = options.readTimeoutMs ?? DEFAULT_READ_TIMEOUT_MS;
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

/** The very same child nodes, in the same order, as this tick's children. */
function sameChildren(last: ProcNode[], kidPids: number[], nodes: Map<number, ProcNode>): boolean {
  if (last.length !== kidPids.length) return false;
  for (let i = 0; i < last.length; i++) if (last[i] !== nodes.get(kidPids[i]!)) return false;
  return true;
}
