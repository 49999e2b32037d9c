// The web-mode page as the host serves it over loopback TCP (a real host,
// raw node:http requests): the page names the API answers its first view
// needs as preloads, each a route the host answers; the build's content-named
// assets are cached for good, the page never.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIRST_LOAD_PATHS } from '../../shared/http-api';
import { startHost, type Host } from './host';

let dir: string;
let host: Host;
let tcp: NonNullable<Host['tcp']>;

beforeAll(async () => {
  // Short: <dir>/s/run/warden.sock must fit in a unix socket path.
  dir = mkdtempSync(join(tmpdir(), 'wpg-'));
  const webRoot = join(dir, 'web');
  mkdirSync(join(webRoot, 'assets'), { recursive: true });
  writeFileSync(join(webRoot, 'index.html'), '<!doctype html><title>page</title>');
  writeFileSync(join(webRoot, 'assets', 'index-B7YFlXlW.js'), 'export {};\n');
  writeFileSync(join(webRoot, 'assets', 'style-y9t2P9c_.css'), 'body{}\n');
  writeFileSync(join(webRoot, 'robots.txt'), 'User-agent: *\n');
  host = await startHost({ stateDir: join(dir, 's'), port: 0, webRoot, history: false });
  tcp = host.tcp!;
});

afterAll(async () => {
  await host?.shutdown();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function get(path: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port: tcp.port, path, headers: { Host: `127.0.0.1:${tcp.port}`, Authorization: `Bearer ${tcp.token}`, Accept: 'text/html' }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
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
});
