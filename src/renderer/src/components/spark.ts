// The geometry of a sparkline, apart from React so it is tested: the last
// minute of a run's telemetry as SVG point lists across the whole box (a run
// younger than a minute is drawn from its start, not as a sliver at the right
// of a minute-wide box), CPU scaled to at least one core (a busy run reaches
// the top, an idle one stays low), memory as a filled area against its limit
// when it has one (full means at the limit), else with its highest value at
// four fifths of the height (flat memory is a level, not a solid block).

import type { TelemetryPoint } from '../../../shared/telemetry';
import { bytes } from '../format';

export const SPARK_WINDOW_MS = 60_000;

/** Memory this close to its limit (a fraction) is drawn as a warning. */
export const SPARK_NEAR_LIMIT = 0.8;

export interface SparkPaths {
  cpu: string;
  rss: string;
  /** The area's top edge, drawn as a line: memory reads as a level, the area under it faint. */
  rssLine: string;
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
  /** The time drawn, ms: the window, or less for a run younger than it. */
  spanMs: number;
  /** The window, ms (the label says "last minute" when the span fills it). */
  windowMs: number;
}

/** Without a limit, memory's highest value is drawn this high (a fraction of the box). */
const OWN_MAX_HEIGHT = 0.8;

export function sparkPaths(points: TelemetryPoint[], width: number, height: number, windowMs = SPARK_WINDOW_MS, limitBytes?: number): SparkPaths | null {
  if (points.length < 2) return null;
  const end = points[points.length - 1]![0];
  const shown = points.filter((p) => p[0] >= end - windowMs);
  if (shown.length < 2) return null;
  const start = shown[0]![0];
  const spanMs = Math.max(1, end - start);
  const cpuMax = Math.max(...shown.map((p) => p[1]));
  const rssMax = Math.max(...shown.map((p) => p[2]));
  const cpuScale = Math.max(100, cpuMax);
  const againstLimit = limitBytes !== undefined && limitBytes > 0 && limitBytes >= rssMax;
  const rssScale = againstLimit ? limitBytes : Math.max(1, rssMax) / OWN_MAX_HEIGHT;
  const xOf = (t: number) => ((t - start) / spanMs) * (width - 1) + 0.5;
  const yOf = (v: number, max: number) => height - 1 - (v / max) * (height - 2);
  const f = (n: number) => n.toFixed(1);
  const cpu = shown.map((p) => `${f(xOf(p[0]))},${f(yOf(p[1], cpuScale))}`).join(' ');
  const rssTop = shown.map((p) => `${f(xOf(p[0]))},${f(yOf(p[2], rssScale))}`);
  const rss = [`${f(xOf(shown[0]![0]))},${height}`, ...rssTop, `${f(xOf(end))},${height}`].join(' ');
  const last = shown[shown.length - 1]!;
  return {
    cpu,
    rss,
    rssLine: rssTop.join(' '),
    count: shown.length,
    now: { x: Number(f(xOf(last[0]))), y: Number(f(yOf(last[1], cpuScale))) },
    cpuNow: last[1],
    cpuMax,
    rssNow: last[2],
    rssMax,
    againstLimit,
    nearLimit: againstLimit && rssMax >= SPARK_NEAR_LIMIT * limitBytes,
    spanMs,
    windowMs,
  };
}

/** Samples come each second: a span this close to the window is the whole of it. */
const WHOLE_WINDOW_SLACK_MS = 2000;

/** "CPU 12 % now, highest 98 %; memory 45.0 MiB now, highest 60.0 MiB of a 256 MiB limit; last minute" ("since it started" for a run younger than the window). */
export function sparkLabel(p: Pick<SparkPaths, 'cpuNow' | 'cpuMax' | 'rssNow' | 'rssMax' | 'againstLimit'> & Partial<Pick<SparkPaths, 'spanMs' | 'windowMs'>>, limitBytes?: number, at = 'now'): string {
  const limit = p.againstLimit && limitBytes !== undefined ? ` of a ${bytes(limitBytes)} limit` : '';
  const young = p.spanMs !== undefined && p.windowMs !== undefined && p.spanMs < p.windowMs - WHOLE_WINDOW_SLACK_MS;
  return `CPU ${Math.round(p.cpuNow)} % ${at}, highest ${Math.round(p.cpuMax)} %; memory ${bytes(p.rssNow)} ${at}, highest ${bytes(p.rssMax)}${limit}; ${young ? 'since it started' : 'last minute'}`;
}
