// Opening the history: pragmas, migrations, and every way the file can be bad.

import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { StoreOpenError } from './errors';
import { SCHEMA_VERSION } from './schema';
import { value } from './sql';
import { DB_FILE, openStore } from './store';
import { cannotRunAs, fakeResult, removeTempDirs, startChild, tempStateDir } from './store-testkit';

afterEach(removeTempDirs);

const NOBODY = 65534;
/** Why the tests that run code as nobody are skipped here, or null: they run. */
const asNobody = cannotRunAs(NOBODY);
if (asNobody) console.warn(`store.test.ts: the tests run as user ${NOBODY} are skipped: ${asNobody}.`);

describe('openStore', () => {
  it('creates history.db in WAL mode with foreign keys on and the schema migrated', () => {
    const dir = tempStateDir();
    const store = openStore({ dir });
    expect(store.path).toBe(join(dir, DB_FILE));
    expect(value(store.db, 'PRAGMA journal_mode')).toBe('wal');
    expect(value(store.db, 'PRAGMA foreign_keys')).toBe(1);
    expect(value(store.db, 'PRAGMA busy_timeout')).toBe(250);
    expect(value(store.db, 'PRAGMA user_version')).toBe(SCHEMA_VERSION);
    expect(value(store.db, 'PRAGMA page_size')).toBe(16384);
    expect(store.movedAside).toBeNull();
    store.close();
  });

  it('keeps what is stored across a reopen, and migrates nothing twice', () => {
    const dir = tempStateDir();
    const first = openStore({ dir });
    const result = fakeResult();
    first.recordResult(result);
    first.close();
    const second = openStore({ dir });
    expect(second.get(result.id)).toEqual(result);
    expect(value(second.db, 'PRAGMA user_version')).toBe(SCHEMA_VERSION);
    second.close();
  });

  it('refuses a database from a newer Warden with a clear line', () => {
    const dir = tempStateDir();
    const store = openStore({ dir });
    store.db.exec(`PRAGMA user_version = ${SCHEMA_VERSION + 1}`);
    store.close();
    expect(() => openStore({ dir })).toThrow(/written by a newer Warden \(schema 2; this one knows 1\)\. Upgrade Warden, or set WARDEN_STATE_DIR/);
  });

  it('names the path and the fix when a directory is in the place of the database', () => {
    const dir = tempStateDir();
    mkdirSync(join(dir, DB_FILE));
    let error: unknown;
    try {
      openStore({ dir });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(StoreOpenError);
    expect((error as StoreOpenError).problem).toBe('directory');
    expect((error as Error).message).toBe(
      `Warden's history database ${join(dir, DB_FILE)} is a directory, not a file. Move or remove that directory, or set WARDEN_STATE_DIR to another directory than ${dir}.`,
    );
    // Nothing was moved or created.
    expect(readdirSync(dir)).toEqual([DB_FILE]);
  });

  it('moves a file that is not a database aside, never deleting it, and starts afresh', () => {
    const dir = tempStateDir();
    const garbage = Buffer.alloc(8192, 'x');
    writeFileSync(join(dir, DB_FILE), garbage);
    const store = openStore({ dir });
    expect(store.movedAside).not.toBeNull();
    const { to, message } = store.movedAside!;
    expect(to).toMatch(new RegExp(`^${join(dir, DB_FILE)}\\.corrupt-\\d{4}-\\d\\d-\\d\\dT\\d\\d-\\d\\d-\\d\\d-\\d{3}Z$`));
    expect(readFileSync(to)).toEqual(garbage);
    expect(message).toContain(`moved aside to ${to}`);
    expect(message).toContain('file is not a database');
    // The fresh history works.
    const result = fakeResult();
    store.recordResult(result);
    expect(store.get(result.id)).toEqual(result);
    store.close();
  });

  it('moves a database with a damaged schema aside', () => {
    const dir = tempStateDir();
    const store = openStore({ dir });
    for (let i = 0; i < 50; i++) store.recordResult(fakeResult({ stdout: 'x'.repeat(5000) }));
    store.close();
    // Overwrite page 1 past the 100-byte header: the schema table's root.
    const path = join(dir, DB_FILE);
    const bytes = readFileSync(path);
    bytes.fill(0xa5, 100, bytes.readUInt16BE(16));
    writeFileSync(path, bytes);
    const reopened = openStore({ dir });
    expect(reopened.movedAside?.reason).toMatch(/malformed|not a database/);
    expect(existsSync(reopened.movedAside!.to)).toBe(true);
    expect(reopened.list().runs).toEqual([]);
    // Never "none lost" when nothing could be read: how many were there, and where they are.
    expect(reopened.movedAside!.message).toContain('0 run(s) saved into the fresh history; NOT saved: up to 50 run(s) (records found in its raw pages)');
    expect(reopened.movedAside!.message).toContain(`moved aside to ${reopened.movedAside!.to} (it still holds what was not saved;`);
    reopened.close();
  });

  it.each([
    ['the magic string', 0, 16],
    ['the header past the magic', 16, 100],
  ])('a damaged header (%s) says how many runs the moved-aside file holds, never "none lost"', (_name, from, to) => {
    const dir = tempStateDir();
    const store = openStore({ dir });
    for (let i = 0; i < 300; i++) store.recordResult(fakeResult());
    store.close();
    const path = join(dir, DB_FILE);
    const bytes = readFileSync(path);
    bytes.fill(0xa5, from, to);
    writeFileSync(path, bytes);
    const reopened = openStore({ dir });
    const aside = reopened.movedAside!;
    expect(aside.message).not.toContain('none lost');
    expect(aside.message).toContain('NOT saved: up to 300 run(s)');
    expect(aside.message).toContain(`moved aside to ${aside.to} (it still holds what was not saved;`);
    expect(readFileSync(aside.to)).toEqual(bytes);
    reopened.close();
  });

  it('damage seen in use: every run that reads is salvaged into a fresh file at once, the read is answered, and a notice says so', () => {
    const dir = tempStateDir();
    const store = openStore({ dir });
    const ids: string[] = [];
    for (let i = 0; i < 200; i++) {
      const r = fakeResult({ stdout: `${'y'.repeat(3000)} ${i}` });
      ids.push(r.id);
      store.recordResult(r);
    }
    store.close();
    // Damage pages in the middle of the file (output blobs): opening does not touch them.
    const path = join(dir, DB_FILE);
    const bytes = readFileSync(path);
    const pageSize = bytes.readUInt16BE(16);
    const pages = bytes.length / pageSize;
    bytes.fill(0x41, pageSize * Math.floor(pages * 0.4), pageSize * Math.floor(pages * 0.5));
    writeFileSync(path, bytes);
    const notices: string[] = [];
    const damaged = openStore({ dir, notice: (line) => notices.push(line) });
    expect(damaged.movedAside).toBeNull();
    const read = ids.map((id) => damaged.get(id));
    expect(read.every((r) => r !== null)).toBe(true);
    const partial = read.filter((r) => r!.notes.some((n) => n.startsWith("Warden's history database was damaged")));
    expect(partial.length).toBeGreaterThan(0);
    // What could not be read is left out, and the note says which part.
    for (const r of partial) if (r!.notes.some((n) => n.includes('its stdout'))) expect(r!.stdout).toBe('');
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatch(/was found damaged while in use \(.*malformed.*\); 200 run\(s\) saved into the fresh history, \d+ of them in part: .*; none lost\. The damaged file was moved aside to .*\.corrupt-/);
    expect(readdirSync(dir).some((f) => f.startsWith(`${DB_FILE}.corrupt-`))).toBe(true);
    damaged.close();
    // The fresh file opens clean, with every run.
    const next = openStore({ dir });
    expect(next.movedAside).toBeNull();
    expect(next.list({ limit: 1000 }).runs).toHaveLength(200);
    next.close();
  });

  it.skipIf(asNobody !== null)('says which path and what to do when the state dir or the file cannot be written', async () => {
    const dir = tempStateDir();
    chmodSync(dir, 0o755);
    // A read-only state dir (for this user), no database yet.
    const readOnlyDir = join(dir, 'ro');
    mkdirSync(readOnlyDir, { mode: 0o755 });
    // A database file of root's, mode 0600, in nobody's own state dir (a dir others may write is refused whole: hostile-state-dir.test.ts).
    const theirs = join(dir, 'theirs');
    mkdirSync(theirs, { mode: 0o700 });
    openStore({ dir: theirs }).close();
    chmodSync(join(theirs, DB_FILE), 0o600);
    chownSync(theirs, NOBODY, NOBODY);

    const ro = startChild(['open', readOnlyDir], { uid: NOBODY });
    const roOut = await ro.nextJson<{ error: string; problem: string }>();
    expect(roOut.problem).toBe('permission');
    expect(roOut.error).toBe(
      `Warden cannot open its history database ${join(readOnlyDir, DB_FILE)}: no permission to write the directory ${readOnlyDir} (SQLite creates ${join(readOnlyDir, DB_FILE)}-wal beside the database). Fix the permissions (chmod u+rwx ${readOnlyDir}) or set WARDEN_STATE_DIR to a directory you can write.`,
    );

    const file = startChild(['open', theirs], { uid: NOBODY });
    const fileOut = await file.nextJson<{ error: string; problem: string }>();
    expect(fileOut.problem).toBe('permission');
    expect(fileOut.error).toContain(`no permission to write the file ${join(theirs, DB_FILE)}`);
    expect(fileOut.error).toContain(`chmod u+rw ${join(theirs, DB_FILE)}`);
  });
});
