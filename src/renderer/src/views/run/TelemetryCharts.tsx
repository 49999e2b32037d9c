// A run's CPU and memory over time (uPlot): the sampler's series, live from
// the page's store, or for an ended run from the history's 'telemetry' event.
// The time limit and the memory limit are drawn as lines, the stop signals as
// marks at their times.

import { useEffect, useLayoutEffect, useRef, useState } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { RunResult, SignalSent } from '../../../../shared/result';
import { readTelemetry, TELEMETRY_EVENT, type TelemetryPoint } from '../../../../shared/telemetry';
import { bytes, duration, memoryLimitOf, peakFigure } from '../../format';
import { binaryTicks, timeTicks } from './chart-ticks';
import { messageOf, useWarden } from '../../store';

const NO_SIGNALS: SignalSent[] = [];
const STOP_SIGNALS = new Set(['SIGINT', 'SIGTERM', 'SIGKILL']);

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
  const signals = [...(run.stop?.signals ?? []), ...streamed].filter((s, i, all) => STOP_SIGNALS.has(s.signal) && all.findIndex((o) => o.signal === s.signal && Math.abs(o.atMs - s.atMs) <= 1) === i);
  // The chart plots its processes' RSS sum; where the run's one peak is its cgroup's counter, the caption says that figure too.
  const tree = useWarden((s) => (run.state === 'ended' ? undefined : s.trees[run.id]));
  const peak = peakFigure(run, tree);
  const cgroupPeak = peak?.source === 'cgroup' ? ` · cgroup peak ${bytes(peak.bytes)}` : '';
  return (
    <section className="rd-card" data-testid="telemetry">
      <h3>
        Over time
        <span className="rd-card-aside">
          {points && points.length > 0 ? `${points.length} sample${points.length === 1 ? '' : 's'}${source === 'history' ? ' from the history' : ''}` : ''}
        </span>
      </h3>
      {error && <p className="error">The stored telemetry could not be read: {error}</p>}
      {!points || points.length < 2 ? (
        <p className="muted" data-testid="telemetry-none">
          {run.state === 'ended' ? (points === null ? 'Loading…' : 'Too short to chart: fewer than two samples were taken.') : 'Waiting for samples (two a second)…'}
        </p>
      ) : (
        <div className="rd-charts">
          <Chart testId="telemetry-cpu" title="CPU (% of one core)" points={points} source={source} column={1} format={(v) => `${v.toFixed(0)} %`} limitMs={run.limitMs} signals={signals} floor={100} />
          <Chart
            testId="telemetry-rss"
            title="Memory (RSS sum)"
            highest="highest RSS sum"
            extra={cgroupPeak}
            points={points}
            source={source}
            column={2}
            format={(v) => bytes(v)}
            limitMs={run.limitMs}
            signals={signals}
            line={memoryLimitOf(run)}
            lineLabel={memoryLimitOf(run) !== undefined ? `memory limit ${bytes(memoryLimitOf(run))}` : undefined}
            binary
            oomAtMs={run.oom?.confirmed && run.state === 'ended' ? run.elapsedMs : undefined}
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
  title: string;
  points: TelemetryPoint[];
  source: 'live' | 'history' | null;
  column: 1 | 2;
  format: (value: number) => string;
  limitMs: number | null;
  signals: SignalSent[];
  /** A horizontal line: the memory limit. */
  line?: number | undefined;
  lineLabel?: string | undefined;
  /** The y axis reaches at least this (100 % for CPU). */
  floor?: number;
  /** Ticks in binary steps (memory). */
  binary?: boolean;
  /** When the out-of-memory killer ended it (ms since the start), marked on the chart. */
  oomAtMs?: number | undefined;
  /** What the caption calls the series' highest value ("highest RSS sum"). */
  highest?: string;
  /** More of the caption: the run's one peak, where it is not this series' highest. */
  extra?: string;
}

function Chart({ testId, title, points, source, column, format, limitMs, signals, line, lineLabel, floor = 0, binary = false, oomAtMs, highest = 'highest', extra = '' }: ChartProps) {
  const host = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const lastAt = points[points.length - 1]![0];
  // The time limit is shown when it is near the data (a run that timed out, or close to it), not to squash a short run.
  const showLimit = limitMs !== null && limitMs <= lastAt * 1.25 + 1000;
  const xs = points.map((p) => p[0] / 1000);
  const ys = points.map((p) => p[column]);
  const xMax = Math.max(lastAt, showLimit ? limitMs! : 0) / 1000;
  const yMax = Math.max(floor, line ?? 0, ...ys) * 1.08;
  // What the chart's hooks read when they run (the chart is built once; these change with each sample).
  const oomAt = oomAtMs ?? null;
  const marks = useRef({ limitMs, signals, line, lineLabel, showLimit, xMax, yMax, oomAt });
  marks.current = { limitMs, signals, line, lineLabel, showLimit, xMax, yMax, oomAt };

  useLayoutEffect(() => {
    const el = host.current;
    if (!el) return undefined;
    const accent = cssVar('--info', '#2f6fd6');
    const text = cssVar('--muted', '#666');
    const grid = cssVar('--border', '#ddd');
    const warn = cssVar('--warn', '#b26a00');
    const fail = cssVar('--fail', '#c0392b');
    const started = performance.now();
    const opts: uPlot.Options = {
      width: Math.max(200, el.clientWidth),
      height: 160,
      // The values under the cursor, as Grafana's legend shows them.
      legend: { show: true, live: true },
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: false, range: () => [0, Math.max(1, marks.current.xMax)] }, y: { range: () => [0, Math.max(1, marks.current.yMax)] } },
      axes: [
        {
          stroke: text,
          grid: { stroke: grid, width: 1 },
          ticks: { stroke: grid },
          // Clock steps, far enough apart that no two labels touch (a label is up to "59 min 59 s" wide, about 80 px).
          splits: (u) => timeTicks(marks.current.xMax, (90 * marks.current.xMax) / Math.max(1, u.bbox.width / (devicePixelRatio || 1))),
          values: (_u, vals) => vals.map((v) => duration(v * 1000)),
        },
        {
          stroke: text,
          grid: { stroke: grid, width: 1 },
          ticks: { stroke: grid },
          size: 84,
          ...(binary ? { splits: () => binaryTicks(marks.current.yMax) } : {}),
          values: (_u, vals) => vals.map((v) => format(v)),
        },
      ],
      series: [
        { label: 'at', value: (_u, v) => (v === null ? '–' : `+${duration(v * 1000)}`) },
        { label: title, stroke: accent, width: 1.5, fill: `${accent}22`, points: { show: false }, value: (_u, v) => (v === null ? '–' : format(v)) },
      ],
      hooks: {
        draw: [
          (u) => {
            const ctx = u.ctx;
            const { limitMs: lim, signals: sig, line: hline, lineLabel: hlabel, showLimit: withLimit, oomAt } = marks.current;
            const top = u.bbox.top;
            const bottom = u.bbox.top + u.bbox.height;
            const dpr = devicePixelRatio || 1;
            ctx.save();
            ctx.lineWidth = dpr;
            ctx.font = `${11 * dpr}px system-ui, sans-serif`;
            // Each mark's label on its own line, so marks at one moment (the limit and its SIGINT) stay readable.
            const vline = (atMs: number, colour: string, label: string, dash: number[], row: number) => {
              const x = u.valToPos(atMs / 1000, 'x', true);
              if (!Number.isFinite(x) || x < u.bbox.left - 1 || x > u.bbox.left + u.bbox.width + 1) return;
              ctx.strokeStyle = colour;
              ctx.fillStyle = colour;
              ctx.setLineDash(dash.map((d) => d * dpr));
              ctx.beginPath();
              ctx.moveTo(x, top);
              ctx.lineTo(x, bottom);
              ctx.stroke();
              const width = ctx.measureText(label).width;
              const right = u.bbox.left + u.bbox.width;
              ctx.fillText(label, x + 3 * dpr + width > right ? x - 3 * dpr - width : x + 3 * dpr, top + 11 * dpr * (row + 1));
            };
            if (lim !== null && withLimit) vline(lim, fail, `limit ${duration(lim)}`, [6, 4], 0);
            sig.forEach((s, i) => vline(s.atMs, warn, s.signal, i % 2 ? [2, 2] : [3, 3], i + 1));
            if (oomAt !== null) vline(oomAt, fail, 'out-of-memory kill', [], sig.length + 1);
            if (hline !== undefined) {
              const y = u.valToPos(hline, 'y', true);
              ctx.strokeStyle = fail;
              ctx.fillStyle = fail;
              ctx.setLineDash([6 * dpr, 4 * dpr]);
              ctx.beginPath();
              ctx.moveTo(u.bbox.left, y);
              ctx.lineTo(u.bbox.left + u.bbox.width, y);
              ctx.stroke();
              // Inside the plot: above the line, or below it when the line is at the top.
              if (hlabel) ctx.fillText(hlabel, u.bbox.left + 4 * dpr, y - 14 * dpr < top ? y + 13 * dpr : y - 4 * dpr);
            }
            ctx.restore();
            if (el.dataset.drawMs === undefined) el.dataset.drawMs = (performance.now() - started).toFixed(1);
          },
        ],
      },
    };
    const u = new uPlot(opts, [xs, ys], el);
    plot.current = u;
    const observer = new ResizeObserver(() => u.setSize({ width: Math.max(200, el.clientWidth), height: 160 }));
    observer.observe(el);
    return () => {
      observer.disconnect();
      u.destroy();
      plot.current = null;
      delete el.dataset.drawMs;
    };
    // Built once per chart; new samples go through setData below.
  }, [column]);

  useEffect(() => {
    const u = plot.current;
    if (!u) return;
    u.setData([xs, ys], true);
    u.redraw(false, true);
  }, [points, xMax, yMax]);

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
      <div ref={host} className="rd-chart-plot" data-testid={testId} data-points={points.length} data-source={source ?? ''} />
    </figure>
  );
}
