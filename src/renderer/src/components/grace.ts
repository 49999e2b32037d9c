// The grace each run started from this page was given, so the Runs table can
// count down to SIGKILL exactly instead of assuming the engine's default (a
// RunResult does not carry its graceMs). Kept for this page's life only.

const known = new Map<string, number>();
const MAX = 1000;

export function rememberGrace(runId: string, graceMs: number): void {
  known.set(runId, graceMs);
  if (known.size > MAX) known.delete(known.keys().next().value!);
}

export function knownGrace(runId: string): number | undefined {
  return known.get(runId);
}

/** The grace the engine announced: SIGKILL due at killAtMs, counted from the first stop signal. */
export function graceFrom(killAtMs: number | undefined, signals: readonly { atMs: number }[]): number | undefined {
  const first = signals[0];
  return killAtMs === undefined || first === undefined ? undefined : Math.max(0, killAtMs - first.atMs);
}
