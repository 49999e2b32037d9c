// Who owns a run's cgroup: the name's owner tag, the judgement (a table, one
// row per branch), and what /proc says of this process and of other pids
// (real processes: a live child, a reaped one, a zombie).

import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { judgeOwner, lookAtPid, ownerTagText, ownIdentity, parseRunCgroupName, type OwnIdentity, type PidLook } from './cgroup-owner';
import { until } from '../../../test/kit/until';

const NS = 4026531836;
const self: OwnIdentity = { tag: { pid: 100, startTicks: 5000, pidNs: NS }, procIsOurs: true };

describe('the owner in a run cgroup name', () => {
  it('is written as pid.startTicks.pidNs and read back with the run id', () => {
    const tag = { pid: 4123, startTicks: 987654, pidNs: NS };
    expect(ownerTagText(tag)).toBe(`4123.987654.${NS}`);
    expect(parseRunCgroupName(`${ownerTagText(tag)}-a1b2c3`)).toEqual({ owner: tag, runId: 'a1b2c3' });
  });

  it.each([
    [`7.0.${NS}-r`, { owner: { pid: 7, startTicks: 0, pidNs: NS }, runId: 'r' }],
    // A run id may hold dashes and dots: the owner ends at the first dash.
    [`7.8.9-run-1.x`, { owner: { pid: 7, startTicks: 8, pidNs: 9 }, runId: 'run-1.x' }],
    [`9007199254740991.1.2-r`, { owner: { pid: 9007199254740991, startTicks: 1, pidNs: 2 }, runId: 'r' }],
  ])('%s is read', (name, want) => {
    expect(parseRunCgroupName(name)).toEqual(want);
  });

  it.each([
    ['4123-a1b2c3', "an older Warden's name (pid only)"],
    ['4123.5-r', 'two parts'],
    ['4123.5.6.7-r', 'four parts'],
    [`4123.5.${NS}`, 'no run id'],
    [`4123.5.${NS}-`, 'an empty run id'],
    [`0.5.${NS}-r`, 'pid 0'],
    [`04123.5.${NS}-r`, 'a leading zero (not the form Warden writes)'],
    [`4123.-5.${NS}-r`, 'a sign'],
    [`x4123.5.${NS}-r`, 'something before the pid'],
    [`9007199254740992.5.${NS}-r`, 'a pid past the safe integers'],
    [`4123.5.99999999999999999999-r`, 'twenty digits'],
    ['warden-other', 'a name of no Warden'],
  ])('%s is no run cgroup name (%s)', (name) => {
    expect(parseRunCgroupName(name)).toBeUndefined();
  });
});

describe('judgeOwner', () => {
  const owned = (pid: number, startTicks: number, pidNs = NS) => `${pid}.${startTicks}.${pidNs}-run1`;
  const rows: [string, string, OwnIdentity | undefined, PidLook | null, { kind: string; why?: RegExp }][] = [
    ['an older Warden name', '200-run1', self, null, { kind: 'unknown', why: /does not say which Warden made it/ }],
    ['a name of no Warden', 'stray', self, null, { kind: 'unknown', why: /does not say which Warden/ }],
    ['no identity of its own', owned(200, 7000), undefined, null, { kind: 'unknown', why: /cannot read its own/ }],
    ['another PID namespace, its pid free here', owned(200, 7000, 999), self, null, { kind: 'unknown', why: /pid 200\) runs in another PID namespace \(pid:\[999\], this one is pid:\[4026531836\]\)/ }],
    ['another PID namespace with our own pid and start time', owned(100, 5000, 999), self, null, { kind: 'unknown', why: /another PID namespace/ }],
    ["/proc showing another namespace's pids", owned(200, 7000), { ...self, procIsOurs: false }, null, { kind: 'unknown', why: /\/proc here shows another PID namespace/ }],
    ['its pid gone', owned(200, 7000), self, { kind: 'none' }, { kind: 'gone', why: /^its Warden \(pid 200\) is gone$/ }],
    ['its pid not readable', owned(200, 7000), self, { kind: 'unreadable' }, { kind: 'unknown', why: /pid 200 could not be looked at/ }],
    ['its pid reused by a later process', owned(200, 7000), self, { kind: 'process', startTicks: 7001, zombie: false }, { kind: 'gone', why: /pid 200\) is gone and the pid now belongs/ }],
    ['its pid reused, and that one a zombie', owned(200, 7000), self, { kind: 'process', startTicks: 6999, zombie: true }, { kind: 'gone', why: /now belongs/ }],
    ['its own process a zombie', owned(200, 7000), self, { kind: 'process', startTicks: 7000, zombie: true }, { kind: 'gone', why: /pid 200\) has exited/ }],
    ['its own process running', owned(200, 7000), self, { kind: 'process', startTicks: 7000, zombie: false }, { kind: 'alive' }],
    ['this Warden itself', owned(100, 5000), self, { kind: 'process', startTicks: 5000, zombie: false }, { kind: 'alive' }],
  ];

  it.each(rows)('%s', (_what, name, identity, seen, want) => {
    const asked: number[] = [];
    const verdict = judgeOwner(name, identity, (pid) => {
      asked.push(pid);
      if (seen === null) throw new Error('looked at a pid it cannot judge');
      return seen;
    });
    expect(verdict.kind).toBe(want.kind);
    if (want.why) expect(verdict.kind !== 'alive' ? verdict.why : '').toMatch(want.why);
    // Only the owner's pid is looked at, once, and only where it means something.
    expect(asked).toEqual(seen === null ? [] : [parseRunCgroupName(name)!.owner.pid]);
  });
});

