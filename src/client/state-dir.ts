// Where Warden keeps its state (docs/architecture.md, "Persistence"):
// $WARDEN_STATE_DIR when set, else $XDG_STATE_HOME/warden, else
// ~/.local/state/warden on Linux and the platform's app-data dir elsewhere.
// The app, `warden serve`, the CLI and the MCP server all resolve it here, so they share it.

import { accessSync, closeSync, constants, fchmodSync, fstatSync, lstatSync, mkdirSync, openSync, realpathSync, type Stats } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';

export interface StateDirEnv {
  WARDEN_STATE_DIR?: string;
  XDG_STATE_HOME?: string;
  LOCALAPPDATA?: string;
  APPDATA?: string;
}

export function resolveStateDir(
  env: StateDirEnv = process.env,
  platform: NodeJS.Platform = process.platform,
  home: string = homedir(),
): string {
  if (env.WARDEN_STATE_DIR) return resolve(env.WARDEN_STATE_DIR);
  // The XDG spec ignores a relative value.
  if (env.XDG_STATE_HOME && isAbsolute(env.XDG_STATE_HOME)) return join(env.XDG_STATE_HOME, 'warden');
  if (platform === 'darwin') return join(home, 'Library', 'Application Support', 'warden');
  if (platform === 'win32') return join(env.LOCALAPPDATA ?? env.APPDATA ?? join(home, 'AppData', 'Local'), 'warden');
  return join(home, '.local', 'state', 'warden');
}

/** This process's uid and gid, or null where there are none (Windows). */
export function userIds(): { uid: number; gid: number } | null {
  return typeof process.getuid === 'function' && typeof process.getgid === 'function' ? { uid: process.getuid(), gid: process.getgid() } : null;
}

/** A uid as a person reads it. */
export function owner(uid: number): string {
  return uid === 0 ? 'root' : `uid ${uid}`;
}

/**
 * Why a state dir (or a dir in it) is not safe to keep private files in, as
 * ssh judges ~/.ssh: it, and every directory above it, must belong to this
 * user or root, and none may be writable by others (a sticky one such as
 * /tmp is fine: others cannot rename what is ours in it; a group-writable
 * one only when it is this user's own, with its own group). Otherwise
 * whoever owns or can write it can swap the files Warden trusts (the
 * socket, the token, the history) for links or listeners of theirs. null
 * when safe, and where ownership means nothing (no getuid). With below, dir
 * is the existing directory the state dir below is still to be created in.
 */
export function unsafeDirReason(dir: string, below?: string): string | null {
  const user = userIds();
  if (user === null) return null;
  let real: string;
  try {
    real = realpathSync(dir);
  } catch {
    return null; // not there: whoever creates it says why it cannot be
  }
  // With below: dir is where the state dir `below` is still to be made, so dir itself is one above it.
  const stateDir = below ?? dir;
  for (let path = real, leaf = below === undefined; ; leaf = false) {
    let stat: Stats;
    try {
      stat = lstatSync(path);
    } catch {
      return null;
    }
    const what = leaf ? `Warden's state directory ${stateDir}` : `${path}, above Warden's state directory ${stateDir},`;
    if (stat.uid !== user.uid && stat.uid !== 0) {
      return `${what} belongs to ${owner(stat.uid)}, not to you (uid ${user.uid}) or root, so its owner could put their own files in Warden's place; Warden will not use it. Set WARDEN_STATE_DIR to a directory of yours.`;
    }
    const sticky = (stat.mode & 0o1000) !== 0;
    const othersWrite = (stat.mode & 0o002) !== 0;
    const groupWrite = (stat.mode & 0o020) !== 0 && !(stat.uid === user.uid && stat.gid === user.gid);
    // The leaf, when it is ours, is made 0700 by ensureStateDir.
    if (!sticky && (othersWrite || groupWrite) && !(leaf && stat.uid === user.uid)) {
      return `${what} is writable by ${othersWrite ? 'every user' : 'its group'} (mode ${(stat.mode & 0o7777).toString(8).padStart(4, '0')}), so they could put their own files in Warden's place; Warden will not use it. Remove that write permission (chmod go-w ${path}), or set WARDEN_STATE_DIR to a directory of yours.`;
    }
    const up = dirname(path);
    if (up === path) return null;
    path = up;
  }
}

/**
 * The check every command makes before it trusts anything in the state dir
 * (unsafeDirReason), as `serve`, `run` and `mcp` do through the host: for
 * those that read or write the state dir's files themselves (remotes.json,
 * the ssh ControlPath, dial-stdio's socket). `refuse` builds the error to
 * throw with the one line.
 */
export function checkStateDir(stateDir: string, refuse: (line: string) => Error): void {
  const why = unsafeDirReason(stateDir);
  if (why !== null) throw refuse(why);
}

/**
 * A private directory in the state dir (run/) for a client to put a socket
 * in: made 0700 when missing; an existing one must be a real directory (not
 * a link) of this user's, or root's and writable by no one else; this
 * user's is tightened to 0700 through its own descriptor. The one line why
 * not, else null. (The host's own is store/state-dir.ts ensurePrivateDir,
 * a layer up.)
 */
export function privateDirProblem(path: string): string | null {
  try {
    mkdirSync(path, { mode: 0o700 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EEXIST') return `Warden cannot make its directory ${path}: ${code ?? (error as Error).message}.`;
  }
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return `Warden's directory ${path} is ${code === 'ELOOP' || code === 'ENOTDIR' ? 'not a plain directory (a link or a file)' : `unusable (${code ?? (error as Error).message})`}; Warden will not use it. Remove it, or set WARDEN_STATE_DIR to a directory of yours.`;
  }
  try {
    const stat = fstatSync(fd);
    const user = userIds();
    if (user === null) return null;
    if (stat.uid !== user.uid && stat.uid !== 0) return `Warden's directory ${path} belongs to ${owner(stat.uid)}, not to you (uid ${user.uid}) or root; Warden will not use it. Remove it, or set WARDEN_STATE_DIR to a directory of yours.`;
    if (stat.uid !== user.uid && (stat.mode & 0o022) !== 0) return `Warden's directory ${path} belongs to root and others can write it (mode ${(stat.mode & 0o7777).toString(8).padStart(4, '0')}); Warden will not use it. Remove it, or set WARDEN_STATE_DIR to a directory of yours.`;
    if (stat.uid === user.uid && (stat.mode & 0o077) !== 0) fchmodSync(fd, 0o700);
    return null;
  } finally {
    closeSync(fd);
  }
}

/** Why `dir` (or, while it does not exist, the directory it would be made in) cannot be written; null when it can. */
export function unwritableReason(dir: string): string | null {
  for (let at = dir; ; at = dirname(at)) {
    try {
      accessSync(at, constants.W_OK | constants.X_OK);
      return null;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' || dirname(at) === at) return code ?? 'not writable';
    }
  }
}
