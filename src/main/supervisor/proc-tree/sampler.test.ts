// The process sampler against REAL process trees (bash, python3, sleep,
// setsid); its scan against a crafted proc root is in scan.test.ts. Processes are found by their
// WARDEN_SCOPE marker and killed after each test. PID 1 on the test machines
// does not reap orphans, so a killed orphan stays a zombie: the sampler (and
// these tests) count 'Z' as gone.

import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';

import type { ProcNode, ProcTreeSnapshot } from '../../../shared/proc-tree';
import { ProcessSampler } from './sampler';
import { readAllBounded } from '../procfs';
import { cannotRunAs } from '../../store/store-testkit';
import { all, newSampler, only } from './testkit';
import { PATIENCE_MS, until } from '../../../../test/kit/until';

// The real readAllBounded, watched: which environ and cmdline files a tick reads.
vi.mock('../procfs', async (importOriginal) => {
  const real = await importOriginal<typeof import('../procfs')>();
  return { ...real, readAllBounded: vi.fn(real.readAllBounded) };
});

/** Pids whose environ and cmdline were read since the `mark`-th call. */
function readsSince(mark: number): { environ: number[]; cmdline: number[] } {
  const paths = vi.mocked(readAllBounded).mock.calls.slice(mark).flatMap(([batch]) => batch);
  const pidsOf = (file: string) => paths.filter((p) => p.endsWith(`/${file}`)).map((p) => Number(p.split('/').at(-2)));
  return { environ: pidsOf('environ'), cmdline: pidsOf('cmdline') };
}

const byNumber = (a: number, b: number) => a - b;

const HERE = dirname(fileURLToPath(import.meta.url));
const HAS_PROC = existsSync('/proc/self/stat');
const HAS_PS = spawnSync('ps', ['-o', 'pid=', '-p', String(process.pid)]).status === 0;
/** Bound on waiting for a test tree to report ready: guards a hang, never a speed assertion. */
const READY_GUARD_MS = PATIENCE_MS;
/** Why the sampling-as-nobody test is skipped here (it needs root, setpriv, and a checkout nobody can read), or null. */
const asNobody = existsSync('/usr/bin/setpriv') ? cannotRunAs(65534, join(HERE, 'sampler.ts')) : 'setpriv is not installed';
if (asNobody) console.warn(`proc-tree/sampler.test.ts: sampling as nobody is skipped: ${asNobody}.`);

const hostId = `pt${randomBytes(4).toString('hex')}`;
let runCounter = 0;
const newScope = () => `${hostId}.${++runCounter}`;

/** The state letter, or undefined when gone. */
function procState(pid: number): string | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return text.slice(text.lastIndexOf(')') + 2).split(' ')[0];
  } catch {
    return undefined;
  }
}

function ppidOf(pid: number): number | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return Number(text.slice(text.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/** CPU time (utime + stime, stat's 14th and 15th fields) in clock ticks. */
function cpuTicks(pid: number): number {
  const text = readFileSync(`/proc/${pid}/stat`, 'latin1');
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** Clock ticks per second (getconf CLK_TCK): what /proc counts CPU time in. */
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());

function commOf(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'latin1').trim();
  } catch {
    return undefined;
  }
}

const isGone = (pid: number) => {
  const state = procState(pid);
  return state === undefined || state === 'Z' || state === 'X';
};


