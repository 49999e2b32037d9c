// Round ticks for the telemetry charts, as Grafana draws them: memory in
// binary steps (1, 2, 4, 8, ... of KiB, MiB or GiB, so a tick reads "64 MiB",
// never "47.7 MiB"), time in steps a clock reads (1, 2, 5, 10, 15, 30 s, 1, 2,
// 5, 10, 15, 30 min, 1 h ...). Pure, so it is tested without a page.

/** Ticks from 0 to `max` (inclusive of the last below it) at a binary step, about `count` of them. */
export function binaryTicks(max: number, count = 4): number[] {
  if (!(max > 0)) return [0];
  const raw = max / count;
  // The power of two at or above the raw step: 1 KiB = 2^10 and 1 MiB = 2^20 are on it, so ticks read whole.
  const step = 2 ** Math.ceil(Math.log2(Math.max(1, raw)));
  const ticks: number[] = [];
  for (let v = 0; v <= max + step * 1e-9; v += step) ticks.push(v);
  return ticks;
}

/** Steps of the time axis in seconds: what a clock reads. */
export const TIME_STEPS_S = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10_800, 21_600, 43_200, 86_400];

/** Tenths of a second too, for a zoomed range a second or two wide. */
const FINE_STEPS_S = [0.1, 0.2, 0.5];

/**
 * Ticks from `minS` (0: the run's start) to `maxS` seconds at a clock step,
 * at least `minGap` seconds apart; a zoomed range (minS > 0) gets ticks on
 * the step's multiples ("3 s", "4 s", not "2.10 s", "3.10 s") and may step
 * in tenths.
 */
export function timeTicks(maxS: number, minGap: number, minS = 0): number[] {
  const steps = minS > 0 ? [...FINE_STEPS_S, ...TIME_STEPS_S] : TIME_STEPS_S;
  const step = steps.find((s) => s >= minGap) ?? steps[steps.length - 1]!;
  const ticks: number[] = [];
  for (let i = Math.max(0, Math.ceil(minS / step - 1e-9)); i * step <= maxS + 1e-9; i++) ticks.push(Math.round(i * step * 1000) / 1000);
  return ticks;
}
