// The local host relaying its remotes (remote-hosts.ts, federated-api.ts),
// through its real control socket, to a real sshd on 127.0.0.1 with a second
// state dir standing for the other machine (src/cli/sshd-testkit.ts): the
// remote's runs listed with its name, driven from here by their ID@HOST ids;
// each remote its own connection state; a remote that goes down marks only
// itself (the local host and its runs work on), and comes back by itself
// with its run still going. Skipped, with the reason printed, where sshd
// cannot run.

import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controlPath, makeCommandRemote, makeSshRemote, saveRemotes } from '../../client/remotes';
import { connectToHost } from '../../client/transport';
import type { RunEvent } from '../../shared/events';
import type { HostStatus } from '../../shared/hosts';
import { WardenApiError, type HttpWardenApi } from '../../shared/http-api';
import { masterPid, startSshd, type Sshd } from '../../cli/sshd-testkit';
import { stopBackgroundHosts } from '../../cli/testkit';
import { startHost, type Host } from './host';
import { RemoteHosts } from './remote-hosts';
import { until as waitUntil } from '../../../test/kit/until';

let sshd: Sshd | null = null;
let skip = '';
let host: Host | null = null;
let api: HttpWardenApi;
const localDir = mkdtempSync(join(tmpdir(), 'wfed-'));

async function until<T>(what: string, probe: () => Promise<T | undefined | null | false>): Promise<T> {
  return (await waitUntil(what, probe, { everyMs: 100 })) as T;
}

const stateOf = async (name: string): Promise<HostStatus | undefined> => (await api.hosts()).find((h) => h.name === name);

async function refusal(call: Promise<unknown>): Promise<WardenApiError> {
  const error = await call.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WardenApiError);
  return error as WardenApiError;
}

beforeAll(async () => {
  const started = await startSshd();
  if ('skip' in started) {
    skip = started.skip;
    console.log(`remote-hosts tests skipped: ${skip}`);
    return;
  }
  sshd = started;
  // box: the sshd; never: a command that always fails, standing for a machine that is not there.
  saveRemotes(localDir, [makeSshRemote('box', sshd.url, sshd.warden), makeCommandRemote('never', 'false')]);
  host = await startHost({ stateDir: localDir, webRoot: null, remotes: { env: { ...process.env, WARDEN_SSH: sshd.ssh }, retryMs: 300, checkMs: 1000, probeTimeoutMs: 20_000 } });
  api = (await connectToHost(localDir))!;
}, 60_000);

afterAll(async () => {
  await host?.shutdown();
  if (!sshd) return;
  const master = masterPid(sshd.ssh, controlPath(localDir, 'box')!);
  if (master !== null) process.kill(master, 'SIGTERM');
  await sshd.stop();
  await stopBackgroundHosts([sshd.remoteStateDir]);
  for (const dir of [sshd.dir, sshd.remoteStateDir]) rmSync(dir, { recursive: true, force: true });
  rmSync(localDir, { recursive: true, force: true });
}, 60_000);

