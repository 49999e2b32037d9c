// Reading and writing a user's config files for `warden setup`, as sudo and
// OpenSSH treat a user's files when root acts on them: the work is done with
// the effective uid and groups of the user whose directory it is (root
// running `sudo -E warden setup`, or a container's entrypoint, on a user's
// home), so a file setup makes is theirs, a link they planted cannot aim
// root's write at a file of root's, and the kernel refuses what the user
// could not do themselves. A file setup rewrites keeps its owner, group and
// mode; a symbolic link (dotfiles) is written through to the real file and
// stays a link. Every failure is one line (a UsageError), never a stack
// trace or "internal error: EACCES".

import { randomBytes } from 'node:crypto';
import { closeSync, constants, fchmodSync, fchownSync, fstatSync, fsyncSync, lstatSync, mkdirSync, openSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { UsageError } from '../parse';

/** Why a file operation failed, as a person reads it. */
export function whyNot(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EROFS') return 'the file system is read-only';
  if (code === 'ENOSPC' || code === 'EDQUOT') return 'no space left';
  if (code === 'ELOOP') return 'it is a symbolic link';
  if (code === 'ENOTDIR') return 'a file is in the way of a directory';
  if (code === 'EISDIR') return 'it is a directory';
  return code ?? (error instanceof Error ? error.message : String(error));
}

/**
 * Whose file setup is writing: the owner of the directory that holds
 * `path` (or the nearest one above it that exists), as the home or project
 * is theirs. The file's own owner is not asked: a file root left in a
 * user's home (the bug this module fixes) must not make root its owner.
 */
export function ownerOf(path: string): { uid: number; gid: number } | null {
  for (let at = dirname(path); ; at = dirname(at)) {
    try {
      const stat = lstatSync(at);
      // A link's own owner says nothing: the directory holding it does.
      if (!stat.isSymbolicLink()) return { uid: stat.uid, gid: stat.gid };
    } catch {
      // not there: look above
    }
    if (dirname(at) === at) return null;
  }
}

/** The user name and primary group of a uid, from /etc/passwd; null when it names none. */
function passwdEntry(uid: number): { name: string; gid: number } | null {
  try {
    for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const fields = line.split(':');
      if (fields.length >= 4 && Number(fields[2]) === uid && fields[2] !== '') return { name: fields[0]!, gid: Number(fields[3]) };
    }
  } catch {
    // no /etc/passwd
  }
  return null;
}

/**
 * Runs `work` as the owner of `path` (see ownerOf) when this process is root
 * and that owner is another user: effective uid, gid and supplementary
 * groups are theirs for the duration (root's capabilities drop with the
 * effective uid), then root's again. Otherwise `work` runs as it is.
 * `work` must be synchronous: nothing else runs meanwhile.
 */
export function asOwnerOf<T>(path: string, work: () => T): T {
  const owner = ownerOf(path);
  if (typeof process.geteuid !== 'function' || process.geteuid() !== 0 || owner === null || owner.uid === 0) return work();
  const entry = passwdEntry(owner.uid);
  const gid = entry?.gid ?? owner.gid;
  const groups = process.getgroups!();
  try {
    // Node has process.initgroups on POSIX; its types leave it out.
    const initgroups = (process as { initgroups?: (user: string, extraGroup: number) => void }).initgroups;
    if (entry && initgroups) initgroups(entry.name, gid);
    else process.setgroups!([gid]);
    process.setegid!(gid);
    process.seteuid!(owner.uid);
  } catch (error) {
    restore(groups);
    throw new UsageError(`cannot act as uid ${owner.uid}, who owns ${path}: ${whyNot(error)}.`);
  }
  try {
    return work();
  } finally {
    restore(groups);
  }
}

function restore(groups: number[]): void {
  process.seteuid!(0);
  process.setegid!(0);
  process.setgroups!(groups);
}