/** Every live process carrying a marker of this file's host id. */
function pidsOfThisFile(): number[] {
  const needle = Buffer.from(`WARDEN_SCOPE=${hostId}.`);
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || isGone(Number(name))) continue;
    try {
      const environ = readFileSync(`/proc/${name}/environ`);
      const at = environ.indexOf(needle);
      if (at === 0 || (at > 0 && environ[at - 1] === 0)) found.push(Number(name));
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

interface Tree {
  child: ChildProcess;
  pid: number;
  scope: string;
  /** `name pid...` lines the tree printed before `ready`. */
  printed: Record<string, number[]>;
  /** Writes a line to the tree's stdin. */
  say(line: string): void;
  /** Resolves at the next line the tree prints that starts with `word`. */
  next(word: string): Promise<string>;
}

const trees: Tree[] = [];

/**
 * Starts `bash -c script` detached (its own group, as a run's main process),
 * with WARDEN_SCOPE set, and waits for it to print `ready`. Lines before it
 * like `name 123 456` record pids.
 */
async function startTree(script: string, args: string[] = [], scope = newScope()): Promise<Tree> {
  const child = spawn('bash', ['-c', script, 'tree', ...args], {
    detached: true,
    env: { ...process.env, WARDEN_SCOPE: scope, PYTHON },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const waiting: { word: string; resolve: (line: string) => void }[] = [];
  const printed: Record<string, number[]> = {};
  lines.on('line', (line) => {
    const at = waiting.findIndex((w) => line.startsWith(w.word));
    if (at >= 0) waiting.splice(at, 1)[0]!.resolve(line);
    const [name, ...pids] = line.split(' ');
    if (pids.length > 0 && pids.every((p) => /^\d+$/.test(p))) printed[name!] = pids.map(Number);
  });
  const next = (word: string) =>
    new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the tree never printed ${word}`)), READY_GUARD_MS);
      waiting.push({ word, resolve: (line) => (clearTimeout(timer), resolve(line)) });
    });
  const tree: Tree = { child, pid: child.pid!, scope, printed, say: (line) => child.stdin!.write(`${line}\n`), next };
  trees.push(tree);
  await next('ready');
  // `$!` is known at fork: wait until each printed process runs its own program.
  const wrappers = new Set(['bash', 'setsid']);
  await until('the printed processes to exec', () => Object.values(printed).flat().every((pid) => !wrappers.has(commOf(pid) ?? '')));
  return tree;
}

afterEach(async () => {
  if (!HAS_PROC) return;
  for (const tree of trees.splice(0)) {
    try {
      process.kill(-tree.pid, 'SIGKILL');
    } catch {
      // the group is gone already
    }
  }
  const left = pidsOfThisFile();
  for (const pid of left) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  await until('every test process to end', () => pidsOfThisFile().length === 0);
});

/** Python that starts `n` sleeps, prints their pids, then sleeps. One line: ps shows it as /proc does. */
const PY_SLEEPS =
  "import subprocess, sys, time; kids = [subprocess.Popen(['sleep', '60']) for _ in range(int(sys.argv[1]))]; " +
  "print('sleeps', *[k.pid for k in kids], flush=True); print('ready', flush=True); time.sleep(60)";

/**
 * The interpreter itself: `python3` may be a wrapper (pyenv's shim) that takes
 * a while to exec it, and a sample in between would see the wrapper.
 */
const PYTHON = HAS_PROC ? execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim() : 'python3';

/** bash -> python3 -> N sleeps; bash forks python (it has more to do after), so the links are real. */
const BASH_PYTHON = '"$PYTHON" -c "$1" "$2" & echo "python $!"; wait';


describe.runIf(HAS_PROC)('ProcessSampler on real processes (/proc)', () => {
  it('reports bash -> python3 -> 3 sleeps with the right parent links, commands and RSS', async () => {
    const tree = await startTree(BASH_PYTHON, [PY_SLEEPS, '3']);
    const sampler = newSampler();
    sampler.track('r1', { rootPid: tree.pid, scope: tree.scope });
    const snapshot = only(await sampler.sample(), 'r1');

    expect(snapshot.source).toBe('proc');
    expect(snapshot.rootPid).toBe(tree.pid);
    expect(snapshot.roots).toHaveLength(1);
    const bash = snapshot.roots[0]!;
    expect(bash.pid).toBe(tree.pid);
    expect(bash.command).toMatch(/^bash -c "\$PYTHON" -c /);
    expect(bash.children.map((n) => n.pid)).toEqual(tree.printed.python);
    const python = bash.children[0]!;
    expect(python.ppid).toBe(bash.pid);
    expect(python.command).toMatch(/python3(\.\d+)? -c import subprocess/);
    expect(python.children.map((n) => n.pid)).toEqual([...tree.printed.sleeps!].sort((a, b) => a - b));
    for (const sleep of python.children) {
      expect(sleep.ppid).toBe(python.pid);
      expect(sleep.command).toBe('sleep 60');
      expect(sleep.children).toEqual([]);
    }
    // A process just exec'd may read 0: since Linux 6.2 /proc/PID/stat's RSS is a per-CPU
    // counter's global part, which a small new process may not have reached yet (sleep here).
    expect(python.rssBytes).toBeGreaterThan(0);
    for (const node of all(snapshot.roots)) {
      expect(node.rssBytes).toBeGreaterThanOrEqual(0);
      expect(node.escaped).toBe(false);
      expect(node.pgid).toBe(tree.pid);
      expect(node.state).toMatch(/^[RSD]$/);
    }
    expect(snapshot.processes).toBe(5);
    expect(snapshot.rssBytes).toBe(all(snapshot.roots).reduce((sum, n) => sum + n.rssBytes, 0));
    expect(new Date(snapshot.sampledAt).getTime()).toBeGreaterThan(Date.now() - 60_000);
  });

  it('shows setsid children in the run\'s tree marked escaped: one under its parent, one reparented away', async () => {
    const tree = await startTree(
      [
        'setsid sleep 60 & echo "sibling $!"', // setsid: own session and group, parent still bash
        '(setsid sleep 61 & echo "orphan $!")', // its parent exits: reparented to init or a subreaper
        '(WARDEN_SCOPE="$1" setsid sleep 62 & echo "stranger $!")', // reparented too, with another run's marker
        'echo ready; wait',
      ].join('\n'),
      [newScope()],
    );
    const [sibling, orphan, stranger] = [tree.printed.sibling![0]!, tree.printed.orphan![0]!, tree.printed.stranger![0]!];
    await until('the orphan to be reparented', () => ppidOf(orphan) !== tree.pid);
    const sampler = newSampler();
    sampler.track('r1', { rootPid: tree.pid, scope: tree.scope });
    const snapshot = only(await sampler.sample(), 'r1');

    const bash = snapshot.roots[0]!;
    expect(bash.pid).toBe(tree.pid);
    expect(bash.escaped).toBe(false);
    const nested = bash.children.find((n) => n.pid === sibling);
    expect(nested).toMatchObject({ ppid: tree.pid, command: 'sleep 60', escaped: true });
    expect(nested!.pgid).not.toBe(tree.pid);
    const away = snapshot.roots.find((n) => n.pid === orphan);
    expect(away).toMatchObject({ command: 'sleep 61', escaped: true });
    expect(away!.ppid).not.toBe(tree.pid);
    expect(all(snapshot.roots).map((n) => n.pid)).not.toContain(stranger);
    expect(snapshot.processes).toBe(3);
  });

  it('reads no environment of processes older than the run, and none twice, not even on a full scan', async () => {
    // A marked process started before the run's main process: not the run's.
    const scope = newScope();
    const elder = spawn('sleep', ['60'], { env: { ...process.env, WARDEN_SCOPE: scope }, stdio: 'ignore' });
    try {
      await until('the elder to start', () => procState(elder.pid!) !== undefined);
      await new Promise((resolve) => setTimeout(resolve, 30)); // a later clock tick for the run's start
      const tree = await startTree('sleep 60 & (setsid sleep 61 & echo "orphan $!"); echo ready; wait', [], scope);
      const sampler = newSampler({ rateHz: 0.001 }); // no timer tick in between: only the ticks asked for
      const start = vi.mocked(readAllBounded).mock.calls.length;
      sampler.track('r1', { rootPid: tree.pid, scope });
      const first = only(await sampler.sample(), 'r1');
      const pids = all(first.roots).map((n) => n.pid);
      expect(pids).toContain(tree.printed.orphan![0]);
      expect(pids).not.toContain(elder.pid);
      const firstReads = readsSince(start);
      expect(firstReads.environ).toContain(tree.printed.orphan![0]); // how the escapee was found
      expect(firstReads.environ).not.toContain(elder.pid); // older than the run: never read
      for (const pid of pids) {
        if (pid !== tree.printed.orphan![0]) expect(firstReads.environ).not.toContain(pid); // in the tree by parent links
      }
      expect([...firstReads.cmdline].sort(byNumber)).toEqual([...pids].sort(byNumber));

      const mark = vi.mocked(readAllBounded).mock.calls.length;
      const second = only(await sampler.sample(), 'r1');
      expect(all(second.roots).map((n) => n.pid).sort(byNumber)).toEqual([...pids].sort(byNumber));
      // Other processes on the machine may have started since; nothing read before is read again.
      const secondReads = readsSince(mark);
      expect(secondReads.environ.filter((pid) => firstReads.environ.includes(pid) || pids.includes(pid))).toEqual([]);
      expect(secondReads.cmdline).toEqual([]);

      // Tracking another run makes the next tick read every process's stat again, but no environment twice.
      sampler.track('other', { rootPid: tree.pid, scope: null });
      const fullMark = vi.mocked(readAllBounded).mock.calls.length;
      const fulls = sampler.stats.fullScans;
      await sampler.sample();
      expect(sampler.stats.fullScans).toBe(fulls + 1);
      const fullReads = readsSince(fullMark);
      expect(fullReads.environ.filter((pid) => firstReads.environ.includes(pid) || pids.includes(pid))).toEqual([]);
    } finally {
      elder.kill('SIGKILL');
    }
  });

  it('drops a process that exits, and a zombie nobody reaped, from the next snapshot', async () => {
    const tree = await startTree(BASH_PYTHON, [PY_SLEEPS, '3']);
    const sampler = newSampler();
    sampler.track('r1', { rootPid: tree.pid, scope: tree.scope });
    const before = only(await sampler.sample(), 'r1');
    const [first, second] = tree.printed.sleeps!;
    expect(all(before.roots).map((n) => n.pid)).toEqual(expect.arrayContaining([first, second]));

    // python never waits for its children: a killed one stays a zombie.
    process.kill(first!, 'SIGKILL');
    await until('the sleep to be a zombie', () => procState(first!) === 'Z');
    const after = only(await sampler.sample(), 'r1');
    expect(all(after.roots).map((n) => n.pid)).not.toContain(first);
    expect(after.processes).toBe(before.processes - 1);

    // python killed too: bash, which waited only for it, ends; the sleeps left
    // are reparented away and found by their marker alone.
    const python = tree.printed.python![0]!;
    process.kill(python, 'SIGKILL');
    await until('python and bash to be gone', () => isGone(python) && isGone(tree.pid));
    const later = only(await sampler.sample(), 'r1');
    const left = all(later.roots);
    expect(left.map((n) => n.pid).sort(byNumber)).toEqual(tree.printed.sleeps!.slice(1).sort(byNumber));
    expect(left.every((n) => n.escaped && n.children.length === 0)).toBe(true);
  });

  it('does not take a new thread, which /proc/TID answers for too, for a new process', async () => {
    const py =
      "import sys, threading, time; print('ready', flush=True); sys.stdin.readline(); " +
      "[threading.Thread(target=time.sleep, args=(60,), daemon=True).start() for _ in range(3)]; print('threads', flush=True); time.sleep(60)";
    const tree = await startTree('"$PYTHON" -c "$1" 0<&0 & echo "python $!"; wait', [py]);
    const sampler = newSampler({ rateHz: 0.001 });
    sampler.track('r1', { rootPid: tree.pid, scope: tree.scope });
    expect(only(await sampler.sample(), 'r1').processes).toBe(2);
    const started = tree.next('threads');
    tree.say('go');
    await started;
    const after = only(await sampler.sample(), 'r1');
    expect(sampler.stats.lastListed).toBe(false); // the new thread ids were read one by one
    expect(all(after.roots).map((n) => n.pid).sort(byNumber)).toEqual([tree.pid, tree.printed.python![0]!].sort(byNumber));
  });

  it('keeps the peak RSS of the whole tree and the peak process count', async () => {
    // 64 MiB touched (not calloc'd zeros, which would not count), freed on request.
    const py =
      "import subprocess, sys, time; kids = [subprocess.Popen(['sleep', '60']) for _ in range(3)]; " +
      "b = b'x' * (64 << 20); print('sleeps', *[k.pid for k in kids], flush=True); print('ready', flush=True); " +
      "sys.stdin.readline(); [k.kill() for k in kids]; [k.wait() for k in kids]; del b; print('small', flush=True); time.sleep(60)";
    // An asynchronous command's stdin is /dev/null unless redirected: keep the tree's.
    const tree = await startTree('"$PYTHON" -c "$1" 0<&0 & echo "python $!"; wait', [py]);
    const sampler = newSampler();
    expect(sampler.untrack('never-tracked')).toBeUndefined();
    sampler.track('r1', { rootPid: tree.pid, scope: tree.scope });
    const big = only(await sampler.sample(), 'r1');
    expect(big.processes).toBe(5);
    expect(big.rssBytes).toBeGreaterThan(64 * 2 ** 20);
    expect(big.peak).toEqual({ rssBytes: big.rssBytes, processes: 5 });

    const small = tree.next('small');
    tree.say('free');
    await small;
    const after = only(await sampler.sample(), 'r1');
    expect(after.processes).toBe(2);
    expect(after.rssBytes).toBeLessThan(big.rssBytes - 32 * 2 ** 20);
    expect(after.peak).toEqual({ rssBytes: big.rssBytes, processes: 5 });
    expect(sampler.untrack('r1')).toEqual({ rssBytes: big.rssBytes, processes: 5 });
    expect(sampler.latest('r1')).toBeUndefined();
  });

  it('gives the same node object again for a process whose subtree did not change', async () => {
    const tree = await startTree('sleep 60 & echo "a $!"; sleep 60 & echo "b $!"; echo ready; wait');
    const sampler = newSampler({ rateHz: 0.001 });
    sampler.track('r1', { rootPid: tree.pid, scope: tree.scope });
    const settle = () => new Promise((resolve) => setTimeout(resolve, 150)); // past the shortest CPU window
    await sampler.sample(); // first sight: CPU averaged since start
    await settle();
    const second = only(await sampler.sample(), 'r1');
    await settle();
    const third = only(await sampler.sample(), 'r1');
    expect(third).not.toBe(second);
    expect(third.roots[0]).toBe(second.roots[0]); // bash and both sleeps unchanged: shared whole

    process.kill(tree.printed.a![0]!, 'SIGKILL');
    await until('the sleep to be gone', () => isGone(tree.printed.a![0]!));
    await settle();
    const fourth = only(await sampler.sample(), 'r1');
    expect(fourth.roots[0]).not.toBe(third.roots[0]); // its children changed
    const b = tree.printed.b![0]!;
    expect(fourth.roots[0]!.children.find((n) => n.pid === b)).toBe(third.roots[0]!.children.find((n) => n.pid === b));
    expect(third.roots[0]!.children).toHaveLength(2); // the older snapshot is left as it was
  });

  it('measures CPU per process from tick to tick', async () => {
    const tree = await startTree('"$PYTHON" -c "$1" & echo "busy $!"; sleep 60 & echo "idle $!"; echo ready; wait', ['while True: pass']);
    const busyPid = tree.printed.busy![0]!;
    const sampler = newSampler({ rateHz: 0.001 }); // no timer tick in between: only the ticks asked for
    sampler.track('r1', { rootPid: tree.pid, scope: tree.scope });
    // The figure is checked against the loop's own CPU time (/proc), read around each of the two
    // ticks: the ticks lie between those reads, so the figure lies between what the reads allow,
    // whatever share of a core a loaded machine gives the loop.
    const t0 = performance.now();
    const c0 = cpuTicks(busyPid);
    await sampler.sample();
    const t1 = performance.now();
    const c1 = cpuTicks(busyPid);
    // On, until the loop has run 40 ticks (0.4 s of CPU), not for a time.
    await until('the loop to use 0.4 s of CPU', () => cpuTicks(busyPid) >= c1 + 40);
    const t2 = performance.now();
    const c2 = cpuTicks(busyPid);
    const snapshot = only(await sampler.sample(), 'r1');
    const t3 = performance.now();
    const c3 = cpuTicks(busyPid);
    const nodes = all(snapshot.roots);
    const busy = nodes.find((n) => n.pid === busyPid)!;
    const idle = nodes.find((n) => n.pid === tree.printed.idle![0])!;
    // Percent of one core: ticks of 10 ms (CLK_TCK 100) over the window; one tick either side for the counters' rounding.
    const tickMs = 1000 / CLK_TCK;
    expect(busy.cpuPercent).toBeGreaterThanOrEqual((((c2 - c1 - 1) * tickMs) / (t3 - t0)) * 100);
    expect(busy.cpuPercent).toBeLessThanOrEqual((((c3 - c0 + 1) * tickMs) / (t2 - t1)) * 100);
    // The sleep used no CPU: at most a tick's rounding over a window of at least 0.4 s.
    expect(idle.cpuPercent).toBeLessThanOrEqual(((1 * tickMs) / (t2 - t1)) * 100);
    expect(snapshot.cpuPercent).toBeCloseTo(nodes.reduce((sum, n) => sum + n.cpuPercent, 0), 6);
  });

  it('samples on its own while a run is tracked, at the configured rate, and stops after the last untrack', async () => {
    const a = await startTree('sleep 60 & echo "s $!"; echo ready; wait');
    const b = await startTree('sleep 60 & sleep 60 & echo ready; wait');
    const sampler = newSampler({ rateHz: 20 });
    const ticks: ProcTreeSnapshot[][] = [];
    sampler.onSample((snapshots) => ticks.push(snapshots));
    expect(sampler.sampling).toBe(false);
    sampler.track('a', { rootPid: a.pid, scope: a.scope });
    sampler.track('b', { rootPid: b.pid, scope: b.scope });
    expect(sampler.sampling).toBe(true);
    await until('three ticks', () => ticks.length >= 3);
    const last = ticks[ticks.length - 1]!;
    expect(only(last, 'a').processes).toBe(2);
    expect(only(last, 'b').processes).toBe(3);
    expect(sampler.latest('a')?.processes).toBe(2);

    expect(sampler.untrack('a')).toEqual({ rssBytes: expect.any(Number), processes: 2 });
    const afterA = ticks.length;
    await until('a tick without a', () => ticks.length > afterA + 1);
    expect(ticks[ticks.length - 1]!.map((s) => s.runId)).toEqual(['b']);

    sampler.untrack('b');
    expect(sampler.sampling).toBe(false);
    const stoppedAt = ticks.length;
    await new Promise((resolve) => setTimeout(resolve, 300)); // six intervals at 20 Hz
    // Not even a tick under way when it stopped reports: it has no run left.
    expect(ticks.length).toBe(stoppedAt);
  });

  it('reports nothing for a run untracked while its tick was reading files', async () => {
    const tree = await startTree('sleep 60 & echo ready; wait');
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const real = vi.mocked(readAllBounded).getMockImplementation()!;
    // The first batch (the new tree's command lines) waits until the run is untracked.
    vi.mocked(readAllBounded).mockImplementationOnce(async (paths, timeoutMs) => {
      await gate;
      return real(paths, timeoutMs);
    });
    const sampler = newSampler({ rateHz: 0.001 });
    const reported: ProcTreeSnapshot[][] = [];
    sampler.onSample((snapshots) => reported.push(snapshots));
    const mark = vi.mocked(readAllBounded).mock.calls.length;
    sampler.track('r1', { rootPid: tree.pid, scope: tree.scope });
    const tick = sampler.sample();
    await until('the tick to wait on its reads', () => vi.mocked(readAllBounded).mock.calls.length > mark);
    sampler.untrack('r1');
    release();
    expect(await tick).toEqual([]);
    expect(reported).toEqual([]);
  });

  it.skipIf(asNobody !== null)(
    'skips what another user\'s processes do not let it read, and never crashes (sampling as nobody)',
    async () => {
      // Root's tree, sampled by a sampler running as nobody: stat and cmdline
      // are readable, environ is not, so the escaped orphan cannot be found.
      const tree = await startTree('sleep 60 & echo "kid $!"; (setsid sleep 61 & echo "orphan $!"); echo ready; wait');
      const code = [
        `const { ProcessSampler } = await import(${JSON.stringify(join(HERE, 'sampler.ts'))});`,
        'const sampler = new ProcessSampler();',
        `sampler.track('r1', { rootPid: ${tree.pid}, scope: ${JSON.stringify(tree.scope)} });`,
        'const [snapshot] = await sampler.sample();',
        'sampler.close();',
        'console.log(JSON.stringify({ snapshot, stats: sampler.stats }));',
      ].join('\n');
      const out = execFileSync(
        'setpriv',
        ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, '--import', 'tsx', '--input-type=module', '-e', code],
        { cwd: join(HERE, '../../../..'), encoding: 'utf8', timeout: READY_GUARD_MS },
      );
      const { snapshot, stats } = JSON.parse(out) as { snapshot: ProcTreeSnapshot; stats: ProcessSampler['stats'] };
      expect(stats.environReads).toBeGreaterThan(0); // it tried, and was refused
      expect(snapshot.roots.map((n) => n.pid)).toEqual([tree.pid]);
      expect(snapshot.roots[0]!.children.map((n) => [n.pid, n.command])).toEqual([[tree.printed.kid![0], 'sleep 60']]);
      expect(all(snapshot.roots).map((n) => n.pid)).not.toContain(tree.printed.orphan![0]);
    },
  );
});

describe.runIf(HAS_PROC && HAS_PS)('ProcessSampler without /proc (the ps fallback, forced)', () => {
  /** The tree's shape: who is under whom, and what each runs. */
  const shape = (nodes: ProcNode[]): unknown[] =>
    nodes.map((n) => ({ pid: n.pid, ppid: n.ppid, pgid: n.pgid, command: n.command, escaped: n.escaped, children: shape(n.children) }));

  it('gives the same tree shape as /proc', async () => {
    const tree = await startTree(`setsid sleep 59 & echo "sibling $!"; ${BASH_PYTHON}`, [PY_SLEEPS, '3']);
    const viaProc = newSampler();
    const viaPs = newSampler({ procRoot: null });
    viaProc.track('r1', { rootPid: tree.pid, scope: tree.scope });
    viaPs.track('r1', { rootPid: tree.pid, scope: tree.scope });
    const fromProc = only(await viaProc.sample(), 'r1');
    const fromPs = only(await viaPs.sample(), 'r1');

    expect(fromPs.source).toBe('ps');
    expect(fromProc.processes).toBe(6);
    expect(shape(fromPs.roots)).toEqual(shape(fromProc.roots));
    expect(all(fromPs.roots).find((n) => n.pid === tree.printed.sibling![0])?.escaped).toBe(true);
    for (const node of all(fromPs.roots)) {
      expect(node.rssBytes).toBeGreaterThan(0);
      expect(node.state).toMatch(/^[RSD]$/);
    }
    expect(fromPs.peak.processes).toBe(6);
  });

});

describe.runIf(HAS_PROC)('ProcessSampler descriptors', () => {
  const statFds = () =>
    readdirSync('/proc/self/fd').filter((fd) => {
      try {
        return /^\/proc\/\d+\/stat$/.test(readlinkSync(`/proc/self/fd/${fd}`));
      } catch {
        return false; // closed while listing
      }
    }).length;

  it('keeps each member\'s stat open while sampling and closes every one when sampling stops', async () => {
    const tree = await startTree('sleep 60 & sleep 60 & echo ready; wait');
    const before = statFds();
    const sampler = newSampler({ rateHz: 0.001 });
    sampler.track('r1', { rootPid: tree.pid, scope: tree.scope });
    await sampler.sample();
    expect(statFds() - before).toBe(3);
    sampler.untrack('r1');
    expect(statFds()).toBe(before);
  });
});

describe('the sampler\'s options', () => {
  it('refuses a rate it cannot keep', () => {
    expect(() => new ProcessSampler({ rateHz: 0 })).toThrow(/rateHz/);
    expect(() => new ProcessSampler({ rateHz: Number.NaN })).toThrow(/rateHz/);
  });
});
