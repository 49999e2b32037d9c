// Which TCP ports each live run listens on: the listening sockets of the
// kernel's tables matched, by inode, to the descriptors of the run's
// processes (its cgroup's, else the sampler's tree with its marked escapees).
//
// It must stay cheap with 200 live runs, so a pass reads the two tables
// (one file each) and a process's descriptors only when that can tell
// something new: a socket's owner, once found, is remembered by inode for
// as long as the socket listens; and a process is read again only when a
// listening socket nobody owns has appeared since it was last read (or it
// is new). Sockets of processes outside every run (sshd, another user's
// server) stay unowned: each costs one read of each run process, once.

import type { ListeningPort } from '../../../shared/result';
import type { ListenEntry } from './proc-net';
import type { SocketTable } from './socket-table';

/** The tables are read at least this often while the counters stand still (a listen and a close between two looks cancel out in them). */
export const FULL_READ_MS = 5_000;

export interface FinderStats {
  /** Passes that read the tables. */
  passes: number;
  /** Looks that used the last tables, the kernel's counters not having moved. */
  skipped: number;
  /** Processes whose descriptors were read, in all. */
  processReads: number;
  /** Processes read on the last pass. */
  lastProcessReads: number;
}

interface Owner {
  runId: string;
  pid: number;
}

export class PortFinder {
  readonly stats: FinderStats = { passes: 0, skipped: 0, processReads: 0, lastProcessReads: 0 };
  /** A listening socket's run and process, by inode, once found. */
  private readonly owners = new Map<number, Owner>();
  /** When each listening socket was first seen (a generation: one per table that differed from the one before). */
  private readonly firstSeen = new Map<number, number>();
  /** The generation at which each process's descriptors were last read, by pid. */
  private readonly readAt = new Map<number, number>();
  private generation = 0;
  private lastTable: ListenEntry[] = [];
  private lastReadAtMs = -Infinity;
  private lastCounters: string | null = null;

  constructor(
    private readonly table: SocketTable,
    /** A table read this recently is used again (several runs asking in one turn). */
    private readonly tableMaxAgeMs = 20,
    /** Tables read at least this often even while the kernel's counters stand still. */
    private readonly fullReadMs = FULL_READ_MS,
  ) {}

  /**
   * The listening sockets now; null when they cannot be read. Read at most
   * once per tableMaxAgeMs; and, unless `fresh`, not again while the
   * kernel's socket counters have not moved since the last read (at most
   * fullReadMs): each read of the tables walks the kernel's socket hashes,
   * tens of milliseconds on a large machine, while the counters cost a
   * small file.
   */
  private listening(fresh: boolean): ListenEntry[] | null {
    const now = performance.now();
    if (now - this.lastReadAtMs < this.tableMaxAgeMs) return this.lastTable;
    const counters = this.table.counters?.() ?? null;
    if (!fresh && counters !== null && counters === this.lastCounters && now - this.lastReadAtMs < this.fullReadMs) {
      this.stats.skipped++;
      return this.lastTable;
    }
    const entries = this.table.listening();
    if (entries === null) return null;
    this.stats.passes++;
    this.lastReadAtMs = now;
    this.lastCounters = counters;
    let changed = entries.length !== this.lastTable.length;
    const live = new Set<number>();
    for (const entry of entries) {
      live.add(entry.inode);
      if (!this.firstSeen.has(entry.inode)) changed = true;
    }
    if (changed) {
      this.generation++;
      for (const entry of entries) if (!this.firstSeen.has(entry.inode)) this.firstSeen.set(entry.inode, this.generation);
    }
    for (const inode of this.firstSeen.keys()) {
      if (!live.has(inode)) {
        this.firstSeen.delete(inode);
        this.owners.delete(inode);
      }
    }
    this.lastTable = entries;
    return entries;
  }

  /**
   * Each run's listening ports, for the runs given with their processes now
   * (a run with none listening maps to an empty list). `every`: these are
   * all the live runs, so processes in none of them are forgotten (a pid
   * handed out again is then read as new). Null when the tables cannot be
   * read (no /proc).
   */
  find(runs: ReadonlyMap<string, readonly number[]>, options: { every?: boolean; fresh?: boolean } = {}): Map<string, ListeningPort[]> | null {
    const entries = this.listening(options.fresh === true);
    if (entries === null) return null;
    const runOfPid = new Map<number, string>();
    for (const [runId, pids] of runs) for (const pid of pids) runOfPid.set(pid, runId);
    // The newest unowned socket: a process read at or after its generation has been looked at for it.
    let newestUnowned = -1;
    for (const entry of entries) {
      if (!this.owners.has(entry.inode)) newestUnowned = Math.max(newestUnowned, this.firstSeen.get(entry.inode) ?? this.generation);
    }
    let reads = 0;
    if (newestUnowned >= 0) {
      const unowned = new Set<number>();
      for (const entry of entries) if (!this.owners.has(entry.inode)) unowned.add(entry.inode);
      for (const [pid, runId] of runOfPid) {
        const last = this.readAt.get(pid);
        if (last !== undefined && last >= newestUnowned) continue;
        this.readAt.set(pid, this.generation);
        reads++;
        for (const inode of this.table.socketInodes(pid) ?? []) {
          if (unowned.delete(inode)) this.owners.set(inode, { runId, pid });
        }
        if (unowned.size === 0) break;
      }
    }
    this.stats.lastProcessReads = reads;
    this.stats.processReads += reads;
    if (options.every) for (const pid of this.readAt.keys()) if (!runOfPid.has(pid)) this.readAt.delete(pid);
    const found = new Map<string, ListeningPort[]>();
    for (const runId of runs.keys()) found.set(runId, []);
    for (const entry of entries) {
      const owner = this.owners.get(entry.inode);
      if (owner === undefined) continue;
      const ports = found.get(owner.runId);
      if (ports === undefined || ports.some((p) => p.port === entry.port && p.address === entry.address)) continue;
      ports.push({ port: entry.port, address: entry.address, pid: owner.pid });
    }
    for (const ports of found.values()) ports.sort((a, b) => a.port - b.port || (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
    return found;
  }

  /** A run ended: its sockets are nobody's until another run is found holding them. */
  forgetRun(runId: string): void {
    for (const [inode, owner] of this.owners) if (owner.runId === runId) this.owners.delete(inode);
  }

  /** Who listens on `port` among the sockets already attributed (a run of this engine), else undefined. */
  ownerOfPort(port: number): Owner | undefined {
    for (const entry of this.lastTable) {
      if (entry.port !== port) continue;
      const owner = this.owners.get(entry.inode);
      if (owner) return owner;
    }
    return undefined;
  }

  /** The listening sockets on `port` now, from a fresh read of the tables. */
  listenersOn(port: number): ListenEntry[] {
    this.lastReadAtMs = -Infinity;
    return (this.listening(true) ?? []).filter((entry) => entry.port === port);
  }
}
