// Reading what still reads out of a damaged history, the way SQLite's
// `.recover` does it in spirit: page by page rather than all or nothing.
//
// A damaged page fails every query that walks through it, so one scan of a
// table loses everything after the first bad page. Instead:
//
// | what                                | how it is read                                                        |
// |-------------------------------------|-----------------------------------------------------------------------|
// | which runs exist                    | each rowid of `runs` looked up alone (a lookup touches one leaf), and |
// |                                     | each index on `runs` scanned from both ends (each scan stops only at  |
// |                                     | the damage), so a run whose row is lost is still known by its id      |
// | a run's record                      | its row by rowid, else by id; when neither reads, rebuilt from the    |
// |                                     | indexes (start, verdict, kind, session, exit code) and its timeline   |
// | its output, its timeline            | each on its own: a damaged one is left out, with a note               |
// | what cannot be had                  | rows of `runs` whose id no index holds either: counted, by rowid      |
//
// Every run written to the fresh history says in a note what was missing.
// Used to salvage a damaged file before it is moved aside (store.ts), to
// answer for one damaged run, and to re-record a history whose file was
// deleted or replaced under a host.

import { closeSync, openSync, readSync } from 'node:fs';
import type { RunKind, RunResult, Verdict } from '../../shared/result';
import { readEvents, readStream, replaceOutput, indexRun, upsertRun, insertEvent, type EventRecord } from './rows';
import { isCorruption, one, run, transaction, value, type Database } from './sql';

export interface SalvageReport {
  /** Runs written with everything their record held. */
  whole: number;
  /** Runs written with a part left out, and what. */
  partial: { id: string; missing: string }[];
  /** Runs already in the destination (not written again). */
  skipped: number;
  /** What could not be saved, one line each: run ids known to be gone, or rows of `runs` whose id could not be read. */
  lost: string[];
  /**
   * Set when not even the list of tables reads (a damaged header or schema
   * page): then no query reaches a run, `lost` cannot name them, and the
   * caller counts them in the file's raw pages (runRecordsInFile).
   */
  unreadable?: { runsInFile: number | null };
}

/** What the indexes say of a run whose row may be gone. */
interface IndexFacts {
  n?: number;
  startedAt?: number;
  verdict?: Verdict;
  kind?: RunKind;
  session?: string;
  exitCode?: number;
}

export const DAMAGE_NOTE = "Warden's history database was damaged";

/** Rows of a query read one by one until the first damaged page; what was read before it is kept. */
function rowsUntilDamage<T>(db: Database, sql: string, onRow: (row: T) => void): void {
  try {
    for (const row of db.prepare(sql).iterate() as Iterable<T>) onRow(row);
  } catch (error) {
    if (!isCorruption(error) && !/malformed|corrupt|not a database/i.test(String(error))) throw error;
  }
}

function tryOne<T>(db: Database, sql: string, ...params: (string | number)[]): T | undefined | 'damaged' {
  try {
    return one<T>(db, sql, ...params);
  } catch (error) {
    if (isCorruption(error)) return 'damaged';
    throw error;
  }
}

