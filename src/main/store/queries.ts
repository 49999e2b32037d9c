// Reading the history: pages of runs newest first with filters and full-text
// search, one run whole, its event timeline, and counts per verdict.
//
// Paging is by keyset on (started_at, id): a page never shifts when runs are
// added or pruned while someone pages, and page 1,000 costs what page 1 does.

import type { OomReport, RunKind, RunResult, RunState, Verdict } from '../../shared/result';
import { LIVE_TELEMETRY_EVENT } from './live-telemetry';
import { readEvents, readStream, type EventRecord } from './rows';
import { all, one, type Database, type SqlValue } from './sql';
import { InputError } from '../../shared/errors';

export type { TimeBound, ListQuery, RunSummary, RunPage, VerdictCounts } from '../../shared/history';
import type { TimeBound, ListQuery, RunSummary, RunPage, VerdictCounts } from '../../shared/history';

/** A query the store cannot run as asked: a bad cursor, time or limit. */
export class StoreQueryError extends InputError {
  override name = 'StoreQueryError';
}

export const MAX_PAGE = 1000;

// Every verdict of the result contract: a Record, so a verdict added to shared/result.ts fails to compile here until listed.
const VERDICT_SET: Record<Verdict, true> = { completed: true, failed: true, 'timed-out': true, stopped: true, killed: true, crashed: true, signaled: true, lost: true, 'spawn-failed': true };
export const VERDICTS = Object.keys(VERDICT_SET) as Verdict[];

export function toEpochMs(bound: TimeBound, name: string): number {
  const ms = bound instanceof Date ? bound.getTime() : typeof bound === 'number' ? bound : Date.parse(bound);
  if (!Number.isFinite(ms)) throw new StoreQueryError(`${name} must be a time (ms since the epoch, a Date or ISO 8601), not ${JSON.stringify(bound)}.`);
  return ms;
}

/** A page's end: the sort value and id of its last run; the sort is named unless it is the default (start, newest first). */
function encodeCursor(value: number, id: string, sort = 'started:desc'): string {
  return Buffer.from(JSON.stringify(sort === 'started:desc' ? [value, id] : [value, id, sort])).toString('base64url');
}

function decodeCursor(cursor: string, sort = 'started:desc'): [number, string] {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
  } catch {
    // reported below
  }
  if (Array.isArray(value) && typeof value[0] === 'number' && typeof value[1] === 'string') {
    const of = typeof value[2] === 'string' ? value[2] : 'started:desc';
    if (of !== sort) throw new StoreQueryError(`This cursor pages the history sorted by ${of.replace(':', ' ')}, not by ${sort.replace(':', ' ')}: start again without it.`);
    return [value[0], value[1]];
  }
  throw new StoreQueryError(`Not a cursor from this history: ${JSON.stringify(cursor.slice(0, 40))}.`);
}

/** The column each sort orders by; a run never sampled sorts below every sampled one. */
const SORT_COLUMNS: Record<NonNullable<ListQuery['sort']>, string> = { started: 'started_at', elapsed: 'elapsed_ms', peak: 'coalesce(peak_rss, -1)' };
const SORT_VALUE: Record<NonNullable<ListQuery['sort']>, (row: RunRow) => number> = {
  started: (row) => row.started_at,
  elapsed: (row) => row.elapsed_ms,
  peak: (row) => row.peak_rss ?? -1,
};

/**
 * Text as an FTS5 query: each word quoted (so operators and punctuation in
 * what a person types are searched, not parsed), all words required, words of
 * three or more characters matched as prefixes. Null when there is no word.
 */
export function ftsQuery(input: string): string | null {
  const words = input.split(/\s+/).filter((w) => w.length > 0);
  if (words.length === 0) return null;
  return words.map((w) => `"${w.replace(/"/g, '""')}"${w.length >= 3 ? ' *' : ''}`).join(' ');
}

interface RunRow {
  id: string;
  host_id: string;
  kind: RunKind;
  argv: string | null;
  command: string | null;
  code: string | null;
  session: string | null;
  cwd: string;
  state: RunState;
  verdict: Verdict | null;
  exit_code: number | null;
  signal: string | null;
  started_at: number;
  ended_at: number | null;
  elapsed_ms: number;
  limit_ms: number | null;
  advice: string | null;
  stdout_truncated: number;
  stderr_truncated: number;
  peak_rss: number | null;
  peak_processes: number | null;
  output_bytes: number;
  oom: string | null;
  peak_source: 'cgroup' | 'sampled' | null;
  owner: string | null;
  left_behind: number | null;
  survived: number | null;
}

