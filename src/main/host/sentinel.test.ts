// Runs die with their supervisor: SIGKILL of a host, or of an embedded
// `warden run`, ends every process of its runs (the command's group, a setsid
// escapee, a group member that dropped the marker, a Python interpreter and
// what its script started) without another Warden starting; the next one
// still records the runs as lost with their output. Real processes, real
// signals, the real bin.

import { execa, type ResultPromise } from 'execa';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

import type { RunResult } from '../../shared/result';
import { serveFor, stopBackgroundHosts, WARDEN_BIN } from '../../cli/testkit';
import { detectMemoryBackend } from '../supervisor/cgroup';
import { reaperOnce } from '../supervisor/reaper';
import { startSentinel } from './sentinel';
import { until } from '../../../test/kit/until';

const servers: ResultPromise[] = [];
const dirs: string[] = [];
const spawned: number[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.kill('SIGKILL');
    await server.catch(() => undefined);
  }
  await stopBackgroundHosts(dirs.splice(0));
  for (const pid of spawned.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
});

function stateDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'warden-sentinel-'));
  dirs.push(dir);
  return dir;
}

const warden = (dir: string, args: string[], env: Record<string, string> = {}) =>
  execa(process.execPath, [WARDEN_BIN, ...args], { reject: false, stdin: 'ignore', env: { WARDEN_STATE_DIR: dir, ...env } });

function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) [ZX]/s.test(stat);
  } catch {
    return false;
  }
}

/** Live processes whose environment carries a marker of this host. */
function marked(hostId: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const env = readFileSync(`/proc/${entry}/environ`, 'latin1').split('\0');
      if (env.some((e) => e.startsWith(`WARDEN_SCOPE=${hostId}.`)) && alive(Number(entry))) pids.push(Number(entry));
    } catch {
      // gone, or not ours
    }
  }
  return pids;
}

/** Polls until none of the pids is alive (or gives up after the hang guard); returns those still alive. */
async function waitDead(pids: number[]): Promise<number[]> {
  await until('the processes to end', () => !pids.some(alive)).catch(() => undefined);
  return pids.filter(alive);
}

async function waitFor<T>(get: () => T | undefined | Promise<T | undefined>): Promise<T> {
  return (await until('the host to get there', get)) as T;
}

const pidsIn = (text: string, tag: string) => [...text.matchAll(new RegExp(`\\b${tag} (\\d+)`, 'g'))].map((m) => Number(m[1]));

// A command whose group leader prints its pid, starts a setsid escapee and a
// group member without the marker, then sleeps.
const TREE = 'echo "main $$"; env -u WARDEN_SCOPE setsid sleep 301 & echo "esc $!"; env -u WARDEN_SCOPE sleep 302 & echo "nomark $!"; sleep 303';
// A Python script that starts a child and sleeps.
// A Python script that starts a child, and one that drops the marker and leaves the group, then sleeps.
const SCRIPT = [
  'import subprocess, time, os',
  'p = subprocess.Popen(["sleep", "304"])',
  'q = subprocess.Popen("env -u WARDEN_SCOPE setsid sleep 314 </dev/null >/dev/null 2>&1 & echo $!", shell=True, stdout=subprocess.PIPE, text=True)',
  'print("interp", os.getpid(), flush=True)',
  'print("pyesc", q.stdout.read().strip(), flush=True)',
  'print("pychild", p.pid, flush=True)',
  'time.sleep(300)',
].join('\n');

/** An embedded `warden run` of TREE, once it has printed its pids; they are killed after the test if left. */
async function embeddedTree(dir: string, env: Record<string, string> = {}): Promise<{ cli: ResultPromise; pids: number[] }> {
  const cli = execa(process.execPath, [WARDEN_BIN, 'run', '--', 'bash', '-c', TREE], {
    reject: false,
    stdin: 'ignore',
    buffer: false,
    env: { WARDEN_STATE_DIR: dir, WARDEN_EMBEDDED: '1', ...env },
  });
  let printed = '';
  await new Promise<void>((done) => {
    cli.stdout!.on('data', (chunk: Buffer) => {
      printed += chunk.toString();
      if (printed.includes('nomark')) done();
    });
  });
  const pids = [...pidsIn(printed, 'main'), ...pidsIn(printed, 'esc'), ...pidsIn(printed, 'nomark')];
  spawned.push(...pids);
  return { cli, pids };
}

