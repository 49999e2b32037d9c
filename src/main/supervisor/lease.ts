// A service's lease: it ends at a time on the run's clock unless renewed
// (extend); at its end the run is stopped with the stop sequence. One timer,
// re-armed when it fires early or past one timer's reach, as the deadline's.

import { MAX_LIMIT_MS, timerDelay } from './deadline';
import { WardenInputError } from './errors';
import { seconds } from '../../shared/format';

export class Lease {
  private endsAt: number;
  private timer?: NodeJS.Timeout;

  constructor(
    readonly ms: number,
    private readonly nowMs: () => number,
    private readonly onEnd: () => void,
  ) {
    // Counted from the run's start, as its limit is.
    this.endsAt = ms;
    this.arm();
  }

  get endsAtMs(): number {
    return this.endsAt;
  }

  /** Moves its end `byMs` later, counted from its end or from now when it is past; returns the new end. */
  renew(byMs: number, atMs: number): number {
    const endsAt = Math.max(this.endsAt, atMs) + byMs;
    if (endsAt > MAX_LIMIT_MS) throw new WardenInputError(`The lease would end at ${seconds(endsAt)}, past the longest Warden can time (${seconds(MAX_LIMIT_MS)}).`);
    this.endsAt = endsAt;
    clearTimeout(this.timer);
    this.arm();
    return endsAt;
  }

  cancel(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(): void {
    this.timer = setTimeout(() => {
      const early = this.endsAt - this.nowMs();
      if (early > 0) this.arm();
      else this.onEnd();
    }, timerDelay(this.endsAt - this.nowMs()));
  }
}

/** "The lease was renewed by 30 min at 1 h (it now ends at 2 h 30 min)." */
export function renewalNote(byMs: number, atMs: number, endsAtMs: number): string {
  return `The lease was renewed by ${seconds(byMs)} at ${seconds(atMs)} (it now ends at ${seconds(endsAtMs)}).`;
}

/** "Its lease of 2 h ran out at 2 h without being renewed, so Warden stopped it (extend renews a lease)." */
export function leaseEndNote(ms: number, atMs: number): string {
  return `Its lease of ${seconds(ms)} ran out at ${seconds(atMs)} without being renewed, so Warden stopped it (extend renews a lease).`;
}