const SUMMARY_COLUMNS = `id, host_id, kind, argv, command, substr(code, 1, 500) AS code, session, cwd, state, verdict,
  exit_code, signal, started_at, ended_at, elapsed_ms, limit_ms, advice, stdout_truncated, stderr_truncated,
  peak_rss, peak_processes, output_bytes, json_extract(result, '$.oom') AS oom, json_extract(result, '$.peak.source') AS peak_source, json_extract(result, '$.owner') AS owner,
  json_array_length(result, '$.teardown.killed') AS left_behind, json_array_length(result, '$.teardown.survivors') AS survived`;

function summary(row: RunRow): RunSummary {
  return {
    id: row.id,
    hostId: row.host_id,
    kind: row.kind,
    ...(row.argv !== null ? { argv: JSON.parse(row.argv) as string[] } : {}),
    command: row.command,
    ...(row.owner !== null ? { owner: JSON.parse(row.owner) as RunSummary['owner'] } : {}),
    ...(row.code !== null ? { code: row.code } : {}),
    ...(row.session !== null ? { session: row.session } : {}),
    cwd: row.cwd,
    state: row.state,
    ...(row.verdict !== null ? { verdict: row.verdict } : {}),
    exitCode: row.exit_code,
    signal: row.signal,
    startedAt: new Date(row.started_at).toISOString(),
    ...(row.ended_at !== null ? { endedAt: new Date(row.ended_at).toISOString() } : {}),
    elapsedMs: row.elapsed_ms,
    limitMs: row.limit_ms,
    advice: row.advice,
    stdoutTruncated: row.stdout_truncated,
    stderrTruncated: row.stderr_truncated,
    peakRssBytes: row.peak_rss,
    peakProcesses: row.peak_processes,
    ...(row.peak_source === 'cgroup' || row.peak_source === 'sampled' ? { peakSource: row.peak_source } : {}),
    outputBytes: row.output_bytes,
    ...(row.oom !== null ? { oom: JSON.parse(row.oom) as OomReport } : {}),
    ...(row.left_behind ? { leftBehind: row.left_behind } : {}),
    ...(row.survived ? { survived: row.survived } : {}),
  };
}

export function listRuns(db: Database, query: ListQuery = {}): RunPage {
  const limit = query.limit ?? 50;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) throw new StoreQueryError(`limit must be an integer from 1 to ${MAX_PAGE}, not ${JSON.stringify(query.limit)}.`);
  const sortKey = query.sort ?? 'started';
  const order = query.order ?? 'desc';
  if (!(sortKey in SORT_COLUMNS)) throw new StoreQueryError(`sort must be started, elapsed or peak, not ${JSON.stringify(query.sort)}.`);
  if (order !== 'asc' && order !== 'desc') throw new StoreQueryError(`order must be asc or desc, not ${JSON.stringify(query.order)}.`);
  const sortName = `${sortKey}:${order}`;
  const column = SORT_COLUMNS[sortKey];
  // Every filter but the verdict (and live/ended): the counts per verdict are taken over these.
  const where: string[] = [];
  const params: SqlValue[] = [];
  if (query.kind !== undefined) {
    where.push('kind = ?');
    params.push(query.kind);
  }
  if (query.session !== undefined) {
    where.push('session = ?');
    params.push(query.session);
  }
  if (query.since !== undefined) {
    where.push('started_at >= ?');
    params.push(toEpochMs(query.since, 'since'));
  }
  if (query.until !== undefined) {
    where.push('started_at < ?');
    params.push(toEpochMs(query.until, 'until'));
  }
  if (query.exitCode !== undefined) {
    if (!Number.isInteger(query.exitCode)) throw new StoreQueryError(`exitCode must be an integer, not ${JSON.stringify(query.exitCode)}.`);
    where.push('exit_code = ?');
    params.push(query.exitCode);
  }
  if (query.text !== undefined) {
    const match = ftsQuery(query.text);
    if (match !== null) {
      where.push('n IN (SELECT rowid FROM runs_fts WHERE runs_fts MATCH ?)');
      params.push(match);
    }
  }
  const counts = query.counts === true && !query.cursor ? countWhere(db, where, params) : undefined;
  const verdicts = query.verdict === undefined ? [] : Array.isArray(query.verdict) ? query.verdict : [query.verdict];
  if (verdicts.length > 0) {
    where.push(`verdict IN (${verdicts.map(() => '?').join(', ')})`);
    params.push(...verdicts);
  }
  // An out-of-memory kill is told from another kill as the badge tells it: by the cgroup's confirmed count.
  if (query.oom === true) where.push(OOM_KILLED);
  if (query.oom === false) where.push(`NOT (${OOM_KILLED})`);
  if (query.state === 'live') where.push(`state != 'ended'`);
  if (query.state === 'ended') where.push(`state = 'ended'`);
  if (query.cursor) {
    const [value, id] = decodeCursor(query.cursor, sortName);
    where.push(`(${column}, id) ${order === 'desc' ? '<' : '>'} (?, ?)`);
    params.push(value, id);
  }
  const direction = order === 'desc' ? 'DESC' : 'ASC';
  const rows = all<RunRow>(
    db,
    `SELECT ${SUMMARY_COLUMNS} FROM runs ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
     ORDER BY ${column} ${direction}, id ${direction} LIMIT ?`,
    ...params,
    limit + 1,
  );
  const more = rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  const last = page[page.length - 1];
  return {
    runs: page.map(summary),
    nextCursor: more && last ? encodeCursor(SORT_VALUE[sortKey](last), last.id, sortName) : null,
    ...(counts ? { counts } : {}),
  };
}

