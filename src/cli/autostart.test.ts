// The host that is always there: warden commands start a background host
// when none runs for the state dir, racing clients end up with one, it idles
// out by itself, --embedded starts none, and a run belongs to the warden run
// that started it (SIGKILL of that client stops it) unless it was yielded.
// Real processes throughout; every host a test starts is gone after it.

import { execa, type ResultPromise } from 'execa';
import { chmodSync, chownSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { connectToHost, socketPathFor } from '../client/transport';
import { cannotRunAs } from '../main/store/store-testkit';
import type { RunResult } from '../shared/result';
import { YIELDED_STATUS } from './host-verbs';
import { backgroundHostPids, stopBackgroundHosts } from './testkit';
import { until as waitUntil } from '../../test/kit/until';

const BIN = resolve(__dirname, '../../bin/warden.mjs');
const NOBODY = 65534;
const dirs: string[] = [];

function stateDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'wa-'));
  dirs.push(dir);
  return dir;
}

function warden(dir: string, args: string[], env: Record<string, string> = {}): ResultPromise<{ reject: false }> {
  return execa(process.execPath, [BIN, ...args], { reject: false, env: { WARDEN_STATE_DIR: dir, WARDEN_HOST_IDLE: '60s', ...env }, extendEnv: true, stdin: 'ignore', timeout: 60_000 }) as ResultPromise<{ reject: false }>;
}

const hostPids = backgroundHostPids;

async function until<T>(what: string, probe: () => Promise<T | undefined | null | false> | T | undefined | null | false): Promise<T> {
  return (await waitUntil(what, probe, { everyMs: 100 })) as T;
}

// No host outlives its test: SIGTERM (live runs stopped and recorded), then wait for the exit.
afterEach(() => stopBackgroundHosts(dirs.splice(0)));

const json = (text: string) => JSON.parse(text) as RunResult;

