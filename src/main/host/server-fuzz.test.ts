// 1,000 malformed requests against a real host in this process, on both
// listeners: random methods, paths, headers, framings and bodies, raw garbage
// over a socket, slowloris-style partial requests and dropped event streams.
// The host must never answer 500, never hang on a complete request, never
// throw past its handler, never let a key like "__proto__" reach
// Object.prototype, and must still serve and run commands afterwards.
//
// The requests come from a seeded PRNG: the seed is printed; set
// WARDEN_FUZZ_SEED to replay a run's requests (answers may interleave
// differently, the requests are the same). Run bodies are built so that a valid
// one is rare and only ever runs `true`.

import { randomInt } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHost, type Host } from './host';
import { MAX_BODY_BYTES } from './server';
import { isErrorKind, kindOfHttpStatus } from '../../shared/errors';

const TOTAL = 1000;
const CONCURRENCY = 12;
/** Per connection: a complete request unanswered by then is a hang. */
const SAFETY_TIMEOUT_MS = 5_000;

const SEED = process.env.WARDEN_FUZZ_SEED !== undefined && process.env.WARDEN_FUZZ_SEED !== '' ? Number(process.env.WARDEN_FUZZ_SEED) >>> 0 : randomInt(2 ** 31);
console.log(`server-fuzz: seed ${SEED} (replay with WARDEN_FUZZ_SEED=${SEED})`);

const PROTO_NAMES = Object.getOwnPropertyNames(Object.prototype).sort();
const ARRAY_PROTO_NAMES = Object.getOwnPropertyNames(Array.prototype).sort();

/** mulberry32: small, fast, and the same sequence for the same seed everywhere. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  const chance = (p: number) => next() < p;
  const bytes = (n: number) => {
    const b = Buffer.alloc(n);
    for (let i = 0; i < n; i++) b[i] = int(256);
    return b;
  };
  const hex = (n: number) => Array.from({ length: n }, () => '0123456789abcdef'[int(16)]).join('');
  return { next, int, pick, chance, bytes, hex };
}

type Rng = ReturnType<typeof prng>;

interface FuzzCase {
  n: number;
  via: 'unix' | 'tcp';
  label: string;
  method: string;
  /** Written in order, gapMs apart. */
  pieces: Buffer[];
  gapMs: number;
  /** answer: the framing is complete, an answer (or the host closing) must come; hold: incomplete on purpose, dropped after holdMs. */
  mode: 'answer' | 'hold';
  holdMs: number;
  /** An event stream: kept open holdMs after its headers, then dropped. */
  sse: boolean;
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

interface Outcome {
  c: FuzzCase;
  answers: Answer[];
  closedByHost: boolean;
  timedOut: boolean;
  error: string | null;
}

// ---------------------------------------------------------------------------
// Generators

const ROUTE_TAILS = ['stop', 'wait', 'extend', 'timeline', 'nope', '', 'stop/x', 'WAIT'];
const QUERY_KEYS = [
  'verdict', 'state', 'kind', 'session', 'since', 'until', 'exitCode', 'text', 'limit', 'cursor', 'timeoutMs', 'output', 'stdoutFrom', 'stderrFrom',
  'run', 'lastEventId', 'token', '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'x', '', '%', '%zz',
];
const VERDICTS = ['completed', 'failed', 'timed-out', 'stopped', 'killed', 'crashed', 'signaled', 'lost', 'spawn-failed', 'bogus', 'COMPLETED'];
const ESCAPE_GARBAGE = ['%', '%z', '%zz', '%E0%A4%A', '%C0%AF', '%00', '%0d%0a', '%2e%2e', '%2f', '%5c', '%ff%fe', '%uD800', '%%', '%25', '%e2%80%a8', '%F0%9F%98%80'];
const UNICODE = ['é', '☃', '😀', '\u2028', '\u202e', 'Ω', '\ufeff', '\ud800'];

