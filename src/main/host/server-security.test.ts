// The control API's trust rules and input checks, attacked over the wire: a
// real host (startHost) on a unix socket and loopback TCP, raw requests from
// node:http so every header is ours to set or leave out. Every refusal must be
// the right status with a JSON body { error } of one plain line.

import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHost, type Host } from './host';
import { LOGIN_LINK_ROUTE, MAX_BODY_BYTES, SESSION_COOKIE } from './server';
import { ERROR_KINDS, type ErrorKind } from '../../shared/errors';

const REQUEST_TIMEOUT_MS = 15_000;

let dir: string;
let webRoot: string;
let host: Host;
let tcp: NonNullable<Host['tcp']>;

const INDEX_HTML = '<!doctype html><title>warden-index-page</title>';
const SECRET = 'warden-secret-outside-the-web-root';

beforeAll(async () => {
  // Short: <dir>/s/run/warden.sock must fit in a unix socket path.
  dir = mkdtempSync(join(tmpdir(), 'wsec-'));
  webRoot = join(dir, 'web');
  mkdirSync(webRoot);
  writeFileSync(join(webRoot, 'index.html'), INDEX_HTML);
  // A file beside the web root, and one in a sibling whose name starts with the root's.
  writeFileSync(join(dir, 'secret.txt'), SECRET);
  mkdirSync(join(dir, 'web2'));
  writeFileSync(join(dir, 'web2', 'secret.txt'), SECRET);
  host = await startHost({ stateDir: join(dir, 's'), port: 0, webRoot, history: false });
  tcp = host.tcp!;
});

