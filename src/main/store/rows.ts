// How a run is laid out in the tables: a RunResult to a `runs` row and its
// full-text row, stored output rows back to a stream's text, and the event
// timeline. The writer, recovery and the queries all go through here.

import type { OutputStream } from '../../shared/events';
import type { PeakFigures, RunResult } from '../../shared/result';
import { droppedMarker } from '../../shared/stream-length';
import { all, one, run, type Database } from './sql';

/** Characters of each stream's end indexed for full-text search. */
export const FTS_TAIL_CHARS = 4000;
/** Characters of a script's code indexed for full-text search. */
export const FTS_CODE_CHARS = 20_000;

export function epochMs(iso: string | undefined): number | null {
  if (iso === undefined) return null;
  const ms = Date.parse(iso);
  return Number.isFinite(ms) ? ms : null;
}

/** How the command reads in a list: argv joined, each argument quoted only when it needs it. */
export function commandLine(argv: string[] | undefined): string | null {
  if (!argv) return null;
  return argv.map((a) => (a === '' || /[^\w@%+=:,./-]/.test(a) ? `'${a.replace(/'/g, `'\\''`)}'` : a)).join(' ');
}

/** The result as stored in runs.result: everything but the output, which is in run_output. */
function resultJson(result: RunResult): string {
  return JSON.stringify({ ...result, stdout: '', stderr: '' });
}

/**
 * Inserts the run or brings its row up to `result`. A row already ended is
 * only overwritten by another ended result (the host's own end wins over a
 * recovery that thought it lost).
 */
export function upsertRun(db: Database, hostId: string, result: RunResult, outputBytes: number | null): number {
  const startedAt = epochMs(result.startedAt) ?? Date.now();
  run(
    db,
    `INSERT INTO runs (id, host_id, kind, argv, command, code, session, cwd, state, verdict, exit_code, signal,
       started_at, ended_at, elapsed_ms, limit_ms, advice, notes, stdout_truncated, stderr_truncated,
       peak_rss, peak_processes, result, output_bytes)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, coalesce(?, 0))
     ON CONFLICT (id) DO UPDATE SET
       kind = excluded.kind, argv = excluded.argv, command = excluded.command, code = excluded.code,
       session = excluded.session, cwd = excluded.cwd, state = excluded.state, verdict = excluded.verdict,
       exit_code = excluded.exit_code, signal = excluded.signal, started_at = excluded.started_at,
       ended_at = excluded.ended_at, elapsed_ms = excluded.elapsed_ms, limit_ms = excluded.limit_ms,
       advice = excluded.advice, notes = excluded.notes, stdout_truncated = excluded.stdout_truncated,
       stderr_truncated = excluded.stderr_truncated, peak_rss = excluded.peak_rss,
       peak_processes = excluded.peak_processes, result = excluded.result,
       output_bytes = coalesce(?, runs.output_bytes)
     WHERE runs.state != 'ended' OR excluded.state = 'ended'`,
    result.id,
    hostId,
    result.kind,
    result.argv ? JSON.stringify(result.argv) : null,
    commandLine(result.argv),
    result.code ?? null,
    result.session ?? null,
    result.cwd,
    result.state,
    result.verdict ?? null,
    result.exitCode,
    result.signal,
    startedAt,
    epochMs(result.endedAt),
    result.elapsedMs,
    result.limitMs,
    result.advice,
    JSON.stringify(result.notes),
    result.stdoutTruncated,
    result.stderrTruncated,
    result.peak?.rssBytes ?? null,
    result.peak?.processes ?? null,
    resultJson(result),
    outputBytes,
    outputBytes,
  );
  return one<{ n: number }>(db, 'SELECT n FROM runs WHERE id = ?', result.id)!.n;
}

/** A live run's limit moved: its row and stored snapshot show the new one. A row already ended keeps the limit it ended with. */
export function setLiveLimit(db: Database, runId: string, limitMs: number): void {
  run(db, "UPDATE runs SET limit_ms = ?, result = json_set(result, '$.limitMs', ?) WHERE id = ? AND state != 'ended'", limitMs, limitMs, runId);
}

export function setLivePeak(db: Database, runId: string, peak: PeakFigures): void {
  run(
    db,
    "UPDATE runs SET peak_rss = ?, peak_processes = ?, result = json_set(result, '$.peak', json(?)) WHERE id = ? AND state != 'ended'",
    peak.rssBytes,
    peak.processes,
    JSON.stringify({ rssBytes: peak.rssBytes, processes: peak.processes, ...(peak.source ? { source: peak.source } : {}) }),
    runId,
  );
}

/** The end of a stream, cut at a character boundary. */
export function tailOf(value: string, chars: number): string {
  if (value.length <= chars) return value;
  let start = value.length - chars;
  const c = value.charCodeAt(start);
  if (c >= 0xdc00 && c <= 0xdfff) start++; // never start on the second half of a pair
  return value.slice(start);
}

/** Sets the run's full-text row: command, code and the ends of its output. */
export function indexRun(db: Database, n: number, result: RunResult, stdout: string, stderr: string): void {
  run(db, 'DELETE FROM runs_fts WHERE rowid = ?', n);
  run(
    db,
    'INSERT INTO runs_fts (rowid, command, code, stdout_tail, stderr_tail) VALUES (?, ?, ?, ?, ?)',
    n,
    commandLine(result.argv) ?? '',
    (result.code ?? '').slice(0, FTS_CODE_CHARS),
    tailOf(stdout, FTS_TAIL_CHARS),
    tailOf(stderr, FTS_TAIL_CHARS),
  );
}

/** Replaces the run's output with the output its result kept; returns the bytes stored. */
export function replaceOutput(db: Database, runId: string, stdout: string, stderr: string): number {
  run(db, 'DELETE FROM run_output WHERE run_id = ?', runId);
  let bytes = 0;
  for (const [stream, value] of [['stdout', stdout], ['stderr', stderr]] as const) {
    if (value.length === 0) continue;
    const blob = Buffer.from(value, 'utf8');
    bytes += blob.length;
    run(db, 'INSERT INTO run_output (run_id, stream, seq, offset, chars, final, text) VALUES (?, ?, 0, 0, ?, 1, ?)', runId, stream, value.length, blob);
  }
  return bytes;
}

export interface StoredStream {
  text: string;
  /** Characters known to be missing between stored rows. */
  dropped: number;
  /** Characters stored (without markers). */
  storedChars: number;
}

/** A stream's stored text: the final row, or the live rows with a marker wherever a gap shows output was dropped. */
export function readStream(db: Database, runId: string, stream: OutputStream): StoredStream {
  const rows = all<{ offset: number; chars: number; final: number; text: Buffer }>(
    db,
    'SELECT offset, chars, final, text FROM run_output WHERE run_id = ? AND stream = ? ORDER BY final DESC, seq',
    runId,
    stream,
  );
  const finalRow = rows[0]?.final ? rows[0] : undefined;
  if (finalRow) {
    const value = Buffer.from(finalRow.text).toString('utf8');
    return { text: value, dropped: 0, storedChars: value.length };
  }
  const parts: string[] = [];
  let expected = 0;
  let dropped = 0;
  let storedChars = 0;
  for (const row of rows) {
    if (row.offset > expected) {
      dropped += row.offset - expected;
      parts.push(droppedMarker(row.offset - expected));
    }
    const value = Buffer.from(row.text).toString('utf8');
    parts.push(value);
    storedChars += value.length;
    expected = Math.max(expected, row.offset + row.chars);
  }
  return { text: parts.join(''), dropped, storedChars };
}


export type { EventRecord } from '../../shared/history';
import type { EventRecord } from '../../shared/history';

export function insertEvent(db: Database, runId: string, at: number, atMs: number | null, kind: string, detail: Record<string, unknown>): void {
  run(db, 'INSERT INTO run_events (run_id, at, at_ms, kind, detail) VALUES (?, ?, ?, ?, ?)', runId, at, atMs, kind, JSON.stringify(detail));
}

/** Events the final result tells of: the exit, the teardown, the verdict. */
export function insertEndEvents(db: Database, result: RunResult): void {
  const endedAt = epochMs(result.endedAt) ?? Date.now();
  const startedAt = epochMs(result.startedAt) ?? endedAt;
  insertEvent(db, result.id, startedAt + result.elapsedMs, result.elapsedMs, 'exit', { exitCode: result.exitCode, signal: result.signal });
  if (result.teardown) {
    const { killed, survivors, elapsedMs, complete } = result.teardown;
    insertEvent(db, result.id, endedAt, null, 'teardown', { killed: killed.length, survivors: survivors.length, elapsedMs, complete });
  }
  insertEvent(db, result.id, endedAt, null, 'ended', { verdict: result.verdict ?? null, exitCode: result.exitCode, signal: result.signal });
}

export function readEvents(db: Database, runId: string): EventRecord[] {
  return all<{ at: number; at_ms: number | null; kind: string; detail: string }>(
    db,
    'SELECT at, at_ms, kind, detail FROM run_events WHERE run_id = ? ORDER BY id',
    runId,
  ).map((row) => ({ runId, at: new Date(row.at).toISOString(), atMs: row.at_ms, kind: row.kind, detail: JSON.parse(row.detail) as Record<string, unknown> }));
}

/** Writes a whole ended run at once: row, output, full-text row and end events. */
export function writeEnded(db: Database, hostId: string, result: RunResult, options: { events?: boolean } = {}): void {
  // The row first when it is new: run_output references it.
  const n = upsertRun(db, hostId, result, null);
  const bytes = replaceOutput(db, result.id, result.stdout, result.stderr);
  run(db, 'UPDATE runs SET output_bytes = ? WHERE n = ?', bytes, n);
  indexRun(db, n, result, result.stdout, result.stderr);
  if (options.events !== false) insertEndEvents(db, result);
}
