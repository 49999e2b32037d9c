// A run's telemetry: the process sampler's CPU %, RSS and process count over
// the run's life, as a bounded time series. One point per `stepMs` at most
// (the first sample of each step is kept, its peaks folded in); when the
// series would pass `max` points, neighbours merge and the step doubles, so an
// hour keeps 3,600 points at 1 s and a day about 2,700 at 32 s. RSS and the
// process count keep their highest value in a merged point (a peak is never
// thinned away); CPU keeps its mean.
//
// The history stores it as the run's 'telemetry' event (detail: TelemetryDetail);
// the page keeps the live one from the tree events. No Node or DOM imports.

/** [ms since the run started, CPU % of one core, RSS bytes, processes] */
export type TelemetryPoint = [atMs: number, cpuPercent: number, rssBytes: number, processes: number];

export interface TelemetrySeries {
  stepMs: number;
  points: TelemetryPoint[];
  /** How many samples the last point stands for (its CPU is their mean). */
  lastWeight: number;
}

export const TELEMETRY_STEP_MS = 1000;
export const TELEMETRY_MAX_POINTS = 3600;
/** The kind of the history event that holds a run's series. */
export const TELEMETRY_EVENT = 'telemetry';

export interface TelemetryDetail {
  stepMs: number;
  points: TelemetryPoint[];
}

export function emptySeries(stepMs = TELEMETRY_STEP_MS): TelemetrySeries {
  return { stepMs, points: [], lastWeight: 0 };
}

function merge(a: TelemetryPoint, b: TelemetryPoint, weightA = 1, weightB = 1): TelemetryPoint {
  return [a[0], (a[1] * weightA + b[1] * weightB) / (weightA + weightB), Math.max(a[2], b[2]), Math.max(a[3], b[3])];
}

/** The series with one more sample; a new object when it changed (the page keeps it in a store), else the same. */
export function addSample(series: TelemetrySeries, point: TelemetryPoint, max = TELEMETRY_MAX_POINTS): TelemetrySeries {
  const last = series.points[series.points.length - 1];
  if (last && point[0] < last[0]) return series; // out of order: a late sample of a step already written
  if (last && Math.floor(point[0] / series.stepMs) === Math.floor(last[0] / series.stepMs)) {
    const points = series.points.slice();
    points[points.length - 1] = merge(last, point, series.lastWeight, 1);
    return { ...series, points, lastWeight: series.lastWeight + 1 };
  }
  let next: TelemetrySeries = { ...series, points: [...series.points, point], lastWeight: 1 };
  while (next.points.length > max) next = thin(next);
  return next;
}

/** Neighbours merged pairwise into steps twice as long. */
export function thin(series: TelemetrySeries): TelemetrySeries {
  const stepMs = series.stepMs * 2;
  const points: TelemetryPoint[] = [];
  for (const p of series.points) {
    const last = points[points.length - 1];
    if (last && Math.floor(p[0] / stepMs) === Math.floor(last[0] / stepMs)) points[points.length - 1] = merge(last, p);
    else points.push(p);
  }
  return { stepMs, points, lastWeight: 1 };
}

/** The series in a stored event, or null when the detail is not one (an older or foreign record). */
export function readTelemetry(detail: unknown): TelemetryDetail | null {
  if (typeof detail !== 'object' || detail === null) return null;
  const { stepMs, points } = detail as { stepMs?: unknown; points?: unknown };
  if (typeof stepMs !== 'number' || !Array.isArray(points)) return null;
  const ok = points.every((p) => Array.isArray(p) && p.length === 4 && p.every((v) => typeof v === 'number' && Number.isFinite(v)));
  return ok ? { stepMs, points: points as TelemetryPoint[] } : null;
}

/**
 * A live run's series as the host had it when a page opened (from its first
 * sample), joined with what the page has sampled since: the host's points
 * before the page's first, then the page's. The coarser step of the two.
 */
export function joinSeries(host: TelemetryDetail, page: TelemetrySeries | undefined): TelemetrySeries {
  const pagePoints = page?.points ?? [];
  const first = pagePoints[0]?.[0] ?? Infinity;
  const before = host.points.filter((p) => p[0] < first);
  const last = before[before.length - 1];
  const points = last && pagePoints[0] && Math.floor(last[0] / host.stepMs) === Math.floor(pagePoints[0][0] / host.stepMs) ? [...before.slice(0, -1), ...pagePoints] : [...before, ...pagePoints];
  return { stepMs: Math.max(host.stepMs, page?.stepMs ?? 0), points, lastWeight: page?.lastWeight ?? 1 };
}
