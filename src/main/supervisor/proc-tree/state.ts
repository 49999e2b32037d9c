// What the sampler remembers between ticks, shared by the scan (scan.ts), the
// trees' layout (layout.ts) and the snapshots (sampler.ts). Types only.

import type { ProcNode, ProcTreeSnapshot } from '../../../shared/proc-tree';
import type { PeakFigures } from '../../../shared/result';
import type { ProcessRow } from '../ps-table';

/**
 * What is remembered about one process between ticks (same pid and start).
 * Every field is set when it is made, with a value of its lasting type (-1
 * for no descriptor, NaN for no time), so all share one shape and V8 never
 * has to widen a field and throw away the code compiled for it: the sampler
 * reads these hundreds of times a tick.
 */
export interface Known {
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
export interface Scan {
  table: Map<number, ProcessRow>;
  fresh: ProcessRow[];
}

/** The trees' shape, kept while no process joins, leaves or moves. */
export interface Shape {
  children: Map<number, number[]>;
  /** Each run's main process and its descendants by parent links. */
  descent: Map<Tracked, Set<number>>;
  inSomeDescent: Set<number>;
  /** Each run's whole tree: its descendants, and what its marker finds, with theirs. */
  members: Map<Tracked, Set<number>>;
  inAnyTree: Set<number>;
}

/** One run's nodes in build order, from its shape. */
export interface Layout {
  rootPids: number[];
  kids: Map<number, number[]>;
  /** Parents before children. */
  order: number[];
}

/** Files to read for some processes, in one batch. */
export interface Batch {
  pids: number[];
  knowns: Known[];
  paths: string[];
}

export interface Tracked {
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
