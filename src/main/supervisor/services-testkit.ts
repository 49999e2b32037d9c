// For tests of services: the fixtures (test/fixtures/services), free ports,
// and whether a port takes connections now.

import { connect, createServer, type Server } from 'node:net';
import { resolve } from 'node:path';

export const SERVICE_FIXTURES = resolve(__dirname, '../../../test/fixtures/services');
export const fixture = (name: string) => resolve(SERVICE_FIXTURES, name);

/** A port nothing listens on now (the kernel's pick, closed again). */
export function freePort(): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolvePromise(port));
    });
  });
}

/** A listener of this process on `port` (0: any), for a test to hold a port. */
export function holdPort(port = 0): Promise<{ server: Server; port: number; close(): Promise<void> }> {
  return new Promise((resolvePromise, reject) => {
    const server = createServer((socket) => socket.destroy());
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const held = (server.address() as { port: number }).port;
      resolvePromise({ server, port: held, close: () => new Promise((r) => server.close(() => r())) });
    });
  });
}

/** Whether 127.0.0.1:port accepts a connection now (false: refused). */
export function accepts(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolvePromise) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolvePromise(true);
    });
    socket.once('error', () => resolvePromise(false));
  });
}

/** Polls `check` until it is true, or throws after `timeoutMs` saying what was waited for. */
export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 15_000, everyMs = 50): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** A page's body, fetched with node's fetch. */
export async function page(port: number, path = '/'): Promise<{ status: number; text: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, text: await res.text() };
}
