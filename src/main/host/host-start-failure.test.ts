// A start that fails part way closes what it had opened, with the same close
// sequence as a shutdown (host.ts closeHost): the lock is free for the next
// host, the control socket it made is gone, the token it wrote is gone, and
// what it did not make (a directory planted at the socket's or the token's
// path) is left alone. Real listeners, a real port held by another server.

import { existsSync, mkdirSync, mkdtempSync, rmdirSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpWardenApi } from '../../shared/http-api';
import { NodeTransport } from '../../client/transport';
import { HostError, runDirOf, startHost, tokenPathOf, type Host } from './host';

const hosts: Host[] = [];
const holders: Server[] = [];

afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.shutdown()));
  for (const server of holders.splice(0)) server.close();
});

function stateDir(): string {
  return mkdtempSync(join(tmpdir(), 'whf-'));
}

/** A host on the same state dir starts and answers: the failed one left the lock free. */
async function nextHostServes(dir: string): Promise<void> {
  const next = await startHost({ stateDir: dir, webRoot: null });
  hosts.push(next);
  const api = new HttpWardenApi(new NodeTransport({ socketPath: next.socketPath }));
  expect((await api.host()).hostId).toBe(next.supervisor.hostId);
}

/** A port on 127.0.0.1 another server holds. */
async function heldPort(): Promise<number> {
  const server = createServer();
  holders.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as { port: number }).port;
}

describe('a host whose start fails', () => {
  it('on a TCP port in use: says so, removes its socket and its token, and frees the lock', async () => {
    const dir = stateDir();
    const port = await heldPort();
    const start = startHost({ stateDir: dir, webRoot: null, port });
    await expect(start).rejects.toBeInstanceOf(HostError);
    await expect(start).rejects.toThrow(`Port ${port} on 127.0.0.1 is in use; pick another with --port (0 for any free port).`);
    expect(existsSync(join(runDirOf(dir), 'warden.sock'))).toBe(false);
    expect(existsSync(tokenPathOf(dir))).toBe(false);
    await nextHostServes(dir);
  });

  it('on a token it cannot write: says so, leaves what is at the token path, removes its socket, and frees the lock', async () => {
    const dir = stateDir();
    mkdirSync(tokenPathOf(dir), { recursive: true, mode: 0o700 });
    const start = startHost({ stateDir: dir, webRoot: null, port: 0 });
    await expect(start).rejects.toThrow(/^Cannot write the TCP token: /);
    expect(statSync(tokenPathOf(dir)).isDirectory()).toBe(true);
    expect(existsSync(join(runDirOf(dir), 'warden.sock'))).toBe(false);
    await nextHostServes(dir);
  });

  it('on a socket path it cannot take: says so, leaves what is there, and frees the lock', async () => {
    const dir = stateDir();
    const planted = join(runDirOf(dir), 'warden.sock');
    mkdirSync(planted, { recursive: true, mode: 0o700 });
    await expect(startHost({ stateDir: dir, webRoot: null })).rejects.toThrow(`Cannot listen on ${planted}: `);
    expect(statSync(planted).isDirectory()).toBe(true);
    rmdirSync(planted);
    await nextHostServes(dir);
  });

  it('before its socket (an engine that cannot start): frees the lock', async () => {
    const dir = stateDir();
    await expect(startHost({ stateDir: dir, webRoot: null, supervisor: { hostId: 'not a host id' } })).rejects.toThrow(/host id/);
    expect(existsSync(join(runDirOf(dir), 'warden.sock'))).toBe(false);
    await nextHostServes(dir);
  });
});
