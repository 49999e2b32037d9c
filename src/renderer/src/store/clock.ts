// A live run's clock in the page: its last known elapsedMs plus the time
// since, standing still while the host is away (connection-slice.ts freezes
// and thaws it).

import type { RunResult } from '../../../shared/result';

/** performance.now() when the host went away, while it is away: liveElapsed stops there. */
let frozenAt: number | null = null;

/** The host went away at `at` (performance.now()), or is back (null). */
export function freezeClocks(at: number | null): void {
  frozenAt = at;
}

/** A live run's elapsed time now: its last known elapsedMs plus the time since. */
export function liveElapsed(run: RunResult, syncedAt: number | undefined, now = performance.now(), frozen: number | null = frozenAt): number {
  if (run.state === 'ended' || syncedAt === undefined) return run.elapsedMs;
  // While the host is away nothing is known of the run: its clock stands still
  // at the moment the page lost it, whatever `now` is (a clock's timer reading
  // from before that moment would make the frozen figure step once more).
  const at = frozen === null ? now : frozen;
  return run.elapsedMs + Math.max(0, at - syncedAt);
}
