// Reading /proc for teardown and the process tree. stat is read synchronously
// (the kernel answers it without taking the target's memory lock, so it does
// not hang); cmdline and environ can block on a stuck process, so they are read
// asynchronously under a time bound and a hung read only costs that entry.

import { close, closeSync, open, openSync, read, readFileSync, readSync, readdirSync } from 'node:fs';

export interface ProcStat {
  pid: number;
  ppid: number;
  pgid: number;
  sid: number;
  state: string;
  /** Clock ticks after boot. */
  startTicks: number;
  comm: string;
}

export function listPids(procRoot: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync(procRoot)) {
    const c = name.charCodeAt(0);
    if (c >= 48 && c <= 57) pids.push(Number(name));
  }
  return pids;
}

/** Parses /proc/PID/stat; comm may hold spaces and parentheses, so split after the last ')'. */
export function parseStat(text: string): ProcStat | undefined {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) return undefined;
  const fields = text.slice(close + 2).split(' ');
  // fields[0] is field 3 (state); field N is fields[N - 3].
  return {
    pid: Number(text.slice(0, open - 1)),
    comm: text.slice(open + 1, close),
    state: fields[0] ?? '?',
    ppid: Number(fields[1]),
    pgid: Number(fields[2]),
    sid: Number(fields[3]),
    startTicks: Number(fields[19]),
  };
}

// Teardown reads every pid's stat on each scan: open, one read into a shared
// buffer and close cost about a third of readFileSync (no fstat, no EOF read,
// no allocation). A stat line is far shorter than the buffer.
const statBuffer = Buffer.allocUnsafe(4096);

export function readStat(procRoot: string, pid: number): ProcStat | undefined {
  const text = readSmallSync(`${procRoot}/${pid}/stat`);
  return text === undefined ? undefined : parseStat(text); // undefined: gone, or another user's
}

/** A small file's text (latin1), undefined when it cannot be read. */
function readSmallSync(path: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return undefined;
  }
  try {
    const n = readSync(fd, statBuffer, 0, statBuffer.length, 0);
    // A full buffer means a larger file than expected: read the whole of it to be exact.
    return n < statBuffer.length ? statBuffer.toString('latin1', 0, n) : readFileSync(fd, 'latin1');
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/**
 * The last pid (or thread id) the kernel handed out in this pid namespace, from
 * /proc/sys/kernel/ns_last_pid; undefined where it cannot be read (no such file
 * under a fake proc root, or an older kernel).
 */
export function readLastPid(procRoot: string): number | undefined {
  const text = readSmallSync(`${procRoot}/sys/kernel/ns_last_pid`);
  const value = text === undefined ? NaN : Number(text.trim());
  return Number.isInteger(value) && value > 0 ? value : undefined;
}

/** A process that is gone or a zombie is dead for every purpose here. */
export function isAliveInProc(procRoot: string, pid: number): boolean {
  const stat = readStat(procRoot, pid);
  return stat !== undefined && stat.state !== 'Z' && stat.state !== 'X';
}

export const TIMED_OUT = Symbol('timed out');

/** The file's bytes, undefined when it cannot be read, TIMED_OUT when the read hangs. */
export function readBounded(path: string, timeoutMs: number): Promise<Buffer | undefined | typeof TIMED_OUT> {
  return new Promise((resolve) => {
    let settled = false;
    const settle = (value: Buffer | undefined | typeof TIMED_OUT) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(value);
    };
    const timer = setTimeout(() => settle(TIMED_OUT), timeoutMs);
    readWhole(path, settle);
  });
}

const FIRST_READ = 16 * 1024;

/**
 * Reads a whole file with callbacks: open, read, close on the thread pool, with
 * no fstat and no FileHandle. Teardown reads hundreds of environ and cmdline
 * files at once, where this takes about half the time of fs.promises.readFile.
 * procfs fills the buffer for environ and cmdline unless it reaches the end,
 * so a short read is the end; a full one reads on with a larger buffer.
 */
function readWhole(path: string, done: (data: Buffer | undefined) => void): void {
  open(path, 'r', (openError, fd) => {
    if (openError) return done(undefined);
    const chunks: Buffer[] = [];
    const finish = (data: Buffer | undefined) => {
      close(fd, () => undefined);
      done(data);
    };
    const next = (length: number) => {
      const buffer = Buffer.allocUnsafe(length);
      read(fd, buffer, 0, length, null, (readError, n) => {
        if (readError) return finish(undefined);
        chunks.push(buffer.subarray(0, n));
        if (n < length) return finish(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
        next(length * 2);
      });
    };
    next(FIRST_READ);
  });
}

export async function readCommand(procRoot: string, stat: ProcStat, timeoutMs: number): Promise<string> {
  const raw = await readBounded(`${procRoot}/${stat.pid}/cmdline`, timeoutMs);
  const text = raw instanceof Buffer ? raw.toString('utf8').replace(/\0+$/, '').split('\0').join(' ') : '';
  return text.length > 0 ? text : `[${stat.comm}]`;
}

/** True when the environment holds exactly `name=value`. */
export function environHas(environ: Buffer, entry: string): boolean {
  const needle = Buffer.from(`${entry}\0`);
  let at = environ.indexOf(needle);
  while (at >= 0) {
    if (at === 0 || environ[at - 1] === 0) return true;
    at = environ.indexOf(needle, at + 1);
  }
  // The last entry may lack its trailing NUL.
  const last = Buffer.from(entry);
  return environ.length >= last.length && environ.subarray(environ.length - last.length).equals(last)
    && (environ.length === last.length || environ[environ.length - last.length - 1] === 0);
}
