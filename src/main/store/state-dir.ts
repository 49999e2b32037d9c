// Creating the state dir privately, and keeping the history's files private.
// Where the dir is (resolveStateDir) lives in client/state-dir.ts, below every
// layer that needs it.

import { chmodSync, closeSync, mkdirSync, openSync, statSync } from 'node:fs';
import { StoreOpenError } from './errors';

/**
 * Creates the state dir (and missing parents) with mode 0700: the history
 * holds commands, output and environments' traces that are the user's alone.
 * An existing dir that others could enter is tightened to 0700, with a
 * one-line notice. Throws StoreOpenError with one line.
 */
export function ensureStateDir(dir: string, notice: (line: string) => void = (line) => void process.stderr.write(`warden: ${line}\n`)): string {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === 'EACCES' || code === 'EPERM'
        ? 'permission denied'
        : code === 'EROFS'
          ? 'the file system is read-only'
          : code === 'ENOTDIR' || code === 'EEXIST'
            ? 'a file is in the way of the directory'
            : (error as Error).message;
    throw new StoreOpenError(
      dir,
      code === 'EACCES' || code === 'EPERM' ? 'permission' : code === 'EROFS' ? 'read-only' : 'unusable',
      `Warden cannot create its state directory ${dir}: ${why}. Set WARDEN_STATE_DIR to a directory you can write, or fix that path.`,
    );
  }
  const stat = statSync(dir);
  if (!stat.isDirectory()) {
    throw new StoreOpenError(dir, 'unusable', `Warden's state directory ${dir} is not a directory. Move that file away, or set WARDEN_STATE_DIR to another directory.`);
  }
  const mode = stat.mode & 0o777;
  const mine = typeof process.getuid !== 'function' || stat.uid === process.getuid();
  if ((mode & 0o077) !== 0 && mine) {
    try {
      chmodSync(dir, 0o700);
      notice(`made the state directory ${dir} private (mode 0700; it was ${mode.toString(8).padStart(4, '0')}): it holds your commands, their output and their environments.`);
    } catch (error) {
      notice(`the state directory ${dir} is readable by others (mode ${mode.toString(8).padStart(4, '0')}) and could not be made private: ${(error as Error).message}`);
    }
  }
  return dir;
}

/** Creates the file 0600 if it is missing and makes it 0600 if it is not (SQLite gives its -wal and -shm the database's mode). */
export function makePrivateFile(path: string): void {
  try {
    closeSync(openSync(path, 'a', 0o600));
  } catch {
    // Not writable (a read-only history): opening it says what is wrong.
  }
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    try {
      if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
    } catch {
      // Not there, or not ours to change.
    }
  }
}