describe('a host that is always there', () => {
  it('--yield with no host started by hand: a background host takes the run, and wait finishes it', async () => {
    const dir = stateDir();
    const first = await warden(dir, ['run', '--json', '--yield', '1s', '--', 'bash', '-c', 'echo first; sleep 2.5; echo second']);
    expect(first.exitCode).toBe(YIELDED_STATUS);
    const running = json(first.stdout);
    expect(running).toMatchObject({ state: 'running', stdout: 'first\n' });
    // Said in host.log, not on a stderr that is no terminal (where a model may read it).
    expect(first.stderr).not.toMatch(/starting a background/);
    expect(hostPids(dir)).toHaveLength(1);
    expect(readFileSync(join(dir, 'host.log'), 'utf8')).toMatch(/starting a background host[^]*control socket/);

    const done = await warden(dir, ['wait', '--json', running.id]);
    expect(done.exitCode).toBe(0);
    expect(json(done.stdout)).toMatchObject({ id: running.id, state: 'ended', verdict: 'completed', stdout: 'second\n' });
    // The second command found the host: it started none.
    expect(done.stderr).not.toMatch(/starting a background/);
  });

  it('clients starting at once end up with one host, and all their runs are in it', async () => {
    const dir = stateDir();
    const clients = await Promise.all([0, 1, 2, 3].map((i) => warden(dir, ['run', '--json', '--', 'bash', '-c', `echo client-${i}`])));
    for (const [i, client] of clients.entries()) {
      expect(client.exitCode).toBe(0);
      expect(json(client.stdout).stdout).toBe(`client-${i}\n`);
    }
    const pids = await until('one host', () => {
      const now = hostPids(dir);
      return now.length === 1 ? now : null;
    });
    const api = await connectToHost(dir);
    expect((await api!.host()).pid).toBe(pids[0]);
    const history = await api!.history({ limit: 10 });
    expect(history.runs.map((r) => r.id).sort()).toEqual(clients.map((c) => json(c.stdout).id).sort());
    const log = readFileSync(join(dir, 'host.log'), 'utf8');
    expect(log.match(/control socket/g)).toHaveLength(1);
  });

  it('exits by itself after its idle time with no live run and no client', async () => {
    const dir = stateDir();
    const env = { WARDEN_HOST_IDLE: '1s' };
    // A yield far above the run's time: the run completes through the host, however slow the machine.
    const started = await warden(dir, ['run', '--json', '--yield', '600s', '--', 'bash', '-c', 'sleep 2; echo late'], env);
    expect(started.exitCode).toBe(0);
    // A host took it (it may be idling out already: the log says it started, not a look at a pid).
    expect(readFileSync(join(dir, 'host.log'), 'utf8')).toMatch(/starting a background host/);
    await until('the idle host to exit', () => hostPids(dir).length === 0);
    expect(existsSync(socketPathFor(dir))).toBe(false);
    expect(readFileSync(join(dir, 'host.log'), 'utf8')).toMatch(/no live run and no client for 1 s: exiting/);
    // What it ran is in the history, read without a host.
    const listed = await warden(dir, ['list', '--json']);
    expect(JSON.parse(listed.stdout)).toMatchObject([{ verdict: 'completed' }]);
  });

  it('a live run keeps an idle-exit host alive past its idle time', async () => {
    const dir = stateDir();
    const env = { WARDEN_HOST_IDLE: '1s' };
    // The run lives until the test has looked (a gate file), past the host's idle time (at least 2.5 s pass: a bound from below).
    const gate = join(dir, 'end-now');
    const yielded = await warden(dir, ['run', '--json', '--yield', '200ms', '--', 'bash', '-c', 'until [ -e "$1" ]; do sleep 0.05; done; echo kept', 'kept', gate], env);
    expect(yielded.exitCode).toBe(YIELDED_STATUS);
    await new Promise((r) => setTimeout(r, 2500));
    expect(hostPids(dir)).toHaveLength(1);
    writeFileSync(gate, '');
    const done = await warden(dir, ['wait', '--json', json(yielded.stdout).id], env);
    expect(json(done.stdout)).toMatchObject({ verdict: 'completed', stdout: 'kept\n' });
  });

  it('--embedded and WARDEN_EMBEDDED=1 run in the command and start no host', async () => {
    const dir = stateDir();
    const flag = await warden(dir, ['run', '--embedded', '--json', '--', 'bash', '-c', 'echo here']);
    const env = await warden(dir, ['run', '--json', '--', 'bash', '-c', 'echo here too'], { WARDEN_EMBEDDED: '1' });
    expect(json(flag.stdout)).toMatchObject({ verdict: 'completed', stdout: 'here\n' });
    expect(json(env.stdout)).toMatchObject({ verdict: 'completed', stdout: 'here too\n' });
    expect(hostPids(dir)).toEqual([]);
    expect(existsSync(join(dir, 'host.log'))).toBe(false);
    expect(await connectToHost(dir)).toBeNull();
    const refused = await warden(dir, ['run', '--embedded', '--yield', '1s', '--', 'true']);
    expect(refused.exitCode).toBe(125);
    expect(refused.stderr).toMatch(/^warden: --yield needs the host/);
  });

  it('a run belongs to its warden run: SIGKILL of that client stops it, and the reason is recorded', async () => {
    const dir = stateDir();
    const client = warden(dir, ['run', '--json', '--', 'bash', '-c', 'echo started; sleep 60']);
    const api = await until('the host', () => connectToHost(dir));
    const live = await until('the run to be live', async () => (await api.list()).find((r) => r.state === 'running' && r.stdout.includes('started')));
    client.kill('SIGKILL');
    await client;
    const result = await api.wait(live.id, { timeoutMs: 30_000 });
    expect(result).toMatchObject({ state: 'ended', verdict: 'stopped', stop: { reason: 'owner' } });
    expect(result.notes.join(' ')).toMatch(/client .* went away before the end/);
    expect(result.notes.join(' ')).not.toMatch(/on request/);
    // And the history says so too.
    const stored = await warden(dir, ['show', '--json', live.id]);
    expect(json(stored.stdout).notes.join(' ')).toMatch(/went away before the end/);
  });

  it('a yielded run belongs to the host: once the client has yielded, the run goes on to its end without it', async () => {
    // Before its first yield the run is the client's too (a SIGKILL to it stops the run: issue 27); after it, the host's.
    const dir = stateDir();
    const gates = mkdtempSync(join(tmpdir(), 'wa-gate-'));
    dirs.push(gates);
    const gate = join(gates, 'go');
    const client = await warden(dir, ['run', '--json', '--yield', '0s', '--', 'bash', '-c', 'echo started; until [ -e "$1" ]; do sleep 0.05; done; echo finished', 'gate', gate]);
    expect(client.exitCode).toBe(75);
    const id = json(client.stdout).id;
    writeFileSync(gate, '');
    const api = await until('the host', () => connectToHost(dir));
    const result = await api.wait(id, { timeoutMs: 60_000 });
    expect(result).toMatchObject({ state: 'ended', verdict: 'completed', stdout: 'started\nfinished\n' });
  });

  it('a run through the host gets the working directory and environment of the warden run that asked, not the host\'s', async () => {
    const dir = stateDir();
    // The host is started by one client, with its own environment and directory...
    const first = await execa(process.execPath, [BIN, 'run', '--json', '--', 'true'], { reject: false, cwd: tmpdir(), env: { WARDEN_STATE_DIR: dir, WARDEN_AT_HOST_START: 'host-only' } });
    expect(first.exitCode).toBe(0);
    // ...and a second client elsewhere, with another, runs a relative script.
    const work = mkdtempSync(join(tmpdir(), 'wa-cwd-'));
    dirs.push(work);
    writeFileSync(join(work, 'show.sh'), '#!/bin/sh\necho "pwd=$(pwd) at-start=${WARDEN_AT_HOST_START:-unset} mine=$WARDEN_MINE"\n', { mode: 0o755 });
    const second = await execa(process.execPath, [BIN, 'run', '--json', '--', './show.sh'], { reject: false, cwd: work, env: { WARDEN_STATE_DIR: dir, WARDEN_MINE: 'client' }, extendEnv: true });
    expect(second.stderr).not.toMatch(/starting a background/);
    expect(json(second.stdout)).toMatchObject({ verdict: 'completed', stdout: `pwd=${work} at-start=unset mine=client\n`, cwd: work });
  });

  it('warden serve next to a background host says what that host is and how to replace it', async () => {
    const dir = stateDir();
    expect((await warden(dir, ['run', '--json', '--', 'true'])).exitCode).toBe(0);
    const [pid] = hostPids(dir);
    const serve = await warden(dir, ['serve', '--port', '0']);
    expect(serve.exitCode).toBe(125);
    expect(serve.stderr.trim()).toBe(
      `warden: a background Warden host (pid ${pid}, started by a warden command; it exits after 60 s with nothing to do) already serves ${dir} without the web UI. To serve it here, stop that one first (kill ${pid}: its live runs are stopped and recorded), then run warden serve again.`,
    );
  });

  it('wait, stop and extend of an id the host does not hold say so in one line', async () => {
    const dir = stateDir();
    for (const args of [['wait', 'abcdef123456'], ['stop', 'abcdef123456'], ['extend', 'abcdef123456', '5s']]) {
      const result = await warden(dir, args);
      expect(result.exitCode).toBe(125);
      expect(result.stderr.trim().split('\n').at(-1)).toBe('warden: No run with id "abcdef123456" (see warden list).');
    }
  });
});

