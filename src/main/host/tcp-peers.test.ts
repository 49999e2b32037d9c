// Issue 18, item 8: half-open TCP connections from one source never lock the
// owner out of the web UI. A real host (startHost) on loopback TCP; 300 real
// sockets from 127.0.0.2 that send half a request head and hold on; the
// owner, from 127.0.0.1, with the token, must be answered every time.

import { execa, type ResultPromise } from 'execa';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { NodeTransport } from '../../client/transport';
import { startHost, TCP_LIMITS, type Host } from './host';

/** Connections of user `uid` to 127.0.0.1:port that the other end has not closed (ESTABLISHED in /proc/net/tcp). */
function heldFrom(uid: number, port: number): number {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  return readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((f) => f.length > 7 && f[2] === `0100007F:${hexPort}` && f[3] === '01' && Number(f[7]) === uid).length;
}

const hosts: Host[] = [];
const sockets: Socket[] = [];
const dirs: string[] = [];
const floods: ResultPromise[] = [];

/** The owner (127.0.0.1, with the token) asks GET /host `times` times in a row: each answer's status, or why it failed. */
async function ownerAsks(host: Host, times: number): Promise<(number | string)[]> {
  const owner = new NodeTransport({ host: '127.0.0.1', port: host.tcp!.port, token: host.tcp!.token }, { timeoutMs: 5000 });
  const statuses: (number | string)[] = [];
  try {
    for (let i = 0; i < times; i++) {
      statuses.push(
        await owner.request('GET', '/api/v1/host').then(
          (reply) => reply.status,
          (error: Error) => error.message,
        ),
      );
    }
  } finally {
    owner.close();
  }
  return statuses;
}

afterEach(async () => {
  for (const child of floods.splice(0)) {
    child.kill('SIGKILL');
    await child;
  }
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
    const statuses = await ownerAsks(host, 20);
    expect(statuses).toEqual(Array(20).fill(200));
    // The other source still holds some of its connections: the owner got in beside them, not after them.
    const stillOpen = sockets.filter((s) => !s.destroyed && s.readyState === 'open').length;
    expect(stillOpen).toBeGreaterThan(0);
  }, 60_000);
});

/** 300 half-open connections from user nobody, ten from each of 30 loopback addresses (127.0.0.2-31): under every per-address bound. */
const FLOOD = `
import socket, sys, time
port = int(sys.argv[1])
held = []
for i in range(300):
    s = socket.socket()
    s.bind(('127.0.0.%d' % (2 + i % 30), 0))
    try:
        s.connect(('127.0.0.1', port))
        s.send(b'GET /api/v1/runs HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n')
        held.append(s)
    except OSError:
        pass
print('ready %d' % len(held), flush=True)
time.sleep(60)
`;

const canRunAsNobody = process.getuid?.() === 0 && existsSync('/usr/bin/python3');

describe('half-open TCP connections from another local user, spread over many addresses', () => {
  it.skipIf(!canRunAsNobody)('300 from nobody over 30 addresses: the owner is answered 20 times of 20 while they hold on', { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wpeer-'));
    dirs.push(dir);
    const host = await startHost({ stateDir: dir, webRoot: null, port: 0, history: false, tcpLimits: { headersTimeoutMs: 60_000 } });
    hosts.push(host);
    const port = host.tcp!.port;
    const flood = execa('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', '/usr/bin/python3', '-c', FLOOD, String(port)], { reject: false, cwd: '/' });
    floods.push(flood);
    await new Promise<void>((resolvePromise, reject) => {
      flood.stdout!.on('data', (c: Buffer) => c.toString().includes('ready') && resolvePromise());
      void flood.then((r) => reject(new Error(`the flood exited: ${r.stderr}`)));
    });
    const statuses = await ownerAsks(host, 20);
    expect(statuses, JSON.stringify(statuses)).toEqual(Array(20).fill(200));
    // What the host still holds of nobody's: its per-user share of pending connections, whatever the burst's timing.
    expect(heldFrom(65534, port)).toBeLessThanOrEqual(2 * TCP_LIMITS.perPeerPending);
  });
});
