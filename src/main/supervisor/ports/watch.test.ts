// The every-second look at live runs' ports: each run told its ports, and
// whether each answers HTTP asked once: at once for a service, only after
// the port has listened a while for any other run (a test's short-lived
// server never sees Warden's HEAD /).

import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { ListeningPort } from '../../../shared/result';
import { PortFinder } from './finder';
import { procSocketTable } from './socket-table';
import { PortWatch, type PortedRun } from './watch';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

function listen<T extends Server | HttpServer>(server: T): Promise<number> {
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port));
    closers.push(() => new Promise((r) => server.close(() => r())));
  });
}

function run(id: string, service: boolean): PortedRun & { told: ListeningPort[][] } {
  const told: ListeningPort[][] = [];
  return { id, ended: false, service, knownPids: () => [process.pid], setPorts: (ports) => (told.push(ports), true), told };
}

const until = async (what: string, check: () => boolean) => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 20));
  if (!check()) throw new Error(`timed out waiting until ${what}`);
};

describe('PortWatch', () => {
  it("asks a service's port at once whether it answers HTTP: yes for an HTTP server, no for a bare socket", async () => {
    let heads = 0;
    const http = createHttpServer((req, res) => {
      if (req.method === 'HEAD') heads++;
      res.end('ok');
    });
    const httpPort = await listen(http);
    const bare = createServer((socket) => socket.destroy());
    const barePort = await listen(bare);
    const service = run('svc', true);
    const watch = new PortWatch(new PortFinder(procSocketTable('/proc'), 0), () => [service], 1000, 60_000);
    watch.pass(true);
    await until('the HTTP answer is told', () => service.told.some((ports) => ports.some((p) => p.port === httpPort && p.http === true)));
    expect(heads).toBe(1);
    watch.pass(true);
    const last = service.told.at(-1)!;
    expect(last.find((p) => p.port === barePort)).toMatchObject({ port: barePort, http: false });
    expect(last.find((p) => p.port === httpPort)).toMatchObject({ http: true });
    watch.pass(true);
    expect(heads).toBe(1);
  });

  it("asks another run's port only once it has listened past the wait", async () => {
    let requests = 0;
    const http = createHttpServer((_req, res) => {
      requests++;
      res.end('ok');
    });
    const port = await listen(http);
    const plain = run('plain', false);
    const watch = new PortWatch(new PortFinder(procSocketTable('/proc'), 0), () => [plain], 1000, 300);
    watch.pass(true);
    await new Promise((r) => setTimeout(r, 100));
    watch.pass(true);
    expect(requests).toBe(0);
    expect(plain.told.at(-1)!.find((p) => p.port === port)!.http).toBeUndefined();
    await new Promise((r) => setTimeout(r, 300));
    watch.pass(true);
    await until('the HTTP answer is told', () => plain.told.some((ports) => ports.some((p) => p.port === port && p.http === true)));
    expect(requests).toBe(1);
  });

  it('forgets an ended run, and tells a live one nothing after', async () => {
    const port = await listen(createServer((socket) => socket.destroy()));
    const a = run('a', false);
    let runs: PortedRun[] = [a];
    const watch = new PortWatch(new PortFinder(procSocketTable('/proc'), 0), () => runs, 1000, 60_000);
    expect(watch.pass(true)).toBe(1);
    expect(a.told.at(-1)!.some((p) => p.port === port)).toBe(true);
    runs = [{ ...a, ended: true }];
    expect(watch.pass(true)).toBe(0);
  });
});
