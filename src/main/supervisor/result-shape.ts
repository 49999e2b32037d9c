// A result in the contract's shape, for command runs and Python scripts alike:
// keys in the contract's order, times rounded, absent optional fields left out.

import type { CoreReport, OomReport, PeakFigures, Proc, RunResult, StopRecord, TeardownReport } from '../../shared/result';
import { readCommand, readStat } from './procfs';

export interface ResultParts extends Pick<RunResult, 'id' | 'kind' | 'cwd' | 'state' | 'exitCode' | 'signal' | 'elapsedMs' | 'limitMs' | 'advice' | 'notes' | 'stdout' | 'stderr' | 'stdoutTruncated' | 'stderrTruncated'> {
  argv?: string[];
  code?: string;
  session?: string;
  queuePosition?: number;
  verdict?: RunResult['verdict'];
  startedWallMs: number;
  endedAt?: string;
  stop?: StopRecord;
  oom?: OomReport;
  core?: CoreReport;
  teardown?: TeardownReport;
  peak?: PeakFigures;
}

export function assembleResult(p: ResultParts): RunResult {
  return {
    id: p.id,
    kind: p.kind,
    ...(p.argv !== undefined ? { argv: p.argv } : {}),
    ...(p.code !== undefined ? { code: p.code } : {}),
    ...(p.session !== undefined ? { session: p.session } : {}),
    cwd: p.cwd,
    state: p.state,
    ...(p.queuePosition !== undefined ? { queuePosition: p.queuePosition } : {}),
    ...(p.verdict !== undefined ? { verdict: p.verdict } : {}),
    exitCode: p.exitCode,
    signal: p.signal,
    startedAt: new Date(p.startedWallMs).toISOString(),
    ...(p.endedAt !== undefined ? { endedAt: p.endedAt } : {}),
    elapsedMs: Math.round(p.elapsedMs),
    limitMs: p.limitMs,
    ...(p.stop
      ? { stop: { ...p.stop, requestedAtMs: Math.round(p.stop.requestedAtMs), signals: p.stop.signals.map((s) => ({ signal: s.signal, atMs: Math.round(s.atMs) })), ...(p.stop.forcedAtMs !== undefined ? { forcedAtMs: Math.round(p.stop.forcedAtMs) } : {}) } }
      : {}),
    ...(p.oom ? { oom: p.oom } : {}),
    ...(p.core ? { core: p.core } : {}),
    advice: p.advice,
    notes: p.notes,
    stdout: p.stdout,
    stderr: p.stderr,
    stdoutTruncated: p.stdoutTruncated,
    stderrTruncated: p.stderrTruncated,
    ...(p.teardown ? { teardown: { ...p.teardown, elapsedMs: Math.round(p.teardown.elapsedMs) } } : {}),
    ...(p.peak ? { peak: p.peak } : {}),
  };
}

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
