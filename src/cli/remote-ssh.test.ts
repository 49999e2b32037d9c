// Remote hosts over a real ssh server: Debian's sshd on 127.0.0.1 with keys
// made for the test (sshd-testkit.ts), and a second state dir standing for
// the other machine. Runs started here live in that machine's host and
// history; stop from here ends them there; a run survives its ssh link being
// killed, and wait finds its end once the link is back; list --all-hosts
// shows both hosts; a name or destination never becomes an ssh option.
// Skipped, with the reason printed, where sshd cannot run.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { execa, type ResultPromise } from 'execa';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controlPath } from '../client/remotes';
import type { RunResult } from '../shared/result';
import { YIELDED_STATUS } from './host-verbs';
import { masterPid, startSshd, type Sshd } from './sshd-testkit';
import { stopBackgroundHosts, WARDEN_BIN } from './testkit';
import { until as waitUntil } from '../../test/kit/until';

let sshd: Sshd | null = null;
let skip = '';
const localDir = mkdtempSync(join(tmpdir(), 'wlocal-'));

function warden(args: string[], env: Record<string, string> = {}): ResultPromise<{ reject: false }> {
  return execa(process.execPath, [WARDEN_BIN, ...args], {
    reject: false,
    env: { WARDEN_STATE_DIR: localDir, WARDEN_HOST_IDLE: '60s', WARDEN_SSH: sshd?.ssh ?? 'ssh', ...env },
    extendEnv: true,
    stdin: 'ignore',
    timeout: 60_000,
  }) as ResultPromise<{ reject: false }>;
}

/** The other machine's own view: its warden with its state dir, no ssh. */
function there(args: string[]) {
  return execa(process.execPath, [WARDEN_BIN, ...args], { reject: false, env: { WARDEN_STATE_DIR: sshd!.remoteStateDir }, extendEnv: true, stdin: 'ignore', timeout: 60_000 });
}

/** The run's processes: bash or sleep whose command line holds `marker` (the machine is the same one, so "there" is readable here; the warden client is not one). */
function processesWith(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (cmdline.includes(marker) && /^(bash|sleep)\0/.test(cmdline)) pids.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return pids.filter((pid) => pid !== process.pid);
}

async function until<T>(what: string, probe: () => T | undefined | null | false | Promise<T | undefined | null | false>): Promise<T> {
  return (await waitUntil(what, probe, { everyMs: 100 })) as T;
}

/** A `warden dial-stdio` of the remote state dir running there: a client's channel over ssh is open. */
function dialing(): boolean {
  return readdirSync('/proc').some((entry) => {
    try {
      return /^\d+$/.test(entry) && readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').includes('dial-stdio') && readFileSync(`/proc/${entry}/environ`, 'utf8').includes(sshd!.remoteStateDir);
    } catch {
      return false; // gone meanwhile
    }
  });
}

beforeAll(async () => {
  const started = await startSshd();
  if ('skip' in started) {
    skip = started.skip;
    console.log(`remote-ssh tests skipped: ${skip}`);
    return;
  }
  sshd = started;
  const added = await warden(['remote', 'add', 'box', sshd.url, '--warden', sshd.warden]);
  if (added.exitCode !== 0) throw new Error(`remote add failed: ${added.stderr}`);
}, 60_000);

afterAll(async () => {
  if (!sshd) return;
  // The shared ssh session first (it holds a session process of sshd), then sshd and both machines' hosts.
  const master = masterPid(sshd.ssh, controlPath(localDir, 'box')!);
  if (master !== null) process.kill(master, 'SIGTERM');
  await sshd.stop();
  await stopBackgroundHosts([sshd.remoteStateDir, localDir]);
  for (const dir of [sshd.dir, sshd.remoteStateDir, localDir]) rmSync(dir, { recursive: true, force: true });
}, 60_000);

const json = (text: string) => JSON.parse(text) as RunResult;

