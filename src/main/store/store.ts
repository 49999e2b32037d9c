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
// | not a database                         | moved aside to <name>.corrupt-<time> (never deleted), fresh history; |
// |                                        | `movedAside` tells where it went                                    |
// | damaged                                | every run that still reads is salvaged into a fresh history first   |
// |                                        | (salvage.ts), then the file is moved aside; `movedAside` counts and |
// |                                        | names what was saved and what was not                               |
// | damage seen while in use               | the same, at once, and the read is answered from the fresh file; a  |
// |                                        | `<name>-damaged` mark makes the next open check it whole if that fails |
// | the file deleted or replaced under it  | seen within a second (its inode): a deleted file is recreated from  |
// |                                        | the open copy, a replaced one gets this history's runs re-recorded  |
// |                                        | into it; `notice` says so, `fileProblem` when it could not be done   |
// | written by a newer Warden              | StoreOpenError: upgrade, or point WARDEN_STATE_DIR elsewhere         |

import { randomBytes } from 'node:crypto';
import { accessSync, constants, existsSync, linkSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
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
import { readRunSalvaging, runRecordsInFile, salvageLine, salvageRuns, type SalvageReport } from './salvage';
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
  /**
   * Told, in one line, what happened to the file while in use (salvaged,
   * recreated, re-recorded); default: `warden: LINE` on stderr. What
   * happened at open is in `movedAside` instead, for the caller to say.
   */
  notice?: (line: string) => void;
}

/** How often an open store looks whether its file is still the one it has open. */
const FILE_CHECK_MS = 1000;

function identityOf(path: string): { dev: number; ino: number } | null {
  try {
    const { dev, ino } = statSync(path);
    return { dev, ino };
  } catch {
    return null;
  }
}

/** Longer waits for the rare, bigger steps: opening, migrations, recovery, pruning. */
const SLOW_BUSY_MS = 5000;

export class HistoryStore {
  /** The host registered through registerHost, if any. */
  hostId: string | null = null;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private fileTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private identity: { dev: number; ino: number } | null;
  private rebuilding = false;
  /** Why the file at `path` does not hold this history, when that could not be mended; null while it does. */
  fileProblem: string | null = null;
  /** The lines given to `notice` so far. */
  readonly notices: string[] = [];
  /** Why this store was opened for reading only (openStoreReadOnly), else null: nothing is written, checked or salvaged. */
  readOnly: string | null = null;

  /** @internal Use openStore. */
  constructor(
    private conn: Database,
    readonly path: string,
    /** Set when a damaged database was moved aside at open: tell the person where it went. */
    readonly movedAside: MovedAside | null,
    private readonly busyTimeoutMs: number,
    readonly procRoot: string | null,
    private readonly noticeFn: (line: string) => void = (line) => void process.stderr.write(`warden: ${line}\n`),
  ) {
    this.identity = identityOf(path);
    this.fileTimer = setInterval(() => this.checkFile(), FILE_CHECK_MS);
    this.fileTimer.unref();
  }

  /** @internal The connection: a new one after the file was recreated or salvaged. */
  get db(): Database {
    return this.conn;
  }

  private notice(line: string): void {
    this.notices.push(line);
    this.noticeFn(line);
  }

  /**
   * Whether the file at `path` is still the one open; when it was deleted,
   * it is recreated from the open copy; when replaced, this history's runs
   * are re-recorded into the new file, which is used from then on. Returns
   * what was done, or null when nothing was needed.
   */
  checkFile(): string | null {
    if (this.closed || this.rebuilding || this.identity === null || this.readOnly !== null) return null;
    const now = identityOf(this.path);
    if (now !== null && now.dev === this.identity.dev && now.ino === this.identity.ino) return null;
    this.rebuilding = true;
    try {
      const line = now === null ? this.recreate() : this.adopt();
      this.fileProblem = null;
      this.notice(line);
      return line;
    } catch (error) {
      const why = `Warden's history database ${this.path} was ${now === null ? 'deleted' : 'replaced'} while in use and could not be ${now === null ? 'recreated' : 'taken over'} (${errorMessage(error)}); runs are still kept in the file this process has open, which nothing else can read.`;
      if (this.fileProblem !== why) this.notice(why);
      this.fileProblem = why;
      return why;
    } finally {
      this.rebuilding = false;
    }
  }