/** A config file's text, or null when there is none. Through a link (dotfiles) as the harness reads it. */
export function readConfig(path: string, shown: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    throw new UsageError(`cannot read ${shown}: ${whyNot(error)}; nothing was changed.`);
  }
}

/**
 * A backup setup wrote, or null: never read through a link (setup never
 * makes one, so one there was planted) and only a regular file of the
 * user's, since --remove writes what it holds into their config.
 */
export function readBackup(path: string, shown: string): string | null {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    if (code === 'ELOOP') throw new UsageError(`${shown} is a symbolic link, which warden setup never makes; remove it and run setup again.`);
    throw new UsageError(`cannot read ${shown}: ${whyNot(error)}; nothing was changed.`);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new UsageError(`${shown} is not a regular file; remove it and run setup again.`);
    const me = typeof process.geteuid === 'function' ? process.geteuid() : null;
    if (me !== null && stat.uid !== me && stat.uid !== 0) throw new UsageError(`${shown} belongs to uid ${stat.uid}, not to you (uid ${me}); remove it and run setup again.`);
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes `text` as the whole of the config at `path`: into the real file
 * when `path` is a link (the link stays), through a fresh file made beside
 * it with O_EXCL and renamed over it, with the old file's owner, group and
 * mode (0600 for a new one). When the caller cannot give it that owner, or
 * cannot write there, one line says so and the file is left as it was.
 */
export function writeConfig(path: string, text: string, shown: string): void {
  let target = path;
  let old: { uid: number; gid: number; mode: number } | null = null;
  try {
    if (lstatSync(path).isSymbolicLink()) target = realpathSync(path);
    const stat = statSync(target);
    old = { uid: stat.uid, gid: stat.gid, mode: stat.mode & 0o7777 };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // A dangling link is written at its target, as an editor would.
    if (code === 'ENOENT' && target === path) {
      try {
        if (lstatSync(path).isSymbolicLink()) throw new UsageError(`${shown} is a symbolic link to a file that does not exist; make that file (or remove the link) and run setup again.`);
      } catch (inner) {
        if (inner instanceof UsageError) throw inner;
      }
    } else if (code !== 'ENOENT') {
      throw new UsageError(`cannot write ${shown}: ${whyNot(error)}; nothing was changed.`);
    }
  }
  const dir = dirname(target);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new UsageError(`cannot make ${dirname(shown)}: ${whyNot(error)}; nothing was changed.`);
  }
  const temp = `${target}.warden-${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  let fd: number;
  try {
    fd = openSync(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  } catch (error) {
    throw new UsageError(`cannot write ${shown}: ${whyNot(error)} (in ${dir}); nothing was changed.`);
  }
  try {
    const made = fstatSync(fd);
    if (old !== null && (made.uid !== old.uid || made.gid !== old.gid)) {
      try {
        fchownSync(fd, old.uid, old.gid);
      } catch {
        throw new UsageError(`${shown} belongs to uid ${old.uid} (group ${old.gid}); writing it as uid ${made.uid} would change its owner, so nothing was changed. Run warden setup as its owner.`);
      }
    }
    fchmodSync(fd, old?.mode ?? 0o600);
    const bytes = Buffer.from(text);
    for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, bytes.length - at);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    rmSync(temp, { force: true });
    if (error instanceof UsageError) throw error;
    throw new UsageError(`cannot write ${shown}: ${whyNot(error)}; nothing was changed.`);
  }
  closeSync(fd);
  try {
    renameSync(temp, target);
  } catch (error) {
    rmSync(temp, { force: true });
    throw new UsageError(`cannot write ${shown}: ${whyNot(error)}; nothing was changed.`);
  }
}

/** Removes a file setup made (or its backup); one line when it cannot. A link is removed, never its target. */
export function removeFile(path: string, shown: string): void {
  try {
    rmSync(path, { force: true });
  } catch (error) {
    throw new UsageError(`cannot remove ${shown}: ${whyNot(error)}.`);
  }
}
