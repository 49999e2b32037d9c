// Creating the state dir privately, and keeping the history's files private.
// Where the dir is (resolveStateDir) lives in client/state-dir.ts, below every
// layer that needs it.

import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, constants, fchmodSync, fstatSync, lstatSync, mkdirSync, openSync, renameSync, rmSync, statSync, writeSync, type Stats } from 'node:fs';
import { owner, unsafeDirReason, userIds } from '../../client/state-dir';
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
  const unsafe = unsafeDirReason(dir);
  if (unsafe !== null) throw new StoreOpenError(dir, 'unsafe', unsafe);
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

/**
 * A directory inside the state dir (run/): created 0700 if missing; an
 * existing one must be a real directory (not a link) of this user's, and is
 * tightened to 0700 through its own descriptor, never through a link.
 * Throws StoreOpenError with one line.
 */
export function ensurePrivateDir(path: string): string {
  try {
    mkdirSync(path, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const fd = openSync(path, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  try {
    const stat = fstatSync(fd);
    const user = userIds();
    if (user !== null && stat.uid !== user.uid && stat.uid !== 0) {
      throw new StoreOpenError(path, 'unsafe', `Warden's directory ${path} belongs to ${owner(stat.uid)}, not to you (uid ${user.uid}) or root; Warden will not use it. Remove it, or set WARDEN_STATE_DIR to a directory of yours.`);
    }
    if (stat.uid !== user?.uid && (stat.mode & 0o022) !== 0) {
      throw new StoreOpenError(path, 'unsafe', `Warden's directory ${path} belongs to root and others can write it (mode ${(stat.mode & 0o7777).toString(8).padStart(4, '0')}); Warden will not use it. Remove it, or set WARDEN_STATE_DIR to a directory of yours.`);
    }
    if (stat.uid === user?.uid && (stat.mode & 0o077) !== 0) fchmodSync(fd, 0o700);
  } finally {
    closeSync(fd);
  }
  return path;
}

/** One line when `path` is something Warden must not write through: a link, or not a regular file; null when absent or a plain file. */
export function notPlainFile(path: string): string | null {
  let stat: Stats;
  try {
    stat = lstatSync(path);
  } catch {
    return null;
  }
  if (stat.isSymbolicLink()) return `${path} is a symbolic link; Warden never opens its private files through one (someone may have planted it). Remove it and start again.`;
  if (!stat.isFile()) return `${path} is not a regular file; remove it and start again.`;
  const user = userIds();
  if (user !== null && stat.uid !== user.uid && stat.uid !== 0) return `${path} belongs to ${owner(stat.uid)}, not to you (uid ${user.uid}) or root; remove it and start again.`;
  return null;
}

/**
 * Writes a private file (0600) whole: a fresh temp file created with
 * O_EXCL (which never follows a link), then renamed over `path`. A link or
 * anything but a plain file of this user's at `path` is refused, with one
 * line (an Error), and left as it is.
 */
export function writePrivateFile(path: string, content: string): void {
  const problem = notPlainFile(path);
  if (problem !== null) throw new Error(problem);
  const temp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const fd = openSync(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  try {
    fchmodSync(fd, 0o600); // whatever the umask
    writeSync(fd, content);
  } catch (error) {
    closeSync(fd);
    rmSync(temp, { force: true });
    throw error;
  }
  closeSync(fd);
  try {
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}

/**
 * The history file, created 0600 if it is missing, and it, its -wal and
 * -shm made 0600 (SQLite gives them the database's mode): each opened with
 * O_NOFOLLOW and changed through that descriptor, so a link planted in
 * their place is refused (StoreOpenError 'unsafe', one line) and its target
 * never touched.
 */
export function makePrivateFile(path: string): void {
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    const problem = notPlainFile(file);
    if (problem !== null) throw new StoreOpenError(file, 'unsafe', `Warden's history file ${problem}`);
  }
  let fd: number | null = null;
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK, 0o600);
  } catch {
    // Not writable (a read-only history): opening it says what is wrong.
  }
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    let own = file === path ? fd : null;
    try {
      own ??= openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
      if ((fstatSync(own).mode & 0o077) !== 0) fchmodSync(own, 0o600);
    } catch {
      // Not there, or not ours to change.
    } finally {
      if (own !== null) closeSync(own);
    }
  }
}
