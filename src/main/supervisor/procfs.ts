// Reading /proc for teardown and the process tree. stat is read synchronously
// (the kernel answers it without taking the target's memory lock, so it does
// not hang); cmdline and environ can block on a stuck process, so they are read
// asynchronously under a time bound and a hung read only costs that entry.

import { readFileSync, readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';

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

export function readStat(procRoot: string, pid: number): ProcStat | undefined {
  try {
    return parseStat(readFileSync(`${procRoot}/${pid}/stat`, 'latin1'));
  } catch {
    return undefined; // gone, or another user's
  }
}

/** A process that is gone or a zombie is dead for every purpose here. */
export function isAliveInProc(procRoot: string, pid: number): boolean {
  const stat = readStat(procRoot, pid);
  return stat !== undefined && stat.state !== 'Z' && stat.state !== 'X';
}

export const TIMED_OUT = Symbol('timed out');

/** The file's bytes, undefined when it cannot be read, TIMED_OUT when the read hangs. */
export async function readBounded(path: string, timeoutMs: number): Promise<Buffer | undefined | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), timeoutMs);
  });
  try {
    return await Promise.race([readFile(path).catch(() => undefined), timeout]);
  } finally {
    clearTimeout(timer);
  }
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
