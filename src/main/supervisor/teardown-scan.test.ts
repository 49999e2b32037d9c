// Teardown's scan on what /proc cannot be made to do on demand: a read that
// hangs, no file descriptor free, a process whose environ cannot be read, a
// short pid range and its wrap at pid_max. Each case builds a /proc of its own
// (a directory with the same files) whose pids lie above 2^22, the kernel's
// PID_MAX_LIMIT, so no signal a teardown sends can reach a real process. The
// mutation run (bench/README.md) found each of these branches untested.
//
// A file of its own: the cases that take every free descriptor run in a test
// worker that starts no children, so no descriptor is freed under them.

import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { listMarked, listScope, teardown, type TeardownTarget } from './teardown';
import { until } from '../../../test/kit/until';

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * Waits (bounded) until this process holds no descriptor of `path`: a hung
 * read ends once its FIFO's writer closes, and its descriptor is closed a
 * moment later, which must not happen under the next case's held ones.
 */
async function closedHere(path: string): Promise<void> {
  await until(`${path} to be closed in this process`, () =>
    !readdirSync('/proc/self/fd').some((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`) === path;
      } catch {
        return false; // closed meanwhile
      }
    }),
  );
}

/** A /proc of its own: ns_last_pid, and processes added with `proc`. */
function fakeProc(lastPid = 1): string {
  const root = mkdtempSync(join(tmpdir(), 'warden-scan-'));
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, 'sys', 'kernel'), { recursive: true });
  writeFileSync(join(root, 'sys', 'kernel', 'ns_last_pid'), `${lastPid}\n`);
  return root;
}

/**
 * A process in the fake /proc: its stat (its own group, parent `ppid`), its
 * command line, and its environ: the entries given, none (no file: it cannot
 * be read), or a FIFO whose writer stays open, so reading it waits until the
 * test lets it go (a process stuck in the kernel).
 */
function proc(root: string, pid: number, environ: string[] | 'unreadable' | 'hangs', ppid = 1): void {
  mkdirSync(join(root, String(pid)));
  writeFileSync(join(root, String(pid), 'stat'), `${pid} (sleep) S ${ppid} ${pid} ${pid} 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99\n`);
  writeFileSync(join(root, String(pid), 'cmdline'), `sleep\u0000${pid}\u0000`);
  if (environ === 'unreadable') return;
  if (environ === 'hangs') {
    const fifo = join(root, String(pid), 'environ');
    execFileSync('mkfifo', [fifo]);
    // O_RDWR never blocks on a FIFO and holds its write end open: a read waits for data that never comes.
    const writer = openSync(fifo, constants.O_RDWR);
    cleanups.push(async () => {
      closeSync(writer);
      await closedHere(fifo);
    });
    return;
  }
  writeFileSync(join(root, String(pid), 'environ'), environ.map((e) => `${e}\u0000`).join(''));
}

const BASE = 4_194_400; // above PID_MAX_LIMIT (2^22): no such process can exist

const target = (root: string, more: Partial<TeardownTarget> = {}): TeardownTarget => ({
  scope: 'hostA.run1',
  pgid: null,
  procRoot: root,
  budgetMs: 5_000,
  passGapMs: 10,
  readTimeoutMs: 1_000,
  ...more,
});

/**
 * Holds every free file descriptor of this process but `spare`, under a soft
 * limit lowered for the test (prlimit(1) on this process), and gives back the
 * way to let them go and restore the limit.
 */
function holdDescriptors(spare: number): () => void {
  const limits = readFileSync('/proc/self/limits', 'utf8');
  const m = /^Max open files\s+(\d+)\s+(\d+|unlimited)/m.exec(limits);
  if (!m) throw new Error(`no open-file limit in /proc/self/limits:\n${limits}`);
  const [soft, hard] = [m[1]!, m[2]!];
  const open = readdirSync('/proc/self/fd').length;
  execFileSync('prlimit', ['--pid', String(process.pid), `--nofile=${open + 64}:${hard}`]);
  const held: number[] = [];
  try {
    for (;;) held.push(openSync('/dev/null', 'r'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EMFILE') throw error;
  }
  for (let i = 0; i < spare; i++) closeSync(held.pop()!);
  return () => {
    for (const fd of held.splice(0)) closeSync(fd);
    execFileSync('prlimit', ['--pid', String(process.pid), `--nofile=${soft}:${hard}`]);
  };
}

describe('how complete a teardown says it was', () => {
  it('complete when every process was looked at and none was the run\'s', async () => {
    const root = fakeProc();
    proc(root, BASE + 1, ['PATH=/bin', 'WARDEN_SCOPE=hostA.run0']);
    proc(root, BASE + 2, ['PATH=/bin']);
    const report = await teardown(target(root));
    expect(report).toMatchObject({ killed: [], survivors: [], complete: true });
    expect(report.unchecked).toBeUndefined();
  });

  it('not complete when reading a process\'s environ hung: that one may be the run\'s', async () => {
    const root = fakeProc();
    proc(root, BASE + 1, ['PATH=/bin']);
    proc(root, BASE + 2, 'hangs');
    const report = await teardown(target(root, { readTimeoutMs: 100 }));
    expect(report).toMatchObject({ killed: [], survivors: [], complete: false });
    // A read that hung is not one that could not be made: nothing is said of descriptors.
    expect(report.unchecked).toBeUndefined();
  });

  it('not complete, and says how many it could not check, when no descriptor was free for an environ', async () => {
    const root = fakeProc();
    // The first environ opened takes the one free descriptor and its read hangs,
    // so it is held; the other's open finds none free, whichever comes first.
    proc(root, BASE + 1, 'hangs');
    proc(root, BASE + 2, 'hangs');
    const release = holdDescriptors(1);
    let report;
    try {
      // The held read's bound far above the other's retries (235 ms of them), so a stalled machine cannot turn "unchecked" into "timed out".
      report = await teardown(target(root, { readTimeoutMs: 3_000, budgetMs: 10_000 }));
    } finally {
      release();
    }
    expect(report).toMatchObject({ killed: [], survivors: [], complete: false });
    expect(report.unchecked).toMatch(/^could not check 1 process for the run's marker \(no file descriptor free, EMFILE\)/);
  });

  it('not complete, and says /proc could not be listed, when no descriptor was free at all', async () => {
    const root = fakeProc();
    proc(root, BASE + 1, ['PATH=/bin']);
    const release = holdDescriptors(0);
    let report;
    try {
      report = await teardown(target(root));
    } finally {
      release();
    }
    expect(report).toMatchObject({ killed: [], survivors: [], complete: false });
    expect(report.unchecked).toMatch(/^could not check: \/proc could not be listed/);
  });
});

describe('one scan for every run of a host (scopePrefix)', () => {
  it('takes each process whose marker begins with the host\'s, with its run, and passes over one whose environ cannot be read', async () => {
    const root = fakeProc();
    proc(root, BASE + 1, 'unreadable');
    proc(root, BASE + 2, ['WARDEN_SCOPE=hostA.run7']);
    proc(root, BASE + 3, ['WARDEN_SCOPE=hostA.run8']); // kept as asked
    proc(root, BASE + 4, ['WARDEN_SCOPE=hostB.run1']); // another host's
    proc(root, BASE + 5, ['PATH=/bin']);
    const found = await listMarked(target(root, { scope: 'hostA.', scopePrefix: true, excludeScopes: new Set(['hostA.run8']) }));
    expect(found.map(({ pid, scope }) => ({ pid, scope }))).toEqual([{ pid: BASE + 2, scope: 'hostA.run7' }]);
  });

  it('below the subreaper: an unmarked orphan is the host\'s, one marked by another host is not', async () => {
    const root = fakeProc();
    const adopter = BASE + 1;
    proc(root, adopter, ['PATH=/bin']);
    proc(root, BASE + 2, ['WARDEN_SCOPE=hostB.run1'], adopter);
    proc(root, BASE + 3, ['PATH=/bin'], adopter);
    proc(root, BASE + 4, ['WARDEN_SCOPE=hostA.run3'], adopter);
    proc(root, BASE + 5, ['PATH=/bin']); // not below the adopter
    proc(root, BASE + 6, ['WARDEN_SCOPE=hostB.hostA.'], adopter); // ends with the host's, begins with another's
    const found = await listScope(target(root, { scope: 'hostA.', scopePrefix: true, adopter, sparePids: [adopter] }));
    expect(found.map((p) => p.pid).sort((a, b) => a - b)).toEqual([BASE + 3, BASE + 4]);
  });
});

describe('a scan of the pids handed out since the scope began (pidsAfter)', () => {
  const pids = async (root: string, after: number) =>
    (await listScope(target(root, { pidsAfter: after }))).map((p) => p.pid).sort((a, b) => a - b);
  const marked = ['WARDEN_SCOPE=hostA.run1'];

  it('a short range is read pid by pid: what lies outside it is not looked at, marker or not', async () => {
    const root = fakeProc(BASE + 6);
    for (let pid = BASE + 1; pid <= BASE + 8; pid++) proc(root, pid, marked);
    expect(await pids(root, BASE + 2)).toEqual([BASE + 3, BASE + 4, BASE + 5, BASE + 6]);
    // Nothing handed out since: nothing to look at.
    expect(await pids(root, BASE + 6)).toEqual([]);
  });

  it('a long range is the listed pids within it', async () => {
    const root = fakeProc(BASE + 6);
    for (const pid of [BASE - 3_000, BASE - 2_999, BASE + 6, BASE + 7]) proc(root, pid, marked);
    expect(await pids(root, BASE - 3_000)).toEqual([BASE - 2_999, BASE + 6]);
  });

  it('a range that wrapped at pid_max: above where it began, and from 1 to the last pid', async () => {
    const root = fakeProc(BASE + 6);
    for (const pid of [BASE + 5, BASE + 6, BASE + 7, BASE + 8, BASE + 9]) proc(root, pid, marked);
    // Begun at BASE + 7, wrapped, now at BASE + 6: every pid but BASE + 7 itself.
    expect(await pids(root, BASE + 7)).toEqual([BASE + 5, BASE + 6, BASE + 8, BASE + 9]);
  });

  it('without ns_last_pid every process is looked at', async () => {
    const root = fakeProc();
    rmSync(join(root, 'sys'), { recursive: true });
    for (const pid of [BASE + 1, BASE + 5]) proc(root, pid, marked);
    expect(await pids(root, BASE + 3)).toEqual([BASE + 1, BASE + 5]);
  });
});
