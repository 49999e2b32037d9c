// The history's schema, as an ordered list of migrations. PRAGMA user_version
// holds how many have run. Each opening applies the missing ones in one write
// transaction, re-reading the version inside it, so two processes opening a
// new database at the same moment migrate it once.
//
// Never edit a migration that has shipped: append a new one.

import { transaction, value, type Database } from './sql';

export interface Migration {
  /** What it changes, for a reader of this file. */
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    name: 'runs, output, events, hosts and full-text search',
    sql: `
      CREATE TABLE hosts (
        host_id TEXT PRIMARY KEY,
        pid INTEGER NOT NULL,
        -- /proc/PID/stat start time in clock ticks after boot: a reused pid has another.
        start_ticks INTEGER,
        -- /proc/sys/kernel/random/boot_id: another boot means every process of the host is gone.
        boot_id TEXT,
        started_at INTEGER NOT NULL,
        heartbeat_at INTEGER NOT NULL,
        -- Set when the host closed its store in an orderly way.
        ended_at INTEGER
      );

      CREATE TABLE runs (
        -- An alias of the rowid, so the full-text rows keep pointing at their run through VACUUM.
        n INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        host_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        argv TEXT,
        command TEXT,
        code TEXT,
        session TEXT,
        cwd TEXT NOT NULL,
        state TEXT NOT NULL,
        verdict TEXT,
        exit_code INTEGER,
        signal TEXT,
        started_at INTEGER NOT NULL,
        ended_at INTEGER,
        elapsed_ms REAL NOT NULL DEFAULT 0,
        limit_ms INTEGER,
        advice TEXT,
        notes TEXT NOT NULL DEFAULT '[]',
        stdout_truncated INTEGER NOT NULL DEFAULT 0,
        stderr_truncated INTEGER NOT NULL DEFAULT 0,
        peak_rss INTEGER,
        peak_processes INTEGER,
        -- The whole RunResult as JSON but for stdout and stderr, which are in run_output.
        result TEXT NOT NULL,
        output_bytes INTEGER NOT NULL DEFAULT 0,
        -- The host that took this run over to recover it after its own host was lost.
        claimed_by TEXT,
        recovered_at INTEGER
      );
      CREATE INDEX runs_by_start ON runs (started_at, id);
      CREATE INDEX runs_by_verdict ON runs (verdict, started_at, id);
      CREATE INDEX runs_by_kind ON runs (kind, started_at, id);
      CREATE INDEX runs_by_session ON runs (session, started_at, id) WHERE session IS NOT NULL;
      CREATE INDEX runs_by_exit ON runs (exit_code, started_at, id) WHERE exit_code IS NOT NULL;
      CREATE INDEX runs_by_host ON runs (host_id);
      CREATE INDEX runs_live ON runs (host_id) WHERE state != 'ended';

      -- Output as UTF-8 blobs: a NUL in a bound string would cut it short.
      -- While a run is live: its first characters and a moving tail, each row at
      -- its character offset in the stream, so a gap shows where output was
      -- dropped. At the end: one final row per stream, the output the result kept.
      CREATE TABLE run_output (
        id INTEGER PRIMARY KEY,
        run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        stream TEXT NOT NULL,
        seq INTEGER NOT NULL,
        offset INTEGER NOT NULL,
        chars INTEGER NOT NULL,
        final INTEGER NOT NULL DEFAULT 0,
        text BLOB NOT NULL
      );
      CREATE INDEX run_output_by_run ON run_output (run_id, stream, seq);

      CREATE TABLE run_events (
        id INTEGER PRIMARY KEY,
        run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        -- Wall clock, ms since the epoch.
        at INTEGER NOT NULL,
        -- On the run's own clock where the engine gave it, else null.
        at_ms REAL,
        kind TEXT NOT NULL,
        detail TEXT NOT NULL DEFAULT '{}'
      );
      CREATE INDEX run_events_by_run ON run_events (run_id, id);

      -- Contentless: the text is in runs and run_output already; rowid = runs.n.
      CREATE VIRTUAL TABLE runs_fts USING fts5 (command, code, stdout_tail, stderr_tail, content = '', contentless_delete = 1);
      CREATE TRIGGER runs_fts_delete AFTER DELETE ON runs BEGIN
        DELETE FROM runs_fts WHERE rowid = old.n;
      END;
    `,
  },
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** Applies the missing migrations; returns the version found before. Throws when the file is newer than this Warden. */
export function migrate(db: Database, onNewer: (found: number) => Error): number {
  const before = userVersion(db);
  if (before > SCHEMA_VERSION) throw onNewer(before);
  if (before === SCHEMA_VERSION) return before;
  transaction(db, () => {
    const now = userVersion(db);
    if (now > SCHEMA_VERSION) throw onNewer(now);
    for (let version = now; version < SCHEMA_VERSION; version++) db.exec(MIGRATIONS[version]!.sql);
    db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
  });
  return before;
}

export function userVersion(db: Database): number {
  return Number(value<number>(db, 'PRAGMA user_version') ?? 0);
}
