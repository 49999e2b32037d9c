// The app's host decision against real hosts in other processes (`warden
// serve --no-tcp`): it attaches to a running host and serves the same API
// from it (runs, waits, events), hosts the engine itself when none runs,
// waits out a host that is shutting down, gives up with one line on a host
// that holds the lock but does not answer, leaves the other host's runs alone
// when it closes, and takes over when the attached host dies.

import { execa, type ResultPromise } from 'execa';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../shared/events';
import type { RunSummary } from '../../shared/history';
import { connectToHost, socketPathFor } from '../../client/transport';
import { startOrAttach, type AppHost, type AppHostChange } from './app-host';
import { HostRunningError, lockName } from '../host/host';
import { serveFor } from '../../cli/testkit';
import { until as waitUntil } from '../../../test/kit/until';

const BIN = resolve(__dirname, '../../../bin/warden.mjs');

const servers: ResultPromise[] = [];
const apps: AppHost[] = [];

function stateDir(): string {
  return mkdtempSync(join(tmpdir(), 'wa-'));
}

const serve = (dir: string) => serveFor(dir, servers);

async function open(options: Parameters<typeof startOrAttach>[0]): Promise<AppHost> {
  const app = await startOrAttach(options);
  apps.push(app);
  return app;
}

async function until(what: string, condition: () => boolean | Promise<boolean>): Promise<void> {
  await waitUntil(what, condition);
}

afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
  for (const child of servers.splice(0)) {
    child.kill('SIGCONT');
    child.kill('SIGTERM');
    await child;
  }
});

