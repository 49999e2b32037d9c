// A run's fields as the store holds them, from what the API sends: a history
// summary as a partial run, a service event applied to a live run, and which
// stream a linked line can be fetched by. Pure.

import type { RunEvent } from '../../../shared/events';
import type { RunSummary } from '../../../shared/history';
import type { RunResult } from '../../../shared/result';

/** A process the history counts but does not list (a summary has the teardown's counts only). */
const UNLISTED_PROC = Object.freeze({ pid: 0, ppid: 0, pgid: 0, command: '' });

/** A run of a history page as the store holds it: the result's fields without output (partial until a view loads it whole). */
export function fromSummary(summary: RunSummary): RunResult {
  const run: RunResult = {
    id: summary.id,
    ...(summary.host !== undefined ? { host: summary.host } : {}),
    kind: summary.kind,
    ...(summary.argv !== undefined ? { argv: summary.argv } : {}),
    ...(summary.code !== undefined ? { code: summary.code } : {}),
    ...(summary.session !== undefined ? { session: summary.session } : {}),
    cwd: summary.cwd,
    ...(summary.owner ? { owner: summary.owner } : {}),
    state: summary.state,
    ...(summary.verdict !== undefined ? { verdict: summary.verdict } : {}),
    exitCode: summary.exitCode,
    signal: summary.signal,
    startedAt: summary.startedAt,
    ...(summary.endedAt !== undefined ? { endedAt: summary.endedAt } : {}),
    elapsedMs: summary.elapsedMs,
    limitMs: summary.limitMs,
    advice: summary.advice,
    notes: [],
    stdout: '',
    stderr: '',
    stdoutTruncated: summary.stdoutTruncated,
    stderrTruncated: summary.stderrTruncated,
    ...(summary.oom ? { oom: summary.oom } : {}),
    ...(summary.peakRssBytes !== null ? { peak: { rssBytes: summary.peakRssBytes, processes: summary.peakProcesses ?? 0, ...(summary.peakSource ? { source: summary.peakSource } : {}) } } : {}),
  };
  if (summary.leftBehind || summary.survived) {
    run.teardown = {
      killed: Array.from({ length: summary.leftBehind ?? 0 }, () => UNLISTED_PROC),
      survivors: Array.from({ length: summary.survived ?? 0 }, () => UNLISTED_PROC),
      elapsedMs: 0,
      complete: true,
    };
  }
  return run;
}

/**
 * The stream a link's line can be fetched by, ahead of the pages before it:
 * the stream named, or for the merged view the one stream with output; none
 * when both have output (the merged order needs both up to it) or the kept
 * text was cut (its lines are then numbered from the stream's end).
 */
export function linkedStream(stream: 'all' | 'stdout' | 'stderr', run: Pick<RunResult, 'outputChars' | 'stdoutTruncated' | 'stderrTruncated'>): 'stdout' | 'stderr' | null {
  const chars = run.outputChars ?? { stdout: 0, stderr: 0 };
  const named = stream === 'all' ? (chars.stderr === 0 ? 'stdout' : chars.stdout === 0 ? 'stderr' : null) : stream;
  if (named === null) return null;
  return (named === 'stdout' ? run.stdoutTruncated : run.stderrTruncated) > 0 ? null : named;
}

/** A live run with a service event applied (the event's own fields; output and the rest as they were). */
export function withServiceEvent(run: RunResult, event: Extract<RunEvent, { type: 'ready' | 'ports' | 'lease-renewed' | 'main-exited' | 'input' }>): RunResult {
  switch (event.type) {
    case 'ready':
      return { ...run, ready: event.ready, ...(event.ready ? { probes: event.ready.probes } : {}) };
    case 'ports':
      return { ...run, ports: event.ports };
    case 'lease-renewed':
      return run.lease ? { ...run, lease: { ...run.lease, endsAtMs: event.endsAtMs } } : run;
    case 'main-exited':
      return { ...run, mainExit: event.mainExit };
    case 'input':
      return event.eof ? { ...run, stdinPipe: 'closed' } : run;
  }
}