/** Every run the file still tells of, by id, with what its indexes say. Rowids that could not be read and whose id no index gave are returned too. */
function knownRuns(db: Database): { runs: Map<string, IndexFacts>; unreadRows: number[] } {
  const runs = new Map<string, IndexFacts>();
  const facts = (id: string) => {
    let f = runs.get(id);
    if (!f) runs.set(id, (f = {}));
    return f;
  };
  const unread: number[] = [];
  let maxN: number | undefined;
  try {
    maxN = value<number>(db, 'SELECT max(n) FROM runs') ?? 0;
  } catch {
    // The right edge of the table is damaged: the indexes below still name the runs.
  }
  for (const dir of ['ASC', 'DESC']) {
    // max(n) from the other end of the table when its right edge is damaged.
    if (maxN === undefined && dir === 'DESC') rowsUntilDamage<{ n: number }>(db, 'SELECT n FROM runs ORDER BY n ASC', (row) => (maxN = Math.max(maxN ?? 0, row.n)));
    rowsUntilDamage<{ started_at: number; id: string; n: number }>(db, `SELECT started_at, id, n FROM runs INDEXED BY runs_by_start ORDER BY started_at ${dir}, id ${dir}`, (row) => {
      Object.assign(facts(row.id), { startedAt: row.started_at, n: row.n });
      maxN = Math.max(maxN ?? 0, row.n);
    });
    rowsUntilDamage<{ verdict: Verdict | null; id: string }>(db, `SELECT verdict, id FROM runs INDEXED BY runs_by_verdict ORDER BY verdict ${dir}, started_at ${dir}, id ${dir}`, (row) => {
      if (row.verdict !== null) facts(row.id).verdict = row.verdict;
    });
    rowsUntilDamage<{ kind: RunKind; id: string }>(db, `SELECT kind, id FROM runs INDEXED BY runs_by_kind ORDER BY kind ${dir}, started_at ${dir}, id ${dir}`, (row) => (facts(row.id).kind = row.kind));
    rowsUntilDamage<{ session: string; id: string }>(db, `SELECT session, id FROM runs INDEXED BY runs_by_session WHERE session IS NOT NULL ORDER BY session ${dir}, started_at ${dir}, id ${dir}`, (row) => (facts(row.id).session = row.session));
    rowsUntilDamage<{ exit_code: number; id: string }>(db, `SELECT exit_code, id FROM runs INDEXED BY runs_by_exit WHERE exit_code IS NOT NULL ORDER BY exit_code ${dir}, started_at ${dir}, id ${dir}`, (row) => (facts(row.id).exitCode = row.exit_code));
  }
  const byN = new Map<number, string>();
  for (const [id, f] of runs) if (f.n !== undefined) byN.set(f.n, id);
  for (let n = 1; n <= (maxN ?? 0); n++) {
    const row = tryOne<{ id: string }>(db, 'SELECT id FROM runs WHERE n = ?', n);
    if (row === 'damaged') {
      if (!byN.has(n)) unread.push(n);
    } else if (row) {
      facts(row.id).n = n;
    }
  }
  return { runs, unreadRows: unread };
}

/** Ranges of numbers as text: 3, 7-9, 12. */
function ranges(ns: number[]): string {
  const out: string[] = [];
  for (let i = 0; i < ns.length; i++) {
    let j = i;
    while (j + 1 < ns.length && ns[j + 1] === ns[j]! + 1) j++;
    out.push(i === j ? String(ns[i]) : `${ns[i]}-${ns[j]}`);
    i = j;
  }
  return out.join(', ');
}

/**
 * One run as far as it reads: its stored record, else one rebuilt from what
 * its indexes and timeline say; its output and timeline when they read.
 * `missing` says what was left out (empty: nothing); null when nothing of it reads.
 */
