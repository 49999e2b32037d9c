// The stop sequence (docs/architecture.md, "The deadline sequence"): SIGINT + SIGCONT at once, SIGTERM +
// SIGCONT `terminateAfterMs` later, SIGKILL at `graceMs`. The same sequence
// serves the deadline, a client's stop and shutdown; it starts at most once.
// Times come from the run's monotonic clock. A live run's deadline can be
// moved later (extend) until its stop sequence begins.

import type { SignalSent, StopReason, StopRecord, StopStep } from '../../shared/result';
import { WardenInputError } from './errors';
import { seconds } from '../../shared/format';

export interface StopTiming {
  terminateAfterMs: number;
  graceMs: number;
}

interface Step {
  step: StopStep;
  afterMs: number;
  signals: NodeJS.Signals[];
}

export function stepsFor(timing: StopTiming): Step[] {
  const steps: Step[] = [{ step: 'interrupt', afterMs: 0, signals: ['SIGINT', 'SIGCONT'] }];
  // A SIGTERM step at or past the grace would never run before SIGKILL.
  if (timing.terminateAfterMs < timing.graceMs) {
    steps.push({ step: 'terminate', afterMs: timing.terminateAfterMs, signals: ['SIGTERM', 'SIGCONT'] });
  }
  steps.push({ step: 'kill', afterMs: timing.graceMs, signals: ['SIGKILL'] });
  return steps;
}

export class StopSequence {
  private reason?: StopReason;
  private requestedAtMs = 0;
  private readonly sent: SignalSent[] = [];
  private lastStep?: StopStep;
  private forcedAtMs?: number;
  private timers: NodeJS.Timeout[] = [];

  constructor(
    private readonly timing: StopTiming,
    /** Delivers one signal to the run; returns false when nothing received it. */
    private readonly deliver: (signal: NodeJS.Signals) => boolean,
    private readonly nowMs: () => number,
    private readonly onStep: (step: StopStep, sent: SignalSent[]) => void,
  ) {}

  get started(): boolean {
    return this.reason !== undefined;
  }

  /** Starts the sequence; a second request changes nothing unless it forces the kill step now. */
  begin(reason: StopReason, options: { force?: boolean } = {}): void {
    if (this.reason === undefined) {
      this.reason = reason;
      this.requestedAtMs = this.nowMs();
      for (const step of stepsFor(this.timing)) {
        if (step.afterMs === 0) this.run(step);
        else this.timers.push(setTimeout(() => this.run(step), step.afterMs));
      }
    }
    if (options.force && this.lastStep !== 'kill') {
      this.forcedAtMs = this.nowMs();
      this.cancel();
      // The kill is recorded at the moment it was forced: one clock reading, not two that round apart.
      this.run({ step: 'kill', afterMs: 0, signals: ['SIGKILL'] }, this.forcedAtMs);
    }
  }

  /** The main process exited: no more steps. */
  cancel(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers = [];
  }

  record(): StopRecord | undefined {
    if (this.reason === undefined) return undefined;
    return {
      reason: this.reason,
      requestedAtMs: this.requestedAtMs,
      signals: [...this.sent],
      endedBy: this.lastStep ?? 'interrupt',
      ...(this.forcedAtMs !== undefined ? { forcedAtMs: this.forcedAtMs } : {}),
    };
  }

  /** Sends the step's signals, recorded at one time (`atMs`, else now): they go out together. */
  private run(step: Step, atMs?: number): void {
    const sent: SignalSent[] = [];
    const at = atMs ?? this.nowMs();
    for (const signal of step.signals) {
      if (this.deliver(signal)) sent.push({ signal, atMs: at });
    }
    this.sent.push(...sent);
    // A step that reached nothing (the group is already gone) did not end the run.
    if (sent.length > 0 || this.lastStep === undefined) this.lastStep = step.step;
    this.onStep(step.step, sent);
  }
}

/** The longest one timer can wait (setTimeout's ceiling, 24.8 days): longer deadlines are re-armed in steps. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** The longest limit: ten years (a deadline past one timer's reach is re-armed in steps of MAX_TIMER_MS). */
export const MAX_LIMIT_MS = 10 * 365 * 24 * 3_600_000;

/** The delay to arm a deadline's timer with: the time left, at most one timer's reach (it re-arms when it fires early). */
export function timerDelay(leftMs: number): number {
  return Math.min(Math.max(0, leftMs), MAX_TIMER_MS);
}

/** Checks an extension's `byMs`: a finite number of milliseconds above 0. */
export function checkExtension(byMs: unknown): number {
  if (typeof byMs !== 'number' || !Number.isFinite(byMs) || byMs <= 0 || byMs > MAX_LIMIT_MS) {
    throw new WardenInputError(`byMs must be a number of milliseconds above 0 and at most ${MAX_LIMIT_MS}, not ${typeof byMs === 'number' ? String(byMs) : JSON.stringify(byMs) ?? String(byMs)}.`);
  }
  return byMs;
}

/** The limit after an extension by `byMs` at `atMs`: a run without one gets its elapsed time plus `byMs`. */
export function extendedLimit(limitMs: number | null, atMs: number, byMs: number): number {
  const limit = (limitMs ?? Math.ceil(atMs)) + byMs;
  if (limit > MAX_LIMIT_MS) throw new WardenInputError(`The limit would become ${seconds(limit)}, over the longest Warden can time (${seconds(MAX_LIMIT_MS)}).`);
  return limit;
}

/** "The limit was extended by 30 s at 4.2 s (to 40 s)."; `at`: ms since the run started, or words for a run not started yet. */
export function extensionNote(byMs: number, at: number | string, limitMs: number): string {
  const when = typeof at === 'number' ? `at ${seconds(at)}` : at;
  return `The limit was extended by ${seconds(byMs)} ${when} (to ${seconds(limitMs)}).`;
}
