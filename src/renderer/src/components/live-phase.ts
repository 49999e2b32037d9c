// Where a run stands in its stop sequence, the same words in the Runs list and
// the run's detail: "12.4 s left", "interrupting · kill in 4.2 s", "grace 3.2 s
// left", "killed" (phase.ts), from the store's signals and the known grace.

import type { RunResult } from '../../../shared/result';
import { liveElapsed, useWarden } from '../store';
import { graceFrom, knownGrace } from './grace';
import { runPhase, stopSignals, type PhaseView } from './phase';

export function useLivePhase(run: RunResult, now: number): { view: PhaseView; elapsedMs: number } {
  const syncedAt = useWarden((s) => s.syncedAt[run.id]);
  const streamed = useWarden((s) => s.signals[run.id]);
  const progress = useWarden((s) => s.stopProgress[run.id]);
  const signals = stopSignals(run.stop?.signals, streamed);
  // The engine says when SIGKILL is due; else the grace this page started the run with; else the default (estimated).
  const grace = graceFrom(progress?.killAtMs, signals) ?? knownGrace(run.id);
  // A signal's atMs is an exact reading of the run's clock: the estimate between events never lags behind it.
  const elapsedMs = run.state === 'ended' ? run.elapsedMs : Math.max(liveElapsed(run, syncedAt, now), signals.at(-1)?.atMs ?? 0);
  const view = runPhase({
    kind: run.kind,
    state: run.state,
    ...(run.verdict ? { verdict: run.verdict } : {}),
    ...(run.queuePosition !== undefined ? { queuePosition: run.queuePosition } : {}),
    elapsedMs,
    limitMs: run.limitMs,
    signals,
    ...(progress ? { step: progress.step } : {}),
    ...(grace !== undefined ? { graceMs: grace } : {}),
  });
  return { view, elapsedMs };
}
