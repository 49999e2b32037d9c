// Wardens in different PID namespaces sharing one parent cgroup (`npm run
// test:mutation` runs under `unshare --pid --fork --mount-proc`; so does a
// Warden in a container): the sweep of a crashed Warden's cgroups must never
// touch a live run of a Warden it cannot see. REAL namespaces, REAL cgroups
// (root: cgroup v1's memory controller, or a delegated v2 subtree).
//
// A "Warden" here is a Node process using the engine's cgroup backend as the
// supervisor does (its own parent cgroup name, so no other test's runs are
// near): it makes two run cgroups, one holding a sleep, one its run has not
// joined yet, and joins that one when told.

import { execa, type ResultPromise } from 'execa';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { detectMemoryBackend, RunCgroup, type StaleSweep } from './cgroup';
import { ownIdentity, parseRunCgroupName } from './cgroup-owner';
import { isDead, waitDead } from './proc-testkit';
import { until } from '../../../test/kit/until';

const CGROUP_TS = new URL('./cgroup.ts', import.meta.url).pathname;
const PARENT = `warden-nstest-${process.pid}`;
const detection = detectMemoryBackend({ parentName: PARENT });
const backend = detection.ok ? detection.backend : undefined;
const canUnshare = process.getuid?.() === 0 && spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true']).status === 0;

/** A Warden holding two runs: prints {pid, busy, waiting, sleeper}; on "join" it starts a run in `waiting` and prints {joined: exit status}. */
const HOLDER = `
import { spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { detectMemoryBackend } from ${JSON.stringify(CGROUP_TS)};
const found = detectMemoryBackend({ parentName: ${JSON.stringify(PARENT)} });
if (!found.ok) throw new Error(found.reason);
const busy = found.backend.createRunCgroup('busy', 64 * 1024 * 1024);
const argv = busy.wrap(['sleep', '300']);
const sleeper = spawn(argv[0], argv.slice(1), { detached: true, stdio: 'ignore' });
const waiting = found.backend.createRunCgroup('waiting', 64 * 1024 * 1024);
while (busy.pids().length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
console.log(JSON.stringify({ pid: process.pid, busy: busy.path, waiting: waiting.path, sleeper: sleeper.pid }));
for await (const line of createInterface({ input: process.stdin })) {
  if (line !== 'join') continue;
  const joining = waiting.wrap(['true']);
  console.log(JSON.stringify({ joined: spawnSync(joining[0], joining.slice(1)).status }));
}`;

/** The supervisor's sweep at start, run once: prints the StaleSweep. */
const SWEEPER = `
import { detectMemoryBackend } from ${JSON.stringify(CGROUP_TS)};
const found = detectMemoryBackend({ parentName: ${JSON.stringify(PARENT)} });
if (!found.ok) throw new Error(found.reason);
console.log(JSON.stringify(await found.backend.removeStaleCgroups({ kill: true })));`;

const node = (code: string) => [process.execPath, '--import', 'tsx', '--input-type=module', '-e', code];
// --kill-child: a SIGKILLed unshare takes its namespace down with it (its init, so every process in it).
const inNamespace = (argv: string[]) => ['unshare', '--pid', '--fork', '--mount-proc', '--kill-child', ...argv];

interface Held {
  pid: number;
  busy: string;
  waiting: string;
  sleeper: number;
}

const children: ResultPromise[] = [];

/** Starts a holder (argv runs HOLDER) and waits for its runs. */
async function startHolder(argv: string[]): Promise<{ child: ResultPromise; held: Held; lines: () => string[] }> {
  const child = execa(argv[0]!, argv.slice(1), { reject: false, buffer: false, stdin: 'pipe', stderr: 'inherit' });
  children.push(child);
  let printed = '';
  child.stdout!.on('data', (chunk: Buffer) => (printed += chunk.toString()));
  const lines = () => printed.split('\n').filter(Boolean);
  const first = await until('the holder to make its runs', () => lines()[0]);
  return { child, held: JSON.parse(first) as Held, lines };
}

async function sweepIn(argv: string[]): Promise<StaleSweep> {
  const r = await execa(argv[0]!, argv.slice(1), { reject: false });
  expect(r.stderr).toBe('');
  expect(r.exitCode).toBe(0);
  return JSON.parse(r.stdout) as StaleSweep;
}

