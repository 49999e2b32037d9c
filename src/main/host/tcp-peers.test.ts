// Issue 18, item 8: half-open TCP connections from one source never lock the
// owner out of the web UI. A real host (startHost) on loopback TCP; 300 real
// sockets from 127.0.0.2 that send half a request head and hold on; the
// owner, from 127.0.0.1, with the token, must be answered every time.

import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { NodeTransport } from '../../client/transport';
import { startHost, type Host } from './host';

const hosts: Host[] = [];
const sockets: Socket[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await Promise.all(hosts.splice(0).map((h) => h.shutdown()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('half-open TCP connections from another source', () => {
  it('300 of them from 127.0.0.2: the owner from 127.0.0.1 is answered 20 times of 20 while they hold on', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wpeer-'));
    dirs.push(dir);
    // The default limits, but a header timeout long enough that it is not what lets the owner in.
    const host = await startHost({ stateDir: dir, webRoot: null, port: 0, history: false, tcpLimits: { headersTimeoutMs: 60_000 } });
    hosts.push(host);
    const port = host.tcp!.port;
    let open = 0;
    const opened: Promise<void>[] = [];
    for (let i = 0; i < 300; i++) {
      const socket = connect({ port, host: '127.0.0.1', localAddress: '127.0.0.2' });
      sockets.push(socket);
      socket.on('error', () => undefined);
      opened.push(
        new Promise((resolvePromise) => {
          socket.once('connect', () => {
            open += 1;
            socket.write('GET /api/v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n'); // never finished
            resolvePromise();
          });
          socket.once('close', () => resolvePromise());
        }),
      );
    }
    await Promise.all(opened);
    expect(open).toBeGreaterThan(0);
    const owner = new NodeTransport({ host: '127.0.0.1', port, token: host.tcp!.token }, { timeoutMs: 5000 });
    const statuses: (number | string)[] = [];
    for (let i = 0; i < 20; i++) {
      statuses.push(
        await owner.request('GET', '/api/v1/host').then(
          (reply) => reply.status,
          (error: Error) => error.message,
        ),
      );
    }
    owner.close();
    expect(statuses).toEqual(Array(20).fill(200));
    // The other source still holds some of its connections: the owner got in beside them, not after them.
    const stillOpen = sockets.filter((s) => !s.destroyed && s.readyState === 'open').length;
    expect(stillOpen).toBeGreaterThan(0);
  }, 60_000);
});