describe('the sentinel', () => {
  it('SIGKILL of a host ends its command runs, escapees, group members without the marker and Python interpreters; the next host records them lost', async () => {
    const dir = stateDir();
    const { child: host } = await serveFor(dir, servers);
    const info = JSON.parse((await warden(dir, ['list', '--json', '--live'])).stdout || '[]') as unknown[];
    expect(info).toEqual([]);
    const command = JSON.parse((await warden(dir, ['run', '--json', '--yield', '100ms', '--limit', '10m', '--', 'bash', '-c', TREE])).stdout) as RunResult;
    const script = JSON.parse((await warden(dir, ['run', '--json', '--yield', '100ms', '--python', '-c', SCRIPT])).stdout) as RunResult;
    expect(command.state).toBe('running');
    // Wait until both have printed their pids (read through the host).
    const out = await waitFor(async () => {
      const a = JSON.parse((await warden(dir, ['show', command.id, '--json'])).stdout) as RunResult;
      const b = JSON.parse((await warden(dir, ['show', script.id, '--json'])).stdout) as RunResult;
      return a.stdout.includes('nomark') && b.stdout.includes('pychild') ? a.stdout + b.stdout : undefined;
    });
    // (The script's escapee is found only through its interpreter's cgroup, or the subreaper it runs under without one.)
    const pyesc = (detectMemoryBackend().ok && process.env.WARDEN_CGROUPS !== '0') || reaperOnce() !== null ? pidsIn(out, 'pyesc') : [];
    spawned.push(...pidsIn(out, 'pyesc'));
    const pids = [...pidsIn(out, 'main'), ...pidsIn(out, 'esc'), ...pidsIn(out, 'nomark'), ...pidsIn(out, 'interp'), ...pidsIn(out, 'pychild'), ...pyesc];
    spawned.push(...pids);
    expect(pids).toHaveLength(5 + pyesc.length);
    expect(pids.filter(alive)).toEqual(pids);
    const scope = readFileSync(`/proc/${pids[0]}/environ`, 'latin1').split('\0').find((e) => e.startsWith('WARDEN_SCOPE='))!;
    const hostId = scope.slice('WARDEN_SCOPE='.length).split('.')[0]!;
    expect(marked(hostId).length).toBeGreaterThanOrEqual(3);

    host.kill('SIGKILL');
    await host.catch(() => undefined);
    // No other Warden runs meanwhile: the sentinel alone ends them.
    expect(await waitDead(pids)).toEqual([]);
    expect(marked(hostId)).toEqual([]);

    // The next host still records both as lost, with their output so far.
    const lost = JSON.parse((await warden(dir, ['list', '--json', '--verdict', 'lost'])).stdout) as { id: string }[];
    expect(lost.map((r) => r.id).sort()).toEqual([command.id, script.id].sort());
    const shown = JSON.parse((await warden(dir, ['show', command.id, '--json'])).stdout) as RunResult;
    expect(shown.verdict).toBe('lost');
    expect(shown.stdout).toContain('nomark');
  });

  it('SIGKILL of an embedded warden run ends its run, its escapee and its group member without the marker', async () => {
    const dir = stateDir();
    const { cli, pids } = await embeddedTree(dir);
    expect(pids).toHaveLength(3);
    expect(pids.filter(alive)).toEqual(pids);
    // It has run for at least this long when it is killed: the lost run's elapsed time must say so.
    await new Promise((r) => setTimeout(r, 1500));
    cli.kill('SIGKILL');
    await cli.catch(() => undefined);
    expect(await waitDead(pids)).toEqual([]);
    const listed = await warden(dir, ['list', '--json'], { WARDEN_EMBEDDED: '1' });
    const [lost] = JSON.parse(listed.stdout) as RunResult[];
    expect(lost).toMatchObject({ state: 'ended', verdict: 'lost' });
    expect(lost!.elapsedMs).toBeGreaterThanOrEqual(1500);
  });

  it('without a cgroup, SIGKILL of an embedded warden run also ends an escapee that dropped the marker (its subreaper does)', async () => {
    const dir = stateDir();
    // The escapee drops the marker too, and leaves the group: only its adopter knows it.
    const { cli, pids } = await embeddedTree(dir, { WARDEN_CGROUPS: '0' });
    expect(pids.filter(alive)).toEqual(pids);
    cli.kill('SIGKILL');
    await cli.catch(() => undefined);
    expect(await waitDead(pids)).toEqual([]);
  });

  it('WARDEN_SENTINEL=0 lets the runs outlive a killed Warden (the next one sweeps them)', async () => {
    const dir = stateDir();
    // No cgroup: a dead owner's cgroup is swept by the next Warden to start on this machine (any state
    // dir: in a full test run, one of the other files' within this wait), which is not the sentinel.
    const cli = execa(process.execPath, [WARDEN_BIN, 'run', '--', 'bash', '-c', 'echo "main $$"; sleep 305'], {
      reject: false,
      stdin: 'ignore',
      buffer: false,
      env: { WARDEN_STATE_DIR: dir, WARDEN_EMBEDDED: '1', WARDEN_SENTINEL: '0', WARDEN_CGROUPS: '0' },
    });
    let printed = '';
    await new Promise<void>((done) => cli.stdout!.on('data', (chunk: Buffer) => ((printed += chunk.toString()).includes('main') ? done() : undefined)));
    const [main] = pidsIn(printed, 'main');
    spawned.push(main!);
    cli.kill('SIGKILL');
    await cli.catch(() => undefined);
    // Given the time the sentinel would take, several times over.
    await new Promise((r) => setTimeout(r, 1500));
    expect(alive(main!)).toBe(true);
  });

  it('an orderly close sweeps nothing, and kept scopes are never swept', async () => {
    const hostId = `t${Date.now().toString(16)}`;
    const keep = execa('sleep', ['306'], { reject: false, env: { WARDEN_SCOPE: `${hostId}.kept` } });
    const other = execa('sleep', ['307'], { reject: false, env: { WARDEN_SCOPE: `${hostId}.other` } });
    spawned.push(keep.pid!, other.pid!);
    const closed = startSentinel(hostId);
    closed.close();
    await new Promise((r) => setTimeout(r, 1000));
    expect([keep.pid, other.pid].filter((p) => alive(p!))).toHaveLength(2);

    // A supervisor that dies (SIGKILL) after telling its sentinel to keep one scope: the rest is swept.
    const module = join(import.meta.dirname, 'sentinel.ts');
    const owner = execa(process.execPath, ['--import', 'tsx', '-e', `
      import { startSentinel } from ${JSON.stringify(module)};
      const s = startSentinel(${JSON.stringify(hostId)});
      s.kept(${JSON.stringify(`${hostId}.kept`)});
      console.log('ready');
      setInterval(() => {}, 1000);`], { reject: false, buffer: false, stdin: 'ignore' });
    await new Promise<void>((done) => owner.stdout!.on('data', (c: Buffer) => (c.toString().includes('ready') ? done() : undefined)));
    owner.kill('SIGKILL');
    await owner.catch(() => undefined);
    expect(await waitDead([other.pid!])).toEqual([]);
    expect(alive(keep.pid!)).toBe(true);
    keep.kill('SIGKILL');
    await Promise.allSettled([keep, other]);
  });
});

