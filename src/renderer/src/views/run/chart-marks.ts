// What the telemetry charts mark, as Grafana annotates a panel: each step of
// the stop sequence (its signal, named for its step), a force kill, the
// out-of-memory kill and the run's end; and the time axis, which runs to the
// run's end (or its last mark) so the final SIGKILL is drawn, not cut off at
// the last sample. Pure, so it is tested without a page.

import type { RunResult, SignalSent } from '../../../../shared/result';

export type MarkKind = 'limit' | 'step' | 'force' | 'oom' | 'end';

export interface ChartMark {
  atMs: number;
  label: string;
  kind: MarkKind;
}

const STEP_NAME: Record<string, string> = { SIGINT: 'interrupt', SIGTERM: 'terminate', SIGKILL: 'kill' };

/** A stop signal as its step: "interrupt (SIGINT)"; SIGKILL of a force kill as the force kill. */
function stepLabel(signal: string, forced: boolean): string {
  if (forced) return 'force kill (SIGKILL)';
  const step = STEP_NAME[signal];
  return step ? `${step} (${signal})` : signal;
}

/**
 * The moments a chart marks, in time order: the limit when it was reached
 * (a run that timed out, or is near it), each stop step's signal (one per
 * signal and moment), a force kill, the out-of-memory kill, and an ended
 * run's end.
 */
export function chartMarks(run: Pick<RunResult, 'state' | 'elapsedMs' | 'limitMs' | 'stop' | 'oom' | 'verdict'>, signals: SignalSent[], lastSampleMs: number): ChartMark[] {
  const marks: ChartMark[] = [];
  const ended = run.state === 'ended';
  const end = ended ? run.elapsedMs : lastSampleMs;
  if (run.limitMs !== null && run.limitMs <= Math.max(end, lastSampleMs) * 1.25 + 1000) marks.push({ atMs: run.limitMs, label: `limit ${limitText(run.limitMs)}`, kind: 'limit' });
  const forcedAt = run.stop?.forcedAtMs;
  const seen = new Set<string>();
  for (const s of signals) {
    if (!(s.signal in STEP_NAME)) continue;
    const key = `${s.signal}@${Math.round(s.atMs)}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const forced = s.signal === 'SIGKILL' && forcedAt !== undefined && Math.abs(s.atMs - forcedAt) <= 5;
    marks.push({ atMs: s.atMs, label: stepLabel(s.signal, forced), kind: forced ? 'force' : 'step' });
  }
  // A force kill asked for but its signal not among those seen (the result keeps the moment).
  if (forcedAt !== undefined && !marks.some((m) => m.kind === 'force')) marks.push({ atMs: forcedAt, label: 'force kill (SIGKILL)', kind: 'force' });
  if (ended && run.oom?.confirmed) marks.push({ atMs: run.elapsedMs, label: 'out-of-memory kill', kind: 'oom' });
  else if (ended) marks.push({ atMs: run.elapsedMs, label: run.verdict ? `ended: ${run.verdict}` : 'ended', kind: 'end' });
  return marks.sort((a, b) => a.atMs - b.atMs);
}

/** "30 s", "2 min": a limit as the label says it. */
function limitText(ms: number): string {
  return ms < 60_000 ? `${+(ms / 1000).toFixed(1)} s` : `${+(ms / 60_000).toFixed(1)} min`;
}

/** The time axis's end, in ms: the run's end or its last sample or mark, whichever is last (never 0). */
export function axisEndMs(run: Pick<RunResult, 'state' | 'elapsedMs'>, lastSampleMs: number, marks: ChartMark[]): number {
  const ends = [lastSampleMs, run.state === 'ended' ? run.elapsedMs : 0, ...marks.map((m) => m.atMs)];
  return Math.max(1, ...ends);
}
