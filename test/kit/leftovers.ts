// Tests leave nothing behind: a check after the whole suite (vitest's
// globalSetup teardown, Playwright's globalTeardown) for processes a test
// started and did not end: a host, an ssh ControlMaster and the sshd session
// it holds open, a run's escaped child.
//
// Only this suite's processes count, never another test run's on the same
// machine. Before any test starts, the suite's main process
// - puts a random id in its environment (SUITE_MARKER=<id>), which every
//   process a test starts inherits (workers, hosts, runs, ssh, sshd);
// - points TMPDIR at a fresh directory of its own, so every temp dir a test
//   makes (state dirs, sshd's keys, a browser's profile) lies below it.
// A process that rewrites its command line over its environment (ssh's mux,
// an sshd session, browsers: setproctitle) loses the marker; it is still
// known by a command line or working directory inside the suite's TMPDIR, by a
// TCP connection to a port a test noted (noteSuitePort: the tests' sshd), or
// as a descendant of one found so. Nothing started before the suite counts.

import { randomBytes } from 'node:crypto';
import { appendFileSync, chmodSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const SUITE_MARKER = 'WARDEN_TEST_SUITE';
/** The suite's temp dir (also its TMPDIR), where noteSuitePort writes. */
export const SUITE_DIR = 'WARDEN_TEST_SUITE_DIR';
const PORTS_FILE = 'suite-ports';

export interface Suite {
  id: string;
  dir: string;
  /** The runner's start time, in clock ticks after boot: nothing older is the suite's. */
  sinceTicks: number;
}

export interface Leftover {
  pid: number;
  ppid: number;
  command: string;
  /** Its working directory (a state dir, often), where it can be read. */
  cwd: string;
  /** How it was known to be the suite's. */
  why: string;
}

/**
 * Marks this process's environment for the suite (children inherit it) and
 * gives the suite a TMPDIR of its own. World-writable and sticky, as /tmp:
 * tests run processes as another user, which make temp files too.
 */
export function markSuite(): Suite {
  const id = randomBytes(8).toString('hex');
  const dir = mkdtempSync(join(tmpdir(), 'wsuite-'));
  chmodSync(dir, 0o1777);
  process.env[SUITE_MARKER] = id;
  process.env[SUITE_DIR] = dir;
  process.env.TMPDIR = dir;
  return { id, dir, sinceTicks: statOf(process.pid)?.startTicks ?? 0 };
}

/** The suite this process marked (markSuite), from its environment; undefined when none was. */
export function markedSuite(): Suite | undefined {
  const id = process.env[SUITE_MARKER];
  const dir = process.env[SUITE_DIR];
  return id && dir ? { id, dir, sinceTicks: statOf(process.pid)?.startTicks ?? 0 } : undefined;
}

/** Records that the suite listens on `port` (a test's sshd): a process still connected to it afterwards is the suite's. */
export function noteSuitePort(port: number): void {
  const dir = process.env[SUITE_DIR];
  if (dir) appendFileSync(join(dir, PORTS_FILE), `${port}\n`);
}

interface Row {
  pid: number;
  ppid: number;
  state: string;
  startTicks: number;
}

function statOf(pid: number): Row | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'latin1');
    // The command name may hold spaces and ')': the fields start after the last ')'.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    // fields[0] is stat's third field (state): starttime, the 22nd, is fields[19].
    return { pid, ppid: Number(fields[1]), state: fields[0]!, startTicks: Number(fields[19]) };
  } catch {
    return undefined;
  }
}

function read(path: string): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch {
    return undefined; // gone, or not ours to read
  }
}

function cwdOf(pid: number): string {
  try {
    return readlinkSync(`/proc/${pid}/cwd`);
  } catch {
    return '?'; // gone, or not ours to read
  }
}

function commandOf(pid: number): string {
  const cmdline = read(`/proc/${pid}/cmdline`)?.toString('latin1').replace(/\0+$/, '').replace(/\0/g, ' ').trim();
  return cmdline || `[${read(`/proc/${pid}/comm`)?.toString('latin1').trim() ?? '?'}]`;
}

/** Whether the environment holds exactly `entry` (NAME=value) as one of its entries. */
function environHas(environ: Buffer, entry: Buffer): boolean {
  for (let at = environ.indexOf(entry); at >= 0; at = environ.indexOf(entry, at + 1)) {
    const end = at + entry.length;
    if ((at === 0 || environ[at - 1] === 0) && (end === environ.length || environ[end] === 0)) return true;
  }
  return false;
}