export function readRunSalvaging(db: Database, id: string, facts: IndexFacts = {}): { result: RunResult; hostId: string; events: EventRecord[]; missing: string[] } | null {
  const missing: string[] = [];
  type Row = { host_id: string; state: RunResult['state']; result: string };
  let row: Row | undefined | 'damaged' = facts.n !== undefined ? tryOne<Row>(db, 'SELECT host_id, state, result FROM runs WHERE n = ? AND id = ?', facts.n, id) : undefined;
  if (row === undefined || row === 'damaged') {
    const byId = tryOne<Row>(db, 'SELECT host_id, state, result FROM runs WHERE id = ?', id);
    if (byId !== undefined) row = byId;
  }
  let events: EventRecord[] = [];
  try {
    events = readEvents(db, id);
  } catch (error) {
    if (!isCorruption(error)) throw error;
    missing.push('its timeline');
  }
  let result: RunResult;
  let hostId = 'salvaged';
  if (row && row !== 'damaged') {
    try {
      result = JSON.parse(row.result) as RunResult;
      result.state = row.state;
      hostId = row.host_id;
    } catch {
      row = 'damaged';
    }
  }
  if (!row || row === 'damaged') {
    if (facts.startedAt === undefined && events.length === 0) return null;
    missing.push('its record (command, directory, limits, teardown)');
    const ended = events.find((e) => e.kind === 'ended');
    const exit = events.find((e) => e.kind === 'exit');
    const startedAt = facts.startedAt ?? Date.parse(events[0]!.at);
    result = {
      id,
      kind: facts.kind ?? 'command',
      ...(facts.session !== undefined ? { session: facts.session } : {}),
      cwd: '',
      state: ended || facts.verdict ? 'ended' : 'running',
      ...(facts.verdict ?? ended?.detail.verdict ? { verdict: (facts.verdict ?? ended?.detail.verdict) as Verdict } : {}),
      exitCode: facts.exitCode ?? (typeof ended?.detail.exitCode === 'number' ? ended.detail.exitCode : null),
      signal: typeof ended?.detail.signal === 'string' ? ended.detail.signal : null,
      startedAt: new Date(startedAt).toISOString(),
      ...(ended ? { endedAt: ended.at } : {}),
      elapsedMs: typeof exit?.atMs === 'number' ? exit.atMs : ended ? Math.max(0, Date.parse(ended.at) - startedAt) : 0,
      limitMs: null,
      advice: null,
      notes: [],
      stdout: '',
      stderr: '',
      stdoutTruncated: 0,
      stderrTruncated: 0,
    };
  }
  result = result!;
  for (const stream of ['stdout', 'stderr'] as const) {
    try {
      const stored = readStream(db, id, stream);
      result[stream] = stored.text;
      if (result.state !== 'ended') result[stream === 'stdout' ? 'stdoutTruncated' : 'stderrTruncated'] = stored.dropped;
    } catch (error) {
      if (!isCorruption(error)) throw error;
      result[stream] = '';
      missing.push(`its ${stream}`);
    }
  }
  if (missing.length > 0) {
    result.notes = [...result.notes.filter((n) => !n.startsWith(DAMAGE_NOTE)), `${DAMAGE_NOTE}: ${missing.join(', ')} could not be read and ${missing.length === 1 ? 'is' : 'are'} left out here.`];
  }
  return { result, hostId, events, missing };
}

/**
 * Writes every run that still reads in `from` into `to` (a fresh, migrated
 * history), with its output and timeline; runs `to` already holds are left as
 * they are. Also the hosts table, so recovery can still tell whose live runs
 * are whose.
 */
export function salvageRuns(from: Database, to: Database): SalvageReport {
  const report: SalvageReport = { whole: 0, partial: [], skipped: 0, lost: [] };
  if (!schemaReads(from)) {
    report.unreadable = { runsInFile: null };
    return report;
  }
  const { runs, unreadRows } = knownRuns(from);
  rowsUntilDamage<Record<string, string | number | null>>(from, 'SELECT host_id, pid, start_ticks, boot_id, started_at, heartbeat_at, ended_at FROM hosts', (h) => {
    run(
      to,
      'INSERT OR IGNORE INTO hosts (host_id, pid, start_ticks, boot_id, started_at, heartbeat_at, ended_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      h.host_id!, h.pid!, h.start_ticks ?? null, h.boot_id ?? null, h.started_at!, h.heartbeat_at!, h.ended_at ?? null,
    );
  });
  const ids = [...runs.keys()].sort((a, b) => (runs.get(a)!.n ?? Infinity) - (runs.get(b)!.n ?? Infinity));
  const BATCH = 200;
  for (let i = 0; i < ids.length; i += BATCH) {
    transaction(to, () => {
      for (const id of ids.slice(i, i + BATCH)) {
        if (one(to, 'SELECT 1 AS x FROM runs WHERE id = ?', id)) {
          report.skipped++;
          continue;
        }
        const read = readRunSalvaging(from, id, runs.get(id));
        if (!read) {
          report.lost.push(`run ${id}`);
          continue;
        }
        const { result, hostId, events, missing } = read;
        const n = upsertRun(to, hostId, result, null);
        const bytes = replaceOutput(to, id, result.stdout, result.stderr);
        run(to, 'UPDATE runs SET output_bytes = ? WHERE n = ?', bytes, n);
        indexRun(to, n, result, result.stdout, result.stderr);
        for (const e of events) insertEvent(to, id, Date.parse(e.at), e.atMs, e.kind, e.detail);
        if (missing.length > 0) report.partial.push({ id, missing: missing.join(', ') });
        else report.whole++;
      }
    });
  }
  // An unread row may be a run found by another index (which does not give its row number): only what is left over is unknown.
  const foundElsewhere = [...runs.values()].filter((f) => f.n === undefined).length;
  const unknown = unreadRows.length - foundElsewhere;
  if (unknown > 0) report.lost.push(`${unknown} run(s) whose id could not be read (among rows ${ranges(unreadRows)} of the runs table)`);
  return report;
}

