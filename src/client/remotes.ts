// Remote hosts: other machines' Warden hosts, reached over ssh (or any
// command giving stdio to one) running `warden dial-stdio` there. Kept in
// <state dir>/remotes.json, readable by the user alone.
//
// Safety: the system ssh is run without a shell, its options first, then
// `--`, then the destination, so nothing a name or a destination holds is
// read as an ssh option (`-oProxyCommand=...`); names and destinations are
// also held to plain patterns when added and when read back.
//
// One ssh session per remote: ControlMaster=auto with the control socket in
// the state dir's private run dir and ControlPersist, so each connection is a
// channel on the session the first one opened; when the session dropped, the
// next connection opens a new one (ssh removes the dead control socket).

import { randomBytes } from 'node:crypto';
import { closeSync, constants, fstatSync, linkSync, mkdirSync, openSync, readFileSync, readSync, renameSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { checkStateDir, owner, privateDirProblem, userIds } from './state-dir';
import { HOST_NAME, LOCAL_HOST } from '../shared/hosts';
import { HttpWardenApi } from '../shared/http-api';
import { WardenError, type ErrorKind } from '../shared/errors';
import { dialCommand } from './stdio-link';
import { NodeTransport } from './transport';

/** A remote's name: a word, so it is never an option or a path (one rule with the app's, shared/hosts.ts). */
export const REMOTE_NAME = HOST_NAME;
/** The name `list --all-hosts` and the app give this machine's host. */
export const LOCAL_HOST_NAME = LOCAL_HOST;
const SSH_USER = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$/;
const SSH_HOST = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,252}$/;
const SSH_IPV6 = /^[0-9A-Fa-f:.]+$/;
/** How long an idle ssh session is kept for the next command. */
export const SSH_PERSIST = '10m';

export interface SshTarget {
  host: string;
  user?: string;
  port?: number;
}

export type Remote = { name: string; ssh: SshTarget; warden: string } | { name: string; command: string };

/** Bad input about remotes: one line for the user (the CLI's 125). */
export class RemoteError extends WardenError {
  override name = 'RemoteError';
  constructor(message: string, kind: ErrorKind = 'bad-input') {
    super(kind, message);
  }
}

export function remotesPath(stateDir: string): string {
  return join(stateDir, 'remotes.json');
}

export function checkName(name: string): string {
  if (name === LOCAL_HOST_NAME) throw new RemoteError(`"${LOCAL_HOST_NAME}" names this machine's host; pick another name for a remote.`);
  if (!REMOTE_NAME.test(name)) throw new RemoteError(`A remote's name is 1 to 32 letters, digits, '_', '.' or '-', starting with a letter or digit, not ${JSON.stringify(name)}.`);
  return name;
}

