// A run's last minute in a few pixels (a live run's, or a lost run's last stored): CPU % (line, its latest point
// marked) over memory (area, against the limit when there is one, warning
// near it), an SVG redrawn when a sample arrives (2 Hz), never per frame. Its
// label says the figures in words, for a tooltip and a screen reader.

import { memo } from 'react';
import type { TelemetryPoint } from '../../../shared/telemetry';
import { sparkLabel, sparkPaths } from './spark';

export const Sparkline = memo(function Sparkline({
  points,
  limitBytes,
  width = 72,
  height = 18,
  at,
}: {
  points: TelemetryPoint[];
  limitBytes?: number | undefined;
  width?: number;
  height?: number;
  /** When its latest point was, in the label's words (default "now"). */
  at?: string;
}) {
  const paths = sparkPaths(points, width, height, undefined, limitBytes);
  if (!paths) return null;
  const label = sparkLabel(paths, limitBytes, at);
  return (
    <svg
      className={`sparkline${paths.nearLimit ? ' near-limit' : ''}`}
      width={width}
      height={height}
      viewBox={`0 0 ${width} ${height}`}
      role="img"
      aria-label={label}
      data-testid="run-spark"
      data-points={paths.count}
      data-against-limit={paths.againstLimit ? 'true' : 'false'}
    >
      <title>{label}</title>
      {/* The whole minute, faint: a young run's few seconds read as few against it. */}
      <rect className="sparkline-track" x={0} y={0} width={width} height={height} rx={2} />
      <polygon className="sparkline-rss" points={paths.rss} />
      <polyline className="sparkline-rss-line" points={paths.rssLine} />
      <polyline className="sparkline-cpu" points={paths.cpu} />
      <circle className="sparkline-now" cx={paths.now.x} cy={paths.now.y} r={1.75} />
    </svg>
  );
});
