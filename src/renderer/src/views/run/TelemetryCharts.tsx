// A run's CPU and memory over time (uPlot): the sampler's series, live from
// the page's store, or for an ended run from the history's 'telemetry' event.
// As Grafana's panels: the time axis to the run's end, each stop step, a
// force kill, the out-of-memory kill and the end annotated (chart-marks.ts),
// the memory limit as a line labelled inside the plot, taller panels that
// grow with the page, one crosshair for both, drag to zoom both, a double
// click to reset.

import { useCallback, useEffect, useLayoutEffect, useRef, useState, useSyncExternalStore } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { RunResult, SignalSent } from '../../../../shared/result';
import { readTelemetry, TELEMETRY_EVENT, type TelemetryPoint } from '../../../../shared/telemetry';
import { bytes, duration, memoryLimitOf, peakFigure } from '../../format';
import { binaryTicks, timeTicks } from './chart-ticks';
import { axisEndMs, chartMarks, type ChartMark } from './chart-marks';
import { messageOf, useWarden } from '../../store';

const NO_SIGNALS: SignalSent[] = [];

/** The page's colour scheme: a chart drawn in one is drawn again in the other (its colours are the theme's). */
function useScheme(): 'dark' | 'light' {
  return useSyncExternalStore(
    (onChange) => {
      const query = window.matchMedia('(prefers-color-scheme: dark)');
      query.addEventListener('change', onChange);
      return () => query.removeEventListener('change', onChange);
    },
    () => (window.matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light'),
  );
}

/** The run's series: the page's live one while it has it, else the stored one. */
function useSeries(run: RunResult): { points: TelemetryPoint[] | null; source: 'live' | 'history' | null; error: string | null } {
  const live = useWarden((s) => s.series[run.id]?.points);
  const api = useWarden((s) => s.api);
  const ended = run.state === 'ended';
  const [stored, setStored] = useState<TelemetryPoint[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const seedSeries = useWarden((s) => s.seedSeries);
  // Ended: the stored series. Live: the host's series so far, once, joined before what this page samples.
  useEffect(() => {
    if (!api) return undefined;
    let current = true;
    api.timeline(run.id).then(
      (events) => {
        if (!current) return;
        const record = events.find((e) => e.kind === TELEMETRY_EVENT);
        const detail = record ? readTelemetry(record.detail) : null;
        if (!ended) {
          if (detail) seedSeries(run.id, detail);
          return;
        }
        setStored(detail?.points ?? (record ? null : []));
      },
      (e: unknown) => current && setError(messageOf(e)),
    );
    return () => {
      current = false;
    };
    // Once per run and state: a live run's later points come from the page's samples.
  }, [api, run.id, ended, seedSeries]);
  if (stored && stored.length >= (live?.length ?? 0)) return { points: stored, source: 'history', error };
  if (live) return { points: live, source: 'live', error };
  return { points: stored, source: stored ? 'history' : null, error };
}

export function TelemetryCharts({ run }: { run: RunResult }) {
  const { points, source, error } = useSeries(run);
  const streamed = useWarden((s) => s.signals[run.id] ?? NO_SIGNALS);
  // The chart plots its processes' RSS sum; where the run's one peak is its cgroup's counter, the caption says that figure too.
  const tree = useWarden((s) => (run.state === 'ended' ? undefined : s.trees[run.id]));
  const peak = peakFigure(run, tree);
  const cgroupPeak = peak?.source === 'cgroup' ? ` · cgroup peak ${bytes(peak.bytes)}` : '';
  // One time range for both charts: a drag on either zooms both, a double click on either resets both.
  const [zoom, setZoom] = useState<[number, number] | null>(null);
  const lastAt = points && points.length > 0 ? points[points.length - 1]![0] : 0;
  const marks = chartMarks(run, [...(run.stop?.signals ?? []), ...streamed], lastAt);
  const endMs = axisEndMs(run, lastAt, marks);
  return (
    <section className="rd-card" data-testid="telemetry">
      <h3>
        Over time
        <span className="rd-card-aside">
          {points && points.length > 0 ? `${points.length} sample${points.length === 1 ? '' : 's'}${source === 'history' ? ' from the history' : ''}` : ''}
          {zoom && (
            <>
              {' · '}
              <button type="button" className="rd-link" onClick={() => setZoom(null)} data-testid="telemetry-reset-zoom">
                reset zoom
              </button>
            </>
          )}
        </span>
      </h3>
      {error && <p className="error">The stored telemetry could not be read: {error}</p>}
      {!points || points.length < 2 ? (
        <p className="muted" data-testid="telemetry-none">
          {run.state === 'ended' ? (points === null ? 'Loading…' : 'Too short to chart: fewer than two samples were taken.') : 'Waiting for samples (two a second)…'}
        </p>
      ) : (
        <div className="rd-charts">
          <Chart testId="telemetry-cpu" sync={run.id} title="CPU (% of one core)" points={points} source={source} column={1} format={(v) => `${v.toFixed(0)} %`} marks={marks} endMs={endMs} floor={100} zoom={zoom} onZoom={setZoom} />
          <Chart
            testId="telemetry-rss"
            sync={run.id}
            title="Memory (RSS sum)"
            highest="highest RSS sum"
            extra={cgroupPeak}
            points={points}
            source={source}
            column={2}
            format={(v) => bytes(v)}
            marks={marks}
            endMs={endMs}
            line={memoryLimitOf(run)}
            lineLabel={memoryLimitOf(run) !== undefined ? `memory limit ${bytes(memoryLimitOf(run))}` : undefined}
            binary
            zoom={zoom}
            onZoom={setZoom}
          />
        </div>
      )}
    </section>
  );
}

function cssVar(name: string, fallback: string): string {
  const value = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  return value || fallback;
}

interface ChartProps {
  testId: string;
  /** Charts of the same key share their crosshair (uPlot's cursor sync). */
  sync: string;
  title: string;
  points: TelemetryPoint[];
  source: 'live' | 'history' | null;
  column: 1 | 2;
  format: (value: number) => string;
  /** The moments annotated: the limit, each stop step, a force kill, the out-of-memory kill, the end. */
  marks: ChartMark[];
  /** The time axis's end (ms): the run's end or its last mark. */
  endMs: number;
  /** A horizontal line: the memory limit. */
  line?: number | undefined;
  lineLabel?: string | undefined;
  /** The y axis reaches at least this (100 % for CPU). */
  floor?: number;
  /** Ticks in binary steps (memory). */
  binary?: boolean;
  /** What the caption calls the series' highest value ("highest RSS sum"). */
  highest?: string;
  /** More of the caption: the run's one peak, where it is not this series' highest. */
  extra?: string;
  /** The time range shown (seconds), zoomed by a drag; null: the whole run. */
  zoom: [number, number] | null;
  onZoom: (range: [number, number] | null) => void;
}

/** A panel's height: a share of the window's, between a readable least and a most that leaves room for the rest. */
function plotHeight(): number {
  return Math.round(Math.min(420, Math.max(200, window.innerHeight * 0.32)));
}

const MARK_COLOUR: Record<ChartMark['kind'], string> = { limit: '--fail', step: '--warn', force: '--fail', oom: '--fail', end: '--muted' };
const GRAVITY: Record<ChartMark['kind'], number> = { end: 0, step: 1, limit: 2, force: 3, oom: 4 };

function Chart({ testId, sync, title, points, source, column, format, marks, endMs, line, lineLabel, floor = 0, binary = false, highest = 'highest', extra = '', zoom, onZoom }: ChartProps) {
  const host = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const scheme = useScheme();
  const xs = points.map((p) => p[0] / 1000);
  const ys = points.map((p) => p[column]);
  const xMax = endMs / 1000;
  const yMax = Math.max(floor, line ?? 0, ...ys) * 1.08;
  // What the chart's hooks read when they run (the chart is built once; these change with each sample).
  const current = useRef({ marks, line, lineLabel, xMax, yMax, zoom, onZoom });
  current.current = { marks, line, lineLabel, xMax, yMax, zoom, onZoom };
  const reportZoom = useCallback((range: [number, number] | null) => current.current.onZoom(range), []);

  useLayoutEffect(() => {
    const el = host.current;
    if (!el) return undefined;
    const accent = cssVar('--info', '#2f6fd6');
    const text = cssVar('--muted', '#666');
    const grid = cssVar('--border', '#ddd');
    const panel = cssVar('--panel', '#fff');
    const colours = Object.fromEntries(Object.entries(MARK_COLOUR).map(([kind, v]) => [kind, cssVar(v, '#c0392b')])) as Record<ChartMark['kind'], string>;
    const started = performance.now();
    const opts: uPlot.Options = {
      width: Math.max(200, el.clientWidth),
      height: plotHeight(),
      // The values under the cursor, as Grafana's legend shows them.
      legend: { show: true, live: true },
      // One crosshair for the run's charts; a drag selects a time range, which zooms them all (setSelect below).
      cursor: { sync: { key: `warden-run-${sync}` }, drag: { x: true, y: false, setScale: false } },
      scales: {
        x: { time: false, range: () => current.current.zoom ?? [0, Math.max(0.001, current.current.xMax)] },
        y: { range: () => [0, Math.max(1, current.current.yMax)] },
      },
      axes: [
        {
          stroke: text,
          grid: { stroke: grid, width: 1 },
          ticks: { stroke: grid },
          // Clock steps, far enough apart that no two labels touch (a label is up to "59 min 59 s" wide, about 80 px).
          splits: (u) => {
            const [min, max] = current.current.zoom ?? [0, current.current.xMax];
            return timeTicks(max, (90 * (max - min)) / Math.max(1, u.bbox.width / (devicePixelRatio || 1)), min);
          },
          values: (_u, vals) => vals.map((v) => duration(v * 1000)),
        },
        {
          stroke: text,
          grid: { stroke: grid, width: 1 },
          ticks: { stroke: grid },
          size: 84,
          ...(binary ? { splits: () => binaryTicks(current.current.yMax) } : {}),
          values: (_u, vals) => vals.map((v) => format(v)),
        },
      ],
      series: [
        { label: 'at', value: (_u, v) => (v === null ? '–' : `+${duration(v * 1000)}`) },
        { label: title, stroke: accent, width: 1.5, fill: `${accent}22`, points: { show: false }, value: (_u, v) => (v === null ? '–' : format(v)) },
      ],
      hooks: {
        setSelect: [
          (u) => {
            if (u.select.width < 4) return;
            const from = u.posToVal(u.select.left, 'x');
            const to = u.posToVal(u.select.left + u.select.width, 'x');
            u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
            if (to > from) reportZoom([Math.max(0, from), to]);
          },
        ],
        draw: [
          (u) => {
            const ctx = u.ctx;
            const { marks: shown, line: hline, lineLabel: hlabel } = current.current;
            const top = u.bbox.top;
            const bottom = u.bbox.top + u.bbox.height;
            const left = u.bbox.left;
            const right = u.bbox.left + u.bbox.width;
            const dpr = devicePixelRatio || 1;
            ctx.save();
            ctx.lineWidth = dpr;
            ctx.font = `${11 * dpr}px system-ui, sans-serif`;
            // uPlot leaves its axes' alignment set: labels here are placed from their left edge, above the baseline.
            ctx.textAlign = 'left';
            ctx.textBaseline = 'alphabetic';
            const drawn: string[] = [];
            // Marks a few pixels apart (the limit and its SIGINT; the last SIGKILL and the end) share a line and a label.
            const groups: { x: number; kind: ChartMark['kind']; labels: string[] }[] = [];
            for (const mark of shown) {
              const x = u.valToPos(mark.atMs / 1000, 'x', true);
              if (!Number.isFinite(x) || x < left - 1 || x > right + 1) continue;
              drawn.push(`${mark.kind}@${Math.round(mark.atMs)}`);
              const last = groups[groups.length - 1];
              if (last && x - last.x < 4 * dpr) {
                last.labels.push(mark.label);
                // The line is drawn as its gravest mark: a kill over a step, a step over the end.
                if (GRAVITY[mark.kind] > GRAVITY[last.kind]) last.kind = mark.kind;
              } else groups.push({ x, kind: mark.kind, labels: [mark.label] });
            }
            const lineHeight = 15 * dpr;
            groups.forEach((group, row) => {
              const { x } = group;
              const colour = colours[group.kind];
              ctx.strokeStyle = colour;
              ctx.setLineDash((group.kind === 'step' ? [3, 3] : group.kind === 'limit' ? [6, 4] : group.kind === 'end' ? [1, 3] : []).map((d) => d * dpr));
              ctx.beginPath();
              ctx.moveTo(x, top);
              ctx.lineTo(x, bottom);
              ctx.stroke();
              ctx.setLineDash([]);
              // Its label on a tag against its own line (right of it, or left near the plot's right edge), a row per line, so labels never run into each other's.
              const label = group.labels.join(' · ');
              const width = ctx.measureText(label).width + 8 * dpr;
              const onLeft = x + width > right;
              const tagLeft = Math.max(left, onLeft ? x - width : x);
              const tagTop = top + 2 * dpr + lineHeight * (row % 5);
              ctx.fillStyle = panel;
              ctx.globalAlpha = 0.85;
              ctx.fillRect(tagLeft, tagTop, width, lineHeight - 2 * dpr);
              ctx.globalAlpha = 1;
              ctx.fillStyle = colour;
              ctx.fillRect(onLeft ? x - 2 * dpr : x, tagTop, 2 * dpr, lineHeight - 2 * dpr);
              ctx.fillText(label, tagLeft + (onLeft ? 3 : 5) * dpr, tagTop + 11 * dpr);
            });
            let labelX: number | null = null;
            if (hline !== undefined) {
              const y = u.valToPos(hline, 'y', true);
              ctx.strokeStyle = colours.limit;
              ctx.fillStyle = colours.limit;
              ctx.setLineDash([6 * dpr, 4 * dpr]);
              ctx.beginPath();
              ctx.moveTo(left, y);
              ctx.lineTo(right, y);
              ctx.stroke();
              // Inside the plot, at its left end (the marks' tags are at the top, by their lines): above the line, or below it when the line is at the top.
              if (hlabel) {
                const width = ctx.measureText(hlabel).width;
                labelX = left + 6 * dpr;
                const baseline = y - 15 * dpr < top ? y + 14 * dpr : y - 5 * dpr;
                ctx.fillStyle = panel;
                ctx.fillRect(labelX - 2 * dpr, baseline - 11 * dpr, width + 4 * dpr, 14 * dpr);
                ctx.fillStyle = colours.limit;
                ctx.fillText(hlabel, labelX, baseline);
              }
            }
            ctx.restore();
            // What was drawn, for a reader that cannot see a canvas (and the specs).
            el.dataset.marks = drawn.join(' ');
            el.dataset.xMin = String(u.scales.x!.min ?? 0);
            el.dataset.xMax = String(u.scales.x!.max ?? 0);
            el.dataset.limitLabel = labelX === null ? '' : labelX >= left && labelX <= right ? 'inside' : 'clipped';
            if (el.dataset.drawMs === undefined) el.dataset.drawMs = (performance.now() - started).toFixed(1);
          },
        ],
      },
    };
    const u = new uPlot(opts, [xs, ys], el);
    plot.current = u;
    const reset = () => reportZoom(null);
    u.over.addEventListener('dblclick', reset);
    const observer = new ResizeObserver(() => u.setSize({ width: Math.max(200, el.clientWidth), height: plotHeight() }));
    observer.observe(el);
    const onWindow = () => u.setSize({ width: Math.max(200, el.clientWidth), height: plotHeight() });
    window.addEventListener('resize', onWindow);
    return () => {
      observer.disconnect();
      window.removeEventListener('resize', onWindow);
      u.over.removeEventListener('dblclick', reset);
      u.destroy();
      plot.current = null;
      delete el.dataset.drawMs;
    };
    // Built once per chart and colour scheme (its colours are the theme's); new samples go through setData below.
  }, [column, scheme]);

  useEffect(() => {
    const u = plot.current;
    if (!u) return;
    u.setData([xs, ys], true);
    u.redraw(false, true);
  }, [points, xMax, yMax, zoom, marks.length]);

  const peak = Math.max(...ys);
  return (
    <figure className="rd-chart">
      <figcaption>
        {title}{' '}
        <span className="muted">
          · {highest} {format(peak)}
          {extra}
        </span>
      </figcaption>
      <div ref={host} className="rd-chart-plot" data-testid={testId} data-points={points.length} data-source={source ?? ''} title="Drag to zoom both charts; double-click to show the whole run" />
    </figure>
  );
}