/** Socket inodes of TCP connections on loopback to or from one of `ports` (the listener's own socket too). */
function socketsOn(ports: Set<number>): Set<string> {
  const inodes = new Set<string>();
  if (ports.size === 0) return inodes;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const lines = read(table)?.toString('latin1').split('\n').slice(1) ?? [];
    for (const line of lines) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      const [localHost, localPort] = f[1]!.split(':');
      const [remoteHost, remotePort] = f[2]!.split(':');
      const loopback = (host: string) => host === '0100007F' || host === '00000000000000000000000001000000' || host === '0000000000000000FFFF00000100007F';
      const onPort = (port: string | undefined) => ports.has(parseInt(port ?? '', 16));
      // The server's end (its local port) or the client's (its peer's port), on 127.0.0.1 as the tests' sshd listens.
      if ((onPort(localPort) && loopback(localHost!)) || (onPort(remotePort) && loopback(remoteHost!))) inodes.add(f[9]!);
    }
  }
  return inodes;
}

function holdsSocket(pid: number, inodes: Set<string>): boolean {
  if (inodes.size === 0) return false;
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return false;
  }
  for (const fd of fds) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m && inodes.has(m[1]!)) return true;
    } catch {
      // closed meanwhile
    }
  }
  return false;
}

/** The live processes (a zombie is dead) that are the suite's, less the runner's own subtree. */
export function leftovers(suite: Suite, self = process.pid): Leftover[] {
  const marker = Buffer.from(`${SUITE_MARKER}=${suite.id}`);
  const ports = new Set((read(join(suite.dir, PORTS_FILE))?.toString('latin1') ?? '').split('\n').filter(Boolean).map(Number));
  const sockets = socketsOn(ports);
  const rows = new Map<number, Row>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const row = statOf(Number(name));
    if (row && row.state !== 'Z' && row.state !== 'X' && row.startTicks >= suite.sinceTicks) rows.set(row.pid, row);
  }
  const why = new Map<number, string>();
  for (const { pid } of rows.values()) {
    if (pid === self) continue;
    const environ = read(`/proc/${pid}/environ`);
    const cwd = cwdOf(pid);
    if (environ && environHas(environ, marker)) why.set(pid, 'the suite\'s marker');
    else if (commandOf(pid).includes(suite.dir)) why.set(pid, 'a command line in the suite\'s temp dir');
    else if (cwd === suite.dir || cwd.startsWith(`${suite.dir}/`)) why.set(pid, 'a working directory in the suite\'s temp dir');
    else if (holdsSocket(pid, sockets)) why.set(pid, `a connection to a port of the suite (${[...ports].join(', ')})`);
  }
  const found: Leftover[] = [];
  for (const row of rows.values()) {
    if (row.pid === self) continue;
    const up: number[] = [];
    for (let at = row.ppid; at > 0 && rows.has(at) && !up.includes(at); at = rows.get(at)!.ppid) up.push(at);
    if (up.includes(self)) continue; // the runner's own helpers (vitest's esbuild service)
    const reason = why.get(row.pid) ?? (up.some((pid) => why.has(pid)) ? `a descendant of ${up.find((pid) => why.has(pid))}` : undefined);
    if (reason) found.push({ pid: row.pid, ppid: row.ppid, command: commandOf(row.pid), cwd: cwdOf(row.pid), why: reason });
  }
  return found.sort((a, b) => a.pid - b.pid);
}

/**
 * The suite's leftovers once things settle: processes still ending (a host
 * shutting down after its last test) get until nothing has changed for
 * `settleMs`. Whatever is left is killed (SIGKILL), so a failed check does
 * not leave it running for the next run, and returned for the report. The
 * suite's temp dir is removed after.
 */
export async function collectLeftovers(suite: Suite, settleMs = 5_000): Promise<Leftover[]> {
  let seen = leftovers(suite);
  let changedAt = performance.now();
  while (seen.length > 0 && performance.now() - changedAt < settleMs) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const now = leftovers(suite);
    if (now.map((p) => p.pid).join() !== seen.map((p) => p.pid).join()) changedAt = performance.now();
    seen = now;
  }
  for (const { pid } of seen) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone by itself meanwhile
    }
  }
  rmSync(suite.dir, { recursive: true, force: true });
  return seen;
}

/** The report: one line per leftover, with how it was known. */
export function describeLeftovers(found: Leftover[]): string {
  return [
    `Tests left ${found.length} process${found.length === 1 ? '' : 'es'} running (killed now); a test must end what it starts:`,
    ...found.map((p) => `  pid ${p.pid} (parent ${p.ppid}, in ${p.cwd}), by ${p.why}: ${p.command}`),
  ].join('\n');
}