describe('remote hosts over ssh', () => {
  it('a run there: its result here, recorded in that machine\'s history and not in this one', async (context) => {
    if (!sshd) return context.skip(skip);
    const done = await warden(['--remote', 'box', 'run', '--json', '--', 'bash', '-c', 'echo "state=$WARDEN_STATE_DIR"; exit 3']);
    expect(done.stderr).toBe('');
    expect(done.exitCode).toBe(3);
    const result = json(done.stdout);
    // The background host there has the other machine's state dir in its environment.
    expect(result).toMatchObject({ state: 'ended', verdict: 'failed', exitCode: 3, stdout: `state=${sshd.remoteStateDir}\n` });

    const thereList = await there(['list', '--json']);
    expect((JSON.parse(thereList.stdout) as { id: string }[]).map((r) => r.id)).toContain(result.id);
    const hereList = await warden(['list', '--json']);
    expect((JSON.parse(hereList.stdout) as { id: string }[]).map((r) => r.id)).not.toContain(result.id);
    // show through the remote finds it; here it is unknown.
    expect(json((await warden(['--remote', 'box', 'show', result.id, '--json'])).stdout)).toMatchObject({ id: result.id, exitCode: 3 });
    expect((await warden(['show', result.id])).exitCode).toBe(125);
    // WARDEN_REMOTE says the same as --remote.
    const viaEnv = await warden(['show', result.id, '--json'], { WARDEN_REMOTE: 'box' });
    expect(json(viaEnv.stdout).id).toBe(result.id);
    // The session is shared: one master for the remote, in the state dir's private run dir.
    expect(masterPid(sshd.ssh, controlPath(localDir, 'box')!)).not.toBeNull();
  }, 60_000);

  it('live output for a person streams over the link', async (context) => {
    if (!sshd) return context.skip(skip);
    const done = await warden(['--remote', 'box', 'run', '--', 'bash', '-c', 'echo out; echo err >&2']);
    expect(done.exitCode).toBe(0);
    expect(done.stdout).toBe('out');
    expect(done.stderr).toMatch(/^err\nwarden: completed, exit 0/);
    const id = /\[run ([0-9a-f]+)\]/.exec(done.stderr)![1]!;
    expect((await there(['show', id, '--json'])).exitCode).toBe(0);
  }, 60_000);

  it('stop from here leaves nothing running there', async (context) => {
    if (!sshd) return context.skip(skip);
    const marker = `wrstop${process.pid}x${Date.now()}`;
    const started = await warden(['--remote', 'box', 'run', '--json', '--yield', '500ms', '--', 'bash', '-c', `sleep 300 & sleep 301; : ${marker}`]);
    expect(started.exitCode).toBe(YIELDED_STATUS);
    const id = json(started.stdout).id;
    await until('the run\'s processes', () => processesWith(marker).length > 0);
    expect(json((await there(['show', id, '--json'])).stdout).state).toBe('running');
    const stopped = await warden(['--remote', 'box', 'stop', id, '--json']);
    expect([130, 143, 137]).toContain(stopped.exitCode);
    expect(json(stopped.stdout)).toMatchObject({ id, state: 'ended', verdict: 'stopped' });
    expect(processesWith(marker)).toEqual([]);
    expect(processesWith('sleep 300').filter((pid) => readFileSync(`/proc/${pid}/environ`, 'utf8').includes(sshd!.remoteStateDir))).toEqual([]);
  }, 60_000);

  it('the ssh session killed mid-wait: the run goes on, and the same wait connects again and finds its end', async (context) => {
    if (!sshd) return context.skip(skip);
    // The run ends when the test says (a gate file), not after a time the steps below might outlast.
    const gate = join(localDir, 'mid-wait-gate');
    const started = await warden(['--remote', 'box', 'run', '--json', '--yield', '300ms', '--', 'bash', '-c', `echo before; until [ -e ${gate} ]; do sleep 0.05; done; echo after`]);
    expect(started.exitCode).toBe(YIELDED_STATUS);
    const id = json(started.stdout).id;
    await until('the run\'s client to be gone', () => !dialing());
    const waiting = warden(['--remote', 'box', 'wait', id, '--json', '--all-output']);
    // The wait is under way over the shared session (its channel reached the machine): kill that session.
    await until('the wait\'s channel to be open', () => dialing());
    const master = masterPid(sshd.ssh, controlPath(localDir, 'box')!);
    expect(master).not.toBeNull();
    process.kill(master!, 'SIGKILL');
    writeFileSync(gate, '');
    const done = await waiting;
    expect(done.stderr).toMatch(/^warden: the link to the remote host dropped \(.*ssh to box.*\); connecting again$/m);
    expect(done.exitCode).toBe(0);
    expect(json(done.stdout)).toMatchObject({ id, verdict: 'completed', stdout: 'before\nafter\n' });
    const now = masterPid(sshd.ssh, controlPath(localDir, 'box')!);
    expect(now).not.toBeNull();
    expect(now).not.toBe(master);
  }, 60_000);

  it('the machine unreachable: wait gives up with one line while the run goes on; once it is back, wait finds the end', async (context) => {
    if (!sshd) return context.skip(skip);
    // The run ends when the test says (a gate file): it must still be going when the wait gives up.
    const gate = join(localDir, 'unreachable-gate');
    const started = await warden(['--remote', 'box', 'run', '--json', '--yield', '300ms', '--', 'bash', '-c', `echo before; until [ -e ${gate} ]; do sleep 0.05; done; echo after`]);
    expect(started.exitCode).toBe(YIELDED_STATUS);
    const id = json(started.stdout).id;
    // sshd down and the session gone: no new connection can be made.
    await sshd.stop();
    const master = masterPid(sshd.ssh, controlPath(localDir, 'box')!);
    if (master !== null) process.kill(master, 'SIGKILL');
    try {
      const lost = await warden(['--remote', 'box', 'wait', id, '--json']);
      expect(lost.exitCode).toBe(125);
      expect(lost.stderr.split('\n').pop()).toMatch(/^warden: Cannot reach the remote host: ssh to box exited with status 255: .*Connection refused\. Its runs go on there; the same command connects again\.$/);
      // The run is still going there.
      expect(json((await there(['show', id, '--json'])).stdout).state).toBe('running');
    } finally {
      writeFileSync(gate, '');
      await sshd.restart();
    }
    const done = await warden(['--remote', 'box', 'wait', id, '--json', '--all-output']);
    expect(done.exitCode).toBe(0);
    expect(json(done.stdout)).toMatchObject({ id, verdict: 'completed', stdout: 'before\nafter\n' });
  }, 60_000);

  it('a run owned by its warden run is stopped there when that command is killed', async (context) => {
    if (!sshd) return context.skip(skip);
    const marker = `wrowned${process.pid}x${Date.now()}`;
    const client = warden(['--remote', 'box', 'run', '--', 'bash', '-c', `sleep 302; : ${marker}`]);
    await until('the run\'s processes', () => processesWith(marker).length > 0);
    client.kill('SIGKILL');
    await client;
    await until('the owned run stopped there', () => processesWith(marker).length === 0);
    const ended = async () => {
      const runs = JSON.parse((await there(['list', '--json'])).stdout) as { verdict: string | null; argv: string[] }[];
      return runs.find((r) => r.argv.join(' ').includes(marker))?.verdict;
    };
    expect(await until('the run there to end', ended)).toBe('stopped');
  }, 60_000);

  it('list --all-hosts: this machine\'s runs and the remote\'s, each with its host; a host that is down is named', async (context) => {
    if (!sshd) return context.skip(skip);
    const local = await warden(['run', '--json', '--', 'echo', 'here']);
    const remote = await warden(['--remote', 'box', 'run', '--json', '--', 'echo', 'there']);
    const localId = json(local.stdout).id;
    const remoteId = json(remote.stdout).id;
    const all = await warden(['list', '--all-hosts', '--json']);
    expect(all.exitCode).toBe(0);
    const runs = JSON.parse(all.stdout) as { id: string; host: string }[];
    expect(runs.find((r) => r.id === localId)?.host).toBe('local');
    expect(runs.find((r) => r.id === remoteId)?.host).toBe('box');
    const human = await warden(['list', '--all-hosts']);
    expect(human.stdout).toMatch(new RegExp(`^box +${remoteId} .* echo there$`, 'm'));
    expect(human.stdout).toMatch(new RegExp(`^local +${localId} .* echo here$`, 'm'));

    // A remote nobody answers for: named on stderr; the others are still listed.
    const closed = `ssh://${sshd.user}@127.0.0.1:1`;
    expect((await warden(['remote', 'add', 'down', closed])).exitCode).toBe(0);
    try {
      const partial = await warden(['list', '--all-hosts']);
      expect(partial.exitCode).toBe(0);
      expect(partial.stderr).toMatch(/host down is unreachable \(.*ssh to down exited with status 255: .*\)/);
      expect(partial.stdout).toMatch(new RegExp(`^box +${remoteId}`, 'm'));
    } finally {
      await warden(['remote', 'remove', 'down']);
    }
  }, 60_000);

  it('a name or destination is never an ssh option', async (context) => {
    if (!sshd) return context.skip(skip);
    const pwned = join(sshd.dir, 'pwned');
    const attempts = [
      ['remote', 'add', 'x', `ssh://-oProxyCommand=touch ${pwned}`],
      ['remote', 'add', 'x', `ssh://-oProxyCommand=touch${pwned}`],
      ['remote', 'add', 'x', `-oProxyCommand=touch ${pwned}`],
      ['remote', 'add', 'x', '--', `-oProxyCommand=touch ${pwned}`],
      ['remote', 'add', 'x', `ssh://-oProxyCommand=touch@127.0.0.1:${sshd.port}`],
      ['remote', 'add', '--', '-oProxyCommand=x', sshd.url],
      ['remote', 'add', '-oProxyCommand=x', sshd.url],
      ['remote', 'add', '../x', sshd.url],
      ['remote', 'add', 'x', sshd.url, '--warden', 'warden\n-oProxyCommand=x'],
      ['remote', 'add', 'x', '--command', `kubectl exec -i p -- warden dial-stdio; touch ${pwned}`],
    ];
    for (const args of attempts) {
      const refused = await warden(args);
      expect(refused.exitCode, args.join(' ')).toBe(125);
      expect(refused.stderr, args.join(' ')).toMatch(/^warden: [^\n]*$/);
    }
    expect((await warden(['remote', 'list', '--json'])).stdout).not.toMatch(/"x"/);
    // A remotes file edited by hand is held to the same checks when read.
    const file = join(localDir, 'remotes.json');
    const kept = readFileSync(file, 'utf8');
    try {
      writeFileSync(file, JSON.stringify({ remotes: [{ name: 'evil', ssh: `ssh://-oProxyCommand=touch${pwned}` }] }));
      const used = await warden(['--remote', 'evil', 'list']);
      expect(used.exitCode).toBe(125);
      expect(used.stderr).toMatch(/remotes\.json is not a remotes file Warden wrote/);
      // Even a host name ssh would take for an option goes after `--`: here a real connection attempt to it, never a ProxyCommand.
    } finally {
      writeFileSync(file, kept);
    }
    expect(existsSync(pwned)).toBe(false);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  }, 60_000);

  it('MCP: run with host runs there; wait, show and list allHosts follow it; warden --remote NAME mcp serves that host', async (context) => {
    if (!sshd) return context.skip(skip);
    const connect = async (args: string[]) => {
      const env: Record<string, string> = {};
      for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
      const transport = new StdioClientTransport({ command: process.execPath, args: [WARDEN_BIN, ...args], env: { ...env, WARDEN_STATE_DIR: localDir, WARDEN_SSH: sshd!.ssh, WARDEN_HOST_IDLE: '60s' }, stderr: 'pipe' });
      const client = new Client({ name: 'warden-remote-test', version: '0.0.0' });
      await client.connect(transport);
      return client;
    };
    const call = async (client: Client, name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 })) as CallToolResult & { structuredContent: Record<string, unknown> };
    const client = await connect(['mcp']);
    try {
      const ran = await call(client, 'run', { shell: 'echo "on $WARDEN_STATE_DIR"; sleep 1; echo done', host: 'box', yield: '200ms' });
      expect(ran.isError).toBeFalsy();
      const id = ran.structuredContent.id as string;
      expect(ran.structuredContent.state).toBe('running');
      // wait goes to the run's host without being told.
      const waited = await call(client, 'wait', { id });
      expect(waited.structuredContent).toMatchObject({ id, verdict: 'completed' });
      expect(String(waited.structuredContent.stdout)).toContain('done');
      expect(json((await there(['show', id, '--json'])).stdout).stdout).toBe(`on ${sshd.remoteStateDir}\ndone\n`);
      expect((await warden(['show', id])).exitCode).toBe(125);
      const all = await call(client, 'list', { allHosts: true });
      expect((all.structuredContent.runs as { id: string; host: string }[]).find((r) => r.id === id)?.host).toBe('box');
      expect(all.content[0]).toMatchObject({ type: 'text', text: expect.stringMatching(/^host local:/) });
      const unknown = await call(client, 'run', { argv: ['true'], host: 'nosuch' });
      expect(unknown.isError).toBe(true);
      expect(unknown.content[0]).toMatchObject({ text: expect.stringMatching(/^No remote host named "nosuch"/) });
    } finally {
      await client.close();
    }
    const served = await connect(['--remote', 'box', 'mcp']);
    try {
      const ran = await call(served, 'run', { argv: ['bash', '-c', 'echo "$WARDEN_STATE_DIR"'] });
      expect(ran.structuredContent).toMatchObject({ verdict: 'completed', stdout: `${sshd.remoteStateDir}\n` });
    } finally {
      await served.close();
    }
  }, 90_000);
});
