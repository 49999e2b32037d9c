// Where a run stands against its limit and in its stop sequence, for the Runs
// table's bar: normal, amber (past 80 % of the limit), interrupting (SIGINT
// sent), grace (SIGTERM sent, SIGKILL due), killed (SIGKILL sent), ended.
//
// The grace countdown is an estimate. A RunResult does not carry its graceMs,
// so the time to SIGKILL is counted from the first stop signal plus the grace
// the run was started with when this page started it (components/grace.ts), else the
// engine's default for a request that names none (5 s for a command, 10 s for
// a Python script; DEFAULTS in shared/request.ts). A run started elsewhere with
// --grace, or from a form whose Settings changed the grace, may differ: the
// label then says "≈" and the SIGKILL itself (a signal event) is authoritative.

import { DEFAULTS } from '../../../shared/request';
import type { RunKind, RunState, SignalSent, StopStep, Verdict } from '../../../shared/result';
import { duration } from '../format';

export type Phase = 'normal' | 'amber' | 'interrupting' | 'grace' | 'killed' | 'ended';

/** Share of the limit past which a live run's bar turns amber. */
export const AMBER_AT = 0.8;

const STEP_OF: Record<string, StopStep> = { SIGINT: 'interrupt', SIGTERM: 'terminate', SIGKILL: 'kill' };
const STEP_RANK: Record<StopStep, number> = { interrupt: 1, terminate: 2, kill: 3 };

export interface PhaseInput {
  kind: RunKind;
  state: RunState;
  verdict?: Verdict;
  queuePosition?: number;
  /** Elapsed now (liveElapsed), on the run's clock. */
  elapsedMs: number;
  limitMs: number | null;
  /** Stop signals sent so far (the snapshot's stop.signals and the signal-sent events); teardown signals are ignored. */
  signals: readonly SignalSent[];
  /** The furthest step the store saw in signal-sent events, if any. */
  step?: StopStep;
  /** The run's grace when known; else the engine's default for its kind. */
  graceMs?: number;
}

export interface PhaseView {
  phase: Phase;
  /** A short label: "12.4 s left", "interrupting · kill in 4.2 s", "grace 3.2 s left", "killed", "ended". */
  label: string;
  /** Percent of the limit elapsed, 0-100 (rounded), or null without a limit. */
  percent: number | null;
  /** Milliseconds until SIGKILL is due, while interrupting or in grace. */
  graceLeftMs: number | null;
  /** Whether graceLeftMs rests on the engine's default rather than a known grace. */
  estimated: boolean;
}

/** The stop signals among a run's recorded and streamed signals, once each, in time order. */
export function stopSignals(...lists: (readonly SignalSent[] | undefined)[]): SignalSent[] {
  const seen = new Set<string>();
  const out: SignalSent[] = [];
  for (const list of lists) {
    for (const sent of list ?? []) {
      // Teardown signals read "SIGKILL to group 123": not steps of the stop sequence.
      if (!(sent.signal in STEP_OF)) continue;
      const key = `${sent.signal}@${sent.atMs}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(sent);
    }
  }
  return out.sort((a, b) => a.atMs - b.atMs);
}

/**
 * Time left in whole seconds under a minute ("4 s", counted up: 3.2 s left
 * reads 4 s until it is 3), then as the clock says it ("5 min 57 s"); never
 * negative. Whole seconds, as the page's clocks tick once a second.
 */
export function secondsText(ms: number): string {
  const t = Math.max(0, ms);
  return t < 60_000 ? `${Math.ceil(t / 1000)} s` : duration(t);
}

export function defaultGraceMs(kind: RunKind): number {
  return kind === 'python' ? DEFAULTS.pythonGraceMs : DEFAULTS.graceMs;
}

export function runPhase(input: PhaseInput): PhaseView {
  const { elapsedMs, limitMs } = input;
  const percent = limitMs === null ? null : limitMs <= 0 ? 100 : Math.min(100, Math.max(0, Math.round((elapsedMs / limitMs) * 100)));
  const base = { percent, graceLeftMs: null, estimated: false };

  if (input.state === 'ended') return { ...base, phase: 'ended', label: 'ended' };

  let step: StopStep | undefined = input.step;
  for (const sent of input.signals) {
    const s = STEP_OF[sent.signal];
    if (s && (!step || STEP_RANK[s] > STEP_RANK[step])) step = s;
  }
  if (step === 'kill') return { ...base, phase: 'killed', label: 'killed' };

  if (step || input.state === 'stopping') {
    const first = input.signals[0];
    const estimated = input.graceMs === undefined;
    const graceMs = input.graceMs ?? defaultGraceMs(input.kind);
    const graceLeftMs = first ? Math.max(0, first.atMs + graceMs - elapsedMs) : null;
    const approx = estimated ? '≈' : '';
    const left = graceLeftMs === null ? null : graceLeftMs > 0 ? `${approx}${secondsText(graceLeftMs)}` : null;
    if (step === 'terminate') {
      return { ...base, phase: 'grace', label: left ? `grace ${left} left` : 'grace over', graceLeftMs, estimated };
    }
    return { ...base, phase: 'interrupting', label: left ? `interrupting · kill in ${left}` : 'interrupting', graceLeftMs, estimated };
  }

  if (input.state === 'queued') {
    return { ...base, phase: 'normal', label: input.queuePosition ? `queued #${input.queuePosition}` : 'queued' };
  }
  if (limitMs === null) return { ...base, phase: 'normal', label: 'no limit' };
  const leftMs = limitMs - elapsedMs;
  const phase: Phase = elapsedMs >= limitMs * AMBER_AT ? 'amber' : 'normal';
  return { ...base, phase, label: leftMs > 0 ? `${secondsText(leftMs)} left` : 'at the limit' };
}
