// Issue 18, item 9, over the wire of a real host (startHost: the unix socket
// and loopback TCP, raw node:http requests): the Authorization scheme in any
// case, session names that a URL path cannot swallow, and Settings held to
// the bounds a run is held to, so a saved default never makes runs fail.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS } from '../../shared/settings';
import { startHost, type Host } from './host';

let dir: string;
let host: Host;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'wrul-'));
  host = await startHost({ stateDir: join(dir, 's'), port: 0, webRoot: null, history: false });
});

afterAll(async () => {
  await host?.shutdown();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function send(via: 'tcp' | 'unix', method: string, path: string, headers: Record<string, string> = {}, body?: unknown): Promise<{ status: number; body: string }> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const target = via === 'unix' ? { socketPath: host.socketPath } : { host: '127.0.0.1', port: host.tcp!.port };
  return new Promise((resolvePromise, reject) => {
    const req = http.request(
      { ...target, method, path, agent: false, headers: { Host: `127.0.0.1:${host.tcp!.port}`, ...(payload ? { 'Content-Type': 'application/json' } : {}), ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolvePromise({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

describe('the Authorization scheme', () => {
  it.each(['bearer', 'BEARER', 'Bearer', 'bEaReR'])('%s <token> is let in over TCP', async (scheme) => {
    const reply = await send('tcp', 'GET', '/api/v1/host', { Authorization: `${scheme} ${host.tcp!.token}` });
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.body)).toMatchObject({ pid: process.pid });
  });

  it('a wrong token in any case is still refused', async () => {
    const reply = await send('tcp', 'GET', '/api/v1/runs', { Authorization: `bearer ${'x'.repeat(host.tcp!.token.length)}` });
    expect(reply.status).toBe(401);
  });
});

describe('session names', () => {
  it.each(['.', '..', '-x', '.hidden'])('%j is refused at the start of a run, with one line', async (session) => {
    const reply = await send('unix', 'POST', '/api/v1/runs', {}, { code: '1', session });
    expect(reply.status).toBe(400);
    const { error } = JSON.parse(reply.body) as { error: string };
    expect(error).toMatch(/session/);
    expect(error).not.toContain('\n');
  });

  it('a name with a dot inside is still fine, and its session can be closed through the API', async () => {
    const started = await send('unix', 'POST', '/api/v1/runs', {}, { code: 'print(6*7)', session: 'a.b-c_1' });
    expect(started.status).toBe(201);
    const { id } = JSON.parse(started.body) as { id: string };
    const waited = await send('unix', 'GET', `/api/v1/runs/${id}/wait?timeoutMs=30000`);
    expect(JSON.parse(waited.body)).toMatchObject({ state: 'ended', stdout: '42\n' });
    const closed = await send('unix', 'POST', '/api/v1/sessions/a.b-c_1/close');
    expect(closed.status).toBe(200);
  });
});

describe('Settings are held to the bounds of a run', () => {
  const DAY = 86_400_000;
  it.each([
    ['teardownBudgetMs', 0],
    ['teardownBudgetMs', 100_000 * DAY],
    ['graceMs', 100_000 * DAY],
    ['drainMs', 100_000 * DAY],
    ['defaultLimitMs', 100_000 * DAY],
    ['memory', '12 parsecs'],
    ['memory', '1K'],
  ])('%s = %j is refused at save, with one line, and the saved settings stay', async (field, value) => {
    const before = (await send('unix', 'GET', '/api/v1/settings')).body;
    const reply = await send('unix', 'POST', '/api/v1/settings', {}, { ...DEFAULT_SETTINGS, [field]: value });
    expect(reply.status).toBe(400);
    const { error } = JSON.parse(reply.body) as { error: string };
    expect(error).toMatch(field === 'memory' ? /memory/ : new RegExp(field));
    expect(error).not.toContain('\n');
    expect((await send('unix', 'GET', '/api/v1/settings')).body).toBe(before);
  });

  it('the largest teardown budget a run takes is saved, and a run with it runs', async () => {
    const settings = { ...DEFAULT_SETTINGS, teardownBudgetMs: 2 ** 31 - 1, memory: null };
    const reply = await send('unix', 'POST', '/api/v1/settings', {}, settings);
    expect(reply.status).toBe(200);
    expect(JSON.parse(readFileSync(join(dir, 's', 'settings.json'), 'utf8'))).toMatchObject({ teardownBudgetMs: 2 ** 31 - 1 });
    const run = await send('unix', 'POST', '/api/v1/runs', {}, { argv: ['true'], teardownBudgetMs: settings.teardownBudgetMs });
    expect(run.status).toBe(201);
  });
});