describe('/proc', () => {
  it("reads this process's pid, start time and PID namespace", () => {
    const me = ownIdentity();
    expect(me).toBeDefined();
    const stat = readFileSync('/proc/self/stat', 'latin1');
    expect(me!.tag.pid).toBe(process.pid);
    expect(me!.tag.startTicks).toBe(Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]));
    expect(`pid:[${me!.tag.pidNs}]`).toBe(readlinkSync('/proc/self/ns/pid'));
    expect(me!.procIsOurs).toBe(true);
    expect(lookAtPid(process.pid)).toEqual({ kind: 'process', startTicks: me!.tag.startTicks, zombie: false });
  });

  it('has no identity to read under a /proc that is not there', () => {
    expect(ownIdentity('/nonexistent-proc')).toBeUndefined();
  });

  // A /proc of its own (a directory standing in for it): self -> 4242, with ns/pid, stat and status as the test says.
  function fakeProc(o: { ns?: string; stat?: string | null; status?: string | null }): string {
    const root = mkdtempSync(join(tmpdir(), 'warden-fakeproc-'));
    roots.push(root);
    mkdirSync(join(root, '4242', 'ns'), { recursive: true });
    symlinkSync('4242', join(root, 'self'));
    symlinkSync(o.ns ?? 'pid:[777]', join(root, '4242', 'ns', 'pid'));
    if (o.stat !== null) writeFileSync(join(root, '4242', 'stat'), o.stat ?? '4242 (node) S 1 4242 4242 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 31337 1000 100');
    if (o.status !== null) writeFileSync(join(root, '4242', 'status'), o.status ?? `Name:\tnode\nNSpid:\t${process.pid}\nNSpgid:\t1\n`);
    return root;
  }
  const roots: string[] = [];
  afterAll(() => {
    for (const root of roots) rmSync(root, { recursive: true, force: true });
  });

  it.each([
    ['one NSpid, ours: /proc is of our namespace', {}, { tag: { pid: process.pid, startTicks: 31337, pidNs: 777 }, procIsOurs: true }],
    ["NSpid from /proc's namespace down to ours", { status: `NSpid:\t5747\t${process.pid}\n` }, { tag: { pid: process.pid, startTicks: 31337, pidNs: 777 }, procIsOurs: false }],
    ['one NSpid, not ours', { status: `NSpid:\t${process.pid + 1}\n` }, { tag: { pid: process.pid, startTicks: 31337, pidNs: 777 }, procIsOurs: false }],
    ["two NSpids, /proc's the same number as ours", { status: `NSpid:\t${process.pid}\t7\n` }, { tag: { pid: process.pid, startTicks: 31337, pidNs: 777 }, procIsOurs: false }],
    ['no NSpid line (before Linux 4.1)', { status: 'Name:\tnode\n' }, { tag: { pid: process.pid, startTicks: 31337, pidNs: 777 }, procIsOurs: false }],
    ['no status', { status: null }, undefined],
    ['no stat', { stat: null }, undefined],
    ['a stat without a start time', { stat: '4242 (node) S 1 4242' }, undefined],
    ['a namespace link of another kind', { ns: 'net:[777]' }, undefined],
    ['a namespace link without a number', { ns: 'pid:[]' }, undefined],
    ['a namespace link with something before', { ns: 'xpid:[777]' }, undefined],
    ['a namespace link with something after', { ns: 'pid:[777]x' }, undefined],
  ] as const)('%s', (_what, files, want) => {
    expect(ownIdentity(fakeProc(files))).toEqual(want);
  });

  it.each([
    ['a running process', 'S', '31337', { kind: 'process', startTicks: 31337, zombie: false }],
    ['a zombie', 'Z', '31337', { kind: 'process', startTicks: 31337, zombie: true }],
    ['a dead one (X)', 'X', '31337', { kind: 'process', startTicks: 31337, zombie: true }],
    ['a stat without a start time', 'S', '', { kind: 'unreadable' }],
  ] as const)("looks at a live pid's stat: %s", (_what, state, ticks, want) => {
    const root = fakeProc({ stat: `${process.pid} (node) ${state} 1 2 3 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 ${ticks}`.trim() });
    mkdirSync(join(root, String(process.pid)));
    writeFileSync(join(root, String(process.pid), 'stat'), readFileSync(join(root, '4242', 'stat')));
    expect(lookAtPid(process.pid, root)).toEqual(want);
  });

  it("says unreadable for a live pid whose stat /proc does not show (another user's, under hidepid)", () => {
    expect(lookAtPid(process.pid, fakeProc({}))).toEqual({ kind: 'unreadable' });
  });

  it.runIf(process.getuid?.() === 0)("looks at another user's pid it may not signal (EPERM), as nobody", () => {
    // Loaded as root, then nobody (the module may lie where nobody cannot read, as in Stryker's sandbox).
    const code = `import { lookAtPid } from ${JSON.stringify(new URL('./cgroup-owner.ts', import.meta.url).pathname)}; process.setgroups([]); process.setgid(65534); process.setuid(65534); console.log(JSON.stringify(lookAtPid(${process.pid})));`;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual(lookAtPid(process.pid));
  });

  it('tells a gone pid, a zombie and a live process apart', async () => {
    // Reaped: certainly gone (a new process could take the pid, but not in the instant after).
    const gone = spawnSync('true').pid!;
    expect(lookAtPid(gone)).toEqual({ kind: 'none' });
    // A child that exited and is not reaped yet: a zombie, still with its start time.
    const python = spawn('python3', ['-c', 'import os, sys\npid = os.fork()\nif pid == 0: os._exit(0)\nprint(pid, flush=True)\nsys.stdin.read()'], { stdio: ['pipe', 'pipe', 'ignore'] });
    try {
      let printed = '';
      python.stdout.on('data', (chunk: Buffer) => (printed += chunk.toString()));
      const zombie = Number(await until('the forked child pid', () => /^(\d+)\n/.exec(printed)?.[1]));
      await until('the child to be a zombie', () => lookAtPid(zombie).kind === 'process' && (lookAtPid(zombie) as { zombie: boolean }).zombie);
      expect(lookAtPid(zombie)).toMatchObject({ kind: 'process', zombie: true });
      expect(lookAtPid(python.pid!)).toMatchObject({ kind: 'process', zombie: false });
    } finally {
      python.kill('SIGKILL');
    }
  });
});