/** The pids in a cgroup, as this (the outermost) namespace sees them. */
function procsOf(dir: string): number[] {
  try {
    return readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** A pid no process has here, for a holder inside a namespace to be given (so its pid means nothing outside). */
function freePid(): number {
  const max = Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8'));
  for (;;) {
    const pid = 1000 + Math.floor(Math.random() * (max - 1002));
    if (!existsSync(`/proc/${pid}`) && !existsSync(`/proc/${pid + 1}`)) return pid;
  }
}

afterEach(async () => {
  for (const child of children.splice(0)) {
    child.kill('SIGKILL');
    await child.catch(() => undefined);
  }
  if (!backend || !existsSync(backend.parent)) return;
  for (const name of readdirSync(backend.parent, { withFileTypes: true }).filter((d) => d.isDirectory())) {
    const cgroup = new RunCgroup(backend.version, join(backend.parent, name.name), 0);
    await cgroup.killAll();
    await cgroup.remove();
  }
  expect(backend.removeParentIfEmpty()).toBe(true);
});

describe.skipIf(!backend || !canUnshare)(`Wardens in different PID namespaces (${backend ? `cgroup v${backend.version} under ${backend.parent}` : 'skipped: no writable memory cgroup'}${canUnshare ? '' : ', skipped: unshare needs root'})`, () => {
  it("a Warden in a PID namespace of its own leaves an outer Warden's runs alone, even one not joined yet", async () => {
    const { child, held, lines } = await startHolder(node(HOLDER));
    expect(held.pid).toBe(child.pid);
    expect(procsOf(held.busy)).toEqual([held.sleeper]);

    const sweep = await sweepIn(inNamespace(node(SWEEPER)));
    expect(sweep.killed).toEqual([]);
    expect(sweep.removed).toEqual([]);
    expect(sweep.leftAlone.map((l) => l.path).sort()).toEqual([held.busy, held.waiting].sort());
    for (const { why } of sweep.leftAlone) expect(why).toMatch(/another PID namespace/);
    expect(isDead(held.sleeper)).toBe(false);
    expect(procsOf(held.busy)).toEqual([held.sleeper]);
    // The run that had not joined yet still can: its cgroup was not removed under it.
    expect(existsSync(held.waiting)).toBe(true);
    child.stdin!.write('join\n');
    expect(await until('the late run to join', () => lines()[1])).toBe(JSON.stringify({ joined: 0 }));
  });

  it("an outer Warden leaves alone the runs of a Warden in a PID namespace of its own, whose pid is free outside", async () => {
    // The holder gets a pid inside that no process has outside: judged by pid alone, it looks gone here.
    const pid = freePid();
    const { child, held, lines } = await startHolder(inNamespace(['/bin/sh', '-c', `echo ${pid - 1} > /proc/sys/kernel/ns_last_pid && "$@"; exit $?`, 'holder', ...node(HOLDER)]));
    expect(held.pid).toBe(pid);
    expect(existsSync(`/proc/${pid}`)).toBe(false);
    const sleepers = procsOf(held.busy);
    expect(sleepers).toHaveLength(1);

    const sweep = await backend!.removeStaleCgroups({ kill: true });
    expect(sweep.killed).toEqual([]);
    expect(sweep.removed).toEqual([]);
    expect(sweep.leftAlone.map((l) => l.path).sort()).toEqual([held.busy, held.waiting].sort());
    for (const { why } of sweep.leftAlone) expect(why).toMatch(new RegExp(`pid ${pid}\\) runs in another PID namespace`));
    expect(isDead(sleepers[0]!)).toBe(false);
    expect(procsOf(held.busy)).toEqual(sleepers);
    child.stdin!.write('join\n');
    expect(await until('the late run to join', () => lines()[1])).toBe(JSON.stringify({ joined: 0 }));
  });

  it('the leftovers of a SIGKILLed Warden are still swept, by a Warden of its own namespace', async () => {
    const { child, held } = await startHolder(node(HOLDER));
    const owner = parseRunCgroupName(basename(held.busy))!.owner;
    expect(owner.pid).toBe(child.pid);
    expect(owner.pidNs).toBe(ownIdentity()!.tag.pidNs);
    child.kill('SIGKILL');
    await child.catch(() => undefined);
    expect(isDead(held.sleeper)).toBe(false);

    const sweep = await backend!.removeStaleCgroups({ kill: true });
    expect(sweep.killed).toEqual([held.sleeper]);
    expect(sweep.removed.sort()).toEqual([held.busy, held.waiting].sort());
    expect(sweep.leftAlone).toEqual([]);
    expect(await waitDead([held.sleeper])).toEqual([]);
    expect(existsSync(held.busy) || existsSync(held.waiting)).toBe(false);
  });

  it('inside a PID namespace, the leftovers of a SIGKILLed Warden of that namespace are swept', async () => {
    // One namespace holds both: a holder that is SIGKILLed, then the sweep.
    const driver = `
      import { spawn } from 'node:child_process';
      const holder = spawn(process.execPath, ${JSON.stringify(node(HOLDER).slice(1))}, { stdio: ['pipe', 'pipe', 'inherit'] });
      let text = '';
      const held = await new Promise((resolve) => holder.stdout.on('data', (chunk) => { text += chunk; if (text.includes('\\n')) resolve(JSON.parse(text.split('\\n')[0])); }));
      holder.kill('SIGKILL');
      await new Promise((resolve) => holder.on('exit', resolve));
      console.log(JSON.stringify(held));
      ${SWEEPER}`;
    const r = await execa(inNamespace(node(driver))[0]!, inNamespace(node(driver)).slice(1), { reject: false });
    expect(r.stderr).toBe('');
    const [heldLine, sweepLine] = r.stdout.split('\n');
    const held = JSON.parse(heldLine!) as Held;
    const sweep = JSON.parse(sweepLine!) as StaleSweep;
    // A Warden of that namespace, not of this one.
    expect(parseRunCgroupName(basename(held.busy))!.owner.pidNs).not.toBe(ownIdentity()!.tag.pidNs);
    expect(sweep.killed).toEqual([held.sleeper]);
    expect(sweep.removed.sort()).toEqual([held.busy, held.waiting].sort());
    expect(sweep.leftAlone).toEqual([]);
    expect(existsSync(held.busy) || existsSync(held.waiting)).toBe(false);
  });
});
