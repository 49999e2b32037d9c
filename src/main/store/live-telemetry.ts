// A live run's telemetry in the history, so a run its host loses keeps its
// charts. While a run is live the recorder hands the writer its series
// (shared/telemetry.ts) every few seconds, and whenever its peak rises in the
// same transaction as the peak, so the stored series always reaches the
// stored peak. The writer keeps it as chunks: 'telemetry-live' events of at
// most CHUNK_POINTS points, the open one rewritten in place until it is full,
// so a flush writes the points since the chunk began, never the whole series.
// A chunk is known by the time of its first point (its at_ms), not its row id:
// a history salvaged or replaced under a live run numbers its rows anew, and
// a row id kept from before could name another run's event.
// When the series thins (its step doubles past TELEMETRY_MAX_POINTS) the
// chunks are replaced by one holding the thinned series, so what is stored
// stays within the series' own bound (and one point again per chunk).
//
// A chunk's first point is the previous chunk's last one again, as it was
// later (a point keeps folding in the samples of its step until the next
// step begins): joining keeps the later one, so no moment is in twice.
//
// At the end the recorder stores the whole series as the run's one
// 'telemetry' event and the writer deletes the chunks in the same
// transaction; recovery joins a lost run's chunks into that one event. The
// history's readers never see a chunk.

import { TELEMETRY_EVENT, TELEMETRY_MAX_POINTS, readTelemetry, thin, type TelemetryDetail, type TelemetryPoint, type TelemetrySeries } from '../../shared/telemetry';
import { insertEvent } from './rows';
import { all, one, run, type Database } from './sql';

/** The kind of a chunk of a live run's series. */
export const LIVE_TELEMETRY_EVENT = 'telemetry-live';
/** Points per chunk: a flush rewrites at most this many (a few KB). */
export const CHUNK_POINTS = 120;

/** What of a run's series its chunks hold. */
export interface StoredSeries {
  stepMs: number;
  /** The index in the series where the open chunk begins. */
  from: number;
  /** Whether the open chunk has a row (at_ms: its first point's time). */
  open: boolean;
}

/** Stores `series` past what `stored` says is stored; returns what is stored then. Inside the caller's transaction. */
export function writeLiveSeries(db: Database, runId: string, series: TelemetryDetail, stored: StoredSeries | undefined, at: number): StoredSeries {
  if (stored !== undefined && stored.stepMs !== series.stepMs) {
    // Thinned: every point changed; the chunks give way to one holding the series as it is now.
    dropLiveSeries(db, runId);
    insertEvent(db, runId, at, series.points[0]?.[0] ?? 0, LIVE_TELEMETRY_EVENT, { stepMs: series.stepMs, points: series.points });
    return { stepMs: series.stepMs, from: Math.max(0, series.points.length - 1), open: false };
  }
  const state = stored ?? { stepMs: series.stepMs, from: 0, open: false };
  const points = series.points.slice(state.from);
  if (points.length === 0) return state;
  const detail = JSON.stringify({ stepMs: series.stepMs, points });
  const firstAtMs = points[0]![0];
  // Its row gone (the history replaced under the run): written again as a new one.
  const updated = state.open && run(db, 'UPDATE run_events SET at = ?, detail = ? WHERE run_id = ? AND kind = ? AND at_ms = ?', at, detail, runId, LIVE_TELEMETRY_EVENT, firstAtMs).changes > 0;
  if (!updated) run(db, 'INSERT INTO run_events (run_id, at, at_ms, kind, detail) VALUES (?, ?, ?, ?, ?)', runId, at, firstAtMs, LIVE_TELEMETRY_EVENT, detail);
  // Full: the next chunk begins at this one's last point, which may still gain samples of its step.
  if (points.length >= CHUNK_POINTS) return { stepMs: series.stepMs, from: series.points.length - 1, open: false };
  return { stepMs: series.stepMs, from: state.from, open: true };
}

export function dropLiveSeries(db: Database, runId: string): void {
  run(db, 'DELETE FROM run_events WHERE run_id = ? AND kind = ?', runId, LIVE_TELEMETRY_EVENT);
}

/** The series a run's chunks hold, joined; null when it has none that reads. */
export function readLiveSeries(db: Database, runId: string): TelemetryDetail | null {
  const rows = all<{ detail: string }>(db, 'SELECT detail FROM run_events WHERE run_id = ? AND kind = ? ORDER BY id', runId, LIVE_TELEMETRY_EVENT);
  const chunks: TelemetryDetail[] = [];
  for (const row of rows) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(row.detail);
    } catch {
      continue; // a damaged chunk: the others still read
    }
    const chunk = readTelemetry(parsed);
    if (chunk) chunks.push(chunk);
  }
  return joinChunks(chunks);
}

/**
 * Chunks in the order written as one series: a point at or before the last
 * one kept replaces the points from there (it is the same step, later), and
 * the series is held to TELEMETRY_MAX_POINTS as the live one is.
 */
export function joinChunks(chunks: readonly TelemetryDetail[]): TelemetryDetail | null {
  const points: TelemetryPoint[] = [];
  let stepMs = 0;
  for (const chunk of chunks) {
    stepMs = Math.max(stepMs, chunk.stepMs);
    for (const p of chunk.points) {
      while (points.length > 0 && points[points.length - 1]![0] >= p[0]) points.pop();
      points.push(p);
    }
  }
  if (points.length === 0) return null;
  let series: TelemetrySeries = { stepMs, points, lastWeight: 1 };
  while (series.points.length > TELEMETRY_MAX_POINTS) series = thin(series);
  return { stepMs: series.stepMs, points: series.points };
}

/**
 * A lost run's chunks become its one 'telemetry' event, as an ended run's
 * series is stored; true when it had any. Inside the caller's transaction.
 */
export function settleLiveSeries(db: Database, runId: string, at: number): boolean {
  const series = readLiveSeries(db, runId);
  dropLiveSeries(db, runId);
  if (!series) return false;
  if (one(db, 'SELECT 1 AS x FROM run_events WHERE run_id = ? AND kind = ? LIMIT 1', runId, TELEMETRY_EVENT)) return true;
  insertEvent(db, runId, at, null, TELEMETRY_EVENT, series as unknown as Record<string, unknown>);
  return true;
}
