// The geometry of a sparkline, apart from React so it is tested: the last
// minute of a run's telemetry as SVG point lists on a fixed time axis (a run
// two seconds old is two seconds wide, at the right, not stretched over the
// minute), CPU scaled to at least one core (a busy run reaches the top, an
// idle one stays low), memory as a filled area against its limit when it has
// one (full means at the limit), else against its own highest value.

import type { TelemetryPoint } from '../../../shared/telemetry';
import { bytes } from '../format';

export const SPARK_WINDOW_MS = 60_000;

/** Memory this close to its limit (a fraction) is drawn as a warning. */
export const SPARK_NEAR_LIMIT = 0.8;

export interface SparkPaths {
  cpu: string;
  rss: string;
  count: number;
  /** The latest CPU point, marked as "now". */
  now: { x: number; y: number };
  cpuNow: number;
  cpuMax: number;
  rssNow: number;
  rssMax: number;
  /** Memory drawn against the limit (true) or its own highest value. */
  againstLimit: boolean;
  /** Memory's highest value in the window is near its limit. */
  nearLimit: boolean;
}

export function sparkPaths(points: TelemetryPoint[], width: number, height: number, windowMs = SPARK_WINDOW_MS, limitBytes?: number): SparkPaths | null {
  if (points.length < 2) return null;
  const end = points[points.length - 1]![0];
  const start = end - windowMs;
  const shown = points.filter((p) => p[0] >= start);
  if (shown.length < 2) return null;
  const cpuMax = Math.max(...shown.map((p) => p[1]));
  const rssMax = Math.max(...shown.map((p) => p[2]));
  const cpuScale = Math.max(100, cpuMax);
  const againstLimit = limitBytes !== undefined && limitBytes > 0 && limitBytes >= rssMax;
  const rssScale = againstLimit ? limitBytes : Math.max(1, rssMax);
  const xOf = (t: number) => ((t - start) / windowMs) * (width - 1) + 0.5;
  const yOf = (v: number, max: number) => height - 1 - (v / max) * (height - 2);
  const f = (n: number) => n.toFixed(1);
  const cpu = shown.map((p) => `${f(xOf(p[0]))},${f(yOf(p[1], cpuScale))}`).join(' ');
  const rss = [`${f(xOf(shown[0]![0]))},${height}`, ...shown.map((p) => `${f(xOf(p[0]))},${f(yOf(p[2], rssScale))}`), `${f(xOf(end))},${height}`].join(' ');
  const last = shown[shown.length - 1]!;
  return {
    cpu,
    rss,
    count: shown.length,
    now: { x: Number(f(xOf(last[0]))), y: Number(f(yOf(last[1], cpuScale))) },
    cpuNow: last[1],
    cpuMax,
    rssNow: last[2],
    rssMax,
    againstLimit,
    nearLimit: againstLimit && rssMax >= SPARK_NEAR_LIMIT * limitBytes,
  };
}

/** "CPU 12 % now, highest 98 %; memory 45.0 MiB now, highest 60.0 MiB of a 256 MiB limit; last minute" */
export function sparkLabel(p: Pick<SparkPaths, 'cpuNow' | 'cpuMax' | 'rssNow' | 'rssMax' | 'againstLimit'>, limitBytes?: number, at = 'now'): string {
  const limit = p.againstLimit && limitBytes !== undefined ? ` of a ${bytes(limitBytes)} limit` : '';
  return `CPU ${Math.round(p.cpuNow)} % ${at}, highest ${Math.round(p.cpuMax)} %; memory ${bytes(p.rssNow)} ${at}, highest ${bytes(p.rssMax)}${limit}; last minute`;
}
