// Durations as people type them: 500ms, 30s, 1.5m, 2h. A bare number is seconds,
// as GNU timeout reads it.

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Milliseconds, or undefined when the text is not a duration. */
export function parseDuration(text: string): number | undefined {
  const match = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*(ms|s|m|h)?\s*$/.exec(text);
  if (!match) return undefined;
  const ms = Number(match[1]) * UNITS[match[2] ?? 's']!;
  return Number.isFinite(ms) ? Math.round(ms) : undefined;
}