describe('startOrAttach', () => {
  it('attaches to a running host: its runs, waits and events, and the run is in that host\'s list', async () => {
    const dir = stateDir();
    const { child: server } = await serve(dir);
    const app = await open({ stateDir: dir });
    expect(app.mode).toBe('attached');
    expect(app.host).toBeNull();
    expect(app.attachedTo?.pid).toBe(server.pid);
    const events: RunEvent[] = [];
    const unsubscribe = app.api.subscribe((event) => events.push(event));
    // The stream is open once a host's event reaches it; give it a moment by asking who answers.
    expect((await app.api.host()).pid).toBe(server.pid);
    const started = await app.api.start({ argv: ['bash', '-c', 'echo hi'] });
    const done = await app.api.wait(started.id);
    expect(done).toMatchObject({ id: started.id, verdict: 'completed', stdout: 'hi\n' });
    const other = await connectToHost(dir);
    expect((await other!.list()).map((r) => r.id)).toContain(started.id);
    await until('the ended event', () => events.some((e) => e.type === 'ended' && e.runId === started.id));
    const types = events.filter((e) => e.runId === started.id).map((e) => e.type);
    expect(types).toContain('output');
    expect(types.at(-1)).toBe('ended');
    unsubscribe();
    // Nothing of the other host's is this app's to stop.
    expect(await app.liveRuns()).toEqual([]);
  });

  it('closing an attached app leaves the other host\'s runs running', async () => {
    const dir = stateDir();
    await serve(dir);
    const app = await open({ stateDir: dir });
    const live = await app.api.start({ argv: ['sleep', '30'] });
    await app.close();
    const other = await connectToHost(dir);
    expect((await other!.get(live.id))?.state).toBe('running');
    await other!.stop(live.id, { force: true });
  });

  it('hosts the engine when no host runs: a CLI process sees this process\'s host and its run', async () => {
    const dir = stateDir();
    const app = await open({ stateDir: dir, host: { port: null, webRoot: null } });
    expect(app.mode).toBe('host');
    expect(app.host).not.toBeNull();
    const live = await app.api.start({ argv: ['sleep', '30'] });
    const other = await connectToHost(dir);
    expect((await other!.host()).pid).toBe(process.pid);
    const listed = await execa(process.execPath, [BIN, 'list', '--json'], { reject: false, env: { WARDEN_STATE_DIR: dir }, stdin: 'ignore' });
    expect(listed.exitCode).toBe(0);
    expect((JSON.parse(listed.stdout) as RunSummary[]).find((r) => r.id === live.id)?.state).toBe('running');
    expect((await app.liveRuns()).map((r) => r.id)).toEqual([live.id]);
    // Closing a hosting app stops its live runs and records them.
    await app.close();
    expect(existsSync(join(dir, 'run', 'warden.sock'))).toBe(false);
    const { openStore } = await import('../store');
    const store = openStore({ dir });
    try {
      expect(store.get(live.id)).toMatchObject({ verdict: 'stopped', stop: { reason: 'shutdown' } });
    } finally {
      store.close();
    }
  });

  it('waits out a host that is shutting down, then hosts', async () => {
    const dir = stateDir();
    const { child: server } = await serve(dir);
    const other = await connectToHost(dir);
    // A run that ignores SIGINT and SIGTERM keeps that host's shutdown going until the grace's SIGKILL.
    const stubborn = await other!.start({ argv: ['bash', '-c', "trap '' INT TERM; echo trapped; sleep 60"] });
    // Its traps are set only once bash has started: a SIGINT before that would end it at once.
    await until('the run to set its traps', async () => (await other!.get(stubborn.id))?.stdout.includes('trapped') === true);
    // Not server.kill: execa would follow with SIGKILL after 5 s, before that host records its run.
    process.kill(server.pid!, 'SIGTERM');
    await until('the host to stop taking runs', async () => (await other!.host().catch(() => null))?.accepting === false);
    const app = await open({ stateDir: dir, host: { port: null, webRoot: null } });
    expect(app.mode).toBe('host');
    await server;
    expect(await app.api.get(stubborn.id)).toMatchObject({ verdict: 'stopped', stop: { reason: 'shutdown', endedBy: 'kill' } });
  });

  it('gives up with one line when a host holds the lock but does not answer', async () => {
    const dir = stateDir();
    const { child: server } = await serve(dir);
    server.kill('SIGSTOP');
    const attempt = startOrAttach({ stateDir: dir, retryForMs: 500, probeTimeoutMs: 500 });
    await expect(attempt).rejects.toBeInstanceOf(HostRunningError);
    await expect(attempt).rejects.toThrow(/does not answer/);
  });

  it('takes over when the attached host dies: the same api then answers from this process, the dead host\'s run is lost', async () => {
    const dir = stateDir();
    const { child: server } = await serve(dir);
    const changes: AppHostChange[] = [];
    const app = await open({ stateDir: dir, host: { port: null, webRoot: null }, onChange: (change) => changes.push(change) });
    expect(app.mode).toBe('attached');
    const events: RunEvent[] = [];
    app.api.subscribe((event) => events.push(event));
    const doomed = await app.api.start({ argv: ['sleep', '30'] });
    await until('the run\'s started event', () => events.some((e) => e.type === 'started' && e.runId === doomed.id));
    server.kill('SIGKILL');
    await server;
    await until('the takeover', () => changes.length > 0);
    expect(changes[0]).toMatchObject({ kind: 'took-over', from: { pid: server.pid }, lostRuns: [doomed.id] });
    expect(app.mode).toBe('host');
    expect((await app.api.host()).pid).toBe(process.pid);
    expect(await app.api.get(doomed.id)).toMatchObject({ verdict: 'lost' });
    // The subscription made before the takeover gets this host's events.
    const next = await app.api.start({ argv: ['bash', '-c', 'echo after'] });
    expect((await app.api.wait(next.id)).stdout).toBe('after\n');
    await until('the new host\'s ended event', () => events.some((e) => e.type === 'ended' && e.runId === next.id));
    // And the CLI finds this process as the host.
    expect((await (await connectToHost(dir))!.host()).pid).toBe(process.pid);
  });

  it('takes over when the attached host is stopped with SIGTERM', async () => {
    const dir = stateDir();
    const { child: server } = await serve(dir);
    const changes: AppHostChange[] = [];
    const app = await open({ stateDir: dir, host: { port: null, webRoot: null }, onChange: (change) => changes.push(change) });
    app.api.subscribe(() => undefined);
    server.kill('SIGTERM');
    await server;
    await until('the takeover', () => changes.length > 0);
    expect(changes[0]).toMatchObject({ kind: 'took-over', lostRuns: [] });
    expect(app.mode).toBe('host');
  });

  it.each([
    ['reconnect() (the Retry button) hosts at once', true],
    ['hosting is tried again by itself a few seconds later', false],
  ])('reports lost when the attached host dies but another process keeps the lock; once it is free, %s', async (_name, retry) => {
    // A stand-in for a host that stops answering but keeps the lock: the lock
    // (an abstract socket named as host.ts names it) and a minimal control API, in this
    // process (the pid it gives must be the one holding the socket: clients check).
    const dir = stateDir();
    const lock = createNetServer((socket) => socket.destroy());
    await new Promise<void>((r) => lock.listen(lockName(dir), r));
    const info = { hostId: 'feedfacecafe', pid: process.pid, version: 'test', stateDir: dir, startedAt: new Date().toISOString(), accepting: true, history: false, port: null };
    const fake = createHttpServer((req, res) => {
      if (req.url?.startsWith('/api/v1/events')) {
        res.writeHead(200, { 'Content-Type': 'text/event-stream' });
        res.write(': open\n\n');
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(req.url === '/api/v1/host' ? info : []));
    });
    mkdirSync(join(dir, 'run'), { recursive: true, mode: 0o700 });
    await new Promise<void>((r) => fake.listen(socketPathFor(dir), r));
    const changes: AppHostChange[] = [];
    try {
      const app = await open({ stateDir: dir, host: { port: null, webRoot: null }, retryForMs: 300, probeTimeoutMs: 500, onChange: (change) => changes.push(change) });
      expect(app.attachedTo?.hostId).toBe('feedfacecafe');
      fake.close();
      fake.closeAllConnections();
      rmSync(socketPathFor(dir), { force: true });
      await until('the lost report', () => changes.length > 0);
      expect(changes[0]).toMatchObject({ kind: 'lost', from: { hostId: 'feedfacecafe' } });
      expect((changes[0] as Extract<AppHostChange, { kind: 'lost' }>).error.message).toMatch(/does not answer/);
      expect(app.mode).toBe('attached');
      await new Promise<void>((r) => lock.close(() => r()));
      if (retry) await app.reconnect();
      else await until('the takeover', () => changes.length > 1);
      expect(changes).toHaveLength(2);
      expect(changes.at(-1)).toMatchObject({ kind: 'took-over', from: { hostId: 'feedfacecafe' } });
      expect(app.mode).toBe('host');
      expect((await app.api.host()).pid).toBe(process.pid);
    } finally {
      fake.close();
      lock.close();
    }
  });
});
