// Durations as people type them: 500ms, 30s, 1.5m, 2h, 1d. A bare number is
// seconds, as GNU timeout reads it. Anything above 0 is at least 1 ms (0.0001s
// is a very short limit, not none); 0 stays 0.

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Milliseconds, or undefined when the text is not a duration. */
export function parseDuration(text: string): number | undefined {
  const match = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*(ms|s|m|h|d)?\s*$/.exec(text);
  if (!match) return undefined;
  const ms = Number(match[1]) * UNITS[match[2] ?? 's']!;
  if (!Number.isFinite(ms)) return undefined;
  return ms > 0 && ms < 1 ? 1 : Math.round(ms);
}

/**
 * A duration as every view and note writes it from a minute up: "1 min",
 * "4 min 02 s", "1 h 02 min" (whole seconds, rounded down, as a clock shows
 * them). Under a minute each caller keeps its own decimals.
 */
export function minutesText(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 3600) return s % 60 === 0 ? `${Math.floor(s / 60)} min` : `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
  const min = Math.floor((s % 3600) / 60);
  return min === 0 ? `${Math.floor(s / 3600)} h` : `${Math.floor(s / 3600)} h ${String(min).padStart(2, '0')} min`;
}
