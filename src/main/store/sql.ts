// The one door to libsql. Its binding has sharp edges that abort the whole
// process instead of throwing (libsql 0.5.29): a lone Buffer or object
// parameter is taken for named parameters and panics on `?`, a boolean panics,
// and a NUL inside a bound string silently cuts the string there. Every query
// in the store goes through these helpers, which always bind an array of
// checked values, so none of that can happen.

import Libsql from 'libsql';

export type Database = InstanceType<typeof Libsql>;
export type SqlValue = string | number | null | Buffer;

export function openDatabase(path: string): Database {
  return new Libsql(path);
}

/** A string safe to bind as TEXT: NUL would truncate it, so it becomes U+FFFD. */
export function text(value: string): string {
  return value.includes('\0') ? value.replace(/\0/g, '\uFFFD') : value;
}

function check(params: readonly SqlValue[]): SqlValue[] {
  return params.map((value) => {
    if (value === null || typeof value === 'number' || Buffer.isBuffer(value)) return value;
    if (typeof value === 'string') return text(value);
    // Anything else reaching the binding could abort the process: refuse it here instead.
    throw new TypeError(`The store cannot bind a ${typeof value} parameter.`);
  });
}

/** Statements are prepared once per connection and text. */
const cache = new WeakMap<Database, Map<string, ReturnType<Database['prepare']>>>();

function statement(db: Database, sql: string, raw = false): ReturnType<Database['prepare']> {
  let byText = cache.get(db);
  if (!byText) cache.set(db, (byText = new Map()));
  const key = raw ? `raw:${sql}` : sql;
  let stmt = byText.get(key);
  if (!stmt) {
    stmt = db.prepare(sql);
    if (raw) stmt.raw(true);
    byText.set(key, stmt);
  }
  return stmt;
}

export function run(db: Database, sql: string, ...params: SqlValue[]): { changes: number } {
  const info = statement(db, sql).run(check(params));
  return { changes: Number(info.changes) };
}

/** Rows as objects, without the `_metadata` libsql adds to get(). */
export function all<T>(db: Database, sql: string, ...params: SqlValue[]): T[] {
  return statement(db, sql).all(check(params)) as T[];
}

export function one<T>(db: Database, sql: string, ...params: SqlValue[]): T | undefined {
  // all() with a LIMIT in the SQL where it matters: get() adds a `_metadata` key to the row.
  return all<T>(db, sql, ...params)[0];
}

/** The first column of the first row. */
export function value<T extends SqlValue>(db: Database, sql: string, ...params: SqlValue[]): T | undefined {
  const row = statement(db, sql, true).get(check(params)) as SqlValue[] | undefined;
  return row?.[0] as T | undefined;
}

/** Runs `fn` in one write transaction (BEGIN IMMEDIATE takes the write lock up front, so it never deadlocks on upgrade). */
export function transaction<T>(db: Database, fn: () => T): T {
  db.exec('BEGIN IMMEDIATE');
  try {
    const result = fn();
    db.exec('COMMIT');
    return result;
  } catch (error) {
    rollback(db);
    throw error;
  }
}

export function rollback(db: Database): void {
  try {
    if (db.inTransaction) db.exec('ROLLBACK');
  } catch {
    // The connection may be gone; there is nothing left to undo then.
  }
}

export function setBusyTimeout(db: Database, ms: number): void {
  db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.round(ms))}`);
}

/** SQLite's error code (SQLITE_BUSY, ...) or a description of a binding failure. */
export function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code !== '') return code;
  const message = error instanceof Error ? error.message : String(error);
  if (/not open/i.test(message)) return 'CLOSED';
  const m = /ConnectionFailed\(.*: (\d+)\)/.exec(message);
  if (m) return m[1] === '14' ? 'SQLITE_CANTOPEN' : `SQLITE_${m[1]}`;
  return 'UNKNOWN';
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The database file is damaged: moving it aside is the way on. */
export function isCorruption(error: unknown): boolean {
  const code = errorCode(error);
  return code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB';
}

/**
 * Worth retrying as it is: the condition is outside the store (a lock held
 * elsewhere, a full disk, a file made read-only, a closed connection) and
 * may pass. Anything else is a fault in what was asked.
 */
export function isTransient(error: unknown): boolean {
  const code = errorCode(error);
  return (
    code === 'CLOSED' ||
    /^SQLITE_(BUSY|LOCKED|FULL|IOERR|READONLY|CANTOPEN|PERM|NOMEM|PROTOCOL|AUTH)/.test(code) ||
    isCorruption(error)
  );
}
