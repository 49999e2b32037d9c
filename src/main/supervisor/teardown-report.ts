// How a teardown report names the processes it ended, for command runs and
// Python scripts alike: read from /proc before a cgroup sweep kills them.

import type { Proc, TeardownReport } from '../../shared/result';
import { readCommand, readStat } from './procfs';

/** "1234 sleep 300, 1240 python3 x.py and 3 more", for notes. */
export function listProcs(procs: Proc[]): string {
  const shown = procs.slice(0, 5).map((p) => `${p.pid} ${p.command.length > 60 ? `${p.command.slice(0, 57)}...` : p.command}`);
  return procs.length > 5 ? `${shown.join(', ')} and ${procs.length - 5} more` : shown.join(', ');
}

/**
 * The processes of a cgroup as a report names them (pid, parent, group, command), read before a sweep
 * kills them: after it there is nothing left to read. Bounded: a command line that cannot be read in
 * 100 ms is the process's name.
 */
export async function describePids(procRoot: string | null, pids: number[]): Promise<Map<number, Proc>> {
  const described = new Map<number, Proc>();
  if (procRoot === null) return described;
  await Promise.all(
    pids.map(async (pid) => {
      const stat = readStat(procRoot, pid);
      if (stat) described.set(pid, { pid, ppid: stat.ppid, pgid: stat.pgid, command: await readCommand(procRoot, stat, 100) });
    }),
  );
  return described;
}

/**
 * Adds `pid` to `described` from its stat alone (parent, group, name), read
 * at once: for one found by a sweep after describePids looked, just before
 * its kill. Its name stands for its command (a command line's read may block).
 */
export function describeNow(procRoot: string | null, pid: number, described: Map<number, Proc>): void {
  if (procRoot === null || described.has(pid)) return;
  const stat = readStat(procRoot, pid);
  if (stat) described.set(pid, { pid, ppid: stat.ppid, pgid: stat.pgid, command: stat.comm });
}

/**
 * A teardown report with what a cgroup sweep ended added, named from `described` (describePids);
 * a pid not described (it started after the look) is listed by `label`.
 */
export function withCgroupSweep(report: TeardownReport, swept: { killed: number[]; survivors: number[]; elapsedMs: number }, label: string, described: ReadonlyMap<number, Proc> = new Map()): TeardownReport {
  const known = new Set(report.killed.map((p) => p.pid));
  const member = (pid: number): Proc => described.get(pid) ?? { pid, ppid: 0, pgid: 0, command: label };
  return {
    ...report,
    killed: [...report.killed, ...swept.killed.filter((pid) => !known.has(pid)).map(member)],
    survivors: [...report.survivors.filter((p) => !swept.killed.includes(p.pid)), ...swept.survivors.map(member)],
    elapsedMs: report.elapsedMs + swept.elapsedMs,
    complete: report.complete && swept.survivors.length === 0,
  };
}
