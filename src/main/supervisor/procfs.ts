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
  const stat = readStatChecked(procRoot, pid);
  return stat === UNCHECKED ? undefined : stat;
}

/** readStat, or UNCHECKED when no descriptor was free to open it (which says nothing of the process). */
export function readStatChecked(procRoot: string, pid: number): ProcStat | undefined | typeof UNCHECKED {
  const text = readSmallSync(`${procRoot}/${pid}/stat`);
  if (text === UNCHECKED) return UNCHECKED;
  return text === undefined ? undefined : parseStat(text); // undefined: gone, or another user's
}

/**
 * A read that could not be made for lack of file descriptors (EMFILE: this
 * process's RLIMIT_NOFILE; ENFILE: the system's table): the file was not
 * looked at, so nothing may be concluded from it ("no marker" least of all).
 */
export const UNCHECKED = Symbol('could not check: no file descriptor free');

export function outOfDescriptors(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return code === 'EMFILE' || code === 'ENFILE';
}

/** A small file's text (latin1), undefined when it cannot be read, UNCHECKED when no descriptor was free. */
function readSmallSync(path: string): string | undefined | typeof UNCHECKED {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    return outOfDescriptors(error) ? UNCHECKED : undefined;
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

/** stat with the figures the process tree shows: CPU time and resident memory. */
export interface ProcUsage extends ProcStat {
  /** utime + stime, in clock ticks. */
  cpuTicks: number;
  /** Resident set size, in pages. */
  rssPages: number;
  /**
   * Field 38: -1 for a thread that is not its group's leader. /proc lists
   * only processes, but /proc/TID/stat answers for any thread, as if it were
   * a process; NaN when the line is shorter.
   */
  exitSignal: number;
}

const OPEN_PAREN = 0x28;
const CLOSE_PAREN = 0x29;
const SPACE = 0x20;
const MINUS = 0x2d;

/**
 * Parses a stat line from its bytes. The sampler reads every process's stat
 * several times a second: walking the bytes once for the nine fields it needs
 * costs a fraction of decoding the line and splitting its 52 fields.
 */
export function parseStatUsage(bytes: Buffer, length = bytes.length): ProcUsage | undefined {
  const open = bytes.indexOf(OPEN_PAREN);
  const close = length > 0 ? bytes.lastIndexOf(CLOSE_PAREN, length - 1) : -1;
  if (open < 1 || open >= length || close < open || close + 2 >= length) return undefined;
  const usage: ProcUsage = {
    pid: digits(bytes, 0, open - 1),
    comm: bytes.toString('latin1', open + 1, close),
    state: String.fromCharCode(bytes[close + 2]!),
    ppid: NaN,
    pgid: NaN,
    sid: NaN,
    startTicks: NaN,
    cpuTicks: NaN,
    rssPages: NaN,
    exitSignal: NaN,
  };
  let utime = NaN;
  // Field 3 (state) starts at close + 2; each space starts the next field.
  let field = 3;
  for (let at = close + 3; at < length && field < 38; at++) {
    if (bytes[at] !== SPACE) continue;
    field++;
    const start = at + 1;
    if (field === 4) usage.ppid = digits(bytes, start, length);
    else if (field === 5) usage.pgid = digits(bytes, start, length);
    else if (field === 6) usage.sid = digits(bytes, start, length);
    else if (field === 14) utime = digits(bytes, start, length);
    else if (field === 15) usage.cpuTicks = utime + digits(bytes, start, length);
    else if (field === 22) usage.startTicks = digits(bytes, start, length);
    else if (field === 24) usage.rssPages = digits(bytes, start, length);
    else if (field === 38) usage.exitSignal = bytes[start] === MINUS ? -digits(bytes, start + 1, length) : digits(bytes, start, length);
  }
  return Number.isNaN(usage.pid + usage.ppid + usage.startTicks + usage.cpuTicks + usage.rssPages) ? undefined : usage;
}

/** The unsigned decimal at `start` (up to a space or `end`); NaN when there is none. */
function digits(bytes: Buffer, start: number, end: number): number {
  let value = 0;
  let at = start;
  for (; at < end; at++) {
    const c = bytes[at]!;
    if (c < 48 || c > 57) break;
    value = value * 10 + (c - 48);
  }
  return at === start || (at < end && bytes[at] !== SPACE && bytes[at] !== 10) ? NaN : value;
}

export function readStatUsage(procRoot: string, pid: number): ProcUsage | undefined {
  let fd: number;
  try {
    fd = openSync(`${procRoot}/${pid}/stat`, 'r');
  } catch {
    return undefined; // gone, or another user's
  }
  try {
    const n = readSync(fd, statBuffer, 0, statBuffer.length, 0);
    if (n < statBuffer.length) return parseStatUsage(statBuffer, n);
    const whole = readFileSync(fd);
    return parseStatUsage(whole, whole.length);
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
  const value = text === undefined || text === UNCHECKED ? NaN : Number(text.trim());
  return Number.isInteger(value) && value > 0 ? value : undefined;
}

/** A process that is gone or a zombie is dead for every purpose here. */
export function isAliveInProc(procRoot: string, pid: number): boolean {
  const stat = readStatChecked(procRoot, pid);
  // Not known dead is alive here: a process whose stat could not be opened is never reported ended.
  return stat === UNCHECKED || (stat !== undefined && stat.state !== 'Z' && stat.state !== 'X');
}

export const TIMED_OUT = Symbol('timed out');

// One bound on the files these reads hold open, for the whole process: a host
// whose many runs end together reads hundreds of environ and cmdline files,
// and unbounded that filled its descriptor table (EMFILE for its own socket,
// its store and the next run's pipes). A read waits for a slot; a read that
// finds no descriptor (another part of the process took the last) waits a
// little and tries again, then answers UNCHECKED. A slot is given back when
// its read ends, or when its caller stops waiting (a read stuck in the kernel
// then holds its descriptor outside the bound: rare, and never more than one each).
export const PROC_READ_SLOTS = 32;
const RETRY_MS = [5, 20, 60, 150];
let slotsInUse = 0;
const slotQueue: (() => void)[] = [];
/** Descriptors held by these reads at most at once since start (bench (o)). */
export const procReadStats = { peakSlots: 0, unchecked: 0 };

/** Calls `use` once a slot is free; `use` gets the release (idempotent). */
function withSlot(use: (release: () => void) => void): () => void {
  let state: 'waiting' | 'holding' | 'done' = 'waiting';
  const release = () => {
    if (state === 'holding') {
      slotsInUse -= 1;
      slotQueue.shift()?.();
    } else if (state === 'waiting') {
      const at = slotQueue.indexOf(start);
      if (at >= 0) slotQueue.splice(at, 1);
    }
    state = 'done';
  };
  const start = () => {
    if (state !== 'waiting') return;
    state = 'holding';
    slotsInUse += 1;
    if (slotsInUse > procReadStats.peakSlots) procReadStats.peakSlots = slotsInUse;
    use(release);
  };
  if (slotsInUse < PROC_READ_SLOTS) start();
  else slotQueue.push(start);
  return release;
}

type ReadOutcome = Buffer | undefined | typeof UNCHECKED;

/** open(2) through the pool, retried while no descriptor is free; UNCHECKED when none came. */
function openPooled(path: string, then: (fd: number | undefined | typeof UNCHECKED, release: () => void) => void): () => void {
  let release = () => undefined as void;
  let attempt = 0;
  let cancelled = false;
  const tryOpen = () => {
    release = withSlot((slotRelease) => {
      open(path, 'r', (error, fd) => {
        if (cancelled) {
          if (!error) close(fd, () => undefined);
          return slotRelease();
        }
        if (error && outOfDescriptors(error) && attempt < RETRY_MS.length) {
          slotRelease();
          setTimeout(tryOpen, RETRY_MS[attempt++]).unref();
          return;
        }
        if (error && outOfDescriptors(error)) procReadStats.unchecked += 1;
        then(error ? (outOfDescriptors(error) ? UNCHECKED : undefined) : fd, slotRelease);
      });
    });
  };
  tryOpen();
  return () => {
    cancelled = true;
    release();
  };
}

/** The file's bytes, undefined when it cannot be read, TIMED_OUT when the read hangs, UNCHECKED when no descriptor was free. */
export function readBounded(path: string, timeoutMs: number): Promise<ReadOutcome | typeof TIMED_OUT> {
  return new Promise((resolve) => {
    let settled = false;
    const settle = (value: ReadOutcome | typeof TIMED_OUT) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(value);
    };
    const timer = setTimeout(() => {
      cancel();
      settle(TIMED_OUT);
    }, timeoutMs);
    const cancel = readWhole(path, settle);
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
function readWhole(path: string, done: (data: ReadOutcome) => void): () => void {
  return openPooled(path, (fd, release) => {
    if (typeof fd !== 'number') {
      release();
      return done(fd);
    }
    const chunks: Buffer[] = [];
    const finish = (data: Buffer | undefined) => {
      close(fd, release);
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

/**
 * Reads many small files that can hang (cmdline, environ) at once under one
 * time bound: each result is the file's bytes, undefined when it cannot be
 * read, or TIMED_OUT when its read had not finished in time. Cheaper per file
 * than readBounded (the sampler reads hundreds when a large tree appears): one
 * timer for all, a first read into a pooled buffer, and a synchronous close,
 * which does not touch the target process and cannot hang.
 */
export function readAllBounded(paths: string[], timeoutMs: number): Promise<(Buffer | undefined | typeof TIMED_OUT)[]> {
  return new Promise((resolve) => {
    const results: (Buffer | undefined | typeof TIMED_OUT)[] = paths.map(() => TIMED_OUT);
    let left = paths.length;
    if (left === 0) return resolve(results);
    const timer = setTimeout(() => {
      left = -1;
      for (const cancel of cancels) cancel();
      resolve(results);
    }, timeoutMs);
    const cancels = paths.map((path, i) =>
      readSmall(path, (data) => {
        if (left < 0) return; // too late: already reported as timed out
        // The sampler tries a file it could not open again later, as one that hung.
        results[i] = data === UNCHECKED ? TIMED_OUT : data;
        if (--left === 0) {
          clearTimeout(timer);
          resolve(results);
        }
      }),
    );
  });
}

/** Below 4 KiB, Buffer.allocUnsafe slices a shared pool instead of allocating. */
const SMALL_READ = 4095;

function readSmall(path: string, done: (data: ReadOutcome) => void): () => void {
  return openPooled(path, (fd, release) => {
    if (typeof fd !== 'number') {
      release();
      return done(fd);
    }
    const chunks: Buffer[] = [];
    const next = (length: number) => {
      const buffer = Buffer.allocUnsafe(length);
      read(fd, buffer, 0, length, null, (readError, n) => {
        if (!readError && n === length) {
          chunks.push(buffer);
          return next(Math.max(FIRST_READ, length * 2));
        }
        try {
          closeSync(fd);
        } catch {
          // closed already
        }
        release();
        if (readError) return done(undefined);
        // A pooled slice is copied out, so the pool's memory is not kept alive by it.
        chunks.push(buffer.subarray(0, n));
        done(chunks.length === 1 ? Buffer.from(chunks[0]!) : Buffer.concat(chunks));
      });
    };
    next(SMALL_READ);
  });
}

export async function readCommand(procRoot: string, stat: ProcStat, timeoutMs: number): Promise<string> {
  const raw = await readBounded(`${procRoot}/${stat.pid}/cmdline`, timeoutMs);
  return commandLine(raw instanceof Buffer ? raw : undefined, stat.comm);
}

/** A cmdline file's arguments joined by spaces; `[comm]` when there are none (a zombie, a kernel thread). */
export function commandLine(cmdline: Buffer | undefined, comm: string): string {
  const text = cmdline !== undefined ? cmdline.toString('utf8').replace(/\0+$/, '').split('\0').join(' ') : '';
  return text.length > 0 ? text : `[${comm}]`;
}

/** The value of the first `name=` entry of an environment, or undefined. */
export function environValue(environ: Buffer, name: string): string | undefined {
  const needle = Buffer.from(`${name}=`);
  let at = environ.indexOf(needle);
  while (at > 0 && environ[at - 1] !== 0) at = environ.indexOf(needle, at + 1);
  if (at < 0) return undefined;
  const start = at + needle.length;
  const end = environ.indexOf(0, start);
  return environ.toString('utf8', start, end < 0 ? environ.length : end);
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