/** ssh://[user@]host[:port], nothing else: no password, path, query or option. */
export function parseSshUrl(text: string): SshTarget {
  const bad = (why: string) => new RemoteError(`${JSON.stringify(text)} is not a destination: ${why} (ssh://[user@]host[:port]).`);
  if (!text.startsWith('ssh://')) throw bad('it must start with ssh://');
  let rest = text.slice('ssh://'.length);
  if (rest.endsWith('/')) rest = rest.slice(0, -1);
  if (/[/?#\s]/.test(rest)) throw bad('a path, query or space is not allowed');
  const at = rest.lastIndexOf('@');
  const target: SshTarget = { host: '' };
  if (at >= 0) {
    const user = rest.slice(0, at);
    if (!SSH_USER.test(user)) throw bad(`the user ${JSON.stringify(user)} is not a plain user name`);
    target.user = user;
    rest = rest.slice(at + 1);
  }
  let port: string | undefined;
  if (rest.startsWith('[')) {
    const close = rest.indexOf(']');
    if (close < 0) throw bad('an IPv6 address needs its closing ]');
    target.host = rest.slice(1, close);
    if (!SSH_IPV6.test(target.host)) throw bad('the address in [] is not an IPv6 address');
    const after = rest.slice(close + 1);
    if (after !== '' && !after.startsWith(':')) throw bad('only :port may follow the address');
    if (after !== '') port = after.slice(1);
  } else {
    const colon = rest.indexOf(':');
    target.host = colon >= 0 ? rest.slice(0, colon) : rest;
    if (colon >= 0) port = rest.slice(colon + 1);
    if (!SSH_HOST.test(target.host)) throw bad(`the host ${JSON.stringify(target.host)} is not a host name or address`);
  }
  if (port !== undefined) {
    const n = Number(port);
    if (!/^\d{1,5}$/.test(port) || n < 1 || n > 65535) throw bad(`the port ${JSON.stringify(port)} is not 1 to 65535`);
    target.port = n;
  }
  return target;
}

export function sshUrl(target: SshTarget): string {
  const host = target.host.includes(':') ? `[${target.host}]` : target.host;
  return `ssh://${target.user ? `${target.user}@` : ''}${host}${target.port ? `:${target.port}` : ''}`;
}

/** One line of text: a command the remote's shell (--warden) or this process (--command) runs. */
function checkCommandText(flag: string, text: string): string {
  // eslint-disable-next-line no-control-regex -- refusing control characters is the point
  if (text.trim() === '' || /[\x00-\x1f\x7f]/.test(text)) throw new RemoteError(`${flag} takes one line of command, not ${JSON.stringify(text)}.`);
  return text;
}

/**
 * A --command line as words, without a shell: spaces separate, '...' is
 * literal, "..." takes \" and \\, a backslash outside quotes takes the next
 * character. Shell syntax (| ; & < > $ ` ( )) outside quotes is refused: a
 * pipeline wants `sh -c '...'`, said so.
 */
export function splitCommand(text: string): string[] {
  checkCommandText('--command', text);
  const words: string[] = [];
  let word: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === ' ' || c === '\t') {
      if (word !== null) words.push(word);
      word = null;
    } else if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) throw new RemoteError('--command has an unclosed single quote.');
      word = (word ?? '') + text.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      word ??= '';
      for (i++; ; i++) {
        if (i >= text.length) throw new RemoteError('--command has an unclosed double quote.');
        const d = text[i]!;
        if (d === '"') break;
        if (d === '\\' && (text[i + 1] === '"' || text[i + 1] === '\\')) word += text[++i];
        else word += d;
      }
    } else if (c === '\\') {
      if (i + 1 >= text.length) throw new RemoteError('--command ends with a lone backslash.');
      word = (word ?? '') + text[++i];
    } else if ('|;&<>$`()'.includes(c)) {
      throw new RemoteError(`--command runs one program without a shell; for shell syntax (${c}) use --command "sh -c '...'".`);
    } else {
      word = (word ?? '') + c;
    }
  }
  if (word !== null) words.push(word);
  if (words.length === 0) throw new RemoteError('--command is empty.');
  return words;
}

export function makeSshRemote(name: string, url: string, warden = 'warden'): Remote {
  return { name: checkName(name), ssh: parseSshUrl(url), warden: checkCommandText('--warden', warden) };
}

export function makeCommandRemote(name: string, command: string): Remote {
  splitCommand(command);
  return { name: checkName(name), command };
}

/** The state dir is one to trust (client/state-dir.ts checkStateDir): else a RemoteError of kind denied. */
function trustedStateDir(stateDir: string): void {
  checkStateDir(stateDir, (line) => new RemoteError(line, 'denied'));
}

/** More than any list of remotes: a bound on what a planted file could make this read. */
const MAX_REMOTES_BYTES = 1024 * 1024;

/**
 * remotes.json's text, or null when there is none: read never through a
 * link, only a regular file of this user's (or root's) that no one else may
 * write, since each entry names a command this process runs.
 */
