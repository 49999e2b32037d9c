// The process sampler's scan against a crafted proc root: unreadable and
// malformed entries, the reads between full scans, a large tree of sleepers;
// and the small parts a scan reads with (ps rows, stat lines, environments,
// the kernel's constants, bounded batch reads). ProcessSampler runs against
// real process trees in sampler.test.ts.

import { execFileSync } from 'node:child_process';
import { chmodSync, closeSync, constants, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

import type { ProcNode, ProcTreeSnapshot } from '../../../shared/proc-tree';
import { kernelConstants } from './kernel';
import { scopesIn } from './scan';
import { parsePs, psTimeSeconds } from '../ps-table';
import { environHas, parseStatUsage, readAllBounded, TIMED_OUT } from '../procfs';
import { all, newSampler, only } from './testkit';

const byNumber = (a: number, b: number) => a - b;

const HAS_PROC = existsSync('/proc/self/stat');


/** A whole stat line (52 fields): start is field 22, rss (pages) field 24, exit signal field 38. */
function statLine(
  pid: number,
  o: { comm?: string; state?: string; ppid: number; pgid?: number; start?: number; utime?: number; stime?: number; rss?: number; exitSignal?: number },
): string {
  const fields = [o.state ?? 'S', o.ppid, o.pgid ?? pid, o.pgid ?? pid, 0, -1, 4194304, 0, 0, 0, 0, o.utime ?? 0, o.stime ?? 0, 0, 0, 20, 0, 1, 0, o.start ?? 1000, 1234567, o.rss ?? 10];
  // Fields 25-37 (limits, addresses, signal masks, wchan), 38 exit signal, 39-52.
  const rest = ['18446744073709551615', 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, o.exitSignal ?? 17, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
  return `${pid} (${o.comm ?? 'proc'}) ${[...fields, ...rest].join(' ')}\n`;
}

describe('ProcessSampler on a crafted proc root', () => {
  const root = mkdtempSync(join(tmpdir(), 'warden-proc-tree-'));
  afterAll(() => {
    chmodSync(join(root, '103', 'stat'), 0o644);
    rmSync(root, { recursive: true, force: true });
  });
  const scope = 'host.run1';

  const stat = statLine;
  function proc(pid: number, files: { stat?: string; cmdline?: string; environ?: string }): void {
    mkdirSync(join(root, String(pid)), { recursive: true });
    for (const [name, text] of Object.entries(files)) writeFileSync(join(root, String(pid), name), text);
  }
  const marker = `PATH=/bin\0WARDEN_SCOPE=${scope}\0`;

  proc(100, { stat: stat(100, { comm: 'bash', ppid: 1, rss: 100 }), cmdline: 'bash\0-c\0work\0' });
  proc(101, { stat: stat(101, { comm: 'worker (x)', ppid: 100, pgid: 100, start: 1500, rss: 20 }), cmdline: 'worker\0' });
  // 102: its stat is a directory: opening works, reading fails.
  mkdirSync(join(root, '102', 'stat'), { recursive: true });
  // 103: a stat file nobody may read (effective only for a non-root user).
  proc(103, { stat: stat(103, { ppid: 100, pgid: 100, start: 1500 }) });
  chmodSync(join(root, '103', 'stat'), 0);
  proc(104, { stat: 'garbage\n' });
  proc(105, {}); // exited between the listing and the read: no stat
  proc(106, { stat: stat(106, { state: 'Z', ppid: 100, pgid: 100, start: 1500 }) });
  proc(107, { stat: stat(107, { comm: 'daemon', ppid: 1, start: 2000, rss: 5 }), environ: marker }); // escaped, no cmdline
  proc(108, { stat: stat(108, { ppid: 1, start: 2000 }) });
  mkdirSync(join(root, '108', 'environ')); // an unreadable environment
  proc(109, { stat: stat(109, { ppid: 1, start: 500 }), environ: marker }); // older than the run
  proc(110, { stat: stat(110, { ppid: 1, start: 2000 }), environ: 'WARDEN_SCOPE=host.run2\0' });
  proc(111, { stat: stat(111, { ppid: 107, pgid: 107, start: 2100 }), environ: 'PATH=/bin\0' }); // under the escapee, marker dropped
  mkdirSync(join(root, 'self'));
  writeFileSync(join(root, 'uptime'), '30.00 50.00\n'); // 3000 ticks after boot

  it('skips every unreadable or malformed entry and still builds the tree', async () => {
    const sampler = newSampler({ procRoot: root, pageSizeBytes: 4096, clockTicksPerSecond: 100 });
    sampler.track('r1', { rootPid: 100, scope });
    const snapshot = only(await sampler.sample(), 'r1');
    const shape = (nodes: ProcNode[]): unknown[] => nodes.map((n) => [n.pid, n.command, n.escaped, shape(n.children)]);
    const readable103 = process.getuid?.() === 0;
    expect(shape(snapshot.roots)).toEqual([
      [100, 'bash -c work', false, [[101, 'worker', false, []], ...(readable103 ? [[103, '[proc]', false, []]] : [])]],
      [107, '[daemon]', true, [[111, '[proc]', true, []]]],
    ]);
    expect(snapshot.rssBytes).toBe((100 + 20 + 5 + 10 + (readable103 ? 10 : 0)) * 4096);
    expect(sampler.stats.failedScans).toBe(0);
    // 107, 108, 110, 111 are candidates; 109 is older than the run; the tree's own are never read.
    expect(sampler.stats.environReads).toBe(4);
  });

  it('reads a stat line from its bytes, whatever the command name holds', () => {
    for (const comm of ['bash', 'a b', ') R 7 7 7 (', '((x)) y)', '']) {
      const bytes = Buffer.from(stat(4242, { comm, state: 'R', ppid: 17, pgid: 4240, start: 5550001, utime: 12, stime: 30, rss: 345 }), 'latin1');
      expect(parseStatUsage(bytes)).toEqual({ pid: 4242, comm, state: 'R', ppid: 17, pgid: 4240, sid: 4240, startTicks: 5550001, cpuTicks: 42, rssPages: 345, exitSignal: 17 });
    }
    expect(parseStatUsage(Buffer.from(stat(77, { ppid: 1, exitSignal: -1 })))?.exitSignal).toBe(-1); // a thread
    expect(parseStatUsage(Buffer.from(stat(77, { ppid: 1, exitSignal: 0 })))?.exitSignal).toBe(0);
    expect(parseStatUsage(Buffer.from('garbage'))).toBeUndefined();
    expect(parseStatUsage(Buffer.from('12 (x) S 1 1'))).toBeUndefined(); // cut short
    // Only the first `length` bytes count: the shared read buffer holds an older, longer line after them.
    const line = stat(7, { ppid: 1, rss: 9 });
    const shared = Buffer.from(line + stat(8888888, { comm: 'longer name', ppid: 2, rss: 99999 }), 'latin1');
    expect(parseStatUsage(shared, Buffer.byteLength(line))?.rssPages).toBe(9);
  });

  it.runIf(HAS_PROC)('reads this process from the real /proc as the kernel reports it', () => {
    const usage = parseStatUsage(readFileSync('/proc/self/stat'));
    expect(usage).toMatchObject({ pid: process.pid, ppid: process.ppid, state: 'R' });
    expect(usage!.rssPages * 4096).toBeGreaterThan(10 * 2 ** 20);
  });
});

describe('ProcessSampler between full scans (a crafted proc root with ns_last_pid)', () => {
  const root = mkdtempSync(join(tmpdir(), 'warden-proc-tree-incr-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const stat = (pid: number, ppid: number, start: number) =>
    `${pid} (p${pid}) S ${ppid} ${pid} ${pid} 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 ${start} 1000 7 0 0 0\n`;
  const write = (pid: number, text: string) => {
    mkdirSync(join(root, String(pid)), { recursive: true });
    writeFileSync(join(root, String(pid), 'stat'), text); // in place: a kept descriptor sees the new text
  };
  const lastPid = (pid: number) => writeFileSync(join(root, 'sys', 'kernel', 'ns_last_pid'), `${pid}\n`);
  mkdirSync(join(root, 'sys', 'kernel'), { recursive: true });

  it('reads tree members every tick, other processes only when their pid is handed out anew', async () => {
    write(200, stat(200, 1, 1000));
    write(201, stat(201, 200, 1100));
    write(300, stat(300, 1, 100)); // outsiders, older than the run
    write(301, stat(301, 1, 100));
    lastPid(301);
    const sampler = newSampler({ procRoot: root, rateHz: 0.001, pageSizeBytes: 4096, clockTicksPerSecond: 100 });
    sampler.track('r1', { rootPid: 200, scope: null });
    const pidsIn = (snapshots: ProcTreeSnapshot[]) => all(only(snapshots, 'r1').roots).map((n) => n.pid).sort(byNumber);

    expect(pidsIn(await sampler.sample())).toEqual([200, 201]);
    expect(sampler.stats.fullScans).toBe(1);
    expect(sampler.stats.lastStatReads).toBe(4);

    // Nothing handed out: only the two members are read, and /proc is not listed.
    write(301, stat(301, 200, 1200)); // a change no process could make without a new pid: not seen
    expect(pidsIn(await sampler.sample())).toEqual([200, 201]);
    expect(sampler.stats.lastStatReads).toBe(2);
    expect(sampler.stats.fullScans).toBe(1);
    expect(sampler.stats.lastRelinked).toBe(false); // the trees' shape from the last tick stands

    // 302 is new (after 301), a child of a member: found by its number, without listing /proc.
    // 303 is a thread of 201: /proc/303/stat answers (exit signal -1), but it is no process.
    write(302, stat(302, 201, 1300));
    write(303, `${stat(303, 200, 1350).trimEnd()} 0 0 0 0 0 0 0 0 0 0 -1\n`); // fields 28-37, then 38
    lastPid(303);
    expect(pidsIn(await sampler.sample())).toEqual([200, 201, 302]);
    expect(sampler.stats.lastListed).toBe(false);
    expect(sampler.stats.lastRelinked).toBe(true);
    expect(sampler.stats.lastStatReads).toBe(4);
    rmSync(join(root, '303'), { recursive: true });

    // A new process elsewhere is read once and leaves the trees' shape alone.
    write(304, stat(304, 1, 1500));
    lastPid(304);
    expect(pidsIn(await sampler.sample())).toEqual([200, 201, 302]);
    expect(sampler.stats.lastRelinked).toBe(false);
    expect(sampler.stats.lastStatReads).toBe(4); // three members and 304
    expect(pidsIn(await sampler.sample())).toEqual([200, 201, 302]);
    expect(sampler.stats.lastStatReads).toBe(3); // 304 is not read again

    // The pid space wrapped round to 300: /proc is listed, and 300, handed out anew, is read again.
    write(300, stat(300, 200, 1400));
    lastPid(300);
    expect(pidsIn(await sampler.sample())).toEqual([200, 201, 300, 302]);
    expect(sampler.stats.lastListed).toBe(true);

    // A member that ends: its kept stat reads as nothing (a real one fails with ESRCH).
    write(201, '');
    rmSync(join(root, '201'), { recursive: true });
    // 302 left the tree with it (reparented): with no marker to look for, nothing finds it.
    expect(pidsIn(await sampler.sample())).toEqual([200, 300]);

    // Tracking a run scans everything again: 301's change is seen now.
    sampler.track('r2', { rootPid: 301, scope: null });
    const both = await sampler.sample();
    expect(sampler.stats.fullScans).toBe(2);
    expect(pidsIn(both)).toEqual([200, 300, 301]);
    rmSync(join(root, '304'), { recursive: true });
    expect(all(only(both, 'r2').roots).map((n) => n.pid)).toEqual([301]);
  });
});

describe('ProcessSampler on a large tree of sleepers (a crafted proc root)', () => {
  const root = mkdtempSync(join(tmpdir(), 'warden-proc-tree-large-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const write = (pid: number, text: string) => {
    mkdirSync(join(root, String(pid)), { recursive: true });
    writeFileSync(join(root, String(pid), 'stat'), text);
  };
  mkdirSync(join(root, 'sys', 'kernel'), { recursive: true });
  writeFileSync(join(root, 'sys', 'kernel', 'ns_last_pid'), '600\n');
  write(500, statLine(500, { ppid: 1, start: 1000 }));
  for (let pid = 501; pid <= 569; pid++) write(pid, statLine(pid, { ppid: 500, pgid: 500, start: 1100 }));

  it('reads a sleeper once a second, a changing process every tick, and sees a sleeper end within that second', async () => {
    // 4 ticks a second, as far as the spreading goes; samples are taken by hand.
    const sampler = newSampler({ procRoot: root, rateHz: 0.001, sleepingReadMs: 4_000_000, pageSizeBytes: 4096, clockTicksPerSecond: 100 });
    sampler.track('r1', { rootPid: 500, scope: null });
    let utime = 0;
    const busy = () => write(501, statLine(501, { state: 'R', ppid: 500, pgid: 500, start: 1100, utime: ++utime, rss: 10 + utime }));
    const rssOf501 = (snapshots: ProcTreeSnapshot[]) => all(only(snapshots, 'r1').roots).find((n) => n.pid === 501)!.rssBytes / 4096;
    for (let i = 0; i < 3; i++) {
      busy();
      await sampler.sample(); // the first reads, then two that find the sleepers unchanged
    }
    for (let i = 0; i < 4; i++) {
      busy();
      const snapshot = await sampler.sample();
      expect(rssOf501(snapshot)).toBe(10 + utime); // read on every tick
      expect(only(snapshot, 'r1').processes).toBe(70);
      expect(sampler.stats.lastCarried).toBeGreaterThan(45); // about three quarters of 69 sleepers stood
      expect(sampler.stats.lastStatReads).toBeLessThan(25);
    }
    write(502, statLine(502, { state: 'Z', ppid: 500, pgid: 500, start: 1100 }));
    const counts: number[] = [];
    for (let i = 0; i < 4; i++) counts.push(only(await sampler.sample(), 'r1').processes);
    expect(counts.at(-1)).toBe(69); // gone within four ticks: a second at 4 Hz
  });

  it('reads every process on every tick when asked to (sleepingReadMs 0)', async () => {
    // At 4 Hz the default would read a sleeper on one tick in four; timer ticks come in between, as in a host.
    const sampler = newSampler({ procRoot: root, rateHz: 4, sleepingReadMs: 0, pageSizeBytes: 4096, clockTicksPerSecond: 100 });
    sampler.track('r1', { rootPid: 500, scope: null });
    for (let i = 0; i < 6; i++) await sampler.sample();
    expect(sampler.stats.lastCarried).toBe(0);
    write(503, statLine(503, { state: 'Z', ppid: 500, pgid: 500, start: 1100 }));
    const next = only(await sampler.sample(), 'r1');
    expect(all(next.roots).map((n) => n.pid)).not.toContain(503);
  });
});

describe('the sampler\'s small parts', () => {
  it('parses ps rows: RSS in KiB, every time format, zombies left out', () => {
    const table = parsePs(
      [
        '    1     0     1 Ss     11696 00:00:02 /sbin/init splash',
        '  200     1   200 R+       512 1-02:03:04 python3 -c while True: pass',
        '  201   200   200 Z          0 00:00:00 [sleep] <defunct>',
        '  202   200   200 S<l      100 0:01.50 node  two  spaces ',
        'garbage line',
        '',
      ].join('\n'),
      { pageSizeBytes: 4096, clockTicksPerSecond: 100 },
    );
    expect([...table.keys()]).toEqual([1, 200, 202]);
    expect(table.get(200)).toMatchObject({ ppid: 1, pgid: 200, state: 'R', rssPages: 128, cpuTicks: 9_378_400, command: 'python3 -c while True: pass' });
    expect(table.get(202)).toMatchObject({ state: 'S', cpuTicks: 150, command: 'node  two  spaces' });
  });

  it.each([
    ['00:00:02', 2],
    ['02:03:04', 7_384],
    ['1-02:03:04', 93_784],
    ['3:04', 184],
    ['0:00.03', 0.03],
    ['12:34.56', 754.56],
    ['?', NaN],
  ])('reads ps time %s as %s s', (text, seconds) => {
    if (Number.isNaN(seconds)) expect(psTimeSeconds(text)).toBeNaN();
    else expect(psTimeSeconds(text)).toBeCloseTo(seconds, 6);
  });

  it.each([
    ['first', `WARDEN_SCOPE=h.r\0PATH=/bin\0`],
    ['last without NUL', `PATH=/bin\0WARDEN_SCOPE=h.r`],
    ['a longer value', `WARDEN_SCOPE=h.rx\0`],
    ['a longer name', `XWARDEN_SCOPE=h.r\0`],
    ['inside a value', `FOO=WARDEN_SCOPE=h.r\0`],
    ['twice', `WARDEN_SCOPE=h.q\0WARDEN_SCOPE=h.r\0`],
    ['empty', ''],
  ])('finds a scope exactly where environHas does (%s)', (_what, text) => {
    const environ = Buffer.from(text, 'latin1');
    expect(scopesIn(environ).includes('h.r')).toBe(environHas(environ, 'WARDEN_SCOPE=h.r'));
  });

  it.runIf(HAS_PROC)('reads the page size and clock tick rate getconf prints, without spawning it', () => {
    const getconf = (name: string) => Number(execFileSync('getconf', [name], { encoding: 'utf8' }).trim());
    expect(kernelConstants()).toEqual({ pageSizeBytes: getconf('PAGESIZE'), clockTicksPerSecond: getconf('CLK_TCK') });
    expect(kernelConstants('/nonexistent')).toEqual({});
  });

  it('reads a batch of files under one time bound: whole, missing, and one that hangs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warden-read-all-'));
    const fifo = join(dir, 'hangs');
    try {
      writeFileSync(join(dir, 'small'), 'a\0b\0');
      const big = Buffer.alloc(100_000, 7);
      writeFileSync(join(dir, 'big'), big);
      execFileSync('mkfifo', [fifo]); // opening it for reading waits for a writer that never comes
      // A bound far above what the two files take even on a loaded machine; the FIFO never
      // answers, so the call returns only by the bound (without it the test would hang).
      const [small, whole, missing, hung] = await readAllBounded([join(dir, 'small'), join(dir, 'big'), join(dir, 'nothing'), fifo], 2_000);
      expect(small).toEqual(Buffer.from('a\0b\0'));
      expect(Buffer.isBuffer(whole) && whole.equals(big)).toBe(true);
      expect(missing).toBeUndefined();
      expect(hung).toBe(TIMED_OUT);
    } finally {
      // Let the stuck open finish, so no thread of the pool stays blocked.
      try {
        closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
      } catch {
        // no reader waiting any more
      }
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
