// How the control API's dispatcher (server.ts: matchRoutes, then the method)
// answers the paths between its routes, over a real host's unix socket: the
// order of its checks is the contract the route table kept from the chain of
// ifs it replaced (a run's id before the method, a session's name after it).

import http from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHost, type Host } from './host';

let host: Host;

beforeAll(async () => {
  host = await startHost({ stateDir: mkdtempSync(join(tmpdir(), 'wrd-')), webRoot: null });
});

afterAll(async () => {
  await host.shutdown();
});

function ask(method: string, path: string): Promise<{ status: number; allow: string | undefined; body: { error?: string; kind?: string } }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ socketPath: host.socketPath, method, path, headers: { Host: 'localhost', 'Content-Type': 'application/json', 'Content-Length': '2' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, allow: res.headers.allow, body: JSON.parse(text) as { error?: string; kind?: string } }));
    });
    req.on('error', reject);
    req.end('{}');
  });
}

describe('the control API between its routes', () => {
  it.each([
    ['a bad run id, whatever the method (checked first)', 'GET', '/api/v1/runs/not-hex!/stop', 400, undefined, /A run id is 6 to 32 hex characters/],
    ['a malformed %-escape in a run id', 'POST', '/api/v1/runs/%E0/stop', 400, undefined, /malformed %-escape/],
    ['a good run id with the wrong method', 'GET', '/api/v1/runs/abc123/stop', 405, 'POST', /^\/api\/v1\/runs\/abc123\/stop takes POST, not GET\.$/],
    ['a session route with the wrong method (its name is checked after)', 'GET', '/api/v1/sessions/bad!name/close', 405, 'POST', /takes POST, not GET/],
    ['a bad session name with the right method', 'POST', '/api/v1/sessions/bad!name/close', 400, undefined, /./],
    ['a path of two methods, with a third', 'PUT', '/api/v1/settings', 405, 'GET, POST', /^\/api\/v1\/settings takes GET or POST, not PUT\.$/],
    ['a run path with no such action', 'GET', '/api/v1/runs/abc123/nope', 404, undefined, /^No route \/api\/v1\/runs\/abc123\/nope \(see docs\/architecture\.md/],
    ['a run path with an empty id', 'POST', '/api/v1/runs//stop', 404, undefined, /^No route/],
    ['the prefix alone, with a slash', 'GET', '/api/v1/', 404, undefined, /^No route/],
    ['another version', 'GET', '/api/v2/host', 404, undefined, /^No route/],
    ['a page path on a host that serves no page', 'GET', '/runs', 404, undefined, /serves no web UI/],
  ])('%s: %s %s', async (_what, method, path, status, allow, error) => {
    const answer = await ask(method, path);
    expect(answer.status).toBe(status);
    expect(answer.allow).toBe(allow);
    expect(answer.body.error).toMatch(error);
  });

  it('answers a run that does not exist with 404 from its route', async () => {
    const answer = await ask('GET', '/api/v1/runs/abc123');
    expect(answer).toMatchObject({ status: 404, body: { kind: 'not-found', error: 'No run with id "abc123".' } });
  });
});
