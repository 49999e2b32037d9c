// When this process could not run: stopped (SIGSTOP, a debugger), or starved
// of CPU, seen as a gap between two ticks of a timer far longer than its
// interval. A script's result says when it ended on the machine's monotonic
// clock; the engine takes that earlier time (instead of when it read the
// result) only across a stall of its own, since a script can lie about its
// clock but cannot make this process stop.

/** A tick this much later than its interval is a stall. */
const STALL_MS = 1000;
const TICK_MS = 250;
/** Stalls kept, newest last (a run asks about its own last seconds). */
const KEPT = 32;

export interface Stall {
  fromMs: number;
  toMs: number;
}

/** The stalls in `ticks` (performance.now() of each tick, in order): gaps longer than the interval by more than STALL_MS. */
export function stallsIn(ticks: readonly number[], intervalMs = TICK_MS, stallMs = STALL_MS): Stall[] {
  const out: Stall[] = [];
  for (let i = 1; i < ticks.length; i++) if (ticks[i]! - ticks[i - 1]! > intervalMs + stallMs) out.push({ fromMs: ticks[i - 1]!, toMs: ticks[i]! });
  return out;
}

/** Whether a stall overlaps the span from `fromMs` to `toMs` (both performance.now()). */
export function stalledWithin(stalls: readonly Stall[], fromMs: number, toMs: number): boolean {
  return stalls.some((s) => s.fromMs < toMs && s.toMs > fromMs);
}

let last: number | undefined;
const seen: Stall[] = [];

/** Starts watching (once per process; the timer never holds the process open). */
export function watchStalls(): void {
  if (last !== undefined) return;
  last = performance.now();
  setInterval(() => {
    const now = performance.now();
    for (const stall of stallsIn([last!, now])) seen.push(stall);
    if (seen.length > KEPT) seen.splice(0, seen.length - KEPT);
    last = now;
  }, TICK_MS).unref();
}

/**
 * Whether this process stalled between `fromMs` and `toMs`, or is in one
 * now (no tick since before `fromMs`: the timer has not run yet after a
 * SIGCONT, while the event loop serves what piled up).
 */
export function stalledBetween(fromMs: number, toMs: number): boolean {
  if (last !== undefined && toMs - last > TICK_MS + STALL_MS && last < toMs) return true;
  return stalledWithin(seen, fromMs, toMs);
}

/** The stall that ended most recently, when it ended within `withinMs` before `atMs` (performance.now()): what kept this process from seeing an end sooner. */
export function stallJustBefore(atMs: number, withinMs = 2000): Stall | null {
  const fresh = last !== undefined && atMs - last > TICK_MS + STALL_MS ? { fromMs: last, toMs: atMs } : null;
  if (fresh) return fresh;
  const recent = seen.at(-1);
  return recent && recent.toMs <= atMs && atMs - recent.toMs <= withinMs ? recent : null;
}