describe('a host that cannot start', () => {
  // Each of these waited the client's whole 10 s and then said only "did not answer".
  it('one that stops before it answers is reported with its own reason, not as a host that did not answer', async () => {
    const dir = stateDir();
    writeFileSync(join(dir, 'run'), ''); // a file where the host's run directory belongs
    const result = await warden(dir, ['run', '--', 'echo', 'hi']);
    expect(result.exitCode).toBe(125);
    expect(result.stdout).toBe('');
    const last = result.stderr.trim().split('\n').at(-1)!;
    expect(last).toMatch(new RegExp(`^warden: The Warden host started for ${dir} exited \\(status 125\\) before it answered: Cannot make the host's directory ${dir}/run \\(ENOTDIR\\).*; see ${dir}/host\\.log\\.$`));
    expect(result.stderr).not.toMatch(/did not answer|Lost the Warden host/);
  });

  it('a WARDEN_HOST_IDLE that is no duration is refused in one line that names it', async () => {
    const dir = stateDir();
    const result = await warden(dir, ['run', '--', 'echo', 'hi'], { WARDEN_HOST_IDLE: '10 minutes' });
    expect(result.exitCode).toBe(125);
    expect(result.stderr.trim()).toBe('warden: WARDEN_HOST_IDLE takes a duration such as 30s or 10m, not "10 minutes".');
    expect(hostPids(dir)).toEqual([]);
  });

  it('a Node this user may not run (root\'s, in a private directory) is named with the error', async (context) => {
    const reason = cannotRunAs(NOBODY, BIN);
    if (reason) {
      console.log(`skipped: ${reason}`);
      context.skip();
    }
    // setpriv still holds root's capabilities when it starts this Node; nobody's own spawn of it is refused.
    const privateDir = mkdtempSync(join(tmpdir(), 'wa-node-'));
    chmodSync(privateDir, 0o700);
    const node = join(privateDir, 'node');
    copyFileSync(process.execPath, node);
    chmodSync(node, 0o755);
    const base = mkdtempSync(join(tmpdir(), 'wa-nobody-'));
    chmodSync(base, 0o755);
    const dir = join(base, 'state');
    mkdirSync(dir, { mode: 0o700 });
    chownSync(dir, NOBODY, NOBODY);
    dirs.push(dir);
    try {
      const result = await execa('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', node, BIN, 'run', '--', 'echo', 'hi'], {
        reject: false,
        cwd: '/',
        env: { WARDEN_STATE_DIR: dir, WARDEN_HOST_IDLE: '20s' },
        stdin: 'ignore',
        timeout: 60_000,
      });
      expect(result.exitCode).toBe(125);
      expect(result.stderr.trim().split('\n').at(-1)).toBe(`warden: Cannot start a Warden host: ${node} could not be run (EACCES).`);
    } finally {
      rmSync(privateDir, { recursive: true, force: true });
      rmSync(base, { recursive: true, force: true });
    }
  });
});