  /**
   * The open history, whole, into a fresh file beside the path (VACUUM INTO,
   * else a salvage when it is damaged); the open connection is closed after
   * its WAL was folded in, so no WAL of it is left to apply to another file.
   */
  private snapshot(): { temp: string; count: string } {
    const temp = tempBeside(this.path, 'restore');
    try {
      this.conn.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    } catch {
      // The WAL is read through the open connection anyway.
    }
    let count: string;
    try {
      this.conn.prepare('VACUUM INTO ?').run([temp]);
      count = `${value<number>(this.conn, 'SELECT count(*) FROM runs') ?? 0} run(s)`;
    } catch (error) {
      if (!isCorruption(error)) {
        removeWithJournal(temp);
        throw error;
      }
      removeWithJournal(temp);
      const fresh = connect(temp, this.busyTimeoutMs);
      try {
        count = salvageLine(salvageRuns(this.conn, fresh));
      } finally {
        closeQuietly(fresh, true);
      }
    }
    closeQuietly(this.conn, true);
    makePrivateFile(temp);
    return { temp, count };
  }

  /** The file was deleted: the snapshot is put back at its path (never over a file someone put there meanwhile). */
  private recreate(): string {
    const { temp, count } = this.snapshot();
    try {
      // The deleted file's WAL and index, if left: they must not be applied to the new one.
      for (const suffix of ['-wal', '-shm']) rmSync(this.path + suffix, { force: true });
      try {
        linkSync(temp, this.path);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') return this.adoptFrom(temp);
        throw error;
      }
      removeWithJournal(temp);
      this.use(connect(this.path, this.busyTimeoutMs));
    } catch (error) {
      this.keepIn(temp);
      throw error;
    }
    return `Warden's history database ${this.path} was deleted while in use; it was recreated from the copy this process had open (${count}).`;
  }

  /** Another file is at the path now: it is used from now on, with every run of the open one it lacks written into it. */
  private adopt(): string {
    return this.adoptFrom(this.snapshot().temp);
  }

  private adoptFrom(temp: string): string {
    try {
      const next = connect(this.path, this.busyTimeoutMs);
      let report: SalvageReport;
      const snap = openDatabase(temp);
      try {
        report = salvageRuns(snap, next);
      } catch (error) {
        closeQuietly(next, false);
        throw error;
      } finally {
        closeQuietly(snap, false);
      }
      removeWithJournal(temp);
      this.use(next);
      return `Warden's history database ${this.path} was replaced by another file while in use; that file is used from now on, and the runs it lacked were re-recorded into it: ${salvageLine(report)} (${report.skipped} were there already).`;
    } catch (error) {
      this.keepIn(temp);
      throw error;
    }
  }

  /** When the path could not be mended: go on writing into the snapshot, which stays (its name is in the notice). */
  private keepIn(temp: string): void {
    try {
      this.conn = connect(temp, this.busyTimeoutMs);
    } catch {
      // Nothing left to write to: every write fails and is reported.
    }
    this.identity = null; // no more checks: the path is not ours
  }

  /**
   * Damage seen in use: every run that still reads is salvaged into a fresh
   * file, the damaged one is moved aside, and the fresh one is used. True
   * when done.
   */
  private salvageInUse(reason: string): boolean {
    if (this.closed || this.rebuilding || this.readOnly !== null) return false;
    this.rebuilding = true;
    const temp = tempBeside(this.path, 'salvage');
    try {
      const fresh = connect(temp, this.busyTimeoutMs);
      let report: SalvageReport;
      try {
        report = salvageRuns(this.conn, fresh);
      } finally {
        closeQuietly(fresh, true);
      }
      // Closed before anything is renamed: its WAL stays with the damaged file.
      closeQuietly(this.conn, false);
      let aside: MovedAside;
      try {
        aside = moveAside(this.path, this.identity?.ino ?? null, reason, { report });
      } catch (error) {
        this.use(openDatabase(this.path)); // as it was: damaged, but what reads is still served
        throw error;
      }
      makePrivateFile(temp);
      renameSync(temp, this.path);
      removeWithJournal(temp);
      this.use(connect(this.path, this.busyTimeoutMs));
      rmSync(damageMark(this.path), { force: true });
      this.notice(aside.message.replace(' was damaged (', ' was found damaged while in use ('));
      return true;
    } catch (error) {
      removeWithJournal(temp);
      this.notice(`Warden's history database ${this.path} is damaged (${reason}) and could not be salvaged now (${errorMessage(error)}); the next start tries again.`);
      return false;
    } finally {
      this.rebuilding = false;
    }
  }