// Under `unshare --pid --fork` without --mount-proc, /proc shows the outer namespace: nothing can be judged.
describe.skipIf(process.getuid?.() !== 0 || spawnSync('unshare', ['--version']).status !== 0)('/proc of another PID namespace', () => {
  it('is noticed (unshare --pid --fork without --mount-proc)', () => {
    const code = `import { ownIdentity } from ${JSON.stringify(new URL('./cgroup-owner.ts', import.meta.url).pathname)}; console.log(JSON.stringify(ownIdentity()));`;
    const run = (mountProc: boolean) => {
      const r = spawnSync('unshare', ['--pid', '--fork', ...(mountProc ? ['--mount-proc'] : []), process.execPath, '--import', 'tsx', '--input-type=module', '-e', code], { encoding: 'utf8' });
      expect(r.stderr).toBe('');
      return JSON.parse(r.stdout) as OwnIdentity;
    };
    const outerNs = ownIdentity()!.tag.pidNs;
    const bare = run(false);
    expect(bare.tag.pid).toBe(1);
    expect(bare.tag.pidNs).not.toBe(outerNs);
    expect(bare.procIsOurs).toBe(false);
    const mounted = run(true);
    expect(mounted.tag.pid).toBe(1);
    expect(mounted.tag.pidNs).not.toBe(outerNs);
    expect(mounted.procIsOurs).toBe(true);
  });
});