/** Whether the schema table reads and names the runs table: without it no run can be reached by a query. */
function schemaReads(db: Database): boolean {
  try {
    return one(db, "SELECT 1 AS x FROM sqlite_schema WHERE type = 'table' AND name = 'runs'") !== undefined;
  } catch (error) {
    if (isCorruption(error) || /malformed|corrupt|not a database/i.test(String(error))) return false;
    throw error;
  }
}

/** A run's stored record as it sits in a page: the `result` column's JSON begins with its id and kind (rows.ts). */
const RUN_RECORD = /\{"id":"([A-Za-z0-9@._-]{1,80})","kind":"(?:command|python)"/g;

/** The ids of the run records in raw bytes read as latin1 (a record's start is ASCII). */
export function runIdsIn(text: string, into: Set<string> = new Set()): Set<string> {
  for (const match of text.matchAll(RUN_RECORD)) into.add(match[1]!);
  return into;
}

/**
 * How many distinct runs have a record in the raw pages of the file and its
 * WAL, read in chunks (a history may be gigabytes) that overlap by more
 * than a record's start. An upper bound: a pruned run's record may linger
 * in a free page. null when the file cannot be read.
 */
export function runRecordsInFile(path: string, chunkBytes = 8 * 1024 * 1024): number | null {
  const ids = new Set<string>();
  for (const file of [path, `${path}-wal`]) {
    let fd: number;
    try {
      fd = openSync(file, 'r');
    } catch {
      if (file === path) return null;
      continue;
    }
    try {
      scanChunks(fd, chunkBytes, ids);
    } catch {
      if (file === path) return null;
    } finally {
      closeSync(fd);
    }
  }
  return ids.size;
}

function scanChunks(fd: number, chunkBytes: number, ids: Set<string>): void {
  const OVERLAP = 256; // longer than a record's start as matched
  const buffer = Buffer.alloc(chunkBytes + OVERLAP);
  let kept = 0;
  for (;;) {
    const n = readSync(fd, buffer, kept, chunkBytes, null);
    if (n <= 0) return;
    const length = kept + n;
    runIdsIn(buffer.toString('latin1', 0, length), ids);
    kept = Math.min(OVERLAP, length);
    buffer.copy(buffer, 0, length - kept, length);
  }
}

/** One line: what was saved and what was not. */
export function salvageLine(report: SalvageReport): string {
  const saved = report.whole + report.partial.length;
  if (report.unreadable) {
    const count = report.unreadable.runsInFile;
    const held = count === null ? 'an unknown number of runs' : count === 0 ? 'no run record Warden could find' : `up to ${count} run(s) (records found in its raw pages)`;
    return `its header or list of tables cannot be read, so no run in it could be read: 0 run(s) saved into the fresh history; NOT saved: ${held}`;
  }
  let line = `${saved} run(s) saved into the fresh history`;
  if (report.partial.length > 0) {
    const shown = report.partial.slice(0, 10).map((p) => `${p.id} (without ${p.missing})`).join(', ');
    line += `, ${report.partial.length} of them in part: ${shown}${report.partial.length > 10 ? ', ...' : ''}`;
  }
  line += report.lost.length === 0 ? '; none lost' : `; NOT saved: ${report.lost.slice(0, 20).join(', ')}${report.lost.length > 20 ? ', ...' : ''}`;
  return line;
}