/** A killed run whose memory cgroup confirmed the out-of-memory killer's kill. */
const OOM_KILLED = "(verdict = 'killed' AND coalesce(json_extract(result, '$.oom.confirmed'), 0) = 1)";

/** Runs matching `where`, per verdict ('live' for those without one), and of the killed how many were out-of-memory kills. */
function countWhere(db: Database, where: string[], params: SqlValue[]): VerdictCounts {
  const rows = all<{ verdict: Verdict | null; n: number; oom: number }>(
    db,
    `SELECT verdict, count(*) AS n, sum(CASE WHEN ${OOM_KILLED} THEN 1 ELSE 0 END) AS oom FROM runs ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} GROUP BY verdict`,
    ...params,
  );
  const counts: VerdictCounts = { total: 0 };
  for (const row of rows) {
    counts[row.verdict ?? 'live'] = row.n;
    counts.total += row.n;
    if (row.oom > 0) counts.oom = (counts.oom ?? 0) + row.oom;
  }
  return counts;
}

/** The whole result: as it ended, or for a live run its first snapshot with the output stored so far. */
export function getRun(db: Database, id: string): RunResult | null {
  const row = one<{ result: string; state: RunState }>(db, 'SELECT result, state FROM runs WHERE id = ?', id);
  if (!row) return null;
  const result = JSON.parse(row.result) as RunResult;
  const stdout = readStream(db, id, 'stdout');
  const stderr = readStream(db, id, 'stderr');
  result.stdout = stdout.text;
  result.stderr = stderr.text;
  if (row.state !== 'ended') {
    result.state = row.state;
    result.stdoutTruncated = stdout.dropped;
    result.stderrTruncated = stderr.dropped;
  }
  return result;
}

export function getEvents(db: Database, id: string): EventRecord[] {
  // A live run's telemetry chunks are the store's own (live-telemetry.ts): the host answers with its whole series.
  return readEvents(db, id).filter((e) => e.kind !== LIVE_TELEMETRY_EVENT);
}

export function countByVerdict(db: Database, range: { since?: TimeBound; until?: TimeBound } = {}): VerdictCounts {
  const since = range.since === undefined ? -Number.MAX_SAFE_INTEGER : toEpochMs(range.since, 'since');
  const until = range.until === undefined ? Number.MAX_SAFE_INTEGER : toEpochMs(range.until, 'until');
  // One range count per verdict on the covering (verdict, started_at) index: a
  // GROUP BY over the time range would visit every run's row instead.
  const branches = [...VERDICTS.map((v) => `SELECT '${v}' AS verdict, count(*) AS n FROM runs WHERE verdict = '${v}' AND started_at >= ? AND started_at < ?`),
    `SELECT 'live' AS verdict, count(*) AS n FROM runs WHERE verdict IS NULL AND started_at >= ? AND started_at < ?`];
  const rows = all<{ verdict: Verdict | 'live'; n: number }>(db, branches.join(' UNION ALL '), ...branches.flatMap(() => [since, until]));
  const counts: VerdictCounts = { total: 0 };
  for (const row of rows) {
    if (row.n === 0) continue;
    counts[row.verdict] = row.n;
    counts.total += row.n;
  }
  return counts;
}
