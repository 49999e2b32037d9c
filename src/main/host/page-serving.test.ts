// The web-mode page as the host serves it over loopback TCP (a real host,
// raw node:http requests): the page names the API answers its first view
// needs as preloads, each a route the host answers; the build's content-named
// assets are cached for good, the page never.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { gunzipSync } from 'node:zlib';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIRST_LOAD_PATHS } from '../../shared/http-api';
import { startHost, type Host } from './host';

let dir: string;
let webRoot: string;
let host: Host;
let tcp: NonNullable<Host['tcp']>;

/** Compressible, as a real bundle is. */
const SCRIPT = Array.from({ length: 2000 }, (_, i) => `export const value${i} = ${i};\n`).join('');

beforeAll(async () => {
  // Short: <dir>/s/run/warden.sock must fit in a unix socket path.
  dir = mkdtempSync(join(tmpdir(), 'wpg-'));
  webRoot = join(dir, 'web');
  mkdirSync(join(webRoot, 'assets'), { recursive: true });
  writeFileSync(join(webRoot, 'index.html'), '<!doctype html><title>page</title>');
  writeFileSync(join(webRoot, 'assets', 'index-B7YFlXlW.js'), SCRIPT);
  writeFileSync(join(webRoot, 'assets', 'style-y9t2P9c_.css'), 'body{}\n');
  writeFileSync(join(webRoot, 'robots.txt'), 'User-agent: *\n');
  host = await startHost({ stateDir: join(dir, 's'), port: 0, webRoot, history: false });
  tcp = host.tcp!;
});

afterAll(async () => {
  await host?.shutdown();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function get(path: string, extra: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string; raw: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port: tcp.port, path, headers: { Host: `127.0.0.1:${tcp.port}`, Authorization: `Bearer ${tcp.token}`, Accept: 'text/html', ...extra }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const raw = Buffer.concat(chunks);
        resolve({ status: res.statusCode!, headers: res.headers, body: raw.toString('utf8'), raw });
      });
      res.on('error', reject);
    });
    req.setTimeout(15_000, () => req.destroy(new Error(`no answer to GET ${path}`)));
    req.on('error', reject);
  });
}

/** The targets of a Link header's preloads, with their parameters. */
function preloads(link: string | undefined): { target: string; params: string[] }[] {
  return (link ?? '')
    .split(/,\s*(?=<)/)
    .filter(Boolean)
    .map((part) => {
      const [target, ...params] = part.split(';').map((s) => s.trim());
      return { target: target!.replace(/^<|>$/g, ''), params };
    });
}

describe('the web page', () => {
  it.each(['/', '/index.html', '/runs/abc123'])('GET %s names the first view’s API answers as fetch preloads, each one the host answers', async (path) => {
    const page = await get(path);
    expect(page.status).toBe(200);
    const named = preloads(page.headers.link as string | undefined);
    expect(named.map((p) => p.target)).toEqual([...FIRST_LOAD_PATHS]);
    for (const { target, params } of named) {
      // as=fetch with crossorigin: the mode and credentials of the app's fetch(), or the browser would not reuse the answer.
      expect(params).toEqual(expect.arrayContaining(['rel=preload', 'as=fetch', 'crossorigin']));
      const answer = await get(target);
      expect(answer.status, `${target}: ${answer.body}`).toBe(200);
      expect(answer.headers['content-type']).toMatch(/^application\/json/);
    }
  });

  it('the content-named scripts and styles are cached for good; the page never, other files an hour; only the page names preloads', async () => {
    const page = await get('/');
    expect(page.headers['cache-control']).toBe('no-store');
    for (const asset of ['/assets/index-B7YFlXlW.js', '/assets/style-y9t2P9c_.css']) {
      const reply = await get(asset);
      expect(reply.status).toBe(200);
      expect(reply.headers['cache-control']).toBe('max-age=31536000, immutable');
      expect(reply.headers.link).toBeUndefined();
    }
    const other = await get('/robots.txt');
    expect(other.status).toBe(200);
    expect(other.headers['cache-control']).toBe('max-age=3600');
    expect(other.headers.link).toBeUndefined();
  });

  it('a content-named script goes gzipped to a browser that takes gzip, whole to one that does not, and new once rebuilt', async () => {
    const path = '/assets/index-B7YFlXlW.js';
    for (let i = 0; i < 2; i++) {
      // Twice: read from disk, then from memory.
      const packed = await get(path, { 'Accept-Encoding': 'gzip, deflate, br' });
      expect(packed.headers['content-encoding']).toBe('gzip');
      expect(packed.headers.vary).toBe('Accept-Encoding');
      expect(Number(packed.headers['content-length'])).toBe(packed.raw.length);
      expect(packed.raw.length).toBeLessThan(SCRIPT.length / 2);
      expect(gunzipSync(packed.raw).toString('utf8')).toBe(SCRIPT);
    }
    for (const refused of [undefined, 'identity', 'gzip;q=0', 'br']) {
      const plain = await get(path, refused === undefined ? {} : { 'Accept-Encoding': refused });
      expect(plain.headers['content-encoding'], String(refused)).toBeUndefined();
      expect(plain.body).toBe(SCRIPT);
      expect(Number(plain.headers['content-length'])).toBe(Buffer.byteLength(SCRIPT));
    }
    const head = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const req = http.request({ method: 'HEAD', host: '127.0.0.1', port: tcp.port, path, headers: { Host: `127.0.0.1:${tcp.port}`, Authorization: `Bearer ${tcp.token}` }, agent: false }, resolve);
      req.on('error', reject);
      req.end();
    });
    expect(head.statusCode).toBe(200);
    expect(Number(head.headers['content-length'])).toBe(Buffer.byteLength(SCRIPT));
    head.resume();

    // A build written again under a running host (same name, other content): the new content, not the held one.
    const rebuilt = `${SCRIPT}export const rebuilt = true;\n`;
    writeFileSync(join(webRoot, 'assets', 'index-B7YFlXlW.js'), rebuilt);
    expect((await get(path)).body).toBe(rebuilt);
    expect(gunzipSync((await get(path, { 'Accept-Encoding': 'gzip' })).raw).toString('utf8')).toBe(rebuilt);
    writeFileSync(join(webRoot, 'assets', 'index-B7YFlXlW.js'), SCRIPT);
  });
});