/** %-encodes text that may hold lone surrogates (encodeURIComponent throws on those). */
function encode(text: string): string {
  return encodeURIComponent(text.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd'));
}

function randomText(r: Rng, max: number): string {
  const n = r.int(max + 1);
  let s = '';
  for (let i = 0; i < n; i++) {
    const k = r.int(10);
    if (k < 6) s += String.fromCharCode(32 + r.int(95));
    else if (k < 8) s += String.fromCharCode(r.int(32));
    else s += r.pick(UNICODE);
  }
  return s;
}

function queryValue(r: Rng): string {
  return r.pick([
    () => String(r.int(2000) - 1000),
    () => '0',
    () => '-1',
    () => '1.5',
    () => '1e309',
    () => '99999999999999999999999',
    () => 'NaN',
    () => '',
    () => r.pick(VERDICTS),
    () => `${r.pick(VERDICTS)},${r.pick(VERDICTS)}`,
    () => ',,,',
    () => 'all',
    () => 'unseen',
    () => 'start',
    () => r.hex(12),
    () => '2024-01-01T00:00:00Z',
    () => 'x'.repeat(r.int(3000)),
    () => encode(randomText(r, 20)),
    () => r.pick(ESCAPE_GARBAGE),
  ])();
}

function randomQuery(r: Rng): string {
  if (r.chance(0.3)) return '';
  const parts: string[] = [];
  const n = 1 + r.int(4);
  for (let i = 0; i < n; i++) {
    const key = r.pick(QUERY_KEYS);
    parts.push(r.chance(0.1) ? key : `${key}=${queryValue(r)}`);
    if (r.chance(0.1)) parts.push(`${key}=${queryValue(r)}`); // the same key twice
  }
  return `?${parts.join(r.chance(0.9) ? '&' : ';')}`;
}

function runId(r: Rng): string {
  return r.pick([
    () => r.hex(12),
    () => r.hex(6),
    () => r.hex(5),
    () => r.hex(33),
    () => 'not-hex',
    () => 'ABCDEF123456',
    () => '..%2F..%2Fetc',
    () => r.pick(ESCAPE_GARBAGE),
    () => encode(r.pick(UNICODE)),
  ])();
}

function sessionName(r: Rng): string {
  return r.pick(['default', 'x', 'a.b-c_d', 'a%2Fb', '..', '%2e%2e', 'x'.repeat(65), r.pick(ESCAPE_GARBAGE), encode(randomText(r, 8))]);
}

function randomPath(r: Rng): string {
  // Most often the route that takes the most input: POST /api/v1/runs, as is.
  if (r.chance(0.25)) return r.chance(0.9) ? '/api/v1/runs' : `/api/v1/runs${randomQuery(r)}`;
  const base = r.pick([
    () => '/api/v1/host',
    () => '/api/v1/runs',
    () => `/api/v1/runs/${runId(r)}`,
    () => `/api/v1/runs/${runId(r)}/${r.pick(ROUTE_TAILS)}`,
    () => '/api/v1/history',
    () => '/api/v1/sessions',
    () => `/api/v1/sessions/${sessionName(r)}/${r.pick(['restart', 'close', 'nope', ''])}`,
    () => '/api/v1/events',
    () => '/api/v1',
    () => '/api/v1/',
    () => '/api/v2/host',
    () => '/login',
    () => '/api/v1/login-link',
    () => '/',
    () => '/index.html',
    () => '/assets/app.js',
    () => '/../../etc/passwd',
    () => '/%2e%2e/%2e%2e/etc/passwd',
    () => '*',
    () => 'http://localhost/api/v1/host',
    () => '//evil.example/api/v1/host',
  ])();
  const suffix = r.pick([
    () => '',
    () => '',
    () => '/',
    () => '//',
    () => '/..',
    () => '/%2e%2e',
    () => r.pick(ESCAPE_GARBAGE),
    () => encode(randomText(r, 30)),
    () => r.pick(UNICODE), // raw UTF-8 in the request line
    () => `/${'a'.repeat(10_000)}`,
    () => `?${'q'.repeat(10_000)}`,
    () => '#frag',
    () => ';jsessionid=1',
  ])();
  return `${base}${suffix}${randomQuery(r)}`;
}

function randomMethod(r: Rng): string {
  if (r.chance(0.45)) return 'GET';
  if (r.chance(0.7)) return 'POST';
  return r.pick(['PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'TRACE', 'PROPFIND', 'MKCOL', 'PURGE', 'LINK', 'SEARCH', 'FOO', 'get', 'Post', 'G\u00cbT', 'A'.repeat(1000), '']);
}

/** A wrong value for a RunRequest field: never one the field accepts. */
function wrongValue(r: Rng, field: string): string {
  const deepArray = () => `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
  const deepObject = () => `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;
  const common = ['null', '{}', '[]', '"x"', '1', 'true', '-1', '1e999', '-1e999', '123456789012345678901234567890'];
  const byField: Record<string, string[]> = {
    argv: ['"true"', '[]', '[1]', '[null]', '[["true"]]', '["true",1]', '[""]', '["tr\\u0000ue"]', '{"0":"true"}', 'null', '1', 'true'],
    shell: ['"yes"', '1', 'null', '[]', '{}'],
    cwd: ['1', '[]', '{}', 'null', 'true'],
    env: ['[]', '"A=1"', '{"A":1}', '{"A":null}', '{"A":{}}', '{"":"x"}', '{"A=B":"x"}', '{"A":"\\u0000"}', '{"__proto__":{"polluted":"yes"}}', '{"constructor":{"prototype":{"polluted":"yes"}}}', 'null'],
    stdin: ['1', '[]', '{}', 'null', 'true'],
    limitMs: ['-1', '0', '"5"', '1e308', '1e999', '-1e999', '2147483648', '123456789012345678901234567890', 'true', '[]', '{}'],
    graceMs: ['-1', '"5"', '1e308', '1e999', '2147483648', 'null', 'true', '[]'],
    terminateAfterMs: ['-1', '"5"', '1e308', '1e999', 'null', '[]'],
    drainMs: ['-1', '"5"', '1e308', '1e999', 'null', '{}'],
    teardownBudgetMs: ['-1', '0', '"5"', '1e308', '1e999', 'null'],
    keepDescendants: ['"yes"', '1', 'null', '[]'],
    memory: ['null', 'true', '[]', '{}', '-1', '0', '1e300', '""', '"lots"', '"-5M"', '"1e3G"', '"999999999999999999999T"', '1.5'],
    outputCapChars: ['1', '0', '1.5', '"10"', '-5', '1e300', 'null', '[]'],
    code: ['1', '[]', '{}', 'null', 'true'],
    session: ['"a/b"', '""', `"${'x'.repeat(65)}"`, '1', '"../.."', 'null'],
    onBusy: ['"maybe"', '1', 'null', '[]'],
  };
  const values = byField[field] ?? common;
  if (r.chance(0.05)) return r.chance(0.5) ? deepArray() : deepObject();
  return r.pick(values);
}

const RUN_FIELDS = ['argv', 'shell', 'cwd', 'env', 'stdin', 'limitMs', 'graceMs', 'terminateAfterMs', 'drainMs', 'teardownBudgetMs', 'keepDescendants', 'memory', 'outputCapChars', 'code', 'session', 'onBusy'];
const EXTRA_KEYS = ['__proto__', 'constructor', 'prototype', 'bogus', 'ARGV', ''];

/**
 * A run request as JSON text, built by hand so it can hold own "__proto__"
 * keys, duplicate keys, 1e999 and 10,000-level nesting. Valid (and then
 * exactly { argv: ["true"] }) about one time in twenty.
 */
function runBody(r: Rng): string {
  const entries: [string, string][] = [['argv', '["true"]']];
  if (r.chance(0.05)) return '{"argv":["true"]}';
  const mutations = 1 + r.int(3);
  let changed = false;
  for (let i = 0; i < mutations; i++) {
    if (r.chance(0.2)) {
      const key = r.pick(EXTRA_KEYS);
      entries.push([key, key === 'constructor' ? '{"prototype":{"polluted":"yes"}}' : r.chance(0.5) ? '{"polluted":"yes"}' : '1']);
    } else {
      const field = r.pick(RUN_FIELDS);
      // code (a Python script) is always given as a non-string: no interpreter starts.
      entries.push([field, wrongValue(r, field)]);
    }
    changed = true;
  }
  if (!changed) entries.push(['bogus', '1']);
  if (r.chance(0.1)) entries.shift(); // no argv at all
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`;
}

function randomBody(r: Rng, path: string): Buffer | null {
  const isRuns = /^\/api\/v1\/runs(\?|$)/.test(path);
  const isExtend = /\/extend(\?|$)/.test(path);
  const isStop = /\/stop(\?|$)/.test(path);
  const kind = r.int(12);
  if (kind === 0) return null;
  if (kind === 1) return r.bytes(r.int(4096));
  if (kind === 2) return Buffer.from(randomText(r, 200));
  if (kind === 3) {
    const text = runBody(r);
    return Buffer.from(text.slice(0, Math.max(0, r.int(text.length)))); // truncated
  }
  if (kind === 4) return Buffer.from(r.pick([`${'['.repeat(10_000)}${']'.repeat(10_000)}`, `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`, `{"argv":${'['.repeat(10_000)}${']'.repeat(10_000)}}`]));
  if (kind === 5) return Buffer.from(r.pick(['1e999', '-1e999', '123456789012345678901234567890', '{"byMs":1e999}', '{"byMs":1e308}', '{"byMs":-0}', '{"byMs":5e-324}', '0', '""', 'null', 'true']));
  if (kind === 6) return Buffer.from(r.pick(['{"__proto__":{"polluted":"yes"}}', '{"constructor":{"prototype":{"polluted":"yes"}}}', '{"__proto__":{"argv":["true"]}}', '{"force":true,"__proto__":{"polluted":"yes"}}', '{"byMs":5,"__proto__":{"polluted":"yes"}}']));
  if (isExtend) return Buffer.from(r.pick(['{"byMs":0}', '{"byMs":-5}', '{"byMs":"5"}', '{"byMs":1000}', '{"byMs":31622400001}', '{}', '[]', '{"byMs":1,"x":1}']));
  if (isStop) return Buffer.from(r.pick(['{}', '{"force":true}', '{"force":"yes"}', '[]', 'null', '{"force":true,"x":1}']));
  if (isRuns || r.chance(0.5)) return Buffer.from(runBody(r));
  return Buffer.from(JSON.stringify({ [randomText(r, 10)]: randomText(r, 10) }));
}

const CONTENT_TYPES = ['application/json', 'application/json', 'application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx', ';', ''];

function header(name: string, value: string): string {
  return `${name}: ${value}\r\n`;
}

interface Target {
  port: number;
  token: string;
  epoch: string;
  login: () => string;
}

/** One structured request, most of it plausible, some of it wrong. */
function structuredCase(r: Rng, n: number, via: 'unix' | 'tcp', t: Target): FuzzCase {
  const method = randomMethod(r);
  let path = randomPath(r);
  if (via === 'tcp' && path.startsWith('/login') && r.chance(0.3)) path = t.login();
  const version = r.chance(0.9) ? 'HTTP/1.1' : r.pick(['HTTP/1.0', 'HTTP/1.0', 'HTTP/1.2', 'HTTP/2.0', 'HTTP/0.9']);
  let head = `${method} ${path} ${version}\r\n`;
  const hostHeader = via === 'unix' ? r.pick(['localhost', 'evil.example', 'x']) : r.chance(0.85) ? r.pick([`127.0.0.1:${t.port}`, `localhost:${t.port}`, 'localhost', '127.0.0.1']) : r.pick(['evil.example', '127.0.0.1.nip.io', `127.0.0.1:${t.port + 1}`, '', ' ', 'x'.repeat(9000)]);
  if (r.chance(0.95)) head += header('Host', hostHeader);
  if (r.chance(0.05)) head += header('Host', r.pick(['evil.example', 'localhost']));
  if (via === 'tcp' && r.chance(0.85)) head += header('Authorization', `Bearer ${t.token}`);
  else if (r.chance(0.3)) head += header('Authorization', r.pick(['Bearer', 'Bearer ', `Bearer ${'A'.repeat(43)}`, `bearer ${t.token}`, `Basic ${'x'.repeat(20)}`, 'x'.repeat(12_000)]));
  if (r.chance(0.1)) head += header('Origin', r.pick(['null', 'http://evil.example', `http://127.0.0.1:${t.port}`, 'http://localhost', '%', randomText(r, 10).replace(/[\r\n]/g, '')]));
  if (r.chance(0.1)) head += header('Cookie', r.pick(['warden_session=forged', 'warden_session=', '=; ;;=x', `warden_session=${'x'.repeat(5000)}`, 'a=b; warden_session']));
  if (r.chance(0.05)) head += header('Last-Event-ID', r.pick([`${t.epoch}-0`, `${t.epoch}-99999999999`, `${t.epoch}--5`, `${t.epoch}-1.5`, 'x-1', '-', `${t.epoch}-`]));
  if (r.chance(0.05)) head += header('Expect', '100-continue');
  if (r.chance(0.03)) head += 'Connection: Upgrade\r\nUpgrade: websocket\r\n';
  if (r.chance(0.05)) head += header('X-Huge', 'h'.repeat(r.pick([1000, 8000, 20_000])));
  if (r.chance(0.05)) head += header(r.pick(['X Bad', 'X:Colon', '', 'Ä']), 'v');
  if (r.chance(0.05)) for (let i = 0; i < 50; i++) head += header('X-Dup', String(i));
  const keepAlive = r.chance(0.1);
  if (!keepAlive) head += header('Connection', 'close');

  let body = randomBody(r, path);
  if (body && r.chance(0.01)) body = Buffer.alloc(MAX_BODY_BYTES + 1 + r.int(1000), 0x20); // over the limit
  if (body && r.chance(0.9)) head += header('Content-Type', r.pick(CONTENT_TYPES));
  let mode: FuzzCase['mode'] = 'answer';
  const framing = r.chance(0.75) ? 0 : r.int(20);
  let bodyBytes: Buffer = body ?? Buffer.alloc(0);
  let label = `${via} ${method.slice(0, 20)} ${path.slice(0, 120)}`;
  if (framing < 13) {
    if (body || r.chance(0.2)) head += header('Content-Length', String(bodyBytes.length));
  } else if (framing < 15) {
    // Chunked, well formed.
    head += header('Transfer-Encoding', 'chunked');
    const chunks: Buffer[] = [];
    for (let off = 0; off < bodyBytes.length; ) {
      const size = 1 + r.int(Math.max(1, Math.min(70_000, bodyBytes.length - off)));
      chunks.push(Buffer.from(`${size.toString(16)}\r\n`), bodyBytes.subarray(off, off + size), Buffer.from('\r\n'));
      off += size;
    }
    chunks.push(Buffer.from('0\r\n\r\n'));
    bodyBytes = Buffer.concat(chunks);
    label += ' [chunked]';
  } else if (framing === 15) {
    // Declares more than it sends: the host waits for the rest; dropped after a while.
    head += header('Content-Length', String(bodyBytes.length + 1 + r.int(1000)));
    mode = 'hold';
    label += ' [short body]';
  } else if (framing === 16) {
    // Declares less: the rest reads as a next request, usually garbage.
    head += header('Content-Length', String(r.int(bodyBytes.length + 1)));
    label += ' [long body]';
  } else if (framing === 17) {
    head += header('Content-Length', r.pick(['abc', '-1', '1e3', ' 5', '0x10', '99999999999999999999', '', '5, 5', '+5']));
    // Some of these parse (" 5" is 5 after the optional whitespace): the host may rightly wait for a body that never comes.
    mode = 'hold';
    label += ' [bad content-length]';
  } else if (framing === 18) {
    head += header('Content-Length', String(bodyBytes.length)) + header('Content-Length', String(bodyBytes.length + r.int(2)));
    label += ' [duplicate content-length]';
  } else {
    head += header('Transfer-Encoding', r.pick(['chunked', 'gzip, chunked', 'identity', 'chunked, chunked'])) + header('Content-Length', String(bodyBytes.length));
    if (r.chance(0.5)) bodyBytes = Buffer.concat([Buffer.from(`${r.pick(['zz', '-1', 'ffffffffffffffff', '1;ext=1'])}\r\n`), bodyBytes]);
    // Refused by the parser today; a lenient one could read a chunk size and wait for it.
    mode = 'hold';
    label += ' [transfer-encoding and content-length]';
  }
  const raw = Buffer.concat([Buffer.from(`${head}\r\n`, 'utf8'), bodyBytes]);
  // Sometimes in pieces, the way a slow client sends.
  const pieces: Buffer[] = [];
  if (r.chance(0.15)) {
    const cuts = 2 + r.int(4);
    let off = 0;
    for (let i = 0; i < cuts && off < raw.length; i++) {
      const size = i === cuts - 1 ? raw.length - off : 1 + r.int(Math.max(1, Math.floor((raw.length - off) / 2)));
      pieces.push(raw.subarray(off, off + size));
      off += size;
    }
    if (off < raw.length) pieces.push(raw.subarray(off));
  } else pieces.push(raw);
  const isEvents = method === 'GET' && /^\/api\/v1\/events(\?|$)/.test(path);
  return { n, via, label, method, pieces, gapMs: pieces.length > 1 ? 1 + r.int(10) : 0, mode, holdMs: 10 + r.int(150), sse: isEvents };
}

const GARBAGE_LINES = [
  'GARBAGE\r\n\r\n',
  'GET\r\n\r\n',
  'GET /\r\n',
  'GET / HTTP/9.9\r\nHost: localhost\r\n\r\n',
  'GET / HTTP/1.1 extra\r\nHost: localhost\r\n\r\n',
  '\r\n\r\n\r\n',
  'GET /\u0000 HTTP/1.1\r\nHost: localhost\r\n\r\n',
  'GET / HTTP/1.1\r\nHost localhost\r\n\r\n',
  'GET / HTTP/1.1\r\nHost: localhost\r\n continued\r\n\r\n',
  'GET / HTTP/1.1\nHost: localhost\n\n',
  'GET /api/v1/host HTTP/1.1\r\nHost: local\u0000host\r\n\r\n',
  'GET /api/v1/host HTTP/1.1\r\nHost: localhost\r\nX: a\rb\r\n\r\n',
  ' GET / HTTP/1.1\r\n\r\n',
  'CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: localhost\r\n\r\n',
  'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n',
  '\u0016\u0003\u0001\u0002\u0000\u0001\u0000\u01fc\u0003\u0003', // a TLS ClientHello's start
  'POST /api/v1/runs HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
  'POST /api/v1/runs HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\nX-Trailer: 1\r\n\r\n',
  'GET /api/v1/host HTTP/1.1\r\nHost: localhost\r\n\r\nGET /api/v1/host HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n',
];

function rawCase(r: Rng, n: number, via: 'unix' | 'tcp', t: Target): FuzzCase {
  const kind = r.int(4);
  const base = (c: Omit<FuzzCase, 'n' | 'via' | 'method' | 'sse'> & { method?: string }): FuzzCase => ({ n, via, method: 'GET', sse: false, ...c });
  if (kind === 0) {
    const text = r.pick(GARBAGE_LINES);
    // Garbage may still parse as a complete request; the host answers or closes, or nothing is owed: hold, then drop.
    return base({ label: `${via} raw ${JSON.stringify(text.slice(0, 60))}`, pieces: [Buffer.from(text, 'latin1')], gapMs: 0, mode: 'hold', holdMs: 20 + r.int(150) });
  }
  if (kind === 1) {
    return base({ label: `${via} raw random bytes`, pieces: [r.bytes(1 + r.int(2000))], gapMs: 0, mode: 'hold', holdMs: 10 + r.int(100) });
  }
  const auth = via === 'tcp' ? `Authorization: Bearer ${t.token}\r\n` : '';
  const full = Buffer.from(`POST /api/v1/runs HTTP/1.1\r\nHost: 127.0.0.1:${t.port}\r\n${auth}Content-Type: application/json\r\nContent-Length: 17\r\n\r\n{"argv":["true"]}`);
  if (kind === 2) {
    // Half a request, then gone.
    const cut = 1 + r.int(full.length - 2);
    return base({ label: `${via} half request (${cut} of ${full.length} bytes)`, method: 'POST', pieces: [full.subarray(0, cut)], gapMs: 0, mode: 'hold', holdMs: r.int(50) });
  }
  // Slowloris: headers a few bytes at a time, never finished.
  const headEnd = full.indexOf('\r\n\r\n');
  const pieces: Buffer[] = [];
  let off = 0;
  const count = 3 + r.int(6);
  for (let i = 0; i < count && off < headEnd - 1; i++) {
    const size = 1 + r.int(Math.max(1, Math.floor((headEnd - off) / 4)));
    pieces.push(full.subarray(off, Math.min(headEnd - 1, off + size)));
    off += size;
  }
  return base({ label: `${via} slowloris (${pieces.length} pieces)`, method: 'POST', pieces, gapMs: 5 + r.int(30), mode: 'hold', holdMs: 10 + r.int(100) });
}

function sseCase(r: Rng, n: number, via: 'unix' | 'tcp', t: Target): FuzzCase {
  const query = r.pick(['', `?run=${r.hex(12)}`, `?run=${r.hex(12)}&since=start`, `?lastEventId=${t.epoch}-0`, '?lastEventId=garbage', `?lastEventId=${t.epoch}-1e400`]);
  let head = `GET /api/v1/events${query} HTTP/1.1\r\nHost: 127.0.0.1:${t.port}\r\nAccept: text/event-stream\r\n`;
  if (via === 'tcp') head += `Authorization: Bearer ${t.token}\r\n`;
  if (r.chance(0.3)) head += `Last-Event-ID: ${r.pick([`${t.epoch}-1`, `${t.epoch}-999999`, 'x', '', `${t.epoch}`])}\r\n`;
  return { n, via, label: `${via} event stream ${query}`, method: 'GET', pieces: [Buffer.from(`${head}\r\n`)], gapMs: 0, mode: 'answer', holdMs: r.int(200), sse: true };
}

function generate(seed: number, t: Target): FuzzCase[] {
  const r = prng(seed);
  const cases: FuzzCase[] = [];
  for (let n = 0; n < TOTAL; n++) {
    const via = r.chance(0.5) ? 'unix' : 'tcp';
    const k = r.next();
    if (k < 0.72) cases.push(structuredCase(r, n, via, t));
    else if (k < 0.9) cases.push(rawCase(r, n, via, t));
    else cases.push(sseCase(r, n, via, t));
  }
  return cases;
}

// ---------------------------------------------------------------------------
// Execution

/** Parses complete answers off the front of `buf`; returns them and what is left. */
function takeAnswers(buf: Buffer, method: string, answers: Answer[]): { rest: Buffer; streaming: boolean } {
  for (;;) {
    const end = buf.indexOf('\r\n\r\n');
    if (end < 0) return { rest: buf, streaming: false };
    const head = buf.subarray(0, end).toString('latin1');
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(head);
    if (!m) return { rest: Buffer.alloc(0), streaming: false };
    const status = Number(m[1]);
    const headers: Record<string, string> = {};
    for (const line of head.split('\r\n').slice(1)) {
      const colon = line.indexOf(':');
      if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const after = buf.subarray(end + 4);
    if (status >= 100 && status < 200) {
      buf = after;
      continue;
    }
    if ((headers['content-type'] ?? '').startsWith('text/event-stream')) {
      answers.push({ status, headers, body: '' });
      return { rest: Buffer.alloc(0), streaming: true };
    }
    let bodyLength = 0;
    if (method === 'HEAD' || status === 204 || status === 304) bodyLength = 0;
    else if (headers['content-length'] !== undefined) bodyLength = Number(headers['content-length']);
    else if ((headers['transfer-encoding'] ?? '').includes('chunked')) {
      const last = after.indexOf('0\r\n\r\n');
      if (last < 0) return { rest: buf, streaming: false };
      answers.push({ status, headers, body: after.subarray(0, last).toString('utf8') });
      buf = after.subarray(last + 5);
      continue;
    }
    if (after.length < bodyLength) return { rest: buf, streaming: false };
    answers.push({ status, headers, body: after.subarray(0, bodyLength).toString('utf8') });
    buf = after.subarray(bodyLength);
  }
}

function execute(c: FuzzCase, connectTo: (via: 'unix' | 'tcp') => Socket): Promise<Outcome> {
  return new Promise((resolvePromise) => {
    const socket = connectTo(c.via);
    const answers: Answer[] = [];
    const timers: NodeJS.Timeout[] = [];
    let buf: Buffer = Buffer.alloc(0);
    let done = false;
    let closedByHost = false;
    let timedOut = false;
    let error: string | null = null;
    const finish = () => {
      if (done) return;
      done = true;
      for (const timer of timers) clearTimeout(timer);
      socket.destroy();
      resolvePromise({ c, answers, closedByHost, timedOut, error });
    };
    timers.push(
      setTimeout(() => {
        timedOut = true;
        finish();
      }, SAFETY_TIMEOUT_MS),
    );
    socket.on('data', (chunk: Buffer) => {
      if (done) return;
      buf = Buffer.concat([buf, chunk]);
      const before = answers.length;
      const { rest, streaming } = takeAnswers(buf, c.method, answers);
      buf = rest;
      if (streaming) {
        // An event stream: keep it a moment, then drop it.
        timers.push(setTimeout(finish, c.holdMs));
      } else if (answers.length > before && c.mode === 'answer') finish();
    });
    socket.on('error', (e: NodeJS.ErrnoException) => {
      error = e.code ?? e.message;
    });
    socket.on('end', () => {
      closedByHost = true;
    });
    socket.on('close', () => {
      if (!done) closedByHost = true;
      finish();
    });
    let i = 0;
    const writeNext = () => {
      if (done || socket.destroyed) return;
      if (i < c.pieces.length) {
        socket.write(c.pieces[i++]!);
        if (i < c.pieces.length) timers.push(setTimeout(writeNext, c.gapMs));
        else writeNext();
        return;
      }
      if (c.mode === 'hold') timers.push(setTimeout(finish, c.holdMs));
    };
    writeNext();
  });
}

async function runAll(cases: FuzzCase[], connectTo: (via: 'unix' | 'tcp') => Socket): Promise<Outcome[]> {
  const outcomes: Outcome[] = new Array(cases.length);
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const index = next++;
      outcomes[index] = await execute(cases[index]!, connectTo);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return outcomes;
}

function describeCase(c: FuzzCase): string {
  const raw = Buffer.concat(c.pieces);
  return `#${c.n} ${c.label}\n    ${JSON.stringify(raw.subarray(0, 400).toString('latin1'))}${raw.length > 400 ? ` ... (${raw.length} bytes)` : ''}`;
}

// ---------------------------------------------------------------------------
// The test

let dir: string;
let host: Host;
let outcomes: Outcome[] = [];
const processErrors: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'wfz-'));
  host = await startHost({ stateDir: join(dir, 's'), port: 0, webRoot: null, history: false });
});