describe('a sentinel that cannot be lost quietly', () => {
  it('matches no pkill -f sleep nor killall sh; killed, it is replaced with every live scope, and a later host SIGKILL leaves nothing alive', async () => {
    const dir = stateDir();
    const module = join(import.meta.dirname, 'host.ts');
    const host = execa(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', `
      import { startHost } from ${JSON.stringify(module)};
      const host = await startHost({ stateDir: ${JSON.stringify(dir)}, webRoot: null, log: (line) => console.log('log: ' + line) });
      const say = () => console.log('info: ' + JSON.stringify(host.info()));
      // A run started before the sentinel dies: its group reaches the next one only by the handover.
      host.supervisor.start({ argv: ['bash', '-c', ${JSON.stringify(TREE)}] });
      process.stdin.on('data', (chunk) => {
        if (String(chunk).includes('info')) say();
        if (String(chunk).includes('after')) host.supervisor.start({ argv: ['bash', '-c', ${JSON.stringify(TREE.replace(/30(\d)/g, '31$1'))}] });
      });
      setInterval(() => {
        const out = host.supervisor.list().map((r) => r.stdout).join('');
        if (out !== '') console.log('out: ' + JSON.stringify(out));
      }, 100);
      say();`], { reject: false, buffer: false, stdin: 'pipe' });
    servers.push(host);
    let printed = '';
    host.stdout!.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    const until = <T,>(get: () => T | undefined) =>
      waitFor(get).catch((error: Error) => Promise.reject(new Error(`${error.message}; the host printed: ${printed.split('\n').filter((l) => !l.startsWith('out')).join('\n')}`)));
    const latest = (tag: string) => {
      const lines = printed.split('\n').filter((l) => l.startsWith(`${tag}: `));
      return lines.length > 0 ? lines[lines.length - 1]!.slice(tag.length + 2) : undefined;
    };
    const info = () => JSON.parse(latest('info')!) as { hostId: string; sentinel: { pid: number; restarts: number } | null; uncovered: string | null };
    const output = () => JSON.parse(latest('out') ?? '""') as string;
    const first = await until(() => (latest('info') ? info() : undefined));
    expect(first.uncovered).toBeNull();
    const sentinel = first.sentinel!.pid;
    expect(readFileSync(`/proc/${sentinel}/comm`, 'latin1')).toBe('warden-sentinel\n');
    const argv = readFileSync(`/proc/${sentinel}/cmdline`, 'latin1').split('\0').filter(Boolean);
    expect(argv).toEqual(['warden-sentinel', '-c', 'eval "$WARDEN_SENTINEL"', 'warden-sentinel', first.hostId]);

    await until(() => (output().includes('nomark') ? true : undefined));
    process.kill(sentinel, 'SIGKILL');
    await until(() => (printed.includes(`log: the sentinel (pid ${sentinel}) was killed by SIGKILL; started another`) ? true : undefined));
    host.stdin!.write('info\n');
    const replaced = await until(() => {
      const now = info();
      return now.sentinel?.restarts === 1 ? now : undefined;
    });
    expect(replaced.uncovered).toBeNull();
    expect(replaced.sentinel!.pid).not.toBe(sentinel);
    expect(alive(replaced.sentinel!.pid)).toBe(true);

    host.stdin!.write('after\n');
    const out = await until(() => (pidsIn(output(), 'nomark').length === 2 ? output() : undefined));
    const pids = [...pidsIn(out, 'main'), ...pidsIn(out, 'esc'), ...pidsIn(out, 'nomark')];
    spawned.push(...pids);
    expect(pids).toHaveLength(6);
    expect(pids.filter(alive)).toEqual(pids);

    host.kill('SIGKILL');
    await host.catch(() => undefined);
    expect(await waitDead(pids)).toEqual([]);
    expect(marked(first.hostId)).toEqual([]);
  });
});

describe('a sentinel that keeps dying', () => {
  it('is replaced 5 times in a minute, then its supervisor says runs are not covered', async () => {
    const logged: string[] = [];
    const sentinel = startSentinel(`t${Date.now().toString(16)}`, { onError: (line) => logged.push(line) });
    try {
      for (let i = 1; i <= 6; i++) {
        const pid = sentinel.pid!;
        expect(alive(pid)).toBe(true);
        process.kill(pid, 'SIGKILL');
        await waitFor(() => (sentinel.pid !== pid ? true : undefined));
      }
      expect(sentinel.restarts).toBe(5);
      expect(sentinel.pid).toBeUndefined();
      expect(sentinel.uncovered()).toMatch(/was killed by SIGKILL, the 6th time in a minute; no other is started, so runs will not be ended/);
      expect(logged.filter((l) => l.includes('started another'))).toHaveLength(5);
    } finally {
      sentinel.close();
    }
  });
});
