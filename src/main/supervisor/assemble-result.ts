// A result in the contract's shape, for command runs and Python scripts alike:
// keys in the contract's order, times rounded, absent optional fields left out.

import type { CoreReport, Culprit, OomReport, PeakFigures, RunOwner, RunResult, StopRecord, TeardownReport } from '../../shared/result';

type ServiceParts = Pick<RunResult, 'ready' | 'probes' | 'ports' | 'lease' | 'stdinPipe' | 'mainExit'>;

export interface ResultParts extends ServiceParts, Pick<RunResult, 'id' | 'kind' | 'cwd' | 'state' | 'exitCode' | 'signal' | 'elapsedMs' | 'limitMs' | 'advice' | 'notes' | 'stdout' | 'stderr' | 'stdoutTruncated' | 'stderrTruncated'> {
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
  culprit?: Culprit;
  teardown?: TeardownReport;
  peak?: PeakFigures;
  owner?: RunOwner;
}

export function assembleResult(p: ResultParts): RunResult {
  return {
    id: p.id,
    kind: p.kind,
    ...(p.argv !== undefined ? { argv: p.argv } : {}),
    ...(p.code !== undefined ? { code: p.code } : {}),
    ...(p.session !== undefined ? { session: p.session } : {}),
    cwd: p.cwd,
    ...(p.owner ? { owner: p.owner } : {}),
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
    ...(p.culprit ? { culprit: p.culprit } : {}),
    advice: p.advice,
    notes: p.notes,
    stdout: p.stdout,
    stderr: p.stderr,
    stdoutTruncated: p.stdoutTruncated,
    stderrTruncated: p.stderrTruncated,
    ...(p.teardown ? { teardown: { ...p.teardown, elapsedMs: Math.round(p.teardown.elapsedMs) } } : {}),
    ...(p.peak ? { peak: p.peak } : {}),
    ...(p.ready !== undefined ? { ready: p.ready } : {}),
    ...(p.probes ? { probes: p.probes } : {}),
    ...(p.ports ? { ports: p.ports } : {}),
    ...(p.lease ? { lease: p.lease } : {}),
    ...(p.stdinPipe ? { stdinPipe: p.stdinPipe } : {}),
    ...(p.mainExit ? { mainExit: p.mainExit } : {}),
  };
}
