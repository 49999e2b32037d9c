// Recovery after a host dies: a real host process recording real runs is
// killed with SIGKILL, and a new host marks its runs lost, once, with the
// output that was stored and the processes that still carry their marker.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Proc } from '../../shared/result';
import { DEFAULT_PROC_ROOT } from '../supervisor/options';
import { listScope } from '../supervisor/teardown';
import { all, run } from './sql';
import { openStore, type HistoryStore } from './store';
import { alive, fakeResult, removeTempDirs, startChild, tempStateDir, type Child } from './store-testkit';
import { until } from '../../../test/kit/until';

const children: Child[] = [];
const stray: number[] = [];
const stores: HistoryStore[] = [];

afterEach(async () => {
  for (const c of children.splice(0)) {
    c.proc.kill('SIGKILL');
    await c.exited;
  }
  for (const pid of stray.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  for (const s of stores.splice(0)) if (!s.isClosed) s.close();
  removeTempDirs();
});

const RUNS = {
  output: ['bash', '-c', 'echo ready; for i in $(seq 1 50); do echo "out $i"; done; echo "warn: disk slow" >&2; sleep 300'],
  grandchild: ['bash', '-c', 'setsid sleep 301 & echo ready; sleep 300'],
  exec: ['bash', '-c', 'echo ready; exec sleep 302'],
};

interface HostInfo {
  hostId: string;
  pid: number;
  runs: string[];
}

/** A host in its own process recording the three runs, then killed with SIGKILL. */
async function killedHost(dir: string): Promise<HostInfo & { procs: Map<string, Proc[]> }> {
  const host = startChild(['host', dir, ...Object.values(RUNS).map((argv) => JSON.stringify(argv))]);
  children.push(host);
  const info = await host.nextJson<HostInfo>();
  const procs = new Map<string, Proc[]>();
  for (const id of info.runs) {
    const found = await listScope({ scope: `${info.hostId}.${id}`, pgid: null, procRoot: DEFAULT_PROC_ROOT, budgetMs: 2000, passGapMs: 100 });
    procs.set(id, found);
    stray.push(...found.map((p) => p.pid));
  }
  host.proc.kill('SIGKILL');
  await host.exited;
  return { ...info, procs };
}

function newHost(dir: string, hostId: string): HistoryStore {
  const store = openStore({ dir });
  stores.push(store);
  store.registerHost(hostId);
  return store;
}

/** Live processes whose WARDEN_SCOPE begins with the prefix. */
async function markedWith(prefix: string): Promise<Proc[]> {
  return listScope({ scope: prefix, scopePrefix: true, pgid: null, procRoot: DEFAULT_PROC_ROOT, budgetMs: 2000, passGapMs: 100 });
}

describe.skipIf(DEFAULT_PROC_ROOT === null)('recoverLostRuns', () => {
  it('tears down a lost Python script\'s interpreter (marked by its session, not the run) and what the script started', async () => {
    const dir = tempStateDir();
    const code = 'import subprocess, time\np = subprocess.Popen(["sleep", "308"])\nprint("ready", flush=True)\ntime.sleep(300)';
    const host = startChild(['host', dir, JSON.stringify({ code })]);
    children.push(host);
    const info = await host.nextJson<HostInfo>();
    const procs = await markedWith(`${info.hostId}.`);
    stray.push(...procs.map((p) => p.pid));
    // The interpreter (session marker) and the script's sleep.
    expect(procs.some((p) => p.command.includes('sleep 308'))).toBe(true);
    expect(procs.length).toBeGreaterThanOrEqual(2);
    host.proc.kill('SIGKILL');
    await host.exited;
    expect(procs.every((p) => alive(p.pid))).toBe(true);

    const store = newHost(dir, 'next-host');
    const report = await store.recoverLostRuns({ tearDown: true });
    expect(report.recovered.map((r) => r.id)).toEqual(info.runs);
    expect(report.recovered[0]!.found.map((p) => p.pid).sort()).toEqual(procs.map((p) => p.pid).sort());
    await until('the interpreter and its child to end', () => procs.every((p) => !alive(p.pid)));
    expect(store.get(info.runs[0]!)!.advice).toMatch(/torn down/);
  });

  it('marks a SIGKILLed host\'s three runs lost, keeps their stored output, and tears down what carries their marker', async () => {
    const dir = tempStateDir();
    const dead = await killedHost(dir);
    const [outputRun, grandchildRun, execRun] = dead.runs as [string, string, string];
    // The run's own process (bash execs its last command) and the setsid grandchild, each with the marker.
    const grandchildProcs = dead.procs.get(grandchildRun)!.map((p) => p.command).sort();
    expect(grandchildProcs).toEqual(['sleep 300', 'sleep 301']);
    const outputProcs = dead.procs.get(outputRun)!;
    const everyPid = [...dead.procs.values()].flat().map((p) => p.pid);
    expect(everyPid.every(alive)).toBe(true);

    const store = newHost(dir, 'recoverer');
    expect(store.get(outputRun)?.state).toBe('running');
    const report = await store.recoverLostRuns({ tearDown: true });
    expect(report.recovered.map((r) => r.id).sort()).toEqual([...dead.runs].sort());
    await until('the marked processes to end', () => !everyPid.some(alive));

    const lost = store.get(outputRun)!;
    expect(lost).toMatchObject({ state: 'ended', verdict: 'lost', exitCode: null, signal: null });
    expect(lost.stdout).toBe(`ready\n${Array.from({ length: 50 }, (_, i) => `out ${i + 1}\n`).join('')}`);
    expect(lost.stderr).toBe('warn: disk slow\n');
    expect(lost.advice).toContain(`its host process (pid ${dead.pid}) is gone`);
    expect(lost.advice).toContain(`Recovered the ${lost.stdout.length} characters of stdout and 16 of stderr stored before then`);
    expect(lost.advice).toContain(`${outputProcs.length === 1 ? '1 process' : `${outputProcs.length} processes`} still carrying its WARDEN_SCOPE marker`);
    expect(lost.advice).toContain(`torn down: ${outputProcs.map((p) => `pid ${p.pid} (${p.command})`).join(', ')}; ${outputProcs.length} ended.`);

    const withGrandchild = store.get(grandchildRun)!;
    expect(withGrandchild.verdict).toBe('lost');
    expect(withGrandchild.teardown?.killed.map((p) => p.command).sort()).toEqual(grandchildProcs);
    expect(withGrandchild.teardown?.survivors).toEqual([]);
    expect(withGrandchild.notes.join('\n')).toMatch(/Still running when the run was recovered: .*\(sleep 301\)/);
    expect(withGrandchild.advice).toContain('2 processes still carrying its WARDEN_SCOPE marker were torn down');

    expect(store.get(execRun)!.teardown?.killed.map((p) => p.command)).toEqual(['sleep 302']);
    // The timeline says who recovered it and what was found.
    const lostEvent = store.events(grandchildRun).find((e) => e.kind === 'lost')!;
    expect(lostEvent.detail).toMatchObject({ hostId: dead.hostId, hostPid: dead.pid, recoveredBy: 'recoverer', tornDown: true });
    expect((lostEvent.detail.killed as number[]).sort()).toEqual(dead.procs.get(grandchildRun)!.map((p) => p.pid).sort());
    // Found by search and in the counts like any ended run.
    expect(store.list({ verdict: 'lost', text: 'disk slow' }).runs.map((r) => r.id)).toEqual([outputRun]);
    expect(store.countsByVerdict()).toEqual({ lost: 3, total: 3 });
    // Nothing is left to recover.
    expect((await store.recoverLostRuns({ tearDown: true })).recovered).toEqual([]);
  });

  it('only reports the marked processes when told not to tear down, and the advice says so', async () => {
    const dir = tempStateDir();
    const dead = await killedHost(dir);
    const store = newHost(dir, 'recoverer');
    await store.recoverLostRuns({ tearDown: false });
    const everyPid = [...dead.procs.values()].flat().map((p) => p.pid);
    expect(everyPid.every(alive)).toBe(true);
    const run = store.get(dead.runs[2]!)!;
    const pid = dead.procs.get(dead.runs[2]!)![0]!.pid;
    expect(run.verdict).toBe('lost');
    expect(run.teardown).toBeUndefined();
    expect(run.advice).toContain(`1 process still carrying its WARDEN_SCOPE marker is running and was left alone, as asked: pid ${pid} (sleep 302). End them with kill ${pid}`);
    expect(run.notes).toContain(`Still running when the run was recovered: pid ${pid} (sleep 302).`);
  });

  it('recovers a lost host\'s runs exactly once when two hosts start at the same moment', async () => {
    const dir = tempStateDir();
    const dead = await killedHost(dir);
    const barrier = join(dir, 'go');
    const rivals = [startChild(['recover', dir, 'true', barrier]), startChild(['recover', dir, 'true', barrier])];
    children.push(...rivals);
    for (const r of rivals) await r.nextJson<{ ready: boolean }>();
    writeFileSync(barrier, '');
    const reports = await Promise.all(rivals.map((r) => r.nextJson<{ hostId: string; recovered: string[] }>()));
    const all3 = reports.flatMap((r) => r.recovered);
    expect(all3.sort()).toEqual([...dead.runs].sort());
    expect(new Set(all3).size).toBe(3);
    const store = openStore({ dir });
    stores.push(store);
    for (const id of dead.runs) {
      expect(store.get(id)?.verdict).toBe('lost');
      expect(store.events(id).filter((e) => e.kind === 'lost')).toHaveLength(1);
    }
  });

  it('a rival that claims between this host choosing the runs and writing its claim leaves this host none of them', async () => {
    const dir = tempStateDir();
    const me = newHost(dir, 'me');
    const rival = newHost(dir, 'rival');
    const orphans = [1, 2].map(() => fakeResult({ state: 'running', verdict: undefined, exitCode: null }));
    for (const orphan of orphans) me.recordResult(orphan, 'dead-host');
    const deadPid = 2 ** 22 + 12345; // above pid_max: never alive
    run(me.db, 'INSERT INTO hosts (host_id, pid, start_ticks, boot_id, started_at, heartbeat_at) VALUES (?, ?, NULL, NULL, 0, 0)', 'dead-host', deadPid);
    // The race, in one order: both chose the same unclaimed runs; the rival writes its claim first and
    // is still recovering them (the runs not yet ended) when this host writes its own claim.
    let rivalClaimed!: () => void;
    const claimedByRival = new Promise<void>((resolve) => (rivalClaimed = resolve));
    let finishRival!: () => void;
    const rivalMayFinish = new Promise<void>((resolve) => (finishRival = resolve));
    let rivalDone: ReturnType<HistoryStore['recoverLostRuns']> | undefined;
    const mine = await me.recoverLostRuns({
      tearDown: false,
      beforeClaim: async () => {
        rivalDone = rival.recoverLostRuns({ tearDown: false, afterClaim: async () => (rivalClaimed(), rivalMayFinish) });
        await claimedByRival;
      },
    });
    finishRival();
    const theirs = await rivalDone!;
    expect(mine.recovered).toEqual([]);
    expect(theirs.recovered.map((r) => r.id).sort()).toEqual(orphans.map((o) => o.id).sort());
    for (const orphan of orphans) {
      expect(all<{ claimed_by: string }>(me.db, 'SELECT claimed_by FROM runs WHERE id = ?', orphan.id)[0]!.claimed_by).toBe('rival');
      expect(me.events(orphan.id).filter((e) => e.kind === 'lost')).toHaveLength(1);
    }
  });

  it('leaves the runs of a live host alone', async () => {
    const dir = tempStateDir();
    const host = startChild(['host', dir, JSON.stringify(RUNS.exec)]);
    children.push(host);
    const info = await host.nextJson<HostInfo>();
    const procs = await listScope({ scope: `${info.hostId}.${info.runs[0]!}`, pgid: null, procRoot: DEFAULT_PROC_ROOT, budgetMs: 2000, passGapMs: 100 });
    stray.push(...procs.map((p) => p.pid));
    const store = newHost(dir, 'other');
    const report = await store.recoverLostRuns({ tearDown: true });
    expect(report).toEqual({ recovered: [], liveElsewhere: 1 });
    expect(store.get(info.runs[0]!)?.state).toBe('running');
  });

  it('takes a host whose pid now belongs to another process for gone, and a reboot for the end of every process', async () => {
    const dir = tempStateDir();
    const store = newHost(dir, 'me');
    const reused = fakeResult({ state: 'running', verdict: undefined, exitCode: null, stdout: 'partial\n' });
    const rebooted = fakeResult({ state: 'running', verdict: undefined, exitCode: null });
    store.recordResult(reused, 'reused-host');
    store.recordResult(rebooted, 'rebooted-host');
    // This very process's pid, with another start time: a reused pid.
    run(store.db, 'INSERT INTO hosts (host_id, pid, start_ticks, boot_id, started_at, heartbeat_at) VALUES (?, ?, 1, NULL, 0, 0)', 'reused-host', process.pid);
    run(store.db, 'INSERT INTO hosts (host_id, pid, start_ticks, boot_id, started_at, heartbeat_at) VALUES (?, ?, NULL, ?, 0, 0)', 'rebooted-host', process.pid, 'another-boot');
    const report = await store.recoverLostRuns({ tearDown: true });
    expect(report.recovered.map((r) => r.id).sort()).toEqual([reused.id, rebooted.id].sort());
    expect(store.get(reused.id)!.advice).toContain(`its host process (pid ${process.pid}) is gone and the pid was reused`);
    expect(store.get(reused.id)!.stdout).toBe('partial\n');
    expect(store.get(rebooted.id)!.advice).toContain('the machine was restarted since');
    expect(store.get(rebooted.id)!.advice).toContain('None of its processes can still be running after the restart.');
  });

  it("counts a lost run's time to its last sign of life, and says it in words, not as an ISO instant", async () => {
    const dir = tempStateDir();
    const store = newHost(dir, 'me');
    const startedAt = Date.UTC(2025, 5, 1, 12, 0, 0);
    const orphan = fakeResult({ state: 'running', verdict: undefined, exitCode: null, startedAt: new Date(startedAt).toISOString(), elapsedMs: 10 });
    store.recordResult(orphan, 'quiet-host');
    const deadPid = 2 ** 22 + 12346; // above pid_max: never alive
    // The host's last heartbeat 10 s in; the run's last event 44 s in.
    run(store.db, 'INSERT INTO hosts (host_id, pid, start_ticks, boot_id, started_at, heartbeat_at) VALUES (?, ?, NULL, NULL, ?, ?)', 'quiet-host', deadPid, startedAt - 1000, startedAt + 10_000);
    run(store.db, `INSERT INTO run_events (run_id, at, at_ms, kind, detail) VALUES (?, ?, ?, 'limit-extended', '{}')`, orphan.id, startedAt + 44_000, 44_000);
    await store.recoverLostRuns({ tearDown: true });
    const lost = store.get(orphan.id)!;
    expect(lost.verdict).toBe('lost');
    expect(lost.elapsedMs).toBe(44_000);
    expect(lost.advice).toContain('last seen alive 44 s after the run started');
    expect(lost.advice).not.toMatch(/\d{4}-\d\d-\d\dT/);
  });

  it('leaves a run claimed by a live recoverer to it, and takes the unclaimed one beside it', async () => {
    const dir = tempStateDir();
    const me = newHost(dir, 'me');
    // The rival recoverer is a live host: registered by this very process.
    newHost(dir, 'rival');
    const claimed = fakeResult({ state: 'running', verdict: undefined, exitCode: null });
    const unclaimed = fakeResult({ state: 'running', verdict: undefined, exitCode: null });
    me.recordResult(claimed, 'dead-host');
    me.recordResult(unclaimed, 'dead-host');
    const deadPid = 2 ** 22 + 12347; // above pid_max: never alive
    run(me.db, 'INSERT INTO hosts (host_id, pid, start_ticks, boot_id, started_at, heartbeat_at) VALUES (?, ?, NULL, NULL, 0, 0)', 'dead-host', deadPid);
    run(me.db, 'UPDATE runs SET claimed_by = ? WHERE id = ?', 'rival', claimed.id);
    const report = await me.recoverLostRuns({ tearDown: true });
    expect(report.recovered.map((r) => r.id)).toEqual([unclaimed.id]);
    expect(me.get(claimed.id)!.state).toBe('running');
    expect(all<{ claimed_by: string }>(me.db, 'SELECT claimed_by FROM runs WHERE id = ?', claimed.id)[0]!.claimed_by).toBe('rival');
    expect(me.events(claimed.id).filter((e) => e.kind === 'lost')).toHaveLength(0);
  });

  it('without /proc says the processes could not be looked for, and claims no teardown', async () => {
    const dir = tempStateDir();
    const store = openStore({ dir, procRoot: null });
    stores.push(store);
    store.registerHost('me');
    const orphan = fakeResult({ state: 'running', verdict: undefined, exitCode: null });
    store.recordResult(orphan, 'dead-host');
    const deadPid = 2 ** 22 + 12348; // above pid_max: never alive
    run(store.db, 'INSERT INTO hosts (host_id, pid, start_ticks, boot_id, started_at, heartbeat_at) VALUES (?, ?, NULL, NULL, 0, 0)', 'dead-host', deadPid);
    const report = await store.recoverLostRuns({ tearDown: true });
    expect(report.recovered.map((r) => r.id)).toEqual([orphan.id]);
    const lost = store.get(orphan.id)!;
    expect(lost.verdict).toBe('lost');
    expect(lost.advice).toContain('Without /proc its processes could not be looked for by their WARDEN_SCOPE marker: check for them yourself.');
    expect(lost.teardown).toBeUndefined();
  });

  it('takes over runs claimed by a recoverer that died before finishing', async () => {
    const dir = tempStateDir();
    const store = newHost(dir, 'me');
    const orphan = fakeResult({ state: 'running', verdict: undefined, exitCode: null });
    store.recordResult(orphan, 'dead-host');
    const deadPid = 2 ** 22 + 12345; // above pid_max: never alive
    run(store.db, 'INSERT INTO hosts (host_id, pid, start_ticks, boot_id, started_at, heartbeat_at) VALUES (?, ?, NULL, NULL, 0, 0)', 'dead-host', deadPid);
    run(store.db, 'INSERT INTO hosts (host_id, pid, start_ticks, boot_id, started_at, heartbeat_at) VALUES (?, ?, NULL, NULL, 0, 0)', 'dead-claimer', deadPid);
    run(store.db, 'UPDATE runs SET claimed_by = ? WHERE id = ?', 'dead-claimer', orphan.id);
    const report = await store.recoverLostRuns({ tearDown: true });
    expect(report.recovered.map((r) => r.id)).toEqual([orphan.id]);
    expect(all<{ claimed_by: string }>(store.db, 'SELECT claimed_by FROM runs WHERE id = ?', orphan.id)[0]!.claimed_by).toBe('me');
  });
});
