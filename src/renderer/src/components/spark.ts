// The geometry of a sparkline, apart from React so it is tested: the last
// minute of a run's telemetry as SVG point lists, CPU scaled to at least one
// core (a busy run reaches the top, an idle one stays low), memory to its own
// highest value as a filled area.

import type { TelemetryPoint } from '../../../shared/telemetry';

export const SPARK_WINDOW_MS = 60_000;

export function sparkPaths(points: TelemetryPoint[], width: number, height: number, windowMs = SPARK_WINDOW_MS): { cpu: string; rss: string; count: number } | null {
  if (points.length < 2) return null;
  const end = points[points.length - 1]![0];
  const start = Math.max(points[0]![0], end - windowMs);
  const shown = points.filter((p) => p[0] >= start);
  if (shown.length < 2) return null;
  const span = Math.max(1, end - start);
  const cpuMax = Math.max(100, ...shown.map((p) => p[1]));
  const rssMax = Math.max(1, ...shown.map((p) => p[2]));
  const x = (t: number) => (((t - start) / span) * (width - 1) + 0.5).toFixed(1);
  const y = (v: number, max: number) => (height - 1 - (v / max) * (height - 2)).toFixed(1);
  const cpu = shown.map((p) => `${x(p[0])},${y(p[1], cpuMax)}`).join(' ');
  const rss = [`${x(shown[0]![0])},${height}`, ...shown.map((p) => `${x(p[0])},${y(p[2], rssMax)}`), `${x(end)},${height}`].join(' ');
  return { cpu, rss, count: shown.length };
}
