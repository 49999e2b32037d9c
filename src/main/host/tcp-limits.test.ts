// The loopback TCP listener, which every local user can reach, under idle
// connections that never send a request (the shape of a descriptor-exhaustion
// attack): connections past the limit are closed as they come, idle ones are
// closed once the header timeout passes, and meanwhile the unix socket API
// answers every call. Real sockets; the limits are lowered for the test only.

import { connect, type Socket } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpWardenApi } from '../../shared/http-api';
import { NodeTransport } from '../../client/transport';
import { startHost, type Host } from './host';

const hosts: Host[] = [];
const sockets: Socket[] = [];

afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await Promise.all(hosts.splice(0).map((h) => h.shutdown()));
});

describe('the TCP listener under idle connections', () => {
  it('keeps at most its limit, closes idle ones after the header timeout, and the unix socket answers throughout', async () => {
    const host = await startHost({ stateDir: mkdtempSync(join(tmpdir(), 'wt-')), webRoot: null, port: 0, tcpLimits: { maxConnections: 20, headersTimeoutMs: 500 } });
    hosts.push(host);
    const api = new HttpWardenApi(new NodeTransport({ socketPath: host.socketPath }));
    let closed = 0;
    const opened: Promise<void>[] = [];
    for (let i = 0; i < 60; i++) {
      const socket = connect(host.tcp!.port, '127.0.0.1');
      sockets.push(socket);
      socket.on('error', () => undefined);
      opened.push(new Promise((r) => socket.once('close', () => ((closed += 1), r()))));
    }
    // While they hang there, the unix socket serves a real run.
    const started = await api.start({ argv: ['bash', '-c', 'echo through-the-socket'] });
    expect((await api.wait(started.id)).stdout).toBe('through-the-socket\n');
    // Every one of them is closed by the host: the extra ones at once, the rest at the header timeout.
    await Promise.all(opened);
    expect(closed).toBe(60);
    // And the listener takes a proper request again.
    const reply = await new NodeTransport({ host: '127.0.0.1', port: host.tcp!.port, token: host.tcp!.token }).request('GET', '/api/v1/host');
    expect(reply.status).toBe(200);
  });
});