afterAll(async () => {
  await host?.shutdown();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The outcomes of the fuzz run: every later check fails, rather than passing vacuously, without them. */
function fuzzed(): Outcome[] {
  expect(outcomes.filter(Boolean), 'the fuzz run did not complete').toHaveLength(TOTAL);
  return outcomes;
}

function get(via: 'unix' | 'tcp', path: string, method = 'GET', body?: string): Promise<{ status: number; body: string }> {
  const tcp = host.tcp!;
  const where = via === 'unix' ? { socketPath: host.socketPath } : { host: '127.0.0.1', port: tcp.port };
  const headers: Record<string, string> = via === 'tcp' ? { Host: `127.0.0.1:${tcp.port}`, Authorization: `Bearer ${tcp.token}` } : { Host: 'localhost' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  return new Promise((resolvePromise, reject) => {
    const req = http.request({ ...where, method, path, headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolvePromise({ status: res.statusCode!, body: text }));
    });
    req.setTimeout(30_000, () => req.destroy(new Error(`no answer to ${method} ${path}`)));
    req.on('error', reject);
    req.end(body);
  });
}

describe(`the control API under ${TOTAL} malformed requests (seed ${SEED})`, () => {
  it('answers or closes every one, on both listeners', async () => {
    const tcp = host.tcp!;
    const onUncaught = (error: unknown) => processErrors.push(`uncaughtException: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    const onRejection = (reason: unknown) => processErrors.push(`unhandledRejection: ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}`);
    process.on('uncaughtException', onUncaught);
    process.on('unhandledRejection', onRejection);
    try {
      const cases = generate(SEED, { port: tcp.port, token: tcp.token, epoch: host.hub.epoch, login: () => {
          const url = new URL(host.loginUrl()!);
          return `${url.pathname}${url.search}`;
        } });
      expect(cases).toHaveLength(TOTAL);
      outcomes = await runAll(cases, (via) => (via === 'unix' ? connect(host.socketPath) : connect(tcp.port, '127.0.0.1')));
      // Let anything the host still does for dropped connections settle before looking.
      await new Promise((r) => setTimeout(r, 200));
    } finally {
      process.off('uncaughtException', onUncaught);
      process.off('unhandledRejection', onRejection);
    }

    const histogram = new Map<string, number>();
    for (const o of outcomes) {
      const key = o.answers.length > 0 ? String(o.answers[0]!.status) : o.timedOut ? 'timeout' : o.closedByHost ? 'closed' : 'dropped';
      histogram.set(key, (histogram.get(key) ?? 0) + 1);
    }
    console.log(`server-fuzz: outcomes ${JSON.stringify(Object.fromEntries([...histogram].sort()))}`);
    expect(outcomes.filter(Boolean)).toHaveLength(TOTAL);
    // Both listeners were exercised, and most requests got an answer.
    expect(outcomes.some((o) => o.c.via === 'unix' && o.answers.length > 0)).toBe(true);
    expect(outcomes.some((o) => o.c.via === 'tcp' && o.answers.length > 0)).toBe(true);
  });

  it('no uncaught exception or unhandled rejection fired', () => {
    fuzzed();
    expect(processErrors).toEqual([]);
  });

  it('no answer was a 5xx', () => {
    const bad = fuzzed().filter((o) => o.answers.some((a) => a.status >= 500));
    const report = bad.map((o) => `${describeCase(o.c)}\n    -> ${o.answers.map((a) => `${a.status} ${a.body.slice(0, 300)}`).join(' | ')}`);
    expect(report, `requests answered with 5xx (seed ${SEED}):\n${report.join('\n')}`).toEqual([]);
  });

  it('no complete request was left hanging', () => {
    const hung = fuzzed().filter((o) => o.c.mode === 'answer' && o.answers.length === 0 && o.timedOut && !o.closedByHost);
    const report = hung.map((o) => describeCase(o.c));
    expect(report, `requests with neither an answer nor a close in ${SAFETY_TIMEOUT_MS} ms (seed ${SEED}):\n${report.join('\n')}`).toEqual([]);
  });

  it('every refusal from the handler is JSON { error, kind } on one plain line, its kind the status\'s', () => {
    const bad: string[] = [];
    for (const o of fuzzed()) {
      for (const a of o.answers) {
        if (a.status < 400 || o.c.method === 'HEAD') continue;
        const json = (a.headers['content-type'] ?? '').startsWith('application/json');
        // Node's own refusals (a missing Host on HTTP/1.1) carry no body.
        if (!json) {
          if (a.body !== '') bad.push(`${describeCase(o.c)}\n    -> ${a.status} not JSON: ${JSON.stringify(a.body.slice(0, 200))}`);
          continue;
        }
        let error: unknown;
        try {
          const parsed = JSON.parse(a.body) as unknown;
          const keys = typeof parsed === 'object' && parsed !== null ? Object.keys(parsed).sort().join() : '';
          const kind = keys === 'error,kind' ? (parsed as { kind?: unknown }).kind : undefined;
          // The status is the kind's (or an HTTP refusal's finer one of that kind: 405, 413, 415, 401).
          error = isErrorKind(kind) && kindOfHttpStatus(a.status) === kind ? (parsed as { error?: unknown }).error : undefined;
        } catch {
          error = undefined;
        }
        // eslint-disable-next-line no-control-regex
        if (typeof error !== 'string' || error === '' || /[\u0000-\u001f\u007f\u2028\u2029]/.test(error) || /\bat \S+ \(|\.ts:\d+/.test(error)) {
          bad.push(`${describeCase(o.c)}\n    -> ${a.status} ${JSON.stringify(a.body.slice(0, 300))}`);
        }
      }
    }
    expect(bad.slice(0, 10), `${bad.length} refusals are not one plain line (seed ${SEED}); the first ten:\n${bad.slice(0, 10).join('\n')}`).toEqual([]);
  });

  it('left Object.prototype and Array.prototype alone', () => {
    fuzzed();
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(PROTO_NAMES);
    expect(Object.getOwnPropertyNames(Array.prototype).sort()).toEqual(ARRAY_PROTO_NAMES);
    const probe = {} as Record<string, unknown>;
    expect(probe.polluted).toBeUndefined();
    expect(probe.argv).toBeUndefined();
    expect(Object.getPrototypeOf(probe)).toBe(Object.prototype);
  });

  it('still serves both listeners afterwards', async () => {
    for (const via of ['unix', 'tcp'] as const) {
      const reply = await get(via, '/api/v1/host');
      expect(reply.status, via).toBe(200);
      expect(JSON.parse(reply.body)).toMatchObject({ pid: process.pid, accepting: true });
    }
  });

  it('still runs a command to completed afterwards, on both listeners', async () => {
    for (const via of ['unix', 'tcp'] as const) {
      const started = await get(via, '/api/v1/runs', 'POST', JSON.stringify({ argv: ['echo', 'ok'] }));
      expect(started.status, started.body).toBe(201);
      const { id } = JSON.parse(started.body) as { id: string };
      const waited = await get(via, `/api/v1/runs/${id}/wait`);
      expect(waited.status, waited.body).toBe(200);
      expect(JSON.parse(waited.body)).toMatchObject({ id, verdict: 'completed', exitCode: 0, stdout: 'ok\n' });
    }
  });

  it('started no command but `true` (and the two echo checks)', () => {
    const argvs = new Set(host.supervisor.list().map((run) => JSON.stringify(run.argv)));
    argvs.delete(JSON.stringify(['true']));
    argvs.delete(JSON.stringify(['echo', 'ok']));
    expect([...argvs]).toEqual([]);
  });
});