afterAll(async () => {
  await host?.shutdown();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

interface Req {
  via?: 'tcp' | 'unix';
  method?: string;
  path: string;
  /** Exactly the headers sent (node adds none: no Host unless given here). */
  headers?: Record<string, string | string[]>;
  body?: string | Buffer;
}

function target(via: 'tcp' | 'unix'): http.RequestOptions {
  return via === 'unix' ? { socketPath: host.socketPath } : { host: '127.0.0.1', port: tcp.port };
}

function send(req: Req): Promise<Reply> {
  const via = req.via ?? 'tcp';
  return new Promise((resolvePromise, reject) => {
    const r = http.request(
      { ...target(via), method: req.method ?? 'GET', path: req.path, headers: req.headers ?? {}, setHost: false, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolvePromise({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    r.setTimeout(REQUEST_TIMEOUT_MS, () => r.destroy(new Error(`no answer to ${req.method ?? 'GET'} ${req.path} in ${REQUEST_TIMEOUT_MS} ms`)));
    r.on('error', reject);
    r.end(req.body);
  });
}

/** The headers a well-behaved TCP client sends. */
function auth(extra: Record<string, string> = {}): Record<string, string> {
  return { Host: `127.0.0.1:${tcp.port}`, Authorization: `Bearer ${tcp.token}`, ...extra };
}

function jsonHeaders(extra: Record<string, string> = {}): Record<string, string> {
  return auth({ 'Content-Type': 'application/json', ...extra });
}

/** The body of a refusal: JSON { error, kind } with one plain line, no stack, and the error's kind (src/shared/errors.ts). */
/** The kind each refusal's status stands for (docs/architecture.md, "Errors"), written out: not read from the table under test. */
const KIND_OF_STATUS: Record<number, ErrorKind> = { 400: 'bad-input', 401: 'denied', 403: 'denied', 404: 'not-found', 405: 'bad-input', 409: 'busy', 413: 'bad-input', 415: 'bad-input', 503: 'unavailable' };

/** The body of a refusal: one line, and the kind the status stands for (a 403 is denied, never bad input). */
function expectOneLineError(reply: Reply, kind?: ErrorKind): string {
  expect(reply.headers['content-type']).toMatch(/^application\/json/);
  const parsed = JSON.parse(reply.body) as unknown;
  expect(parsed).toEqual({ error: expect.any(String), kind: expect.any(String) });
  expect(ERROR_KINDS).toContain((parsed as { kind: string }).kind);
  if (kind !== undefined) expect((parsed as { kind: string }).kind, `the kind of a ${reply.status}`).toBe(kind);
  const error = (parsed as { error: string }).error;
  expect(error.length).toBeGreaterThan(0);
  expect(error).not.toMatch(/[\r\n\u2028\u2029]/);
  // eslint-disable-next-line no-control-regex
  expect(error).not.toMatch(/[\u0000-\u001f\u007f]/);
  expect(error).not.toMatch(/\bat \S+ \(|\bat (file|node):|\.ts:\d+|\.js:\d+/);
  return error;
}

interface Case {
  name: string;
  /** Built when the test runs: the port and token exist only then. */
  req: () => Req;
  status: number;
  /** Text the one-line error must contain (a field name, say). */
  mentions?: RegExp;
  check?: (reply: Reply) => void;
}

const hex12 = 'abcdef012345';

describe('trust rules', () => {
  const cases: Case[] = [
    {
      name: 'TCP without a token: 401 with WWW-Authenticate',
      req: () => ({ path: '/api/v1/host', headers: { Host: '127.0.0.1' } }),
      status: 401,
      check: (r) => expect(r.headers['www-authenticate']).toMatch(/^Bearer /),
    },
    { name: 'TCP with a wrong token: 401', req: () => ({ path: '/api/v1/host', headers: auth({ Authorization: `Bearer ${'x'.repeat(43)}` }) }), status: 401 },
    { name: 'TCP with an empty bearer token: 401', req: () => ({ path: '/api/v1/host', headers: auth({ Authorization: 'Bearer ' }) }), status: 401 },
    { name: 'TCP with the token one character short: 401', req: () => ({ path: '/api/v1/host', headers: auth({ Authorization: `Bearer ${tcp.token.slice(0, -1)}` }) }), status: 401 },
    { name: 'TCP with the token and one character more: 401', req: () => ({ path: '/api/v1/host', headers: auth({ Authorization: `Bearer ${tcp.token}x` }) }), status: 401 },
    { name: 'TCP with the token under another scheme: 401', req: () => ({ path: '/api/v1/host', headers: auth({ Authorization: `Basic ${Buffer.from(`x:${tcp.token}`).toString('base64')}` }) }), status: 401 },
    { name: 'TCP with the token in the query, not the header: 401', req: () => ({ path: '/api/v1/host?token=whatever', headers: { Host: 'localhost' } }), status: 401 },
    { name: 'TCP with a session cookie nobody was given: 401', req: () => ({ path: '/api/v1/host', headers: { Host: 'localhost', Cookie: `${SESSION_COOKIE}=forged` } }), status: 401 },
    { name: 'Host: evil.example with the token: 403', req: () => ({ path: '/api/v1/host', headers: auth({ Host: 'evil.example' }) }), status: 403 },
    { name: 'Host: 127.0.0.1.nip.io with the token: 403', req: () => ({ path: '/api/v1/host', headers: auth({ Host: '127.0.0.1.nip.io' }) }), status: 403 },
    { name: 'Host: localhost.evil.example:<port> with the token: 403', req: () => ({ path: '/api/v1/host', headers: auth({ Host: `localhost.evil.example:${tcp.port}` }) }), status: 403 },
    { name: 'Host: 127.0.0.1:<another port> with the token: 403', req: () => ({ path: '/api/v1/host', headers: auth({ Host: '127.0.0.1:1' }) }), status: 403 },
    { name: 'Host: evil.example on /login: 403 before the token is looked at', req: () => ({ path: '/login?token=x', headers: { Host: 'evil.example' } }), status: 403 },
    { name: 'Origin: http://evil.example with the token: 403', req: () => ({ path: '/api/v1/host', headers: auth({ Origin: 'http://evil.example' }) }), status: 403 },
    { name: 'Origin: null with the token: 403', req: () => ({ path: '/api/v1/host', headers: auth({ Origin: 'null' }) }), status: 403 },
    { name: 'Origin: http://127.0.0.1:<another port> with the token: 403', req: () => ({ path: '/api/v1/host', headers: auth({ Origin: 'http://127.0.0.1:1' }) }), status: 403 },
    // A page on http://localhost (port 80) is another origin but the same site: a SameSite=Strict cookie goes with its requests.
    { name: 'Origin: http://localhost (port 80, another origin) with the token: 403', req: () => ({ path: '/api/v1/host', headers: auth({ Origin: 'http://localhost' }) }), status: 403 },
    { name: 'Origin: http://127.0.0.1 (port 80, another origin) with the token: 403', req: () => ({ path: '/api/v1/host', headers: auth({ Origin: 'http://127.0.0.1' }) }), status: 403 },
    { name: 'Origin: https://localhost:<port> (another scheme) with the token: 403', req: () => ({ path: '/api/v1/host', headers: auth({ Origin: 'https://localhost:1' }) }), status: 403 },
    { name: 'HTTP/1.1 GET /api/v1/host on the unix socket with no token: 200', req: () => ({ via: 'unix', path: '/api/v1/host', headers: { Host: 'localhost' } }), status: 200 },
  ];

  it.each(cases)('$name', async ({ req, status, check }) => {
    const reply = await send(req());
    expect(reply.status).toBe(status);
    if (status >= 400) expectOneLineError(reply, KIND_OF_STATUS[status]);
    check?.(reply);
  });

  it('TCP with the right token (Host with and without the port, either name): 200 on GET /api/v1/host', async () => {
    for (const h of [`127.0.0.1:${tcp.port}`, '127.0.0.1', `localhost:${tcp.port}`, 'localhost', 'LOCALHOST']) {
      const reply = await send({ path: '/api/v1/host', headers: auth({ Host: h }) });
      expect(reply.status, h).toBe(200);
      expect((JSON.parse(reply.body) as { port: number }).port).toBe(tcp.port);
    }
    const sameOrigin = await send({ path: '/api/v1/host', headers: auth({ Origin: `http://127.0.0.1:${tcp.port}` }) });
    expect(sameOrigin.status).toBe(200);
  });

  it('a port-qualified Host built from the real port passes, a foreign one does not', async () => {
    const ok = await send({ path: '/api/v1/host', headers: auth({ Host: `localhost:${tcp.port}` }) });
    expect(ok.status).toBe(200);
    const bad = await send({ path: '/api/v1/host', headers: auth({ Host: `localhost.evil.example:${tcp.port}` }) });
    expect(bad.status).toBe(403);
    expectOneLineError(bad, 'denied');
  });

  it('no Host header at all: never served (Node answers HTTP/1.1 with 400; the handler answers HTTP/1.0 with 403)', async () => {
    const v11 = await send({ path: '/api/v1/host', headers: { Authorization: `Bearer ${tcp.token}` } });
    expect(v11.status).toBe(400);
    const v10 = await rawExchange(`GET /api/v1/host HTTP/1.0\r\nAuthorization: Bearer ${tcp.token}\r\n\r\n`);
    expect(v10.status).toBe(403);
    expectOneLineError(v10, 'denied');
  });

  // Node keeps the first Host of several in req.headers; RFC 9112 3.2: a server MUST answer 400 to more than one.
  it.each([
    ['localhost', 'evil.example'],
    ['evil.example', 'localhost'],
  ])('two Host headers (%s, then %s) with the token: 400', async (first, second) => {
    const reply = await rawExchange(`GET /api/v1/host HTTP/1.1\r\nHost: ${first}\r\nHost: ${second}\r\nAuthorization: Bearer ${tcp.token}\r\nConnection: close\r\n\r\n`);
    expect(reply.status).toBe(400);
    expectOneLineError(reply, 'bad-input');
  });

  it('the unix socket needs no token, Host or Origin', async () => {
    const bare = await rawExchange('GET /api/v1/host HTTP/1.0\r\n\r\n', 'unix');
    expect(bare.status).toBe(200);
    expect(JSON.parse(bare.body)).toMatchObject({ pid: process.pid });
  });

  it('the socket is 0600 in a 0700 dir, the token file 0600', () => {
    expect(statSync(host.socketPath).isSocket()).toBe(true);
    expect(statSync(host.socketPath).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(host.socketPath)).mode & 0o777).toBe(0o700);
    expect(tcp.tokenPath).toBe(join(dirname(host.socketPath), 'token'));
    expect(statSync(tcp.tokenPath).mode & 0o777).toBe(0o600);
  });
});

describe('one-time login', () => {
  it('a wrong one-time token: 401', async () => {
    const reply = await send({ path: '/login?token=not-a-login-token', headers: { Host: `localhost:${tcp.port}` } });
    expect(reply.status).toBe(401);
    expectOneLineError(reply, 'denied');
    const none = await send({ path: '/login', headers: { Host: `localhost:${tcp.port}` } });
    expect(none.status).toBe(401);
    expectOneLineError(none, 'denied');
  });

  it('the right one: 303 with an HttpOnly SameSite=Strict cookie that authorises the API, once', async () => {
    const url = new URL(host.loginUrl()!);
    expect(url.origin).toBe(tcp.url);
    const path = `${url.pathname}${url.search}`;
    const reply = await send({ path, headers: { Host: `127.0.0.1:${tcp.port}` } });
    expect(reply.status).toBe(303);
    const setCookie = reply.headers['set-cookie'] ?? [];
    expect(setCookie).toHaveLength(1);
    const line = setCookie[0]!;
    expect(line).toMatch(new RegExp(`^${SESSION_COOKIE}=[A-Za-z0-9_-]{20,};`));
    expect(line).toMatch(/;\s*HttpOnly/i);
    expect(line).toMatch(/;\s*SameSite=Strict/i);
    const cookie = line.split(';')[0]!;

    const api = await send({ path: '/api/v1/host', headers: { Host: `127.0.0.1:${tcp.port}`, Cookie: `other=1; ${cookie}` } });
    expect(api.status).toBe(200);
    // The cookie is no way around the Host and Origin checks.
    const rebound = await send({ path: '/api/v1/host', headers: { Host: 'evil.example', Cookie: cookie } });
    expect(rebound.status).toBe(403);
    const crossSite = await send({ path: '/api/v1/host', headers: { Host: `127.0.0.1:${tcp.port}`, Origin: 'http://evil.example', Cookie: cookie } });
    expect(crossSite.status).toBe(403);

    const again = await send({ path, headers: { Host: `127.0.0.1:${tcp.port}` } });
    expect(again.status).toBe(401);
    expectOneLineError(again, 'denied');
    expect(again.headers['set-cookie']).toBeUndefined();
  });

  it(`${LOGIN_LINK_ROUTE} mints a working login link on the unix socket only`, async () => {
    const tcpPost = await send({ method: 'POST', path: LOGIN_LINK_ROUTE, headers: auth() });
    expect(tcpPost.status).toBe(403);
    expectOneLineError(tcpPost, 'denied');
    const unixGet = await send({ via: 'unix', path: LOGIN_LINK_ROUTE, headers: { Host: 'localhost' } });
    expect(unixGet.status).toBe(405);
    expectOneLineError(unixGet, 'bad-input');
    const minted = await send({ via: 'unix', method: 'POST', path: LOGIN_LINK_ROUTE, headers: { Host: 'localhost' } });
    expect(minted.status).toBe(200);
    const url = new URL((JSON.parse(minted.body) as { url: string }).url);
    expect(url.origin).toBe(tcp.url);
    const login = await send({ path: `${url.pathname}${url.search}`, headers: { Host: `127.0.0.1:${tcp.port}` } });
    expect(login.status).toBe(303);
    const again = await send({ path: `${url.pathname}${url.search}`, headers: { Host: `127.0.0.1:${tcp.port}` } });
    expect(again.status).toBe(401);
  });

  it('a browser without a session gets an HTML page that says how to log in, never raw JSON; the API stays JSON', async () => {
    const accept = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
    for (const path of ['/', '/index.html', '/runs']) {
      const page = await send({ path, headers: { Host: `127.0.0.1:${tcp.port}`, Accept: accept, Cookie: `${SESSION_COOKIE}=expired` } });
      expect(page.status).toBe(401);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      // One script runs there (it keeps a deep link's route across login), allowed by its hash alone.
      const policy = String(page.headers['content-security-policy']);
      expect(policy).not.toContain('unsafe-inline');
      const scripts = [...page.body.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]!);
      expect(scripts).toHaveLength(1);
      expect(/script-src ([^;]*);/.exec(policy)?.[1]).toBe(`'sha256-${createHash('sha256').update(scripts[0]!).digest('base64')}'`);
      expect(page.body).toContain('warden serve --open');
      expect(page.body).not.toContain(INDEX_HTML);
      expect(page.body).not.toMatch(/^\s*\{/);
    }
    const used = await send({ path: '/login?token=used-up', headers: { Host: `127.0.0.1:${tcp.port}`, Accept: accept } });
    expect(used.status).toBe(401);
    expect(used.headers['content-type']).toMatch(/^text\/html/);
    expect(used.body).toContain('used already or is not valid');
    // The API answers JSON whatever the Accept header says.
    const api = await send({ path: '/api/v1/host', headers: { Host: `127.0.0.1:${tcp.port}`, Accept: accept } });
    expect(api.status).toBe(401);
    expectOneLineError(api, 'denied');
  });

  it('a one-time token is not a bearer token', async () => {
    const token = new URL(host.loginUrl()!).searchParams.get('token')!;
    const reply = await send({ path: '/api/v1/host', headers: { Host: 'localhost', Authorization: `Bearer ${token}` } });
    expect(reply.status).toBe(401);
    expectOneLineError(reply, 'denied');
  });
});

/** A whole request as bytes, over TCP or the unix socket; the first response parsed. */
function rawExchange(text: string, via: 'tcp' | 'unix' = 'tcp'): Promise<Reply> {
  return new Promise((resolvePromise, reject) => {
    const socket = via === 'unix' ? netConnect(host.socketPath) : netConnect(tcp.port);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(new Error(`no answer to ${JSON.stringify(text.slice(0, 80))}`)), REQUEST_TIMEOUT_MS);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      const raw = Buffer.concat(chunks).toString('utf8');
      const end = raw.indexOf('\r\n\r\n');
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(raw);
      if (!status || end < 0) return reject(new Error(`not an HTTP response: ${JSON.stringify(raw.slice(0, 200))}`));
      const headers: http.IncomingHttpHeaders = {};
      for (const line of raw.slice(0, end).split('\r\n').slice(1)) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolvePromise({ status: Number(status[1]), headers, body: raw.slice(end + 4) });
    });
    socket.end(text);
  });
}

function netConnect(to: string | number) {
  return typeof to === 'string' ? connect(to) : connect(to, '127.0.0.1');
}

/**
 * Sends a body of `size` bytes a piece at a time and stops as soon as an answer
 * comes (a host may refuse from the Content-Length alone); `chunked`: no
 * Content-Length, Transfer-Encoding: chunked, and the last chunk never sent,
 * so the host must refuse from what it counted.
 */
function sendLarge(size: number, options: { chunked: boolean; fill?: (size: number) => Buffer }): Promise<Reply> {
  const body = options.fill ? options.fill(size) : Buffer.alloc(size, 0x20);
  expect(body.length).toBe(size);
  return new Promise((resolvePromise, reject) => {
    let answered = false;
    const headers = jsonHeaders(options.chunked ? { 'Transfer-Encoding': 'chunked' } : { 'Content-Length': String(size) });
    const r = http.request({ ...target('tcp'), method: 'POST', path: '/api/v1/runs', headers, setHost: false, agent: false }, (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        resolvePromise({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') });
        r.destroy();
      });
      res.on('error', () => undefined);
    });
    r.setTimeout(REQUEST_TIMEOUT_MS, () => r.destroy(new Error('no answer to the large body')));
    // Once answered, the host may close while bytes are still on the way: that is its right.
    r.on('error', (e) => {
      if (!answered) reject(e);
    });
    r.flushHeaders();
    const PIECE = 64 * 1024;
    let offset = 0;
    const pump = () => {
      while (!answered && !r.destroyed && offset < size) {
        const piece = body.subarray(offset, Math.min(size, offset + PIECE));
        offset += piece.length;
        if (!r.write(piece)) return void r.once('drain', pump);
      }
      // With a Content-Length the request is complete; chunked, it stays open until the host answers.
      if (!answered && !r.destroyed && offset >= size && !options.chunked) r.end();
    };
    setImmediate(pump);
  });
}

/** Exactly `size` bytes of valid JSON that is no run request: { "argv": "xxxx" }. */
function jsonOfSize(size: number): Buffer {
  const prefix = '{"argv":"';
  const suffix = '"}';
  return Buffer.from(`${prefix}${'x'.repeat(size - prefix.length - suffix.length)}${suffix}`);
}

describe('bodies', () => {
  it('1 MiB + 1 byte with a Content-Length: 413', async () => {
    const reply = await sendLarge(MAX_BODY_BYTES + 1, { chunked: false, fill: jsonOfSize });
    expect(reply.status).toBe(413);
    expectOneLineError(reply, 'bad-input');
  });

  it('1 MiB + 1 byte chunked, no Content-Length: 413', async () => {
    const reply = await sendLarge(MAX_BODY_BYTES + 1, { chunked: true, fill: jsonOfSize });
    expect(reply.status).toBe(413);
    expectOneLineError(reply, 'bad-input');
  });

  it('exactly 1 MiB of valid JSON with a Content-Length: read and judged (400 for argv), not 413', async () => {
    const reply = await sendLarge(MAX_BODY_BYTES, { chunked: false, fill: jsonOfSize });
    expect(reply.status).toBe(400);
    expect(expectOneLineError(reply)).toMatch(/^argv: /);
  });

  it('exactly 1 MiB of valid JSON chunked: read and judged, not 413', async () => {
    const size = MAX_BODY_BYTES;
    const body = jsonOfSize(size);
    const reply = await send({ method: 'POST', path: '/api/v1/runs', headers: jsonHeaders({ 'Transfer-Encoding': 'chunked' }), body });
    expect(reply.status).toBe(400);
    expect(expectOneLineError(reply)).toMatch(/^argv: /);
  });

  it('the host still serves after refusing large bodies', async () => {
    const reply = await send({ path: '/api/v1/host', headers: auth() });
    expect(reply.status).toBe(200);
  });

  const run = (body: string | Buffer, headers: Record<string, string> = jsonHeaders()): Req => ({ method: 'POST', path: '/api/v1/runs', headers, body });

  const cases: Case[] = [
    { name: 'text/plain: 415', req: () => run('{"argv":["true"]}', auth({ 'Content-Type': 'text/plain' })), status: 415 },
    { name: 'no Content-Type: 415', req: () => run('{"argv":["true"]}', auth()), status: 415 },
    { name: 'application/x-www-form-urlencoded (a form post): 415', req: () => run('argv=true', auth({ 'Content-Type': 'application/x-www-form-urlencoded' })), status: 415 },
    { name: 'application/jsonp: 415', req: () => run('{"argv":["true"]}', auth({ 'Content-Type': 'application/jsonp' })), status: 415 },
    { name: 'invalid JSON: 400', req: () => run('{"argv": ["true"'), status: 400, mentions: /JSON/ },
    { name: 'invalid JSON with a CR and an escape sequence: 400, none of it echoed raw', req: () => run('abc\rdef\u001b[2J\u0007'), status: 400, mentions: /JSON/ },
    { name: 'JSON that is not an object: 400', req: () => run('[]'), status: 400 },
    { name: 'JSON null: 400', req: () => run('null'), status: 400 },
    { name: 'an empty body: 400', req: () => run(''), status: 400 },
    { name: 'argv missing: 400 naming argv', req: () => run('{}'), status: 400, mentions: /\bargv\b/ },
    { name: 'argv not an array: 400 naming argv', req: () => run('{"argv":"true"}'), status: 400, mentions: /\bargv\b/ },
    { name: 'argv empty: 400 naming argv', req: () => run('{"argv":[]}'), status: 400, mentions: /\bargv\b/ },
    { name: 'argv of numbers: 400 naming argv', req: () => run('{"argv":[1]}'), status: 400, mentions: /\bargv\b/ },
    { name: 'limitMs negative: 400 naming limitMs', req: () => run('{"argv":["true"],"limitMs":-1}'), status: 400, mentions: /\blimitMs\b/ },
    { name: 'limitMs as a string: 400 naming limitMs', req: () => run('{"argv":["true"],"limitMs":"5"}'), status: 400, mentions: /\blimitMs\b/ },
    { name: 'limitMs 1e999 (Infinity after parsing): 400 naming limitMs', req: () => run('{"argv":["true"],"limitMs":1e999}'), status: 400, mentions: /\blimitMs\b/ },
    { name: 'an unknown field: 400 naming it', req: () => run('{"argv":["true"],"bogus":1}'), status: 400, mentions: /"bogus"/ },
    { name: '__proto__ as a field: 400 naming it', req: () => run('{"argv":["true"],"__proto__":{"polluted":1}}'), status: 400, mentions: /__proto__/ },
    { name: 'code and argv together: 400 naming both', req: () => run('{"argv":["true"],"code":"print(1)"}'), status: 400, mentions: /argv.*code|code.*argv/ },
    { name: "a session name with '/': 400 naming session", req: () => run('{"code":"print(1)","session":"a/b"}'), status: 400, mentions: /\bsession\b/ },
    { name: 'env of numbers: 400 naming env', req: () => run('{"argv":["true"],"env":{"A":1}}'), status: 400, mentions: /\benv\b/ },
  ];

  it.each(cases)('POST /api/v1/runs, $name', async ({ req, status, mentions }) => {
    const reply = await send(req());
    expect(reply.status).toBe(status);
    const error = expectOneLineError(reply, KIND_OF_STATUS[status]);
    if (mentions) expect(error).toMatch(mentions);
  });

  it('nothing from those bodies polluted Object.prototype', () => {
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('routes and queries', () => {
  const cases: Case[] = [
    { name: 'GET /api/v1/runs/not-hex: 400', req: () => ({ path: '/api/v1/runs/not-hex', headers: auth() }), status: 400, mentions: /run id/ },
    { name: 'GET /api/v1/runs/<unknown 12 hex>: 404', req: () => ({ path: `/api/v1/runs/${hex12}`, headers: auth() }), status: 404, mentions: new RegExp(hex12) },
    { name: 'GET /api/v1/runs/<unknown>/timeline: 200 (no history: empty)', req: () => ({ path: `/api/v1/runs/${hex12}/timeline`, headers: auth() }), status: 200 },
    { name: 'GET /api/v1/runs/<unknown>/wait: 404', req: () => ({ path: `/api/v1/runs/${hex12}/wait`, headers: auth() }), status: 404 },
    { name: 'POST /api/v1/runs/<unknown>/stop: 404', req: () => ({ method: 'POST', path: `/api/v1/runs/${hex12}/stop`, headers: auth() }), status: 404 },
    {
      name: 'POST /api/v1/runs/<id>/extend with byMs 0: 400 naming byMs',
      req: () => ({ method: 'POST', path: `/api/v1/runs/${hex12}/extend`, headers: jsonHeaders(), body: '{"byMs":0}' }),
      status: 400,
      mentions: /\bbyMs\b/,
    },
    { name: 'POST /api/v1/runs/<id>/extend with no body: 400', req: () => ({ method: 'POST', path: `/api/v1/runs/${hex12}/extend`, headers: auth() }), status: 400 },
    {
      name: 'POST /api/v1/runs/<id>/stop with force "yes": 400 naming force',
      req: () => ({ method: 'POST', path: `/api/v1/runs/${hex12}/stop`, headers: jsonHeaders(), body: '{"force":"yes"}' }),
      status: 400,
      mentions: /\bforce\b/,
    },
    {
      name: 'DELETE /api/v1/runs: 405 with an Allow naming every method the route takes (GET, POST)',
      req: () => ({ method: 'DELETE', path: '/api/v1/runs', headers: auth() }),
      status: 405,
      check: (r) => {
        const allow = String(r.headers.allow ?? '').split(/\s*,\s*/).sort();
        expect(allow).toEqual(['GET', 'POST']);
      },
    },
    { name: 'POST /api/v1/host: 405 with Allow: GET', req: () => ({ method: 'POST', path: '/api/v1/host', headers: jsonHeaders(), body: '{}' }), status: 405, check: (r) => expect(r.headers.allow).toBe('GET') },
    { name: 'GET /api/v1/runs/<id>/stop: 405 with Allow: POST', req: () => ({ path: `/api/v1/runs/${hex12}/stop`, headers: auth() }), status: 405, check: (r) => expect(r.headers.allow).toBe('POST') },
    { name: 'an unknown route under the API: 404', req: () => ({ path: '/api/v1/nope', headers: auth() }), status: 404 },
    { name: 'the bare API prefix: 404', req: () => ({ path: '/api/v1', headers: auth() }), status: 404 },
    { name: 'a run id with a malformed %-escape: 400', req: () => ({ path: '/api/v1/runs/%zz', headers: auth() }), status: 400, mentions: /%-escape/ },
    { name: 'a truncated UTF-8 %-escape: 400', req: () => ({ path: '/api/v1/runs/%E0%A4%A', headers: auth() }), status: 400 },
    { name: 'a session name with a malformed %-escape: 400', req: () => ({ method: 'POST', path: '/api/v1/sessions/%/close', headers: auth() }), status: 400 },
    { name: 'a %-encoded slash in a session name: 400', req: () => ({ method: 'POST', path: '/api/v1/sessions/a%2Fb/close', headers: auth() }), status: 400, mentions: /session name/ },
    { name: 'a page path with a malformed %-escape: 400', req: () => ({ path: '/assets/%zz.js', headers: auth() }), status: 400 },
    { name: 'GET /api/v1/runs?x=1: 400', req: () => ({ path: '/api/v1/runs?x=1', headers: auth() }), status: 400 },
    { name: 'history with a bad verdict: 400 naming verdict', req: () => ({ path: '/api/v1/history?verdict=bogus', headers: auth() }), status: 400, mentions: /\bverdict\b/ },
    { name: 'history with one bad verdict in a list: 400 naming verdict', req: () => ({ path: '/api/v1/history?verdict=completed,bogus', headers: auth() }), status: 400, mentions: /\bverdict\b/ },
    { name: 'history with limit 0: 400 naming limit', req: () => ({ path: '/api/v1/history?limit=0', headers: auth() }), status: 400, mentions: /\blimit\b/ },
    { name: 'history with limit 1.5: 400 naming limit', req: () => ({ path: '/api/v1/history?limit=1.5', headers: auth() }), status: 400, mentions: /\blimit\b/ },
    { name: 'history with a key twice: 400 naming it', req: () => ({ path: '/api/v1/history?limit=1&limit=2', headers: auth() }), status: 400, mentions: /\blimit\b/ },
    { name: 'history with an unknown key: 400 naming it', req: () => ({ path: '/api/v1/history?bogus=1', headers: auth() }), status: 400, mentions: /bogus/ },
    { name: 'history with __proto__ as a key: 400 naming it as unknown, not as given twice', req: () => ({ path: '/api/v1/history?__proto__=1', headers: auth() }), status: 400, mentions: /no field "__proto__"/ },
    { name: 'history with constructor as a key: 400 naming it as unknown', req: () => ({ path: '/api/v1/history?constructor=1', headers: auth() }), status: 400, mentions: /no field "constructor"/ },
    { name: 'wait with a negative timeoutMs: 400', req: () => ({ path: `/api/v1/runs/${hex12}/wait?timeoutMs=-1`, headers: auth() }), status: 400, mentions: /timeoutMs/ },
    { name: 'wait with stdoutFrom alone: 400', req: () => ({ path: `/api/v1/runs/${hex12}/wait?stdoutFrom=0`, headers: auth() }), status: 400 },
    { name: 'events with an unknown key: 400', req: () => ({ path: '/api/v1/events?x=1', headers: auth() }), status: 400 },
    { name: 'events with a bad run id: 400', req: () => ({ path: '/api/v1/events?run=../x', headers: auth() }), status: 400 },
    { name: 'events since=start without run: 400', req: () => ({ path: '/api/v1/events?since=start', headers: auth() }), status: 400 },
    { name: 'a session that does not exist: 404', req: () => ({ method: 'POST', path: '/api/v1/sessions/nobody/restart', headers: auth() }), status: 404 },
  ];

  it.each(cases)('$name', async ({ req, status, mentions, check }) => {
    const reply = await send(req());
    expect(reply.status).toBe(status);
    if (status >= 400) {
      const error = expectOneLineError(reply, KIND_OF_STATUS[status]);
      if (mentions) expect(error).toMatch(mentions);
    }
    check?.(reply);
  });
});

describe('the web root', () => {
  const traversals = [
    '/../../etc/passwd',
    '/%2e%2e/%2e%2e/etc/passwd',
    '/%2E%2E/%2E%2E/etc/passwd',
    '/..%2f..%2f..%2f..%2fetc%2fpasswd',
    '/%2e%2e%2f%2e%2e%2fetc%2fpasswd',
    '/..%5c..%5cetc%5cpasswd',
    '/....//....//etc/passwd',
    '/../secret.txt',
    '/%2e%2e/secret.txt',
    '/..%2fsecret.txt',
    '/..%2fweb2%2fsecret.txt',
    '/%2e%2e%2fweb2/secret.txt',
    '/assets/..%2f..%2fsecret.txt',
    '//etc/passwd',
    '/%2fetc%2fpasswd',
    '/index.html%00../../secret.txt',
    '/%00',
  ];

  it.each(traversals)('GET %s on TCP with the token: never a file outside the root', async (path) => {
    const reply = await send({ path, headers: auth() });
    expect([200, 400, 404]).toContain(reply.status);
    expect(reply.body).not.toContain(SECRET);
    expect(reply.body).not.toMatch(/root:.*:0:0:/);
    if (reply.status === 200) expect(reply.body).toBe(INDEX_HTML);
    else expectOneLineError(reply, KIND_OF_STATUS[reply.status]);
  });

  it.each(['/../../etc/passwd', '/..%2fsecret.txt'])('GET %s on the unix socket: never a file outside the root', async (path) => {
    const reply = await send({ via: 'unix', path, headers: { Host: 'localhost' } });
    expect(reply.body).not.toContain(SECRET);
    expect(reply.body).not.toMatch(/root:.*:0:0:/);
  });

  it('the page itself is served with its security headers, and only to GET and HEAD', async () => {
    const page = await send({ path: '/', headers: auth() });
    expect(page.status).toBe(200);
    expect(page.body).toBe(INDEX_HTML);
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(page.headers['content-security-policy']).toMatch(/frame-ancestors 'none'/);
    const post = await send({ method: 'POST', path: '/', headers: jsonHeaders(), body: '{}' });
    expect(post.status).toBe(405);
    expectOneLineError(post, 'bad-input');
    const missingAsset = await send({ path: '/assets/missing.js', headers: auth() });
    expect(missingAsset.status).toBe(404);
    expectOneLineError(missingAsset, 'not-found');
  });
});
