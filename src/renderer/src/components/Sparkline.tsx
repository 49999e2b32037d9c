// A live run's last minute in a few pixels: CPU % (line) over memory (area),
// an SVG of two polylines, redrawn when a sample arrives (2 Hz), never per frame.

import { memo } from 'react';
import type { TelemetryPoint } from '../../../shared/telemetry';
import { sparkPaths } from './spark';

export const Sparkline = memo(function Sparkline({ points, width = 72, height = 18 }: { points: TelemetryPoint[]; width?: number; height?: number }) {
  const paths = sparkPaths(points, width, height);
  if (!paths) return null;
  const last = points[points.length - 1]!;
  return (
    <svg className="sparkline" width={width} height={height} viewBox={`0 0 ${width} ${height}`} role="img" aria-label={`CPU ${last[1].toFixed(0)} %, last minute`} data-testid="run-spark" data-points={paths.count}>
      <title>{`CPU and memory, last minute: now ${last[1].toFixed(0)} % CPU`}</title>
      <polygon className="sparkline-rss" points={paths.rss} />
      <polyline className="sparkline-cpu" points={paths.cpu} />
    </svg>
  );
});
