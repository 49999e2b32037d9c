// The history store: one SQLite database (libsql) in the state dir, shared by
// the app, `warden serve` and the embedded CLI. Several processes may write
// at once: WAL, a busy timeout, short transactions.
//
// Opening checks what can go wrong with the file before anyone relies on it:
// | what is found                          | what happens                                                        |
// |----------------------------------------|---------------------------------------------------------------------|
// | no file                                | a fresh history                                                     |
// | a directory in its place               | StoreOpenError naming the path: move it away or set WARDEN_STATE_DIR |
// | no permission, read-only dir or disk   | StoreOpenError naming the path and the fix                          |
// | not a database, or damaged             | moved aside to <name>.corrupt-<time> (never deleted), fresh history; |
// |                                        | `movedAside` tells where it went                                    |
// | damage seen while in use               | a `<name>-damaged` mark: the next open checks it whole and moves it aside |
// | written by a newer Warden              | StoreOpenError: upgrade, or point WARDEN_STATE_DIR elsewhere         |

import { accessSync, constants, existsSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { RunResult } from '../../shared/result';
import { DEFAULT_PROC_ROOT } from '../supervisor/options';
import { StoreOpenError, type MovedAside } from './errors';
import { endHost, heartbeat, HEARTBEAT_MS, registerHost } from './hosts';
import { countByVerdict, getEvents, getRun, listRuns, type ListQuery, type RunPage, type TimeBound, type VerdictCounts } from './queries';
import { forgetDeathNotes, readDeathNote, recoverLostRuns, type RecoverOptions, type RecoveryReport } from './recovery';
import { prune, type PruneReport, type RetentionLimits } from './retention';
import { writeEnded, type EventRecord } from './rows';
import { migrate, SCHEMA_VERSION } from './schema';
import { errorCode, errorMessage, isCorruption, openDatabase, setBusyTimeout, transaction, value, type Database } from './sql';
import { resolveStateDir } from '../../client/state-dir';
import { ensureStateDir, makePrivateFile } from './state-dir';

export const DB_FILE = 'history.db';

export interface OpenStoreOptions {
  /** The state dir (default: resolveStateDir(), from WARDEN_STATE_DIR / XDG_STATE_HOME). */
  dir?: string;
  /** The database's file name in it (default history.db). */
  fileName?: string;
  /**
   * How long a write waits for another process's write lock before it fails
   * and is retried later (default 250 ms). Writes run on the engine's event
   * loop, so this bounds how long a busy database can hold up supervision.
   */
  busyTimeoutMs?: number;
  /** /proc, or null where there is none (default: detected). */
  procRoot?: string | null;
}

/** Longer waits for the rare, bigger steps: opening, migrations, recovery, pruning. */
const SLOW_BUSY_MS = 5000;

export class HistoryStore {
  /** The host registered through registerHost, if any. */
  hostId: string | null = null;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private closed = false;

  /** @internal Use openStore. */
  constructor(
    /** @internal */ readonly db: Database,
    readonly path: string,
    /** Set when a damaged database was moved aside at open: tell the person where it went. */
    readonly movedAside: MovedAside | null,
    private readonly busyTimeoutMs: number,
    readonly procRoot: string | null,
  ) {}

  /**
   * Records this process as a live host (pid, its start time, boot id) and
   * keeps its heartbeat while open. Call once, before recording runs or
   * recovering lost ones.
   */
  registerHost(hostId: string): void {
    if (this.hostId === hostId) return;
    if (this.hostId !== null) throw new Error(`This store is already registered for host ${this.hostId}.`);
    this.guard(() => this.slow(() => transaction(this.db, () => registerHost(this.db, hostId, this.procRoot))));
    this.hostId = hostId;
    this.heartbeatTimer = setInterval(() => {
      try {
        heartbeat(this.db, hostId);
      } catch {
        // A missed heartbeat is harmless with /proc, and the next one may pass.
      }
    }, HEARTBEAT_MS);
    this.heartbeatTimer.unref();
  }

  list(query: ListQuery = {}): RunPage {
    return this.guard(() => listRuns(this.db, query));
  }

  /** The whole result contract, or null when no run has that id. */
  get(id: string): RunResult | null {
    return this.guard(() => getRun(this.db, id));
  }

  /** The run's timeline: queued/started, each signal sent, exit, teardown, ended or lost. */
  events(id: string): EventRecord[] {
    return this.guard(() => getEvents(this.db, id));
  }

  countsByVerdict(range: { since?: TimeBound; until?: TimeBound } = {}): VerdictCounts {
    return this.guard(() => countByVerdict(this.db, range));
  }

  prune(limits: RetentionLimits = {}): PruneReport {
    return this.guard(() => this.slow(() => prune(this.db, limits)));
  }

  /** Where hosts' sentinels note when their host died (sentinel.ts). */
  private get deathNotes(): string {
    return join(dirname(this.path), 'run');
  }

  /** Marks the runs of gone hosts `lost`, once; see recovery.ts. Needs registerHost first. */
  async recoverLostRuns(options: RecoverOptions): Promise<RecoveryReport> {
    if (this.hostId === null) throw new Error('Call registerHost before recoverLostRuns: the claim on lost runs is made in the host\'s name.');
    const me = this.hostId;
    setBusyTimeout(this.db, SLOW_BUSY_MS);
    try {
      const report = await recoverLostRuns(this.db, me, { procRoot: this.procRoot, diedAt: (id) => readDeathNote(this.deathNotes, id), ...options });
      forgetDeathNotes(this.db, this.deathNotes);
      return report;
    } catch (error) {
      this.noteDamage(error);
      throw error;
    } finally {
      if (!this.closed) setBusyTimeout(this.db, this.busyTimeoutMs);
    }
  }

  /** Writes a whole ended run at once (imports, tests, benchmarks); live runs go through attachRecorder. */
  recordResult(result: RunResult, hostId = this.hostId ?? 'import'): void {
    this.guard(() => transaction(this.db, () => writeEnded(this.db, hostId, result)));
  }

  /** Stops the heartbeat, records an orderly end of the host, and closes the database. */
  close(): void {
    if (this.closed) return;
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    if (this.hostId !== null) {
      try {
        endHost(this.db, this.hostId);
      } catch {
        // Without it the host is still found gone by its pid.
      }
    }
    try {
      // libsql leaves the WAL behind on close: fold it in, so the file alone is the history and the next open reads no WAL.
      this.db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    } catch {
      // Busy elsewhere or failing: the WAL stays and is read back at the next open.
    }
    this.closed = true;
    this.db.close();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  private slow<T>(fn: () => T): T {
    setBusyTimeout(this.db, SLOW_BUSY_MS);
    try {
      return fn();
    } finally {
      setBusyTimeout(this.db, this.busyTimeoutMs);
    }
  }

  /** Damage seen in use leaves a mark, so the next open checks the whole file. */
  private guard<T>(fn: () => T): T {
    try {
      return fn();
    } catch (error) {
      this.noteDamage(error);
      throw error;
    }
  }

  /** @internal */
  noteDamage(error: unknown): void {
    if (!isCorruption(error)) return;
    try {
      writeFileSync(damageMark(this.path), `${new Date().toISOString()} ${errorMessage(error)}\n`);
    } catch {
      // The mark is a courtesy; the next damaged read finds it again.
    }
  }
}

function damageMark(path: string): string {
  return `${path}-damaged`;
}

/**
 * Opens (creating as needed) the history in the state dir. Throws
 * StoreOpenError with one line naming the path and the fix when it cannot be
 * used; a damaged file is moved aside instead, and `store.movedAside` says where.
 */
export function openStore(options: OpenStoreOptions = {}): HistoryStore {
  const dir = ensureStateDir(options.dir ?? resolveStateDir());
  const path = join(dir, options.fileName ?? DB_FILE);
  const busyTimeoutMs = options.busyTimeoutMs ?? 250;
  const procRoot = options.procRoot === undefined ? DEFAULT_PROC_ROOT : options.procRoot;
  precheck(path, dir);
  const inode = inodeOf(path);
  let movedAside: MovedAside | null = null;
  let db: Database;
  try {
    db = connect(path, busyTimeoutMs);
  } catch (error) {
    if (!isCorruption(error)) throw openError(path, dir, error);
    movedAside = moveAside(path, inode, errorMessage(error));
    try {
      db = connect(path, busyTimeoutMs);
    } catch (again) {
      throw openError(path, dir, again);
    }
  }
  return new HistoryStore(db, path, movedAside, busyTimeoutMs, procRoot);
}

function inodeOf(path: string): number | null {
  try {
    return statSync(path).ino;
  } catch {
    return null;
  }
}

function precheck(path: string, dir: string): void {
  let isDir = false;
  try {
    isDir = statSync(path).isDirectory();
  } catch {
    return; // no file yet: connect creates it (and says so if it cannot)
  }
  if (isDir) {
    throw new StoreOpenError(
      path,
      'directory',
      `Warden's history database ${path} is a directory, not a file. Move or remove that directory, or set WARDEN_STATE_DIR to another directory than ${dir}.`,
    );
  }
}

function connect(path: string, busyTimeoutMs: number): Database {
  makePrivateFile(path);
  const db = openDatabase(path);
  try {
    setBusyTimeout(db, SLOW_BUSY_MS);
    // Reading the header finds a file that is not a database.
    value(db, 'PRAGMA user_version');
    if (existsSync(damageMark(path))) {
      let check: string;
      try {
        check = String(value(db, 'PRAGMA quick_check') ?? '');
      } catch (error) {
        check = errorMessage(error);
      }
      if (check !== 'ok') throw Object.assign(new Error(`database disk image is malformed (quick_check: ${check.slice(0, 200)})`), { code: 'SQLITE_CORRUPT' });
      rmSync(damageMark(path), { force: true });
    }
    // Only takes effect on a new file: 16 KiB pages cut the pages (and WAL frames) a run's output needs by four.
    db.exec('PRAGMA page_size = 16384');
    value(db, 'PRAGMA journal_mode = WAL');
    // NORMAL in WAL: a crash of the app loses nothing committed; a power cut may lose the last commits, never consistency.
    db.exec('PRAGMA synchronous = NORMAL');
    db.exec('PRAGMA foreign_keys = ON');
    migrate(
      db,
      (found) =>
        new StoreOpenError(
          path,
          'newer-schema',
          `Warden's history database ${path} was written by a newer Warden (schema ${found}; this one knows ${SCHEMA_VERSION}). Upgrade Warden, or set WARDEN_STATE_DIR to another directory.`,
        ),
    );
    // Touch each table's pages that every query needs, so damage there shows now rather than mid-run.
    value(db, 'SELECT count(*) FROM sqlite_schema');
    value(db, 'SELECT max(n) FROM runs');
    value(db, 'SELECT max(id) FROM run_output');
    setBusyTimeout(db, busyTimeoutMs);
    return db;
  } catch (error) {
    try {
      db.close();
    } catch {
      // already unusable
    }
    throw error;
  }
}

function stamp(): string {
  return new Date().toISOString().replace(/[:.]/g, '-');
}

/** Renames the damaged file (and its WAL) aside; never deletes it. */
function moveAside(path: string, inode: number | null, reason: string): MovedAside {
  let to = `${path}.corrupt-${stamp()}`;
  for (let i = 1; existsSync(to); i++) to = `${path}.corrupt-${stamp()}-${i}`;
  // Another process may have moved it aside and started afresh meanwhile: then leave the fresh one be.
  if (inode !== null && inodeOf(path) === inode) {
    try {
      renameSync(path, to);
    } catch (error) {
      throw new StoreOpenError(
        path,
        'unusable',
        `Warden's history database ${path} is damaged (${reason}) and could not be moved aside (${(error as Error).message}). Move it away yourself, or set WARDEN_STATE_DIR to another directory.`,
      );
    }
    for (const suffix of ['-wal', '-shm']) {
      try {
        if (existsSync(path + suffix)) renameSync(path + suffix, to + suffix);
      } catch {
        // The WAL belongs with the file it was moved with; SQLite ignores a WAL that does not match a fresh file anyway.
      }
    }
  }
  rmSync(damageMark(path), { force: true });
  return {
    from: path,
    to,
    reason,
    message: `Warden's history database ${path} was damaged (${reason}); it was moved aside to ${to} and a fresh history was started. Nothing was deleted: the old file can be inspected or salvaged with sqlite3 "${to}" .recover.`,
  };
}

function accessProblem(path: string, mode: number): NodeJS.ErrnoException | null {
  try {
    accessSync(path, mode);
    return null;
  } catch (error) {
    return error as NodeJS.ErrnoException;
  }
}

/** One line saying why the file cannot be used and what to do. */
function openError(path: string, dir: string, error: unknown): StoreOpenError {
  if (error instanceof StoreOpenError) return error;
  const code = errorCode(error);
  const fileExists = existsSync(path);
  const fileProblem = fileExists ? accessProblem(path, constants.R_OK | constants.W_OK) : null;
  const dirProblem = accessProblem(dir, constants.W_OK | constants.X_OK);
  const problem = fileProblem ?? dirProblem;
  if (problem?.code === 'EROFS' || (code.startsWith('SQLITE_READONLY') && !problem)) {
    return new StoreOpenError(
      path,
      'read-only',
      `Warden cannot write its history database ${path}: the file system or file is read-only (${code}). Set WARDEN_STATE_DIR to a writable directory.`,
    );
  }
  if (problem) {
    const what = fileProblem ? `the file ${path}` : `the directory ${dir} (SQLite creates ${path}-wal beside the database)`;
    const fix = fileProblem ? `chmod u+rw ${path}` : `chmod u+rwx ${dir}`;
    return new StoreOpenError(
      path,
      'permission',
      `Warden cannot open its history database ${path}: no permission to write ${what}. Fix the permissions (${fix}) or set WARDEN_STATE_DIR to a directory you can write.`,
    );
  }
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    return new StoreOpenError(
      path,
      'unusable',
      `Warden's history database ${path} stayed locked by another process for ${SLOW_BUSY_MS / 1000} s. Try again; if it persists, find the process holding it (fuser ${path}).`,
    );
  }
  return new StoreOpenError(
    path,
    'unusable',
    `Warden cannot open its history database ${path} (${code}: ${errorMessage(error)}). Check the file and its directory, or set WARDEN_STATE_DIR to another directory.`,
  );
}