  /** The connection from now on (the old one is closed already). */
  private use(next: Database): void {
    this.conn = next;
    this.identity = identityOf(this.path);
    if (this.hostId !== null) {
      try {
        transaction(this.conn, () => registerHost(this.conn, this.hostId!, this.procRoot));
      } catch {
        // Its row came along with the copy; the heartbeat goes on either way.
      }
    }
  }

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

  /**
   * Called before every read (list, get, events, counts): the recorder writes
   * the ends it has not written yet, so a read right after a run's answer finds it.
   * Whatever it throws is not the read's.
   */
  setBeforeRead(fn: (() => void) | null): void {
    this.beforeRead = fn
      ? () => {
          try {
            fn();
          } catch {
            // The writer reports its own failures.
          }
        }
      : null;
  }

  private beforeRead: (() => void) | null = null;

  list(query: ListQuery = {}): RunPage {
    return this.read(() => listRuns(this.db, query));
  }

  /** The whole result contract, or null when no run has that id; a damaged run as far as it reads, with a note. */
  get(id: string): RunResult | null {
    return this.read(
      () => getRun(this.db, id),
      () => readRunSalvaging(this.db, id)?.result ?? null,
    );
  }

  /** The run's timeline: queued/started, each signal sent, exit, teardown, ended or lost. */
  events(id: string): EventRecord[] {
    return this.read(() => getEvents(this.db, id), () => []);
  }

  countsByVerdict(range: { since?: TimeBound; until?: TimeBound } = {}): VerdictCounts {
    return this.read(() => countByVerdict(this.db, range));
  }

