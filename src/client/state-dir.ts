// Where Warden keeps its state (docs/architecture.md, "Persistence"):
// $WARDEN_STATE_DIR when set, else $XDG_STATE_HOME/warden, else
// ~/.local/state/warden on Linux and the platform's app-data dir elsewhere.
// The app, `warden serve`, the CLI and the MCP server all resolve it here, so they share it.

import { lstatSync, realpathSync, type Stats } from 'node:fs';
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
