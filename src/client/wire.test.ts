// The hand-written HTTP/1.1 of wire.ts against a real node:http server on a
// real unix socket: bodies by length and chunked, split anywhere; a kept-alive
// connection the server closed while idle (its keep-alive timeout) is
// replaced without the caller seeing it; nobody listening is ENOENT or
// ECONNREFUSED (what tells a client to start a host).

import { createServer, type Server } from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ChunkedDecoder, WireError, WirePool } from './wire';

const servers: Server[] = [];
const pools: WirePool[] = [];

async function serve(handler: Parameters<typeof createServer>[1], setup: (server: Server) => void = () => undefined): Promise<string> {
  const path = join(mkdtempSync(join(tmpdir(), 'wire-')), 's.sock');
  const server = createServer(handler);
  setup(server);
  servers.push(server);
  await new Promise<void>((r) => server.listen(path, r));
  return path;
}

function pool(socketPath: string): WirePool {
  const p = new WirePool({ socketPath });
  pools.push(p);
  return p;
}

afterEach(async () => {
  for (const p of pools.splice(0)) p.close();
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

describe('wire', () => {
  it('reads a body by Content-Length, a large one too, and sends a JSON body with its length', async () => {
    const big = 'x'.repeat(3_000_000);
    const path = await serve((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString();
        const text = req.url === '/big' ? big : JSON.stringify({ method: req.method, type: req.headers['content-type'], body, host: req.headers.host });
        res.writeHead(200, { 'Content-Length': Buffer.byteLength(text) });
        res.end(text);
      });
    });
    const p = pool(path);
    const echo = await p.request('POST', '/echo', JSON.stringify({ a: 'é' }), undefined);
    expect(JSON.parse(echo.body.toString())).toEqual({ method: 'POST', type: 'application/json', body: '{"a":"é"}', host: 'localhost' });
    const reply = await p.request('GET', '/big', undefined, undefined);
    expect(reply.status).toBe(200);
    expect(reply.body.length).toBe(big.length);
  });

  it('reads a chunked answer', async () => {
    const path = await serve((_req, res) => {
      res.writeHead(404, { 'Content-Type': 'application/json' });
      res.write('{"error":');
      setTimeout(() => res.end('"no such run"}'), 20);
    });
    const reply = await pool(path).request('GET', '/x', undefined, undefined);
    expect(reply.status).toBe(404);
    expect(JSON.parse(reply.body.toString())).toEqual({ error: 'no such run' });
  });

  it('decodes chunks however the bytes are split', () => {
    const wire = Buffer.from('4\r\nWiki\r\n5;ext=1\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\n\r\n');
    for (let step = 1; step <= wire.length; step++) {
      const decoder = new ChunkedDecoder();
      const out: Buffer[] = [];
      for (let at = 0; at < wire.length; at += step) out.push(...decoder.push(wire.subarray(at, at + step)));
      expect(Buffer.concat(out).toString()).toBe('Wikipedia in\r\n\r\nchunks.');
      expect(decoder.done).toBe(true);
    }
  });

  it('sends again on a fresh connection when a kept-alive one is closed before any answer', async () => {
    // As a host closing an idle connection just as the next request goes out:
    // the second request on a connection is dropped unanswered.
    let connections = 0;
    const served = new WeakMap<object, number>();
    const path = await serve(
      (req, res) => {
        const n = (served.get(req.socket) ?? 0) + 1;
        served.set(req.socket, n);
        if (n > 1) return void req.socket.destroy();
        res.end('ok');
      },
      (server) => server.on('connection', () => (connections += 1)),
    );
    const p = pool(path);
    expect((await p.request('GET', '/', undefined, undefined)).body.toString()).toBe('ok');
    expect((await p.request('POST', '/', '{}', undefined)).body.toString()).toBe('ok');
    expect(connections).toBe(2);
  });

  it('reuses one connection for requests one after another', async () => {
    let connections = 0;
    const path = await serve((_req, res) => res.end('ok'), (server) => server.on('connection', () => (connections += 1)));
    const p = pool(path);
    for (let i = 0; i < 5; i++) await p.request('GET', '/', undefined, undefined);
    expect(connections).toBe(1);
  });

  it('says ENOENT for no socket file and ECONNREFUSED for a file nobody listens on, before any answer', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wire-'));
    const missing = await pool(join(dir, 'none.sock')).request('GET', '/', undefined, undefined).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(WireError);
    expect(missing).toMatchObject({ code: 'ENOENT', answered: false });
    writeFileSync(join(dir, 'file.sock'), '');
    const refused = await pool(join(dir, 'file.sock')).request('GET', '/', undefined, undefined).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'ECONNREFUSED', answered: false });
  });

  it('a server that closes mid-answer is an error that says the answer had begun', async () => {
    const path = await serve((_req, res) => {
      res.writeHead(200, { 'Content-Length': '100' });
      res.write('partial');
      setTimeout(() => res.destroy(), 20);
    });
    const error = await pool(path).request('GET', '/', undefined, undefined).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'ECONNRESET', answered: true });
  });
});