  /**
   * A read that meets damage salvages the history into a fresh file and is
   * asked again there; when that cannot be done, `fallback` answers with
   * what reads (else the error goes on).
   */
  private read<T>(fn: () => T, fallback?: () => T): T {
    this.checkFile();
    this.beforeRead?.();
    try {
      return fn();
    } catch (error) {
      if (!isCorruption(error)) throw error;
      this.noteDamage(error, false);
      if (this.salvageInUse(errorMessage(error))) {
        try {
          return fn();
        } catch (again) {
          if (!isCorruption(again) || !fallback) throw again;
        }
      }
      if (!fallback) throw error;
      return fallback();
    }
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
    clearInterval(this.fileTimer);
    if (this.readOnly !== null) {
      this.closed = true;
      this.conn.close();
      return;
    }
    // Never leave a history that is only in an unlinked file: put it back first.
    this.checkFile();
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

  /** @internal Damage seen: a mark for the next open; a host's store (one that records) salvages at once, after the current turn. */
  noteDamage(error: unknown, salvage = true): void {
    if (!isCorruption(error)) return;
    try {
      writeFileSync(damageMark(this.path), `${new Date().toISOString()} ${errorMessage(error)}\n`);
    } catch {
      // The mark is a courtesy; the next damaged read finds it again.
    }
    if (salvage && this.hostId !== null) setImmediate(() => this.salvageInUse(errorMessage(error)));
  }
}

function tempBeside(path: string, what: string): string {
  return `${path}.${what}-${process.pid}-${randomBytes(4).toString('hex')}`;
}

function removeWithJournal(path: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(path + suffix, { force: true });
}

/** Closes a connection; `checkpoint`: fold its WAL in first, so the file alone is whole (before a rename). */
function closeQuietly(db: Database, checkpoint: boolean): void {
  try {
    if (checkpoint) db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  } catch {
    // closing checkpoints too
  }
  try {
    db.close();
  } catch {
    // already closed
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
    const reason = errorMessage(error);
    const salvaged = salvageAtOpen(path, busyTimeoutMs);
    movedAside = moveAside(path, inode, reason, salvaged);
    try {
      if (salvaged) renameSync(salvaged.temp, path);
      db = connect(path, busyTimeoutMs);
    } catch (again) {
      throw openError(path, dir, again);
    } finally {
      if (salvaged) removeWithJournal(salvaged.temp);
    }
  }
  return new HistoryStore(db, path, movedAside, busyTimeoutMs, procRoot, options.notice);
}

/**
 * The history for reading only, where it cannot be written (a read-only
 * disk or file): `list` and `show` still answer from it. SQLite's `mode=ro`,
 * else `immutable=1` where not even the WAL index can be made (then writes
 * still in a -wal file are not seen, and `readOnly` says so). Throws the
 * StoreOpenError of `cause` when it cannot be read either.
 */
export function openStoreReadOnly(cause: StoreOpenError, options: OpenStoreOptions = {}): HistoryStore {
  const dir = options.dir ?? resolveStateDir();
  const path = join(dir, options.fileName ?? DB_FILE);
  const uri = `file:${path.replace(/[?#%]/g, (c) => `%${c.charCodeAt(0).toString(16)}`)}`;
  let unseenWal = 0;
  try {
    unseenWal = statSync(`${path}-wal`).size;
  } catch {
    // no WAL
  }
  for (const [query, why] of [
    ['mode=ro', ''],
    ['mode=ro&immutable=1', unseenWal > 0 ? `; the last writes, ${unseenWal} bytes in ${path}-wal, cannot be read without writing` : ''],
  ] as const) {
    let db: Database | null = null;
    try {
      db = openDatabase(`${uri}?${query}`);
      value(db, 'SELECT max(n) FROM runs');
      const store = new HistoryStore(db, path, null, options.busyTimeoutMs ?? 250, null, options.notice);
      store.readOnly = `${cause.message.replace(/\.$/, '')}${why}`;
      return store;
    } catch {
      if (db) closeQuietly(db, false);
    }
  }
  throw cause;
}

/**
 * Every run of a damaged file that still reads, written into a fresh file
 * beside it (salvage.ts); null when the file cannot be opened at all (not
 * a database) or the salvage failed: then it is moved aside as it is.
 */
function salvageAtOpen(path: string, busyTimeoutMs: number): { temp: string; report: SalvageReport } | null {
  let damaged: Database;
  try {
    damaged = openDatabase(path);
    setBusyTimeout(damaged, SLOW_BUSY_MS);
  } catch {
    return null;
  }
  const temp = tempBeside(path, 'salvage');
  try {
    const fresh = connect(temp, busyTimeoutMs);
    try {
      const report = salvageRuns(damaged, fresh);
      return { temp, report };
    } finally {
      closeQuietly(fresh, true);
    }
  } catch {
    removeWithJournal(temp);
    return null;
  } finally {
    closeQuietly(damaged, false);
  }
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
function moveAside(path: string, inode: number | null, reason: string, salvaged: { report: SalvageReport } | null = null): MovedAside {
  // Counted before the move, while the file is where the caller found it: what a salvage could not reach is still said.
  const runsInFile = salvaged === null || salvaged.report.unreadable ? runRecordsInFile(path) : null;
  if (salvaged?.report.unreadable) salvaged.report.unreadable.runsInFile = runsInFile;
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
    ...(salvaged ? { salvage: salvaged.report } : {}),
    message: salvaged
      ? `Warden's history database ${path} was damaged (${reason}); ${salvageLine(salvaged.report)}. The damaged file was moved aside to ${to} (${salvaged.report.lost.length > 0 || salvaged.report.unreadable ? 'it still holds what was not saved; ' : ''}nothing was deleted: sqlite3 "${to}" .recover may get more out of it).`
      : `Warden's history database ${path} was damaged (${reason}) and nothing in it could be read${heldLine(runsInFile)}; it was moved aside to ${to} and a fresh history was started. Nothing was deleted: the old file can be inspected or salvaged with sqlite3 "${to}" .recover.`,
  };
}

/** What the unreadable file held, as far as its raw pages tell. */
function heldLine(runsInFile: number | null): string {
  return runsInFile === null || runsInFile === 0 ? '' : ` (it holds the records of up to ${runsInFile} run(s), NOT saved)`;
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
