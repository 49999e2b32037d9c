// Waiting in tests: on the thing itself, or on progress towards it, never a
// fixed time. A 2-core machine shared with other test runs can be ten times
// slower than a quiet one; a wait that gives up after "what it usually takes"
// turns that into a red build. So a wait here fails only when nothing moves
// for PATIENCE_MS (a hang), and a wait on something that moves (lines stored,
// samples taken) goes on for as long as it keeps moving.
//
// Speed is measured in bench/, never asserted in a test.

/**
 * How long a wait goes on without the awaited thing or any progress towards
 * it: a guard against a hang, never a speed expectation. Below vitest's
 * per-test timeout, so the failure names what was awaited.
 */
export const PATIENCE_MS = 45_000;

export interface UntilOptions {
  /**
   * A reading that changes as the awaited thing comes closer (a count of
   * lines, a byte offset): the wait goes on while it keeps changing, however
   * long that takes, and gives up only after `patienceMs` without a change.
   */
  progress?: () => unknown;
  /** How long a wait may see no change (default PATIENCE_MS). */
  patienceMs?: number;
  /** Between two looks (default 10 ms, growing to 100 ms on a long wait). */
  everyMs?: number;
}

type Found<T> = Exclude<T, undefined | null | false>;

/**
 * Looks at `probe` until it answers something other than undefined, null or
 * false, and returns that. Throws, naming `what` and the last answer or
 * error, when `options.patienceMs` pass with no answer and no progress.
 */
export async function until<T>(what: string, probe: () => T | Promise<T>, options: UntilOptions = {}): Promise<Found<T>> {
  const patienceMs = options.patienceMs ?? PATIENCE_MS;
  let everyMs = options.everyMs ?? 10;
  let lastChangeAt = performance.now();
  let reading = JSON.stringify(options.progress?.());
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== null && value !== false) return value as Found<T>;
      last = value;
    } catch (error) {
      last = error instanceof Error ? error.message.split('\n')[0] : error;
    }
    if (options.progress) {
      const now = JSON.stringify(options.progress());
      if (now !== reading) {
        reading = now;
        lastChangeAt = performance.now();
      }
    }
    if (performance.now() - lastChangeAt > patienceMs) {
      const moved = options.progress ? `, and no progress for ${patienceMs} ms (last reading ${reading})` : ` for ${patienceMs} ms`;
      throw new Error(`Gave up waiting for ${what}${moved}; last answer: ${JSON.stringify(last)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, everyMs));
    // A long wait looks less often: on a loaded machine the polling should not add to the load.
    if (options.everyMs === undefined) everyMs = Math.min(100, everyMs * 1.2);
  }
}

/** Resolves `promise`, or rejects naming `what` after PATIENCE_MS (a hang guard, not a speed expectation). */
export async function within<T>(what: string, promise: Promise<T>, patienceMs = PATIENCE_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Gave up waiting for ${what} after ${patienceMs} ms`)), patienceMs);
  });
  try {
    return await Promise.race([promise, guard]);
  } finally {
    clearTimeout(timer);
  }
}
