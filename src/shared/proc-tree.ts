// A run's live process tree, as the process sampler reports it and the tree
// view shows it. Nested, so a view renders it with one recursive component;
// every node also carries its ppid, so a flat list is one walk away.

import type { PeakFigures } from './result';

export interface ProcNode {
  pid: number;
  ppid: number;
  pgid: number;
  /** The command line, arguments joined by spaces; `[name]` when it has none (a process being torn down). */
  command: string;
  /** The kernel's state letter, as `ps` shows it: R running, S sleeping, D waiting on a device, T stopped. */
  state: string;
  /**
   * CPU used since the previous sample, in percent of one core (two busy
   * threads show 200). On a process's first sample: its average since it
   * started where /proc tells its start, else 0.
   */
  cpuPercent: number;
  rssBytes: number;
  /**
   * It left the run's process group or its tree (setsid, a daemon's double
   * fork, reparented to init or a subreaper): a signal to the run's group
   * misses it, only the WARDEN_SCOPE marker still finds it.
   */
  escaped: boolean;
  /** Processes of the tree whose parent this is, by pid. */
  children: ProcNode[];
}

export interface ProcTreeSnapshot {
  runId: string;
  /** The run's main process; it is roots[0] while it lives. */
  rootPid: number;
  /** When the sample was taken (ISO 8601). */
  sampledAt: string;
  /**
   * The main process first (while it lives), then each escaped process whose
   * parent is outside the tree, by pid. Empty when nothing of the run is left.
   */
  roots: ProcNode[];
  /** Totals over every process in `roots`, at this sample (processes: those alive, not zombies). */
  processes: number;
  rssBytes: number;
  cpuPercent: number;
  /**
   * The largest `rssBytes` and `processes` of the run's samples so far; for a
   * run in a memory cgroup, its memory is the cgroup's own peak counter
   * (source 'cgroup'), as the run's result says it.
   */
  peak: PeakFigures;
  /**
   * Where the sample came from. 'ps' (no /proc, as on macOS) cannot read
   * environments, so it shows only the main process's descendants: an
   * escaped process reparented to init is missing from it.
   */
  source: 'proc' | 'ps';
}