describe('a remote link that hangs', () => {
  it('counts as disconnected once a probe goes unanswered, and ends what it started', async () => {
    // A command that takes stdin and never answers: a network gone quiet looks like this.
    const dir = mkdtempSync(join(tmpdir(), 'whung-'));
    saveRemotes(dir, [makeCommandRemote('hung', 'sleep 600')]);
    const remotes = new RemoteHosts({ stateDir: dir, retryMs: 60_000, probeTimeoutMs: 300 });
    try {
      const status = () => remotes.statuses(new Date().toISOString()).find((h) => h.name === 'hung')!;
      expect(status().state).toBe('connecting');
      const down = await until('hung disconnected', async () => (status().state === 'disconnected' ? status() : null));
      expect(down.lastError).toBe('it did not answer within 0.3 s');
      expect(() => remotes.api('hung')).toThrow(/Remote host hung cannot be reached now \(it did not answer within 0.3 s\)/);
      // The command it ran for the probe was ended with the link (no sleep 600 left behind by this process).
      await until('the probe command to be gone', async () => !readdirSync('/proc').some((p) => /^\d+$/.test(p) && readCmdline(p) === 'sleep\u0000600\u0000' && readPpid(p) === process.pid));
    } finally {
      remotes.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

function readCmdline(pid: string): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
}

function readPpid(pid: string): number {
  try {
    return Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
  } catch {
    return -1;
  }
}

describe('the local host relaying remote hosts', () => {
  it("lists each host with its own state, runs a remote's run by ID@HOST, and refuses hosts that are not configured", async (context) => {
    if (!sshd) return context.skip(skip);
    const box = await until('box connected', async () => ((await stateOf('box'))?.state === 'connected' ? stateOf('box') : null));
    expect(box).toMatchObject({ name: 'box', local: false, lastError: null });
    expect(box!.target).toContain(sshd.url);
    const local = await stateOf('local');
    expect(local).toMatchObject({ local: true, state: 'connected' });
    // The machine that is not there: its own state and why, while box is connected.
    const never = await until('never disconnected', async () => ((await stateOf('never'))?.state === 'disconnected' ? stateOf('never') : null));
    expect(never!.lastError).toMatch(/exited with status 1/);

    const events: RunEvent[] = [];
    const unsubscribe = api.subscribe((e) => events.push(e));
    const started = await api.start({ argv: ['bash', '-c', 'echo from-box; exec sleep 30'] }, { host: 'box' });
    expect(started.id).toMatch(/^[0-9a-f]{6,32}@box$/);
    expect(started.host).toBe('box');
    // Its events reach this host's stream, named the same way.
    await until('its output event', async () => events.some((e) => e.runId === started.id && e.type === 'output' && e.text.includes('from-box')));
    unsubscribe();

    // The app's list has it; the list the CLI and agents read (no hosts=all) does not.
    expect((await api.list({ output: 'none', hosts: 'all' })).find((r) => r.id === started.id)).toMatchObject({ host: 'box', state: 'running' });
    expect((await api.list({ output: 'none' })).map((r) => r.id)).not.toContain(started.id);
    // Detail, extend and stop go to that machine.
    expect(await api.get(started.id)).toMatchObject({ id: started.id, host: 'box', state: 'running' });
    const extended = await api.extend(started.id, 60_000);
    expect(extended.limitMs).toBeGreaterThan(0);
    const stopped = await api.stop(started.id);
    expect(stopped.id).toBe(started.id);
    const ended = await api.wait(started.id);
    expect(ended).toMatchObject({ id: started.id, host: 'box', state: 'ended', verdict: 'stopped' });
    expect((await api.timeline(started.id)).every((r) => r.runId === started.id)).toBe(true);

    // Send signal: to a process of that run's tree, there.
    const trees: RunEvent[] = [];
    const stopTrees = api.subscribe((e) => e.type === 'tree' && trees.push(e));
    const target = await api.start({ argv: ['sleep', '30'] }, { host: 'box' });
    const tree = await until('its process tree', async () => trees.find((e) => e.runId === target.id));
    stopTrees();
    if (tree.type !== 'tree') throw new Error('not a tree event');
    expect(tree.snapshot.runId).toBe(target.id);
    const pid = tree.snapshot.rootPid;
    const signalled = await api.signal(target.id, pid, 'TERM');
    expect(signalled.id).toBe(target.id);
    expect(await api.wait(target.id)).toMatchObject({ state: 'ended', signal: 'SIGTERM' });
    expect((await api.timeline(target.id)).some((r) => /signal/.test(r.kind))).toBe(true);

    // Recorded in that machine's history, found here by host; a local run beside it in the merged history.
    const mine = await api.start({ argv: ['true'] });
    await api.wait(mine.id);
    const theirs = await api.history({ host: 'box' });
    expect(theirs.runs.map((r) => r.id)).toContain(started.id);
    expect((await api.history()).runs.map((r) => r.id)).not.toContain(started.id);
    const all = await api.history({ host: '*', counts: true });
    expect(all.runs.map((r) => r.id)).toEqual(expect.arrayContaining([started.id, mine.id]));
    expect(all.runs.find((r) => r.id === started.id)!.host).toBe('box');

    // Only configured remotes, and only names that are names.
    // No such remote: no such run (get's null), and a 404 that says which.
    expect(await api.get('abcdef@nowhere')).toBeNull();
    expect((await refusal(api.stop('abcdef@nowhere'))).message).toMatch(/No remote host named "nowhere"/);
    expect((await refusal(api.start({ argv: ['true'] }, { host: 'nowhere' }))).status).toBe(404);
    expect((await refusal(api.start({ argv: ['true'] }, { host: '-oProxyCommand=x' }))).message).toMatch(/host=local or a remote's name/);
    expect((await refusal(api.history({ host: '../x' }))).status).toBe(400);
    expect((await refusal(api.stop('abcdef@-x'))).status).toBe(400);
    // A client of this host cannot own a run there: the remote could not watch it.
    expect((await refusal(api.start({ argv: ['true'] }, { host: 'box', owner: 'connection' }))).message).toMatch(/cannot be owned by a client of this host/);
    // A machine that is not there: a 503 that says so, at once.
    const down = await refusal(api.start({ argv: ['true'] }, { host: 'never' }));
    expect(down.status).toBe(503);
    expect(down.message).toMatch(/Remote host never cannot be reached now/);
  }, 90_000);

  it('a remote going down marks only itself; the local host works on; it reconnects by itself and its run went on', async (context) => {
    if (!sshd) return context.skip(skip);
    const before = await until('box connected', async () => ((await stateOf('box'))?.state === 'connected' ? stateOf('box') : null));
    const longRun = await api.start({ argv: ['bash', '-c', 'sleep 4; echo survived'], limitMs: 60_000 }, { host: 'box' });

    // The machine goes away: its sshd and the ssh session this host shares.
    await sshd.stop();
    const master = masterPid(sshd.ssh, controlPath(localDir, 'box')!);
    if (master !== null) process.kill(master, 'SIGTERM');
    const gone = await until('box disconnected', async () => ((await stateOf('box'))?.state === 'disconnected' ? stateOf('box') : null));
    expect(gone!.lastError).toBeTruthy();

    // Its runs cannot be reached, said so; the local host and its runs are as before.
    const unreachable = await refusal(api.get(longRun.id));
    expect(unreachable.status).toBe(503);
    expect(unreachable.message).toMatch(/Remote host box cannot be reached now/);
    expect((await stateOf('local'))!.state).toBe('connected');
    const local = await api.start({ argv: ['bash', '-c', 'echo here'] });
    expect(await api.wait(local.id)).toMatchObject({ verdict: 'completed', stdout: 'here\n' });
    const listed = await api.list({ output: 'none', hosts: 'all' });
    expect(listed.map((r) => r.id)).toContain(local.id);
    expect(listed.some((r) => r.host === 'box')).toBe(false);
    expect((await api.history({ host: '*' })).runs.map((r) => r.id)).toContain(local.id);

    // Back: nobody asks, the link comes back, and the run that went on there meanwhile ends as it would have.
    await sshd.restart();
    const again = await until('box connected again', async () => ((await stateOf('box'))?.state === 'connected' ? stateOf('box') : null));
    // One more connection: a client that looked before and after knows events may have been missed between.
    expect(again!.connections).toBe(before!.connections + 1);
    const result = await until('the remote run to be reachable', async () => api.wait(longRun.id, { timeoutMs: 15_000 }));
    expect(result).toMatchObject({ id: longRun.id, host: 'box', state: 'ended', verdict: 'completed', stdout: 'survived\n' });
  }, 120_000);
});