function readRemotesFile(path: string): string | null {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    if (code === 'ELOOP') throw new RemoteError(`${path} is a symbolic link; Warden never reads its remotes through one (someone may have planted it). Remove it and add the remotes again.`, 'denied');
    throw new RemoteError(`Cannot read ${path}: ${code ?? String(error)}.`);
  }
  try {
    const stat = fstatSync(fd);
    const user = userIds();
    if (!stat.isFile()) throw new RemoteError(`${path} is not a regular file; remove it and add the remotes again.`, 'denied');
    if (user !== null && stat.uid !== user.uid && stat.uid !== 0) throw new RemoteError(`${path} belongs to ${owner(stat.uid)}, not to you (uid ${user.uid}) or root, so its commands are not yours; Warden will not run them. Remove it, or set WARDEN_STATE_DIR to a directory of yours.`, 'denied');
    if ((stat.mode & 0o022) !== 0) throw new RemoteError(`${path} can be written by others (mode ${(stat.mode & 0o7777).toString(8).padStart(4, '0')}), so its commands may not be yours; Warden will not run them. Make it private (chmod 600 ${path}).`, 'denied');
    if (stat.size > MAX_REMOTES_BYTES) throw new RemoteError(`${path} is larger than ${MAX_REMOTES_BYTES} bytes; it is not a remotes file Warden wrote.`);
    const buffer = Buffer.alloc(Math.min(stat.size, MAX_REMOTES_BYTES) + 1);
    let length = 0;
    for (let n; length < buffer.length && (n = readSync(fd, buffer, length, buffer.length - length, null)) > 0; ) length += n;
    return buffer.subarray(0, length).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** The configured remotes; none when the file does not exist. An entry that fails the checks is an error naming the file. */
export function loadRemotes(stateDir: string): Remote[] {
  trustedStateDir(stateDir);
  const path = remotesPath(stateDir);
  const text = readRemotesFile(path);
  if (text === null) return [];
  try {
    const parsed = JSON.parse(text) as { remotes?: unknown };
    if (!Array.isArray(parsed.remotes)) throw new Error('no "remotes" list');
    return parsed.remotes.map((entry: { name?: unknown; ssh?: unknown; warden?: unknown; command?: unknown }) => {
      if (typeof entry.name !== 'string') throw new Error('an entry without a name');
      if (typeof entry.command === 'string') return makeCommandRemote(entry.name, entry.command);
      if (typeof entry.ssh === 'string') return makeSshRemote(entry.name, entry.ssh, typeof entry.warden === 'string' ? entry.warden : 'warden');
      throw new Error(`remote ${entry.name} has neither ssh nor command`);
    });
  } catch (error) {
    throw new RemoteError(`${path} is not a remotes file Warden wrote (${error instanceof Error ? error.message : String(error)}); fix or delete it.`);
  }
}

/** Writes the list, readable by the user alone, replacing the file in one step (a fresh O_EXCL file renamed over it). */
export function saveRemotes(stateDir: string, remotes: readonly Remote[]): void {
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  trustedStateDir(stateDir);
  const path = remotesPath(stateDir);
  const entries = remotes.map((r) => ('ssh' in r ? { name: r.name, ssh: sshUrl(r.ssh), warden: r.warden } : { name: r.name, command: r.command }));
  const temp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  writeFileSync(temp, `${JSON.stringify({ remotes: entries }, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  try {
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}

/** How long a change to remotes.json waits for another to finish before it gives up. */
const REMOTES_LOCK_WAIT_MS = 10_000;
/** A lock older than this is a dead command's, whatever its pid says. */
const REMOTES_LOCK_STALE_MS = 30_000;

/**
 * Who holds the lock file at `path` now: `gone` when there is none (it was
 * just released: try again), `dead` (with the file's inode) when its holder
 * died or it is older than any command takes, else `alive`.
 */
function lockHolder(path: string): { state: 'alive' | 'gone' } | { state: 'dead'; ino: number } {
  let ino: number;
  let age: number;
  try {
    const stat = statSync(path);
    ino = stat.ino;
    age = Date.now() - stat.mtimeMs;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? { state: 'gone' } : { state: 'alive' };
  }
  if (age > REMOTES_LOCK_STALE_MS) return { state: 'dead', ino };
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? { state: 'gone' } : { state: 'alive' };
  }
  const pid = Number(text.trim());
  if (!Number.isInteger(pid) || pid <= 0) return age < 1000 ? { state: 'alive' } : { state: 'dead', ino }; // being written just now
  try {
    process.kill(pid, 0);
    return { state: 'alive' };
  } catch (error) {
    // EPERM: alive, someone else's (cannot be in a private dir, but never steal it).
    return (error as NodeJS.ErrnoException).code === 'EPERM' ? { state: 'alive' } : { state: 'dead', ino };
  }
}

/**
 * Takes away the lock file judged dead, only if it is still that file: it is
 * renamed aside first (one command wins the rename), and a file that turns
 * out to be a newer holder's is linked back.
 */
function removeDeadLock(lock: string, ino: number): void {
  const aside = `${lock}.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    renameSync(lock, aside);
  } catch {
    return; // gone already, or another command moved it: try again
  }
  try {
    if (statSync(aside).ino !== ino) linkSync(aside, lock);
  } catch {
    // Another command took the lock in between: it holds it; this one tries again.
  } finally {
    rmSync(aside, { force: true });
  }
}

/**
 * Runs `change` (a read, change and write of remotes.json) while holding
 * remotes.json.lock, a file made with O_EXCL in the private state dir, so
 * twenty `remote add` at once keep twenty. A lock whose holder died is
 * taken over; waiting longer than 10 s is one line. Releasing removes the
 * lock only while it is still this command's own file.
 */
export async function withRemotesLock<T>(stateDir: string, change: () => T): Promise<T> {
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  trustedStateDir(stateDir);
  const lock = `${remotesPath(stateDir)}.lock`;
  const deadline = Date.now() + REMOTES_LOCK_WAIT_MS;
  let mine: number;
  for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
    try {
      const fd = openSync(lock, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
      try {
        mine = fstatSync(fd).ino;
        writeSync(fd, `${process.pid}\n`);
      } finally {
        closeSync(fd);
      }
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw new RemoteError(`Cannot lock ${lock}: ${(error as NodeJS.ErrnoException).code ?? String(error)}.`);
    }
    const holder = lockHolder(lock);
    if (holder.state === 'gone') continue;
    if (holder.state === 'dead') {
      removeDeadLock(lock, holder.ino);
      continue;
    }
    if (Date.now() > deadline) throw new RemoteError(`Another warden remote command holds ${lock} and has not finished in ${REMOTES_LOCK_WAIT_MS / 1000} s; try again, or remove that file if no such command runs.`, 'busy');
    await new Promise((resolve) => setTimeout(resolve, pause + Math.random() * pause));
  }
  try {
    return change();
  } finally {
    try {
      if (statSync(lock).ino === mine) rmSync(lock, { force: true });
    } catch {
      // Already gone.
    }
  }
}

export function findRemote(stateDir: string, name: string): Remote {
  const remote = loadRemotes(stateDir).find((r) => r.name === name);
  if (!remote) throw new RemoteError(`No remote named ${JSON.stringify(name)} (see warden remote list).`, 'not-found');
  return remote;
}

/** The ssh program: WARDEN_SSH (a path, run without a shell), else ssh from PATH. */
export function sshProgram(env: NodeJS.ProcessEnv = process.env): string {
  return env.WARDEN_SSH || 'ssh';
}

/** Where a remote's shared ssh session listens: the private run dir, when the path fits a unix socket (ssh adds 17 characters while creating it). */
export function controlPath(stateDir: string, name: string): string | null {
  const path = join(stateDir, 'run', `ssh-${name}`);
  return path.length + 17 < 104 ? path : null;
}

/** The argv that connects to a remote's bridge: ssh's options, `--`, the destination, the remote command. */
export function dialArgv(stateDir: string, remote: Remote, env: NodeJS.ProcessEnv = process.env): string[] {
  if ('command' in remote) return splitCommand(remote.command);
  trustedStateDir(stateDir);
  const control = controlPath(stateDir, remote.name);
  if (control) {
    // ssh creates its control socket there, and connects to whatever socket it finds there: the dir must be ours alone.
    mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    const problem = privateDirProblem(join(stateDir, 'run'));
    if (problem !== null) throw new RemoteError(problem, 'denied');
  }
  const { host, user, port } = remote.ssh;
  return [
    sshProgram(env),
    '-T', // no terminal: the stream is the API's bytes
    '-o', 'ConnectTimeout=15',
    ...(control ? ['-o', 'ControlMaster=auto', '-o', `ControlPath=${control}`, '-o', `ControlPersist=${SSH_PERSIST}`] : []),
    ...(port !== undefined ? ['-p', String(port)] : []),
    ...(user !== undefined ? ['-l', user] : []),
    '--',
    host,
    `${remote.warden} dial-stdio`,
  ];
}

export function describeRemote(remote: Remote): string {
  return 'ssh' in remote ? `${sshUrl(remote.ssh)}${remote.warden !== 'warden' ? ` (warden: ${remote.warden})` : ''}` : `command: ${remote.command}`;
}

/** A remote's host as a WardenApi, and the transport under it (for event streams). */
export interface RemoteLink {
  name: string;
  api: HttpWardenApi;
  transport: NodeTransport;
}

export function remoteLink(stateDir: string, name: string): RemoteLink {
  const remote = findRemote(stateDir, checkName(name));
  const argv = dialArgv(stateDir, remote);
  const label = 'ssh' in remote ? `ssh to ${remote.name}` : `the command of remote ${remote.name}`;
  const transport = new NodeTransport({ dial: () => dialCommand(argv, label) });
  return { name: remote.name, api: new HttpWardenApi(transport), transport };
}
