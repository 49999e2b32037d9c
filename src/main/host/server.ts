// The control API: WardenApi as HTTP + JSON routes (src/shared/http-api.ts
// ROUTES, answered from the table CONTROL_ROUTES below) and Server-Sent
// Events, plus the web-mode page. One handler serves
// both listeners; what differs is trust:
//   - the unix socket (0600 in a 0700 dir) is the user's own: no token;
//   - loopback TCP needs the bearer token (or the session cookie a one-time
//     login set), a Host header naming localhost or 127.0.0.1 (DNS rebinding),
//     and no foreign Origin.
// Every body and query goes through a schema (src/shared/schemas.ts); bad input
// gets a 4xx with a one-line reason. Nothing a client sends can crash the host.
// An error's status comes from its kind (src/shared/errors.ts), never from its
// message, and the body names the kind: { "error": "<one line>", "kind": "..." }.

import { createReadStream, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, resolve, sep } from 'node:path';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { WardenApi } from '../../shared/api';
import { AFTER_LOGIN_KEY, API_PREFIX, FIRST_LOAD_PATHS, OUTPUT_PAGE_DEFAULT_CHARS, OUTPUT_PAGE_MAX_CHARS } from '../../shared/http-api';
import { ALL_HOSTS, HOST_NAME, LOCAL_HOST, splitRunId } from '../../shared/hosts';
import { EVENT_TYPES } from '../../shared/events';
import { extendSchema, historyQuerySchema, inputSchema, searchQuerySchema, settingsSchema, parse, parseRunRequest, parseWaitOptions, sessionNameSchema, signalSchema, stopSchema } from '../../shared/schemas';
import { httpStatusOf, isWardenError, kindOfRefusal, WardenError, type ErrorKind, type HttpRefusal } from '../../shared/errors';
import { CONTENT_SECURITY_POLICY } from '../../shared/csp';
import type { EventHub } from './event-hub';
import { outputPage, type PageRange } from './output-page';
import { acceptsGzip, HeldAssets } from './held-assets';
import { OwnerPids, type PidOwner } from './owner-pids';

export const MAX_BODY_BYTES = 1024 * 1024;
export const SESSION_COOKIE = 'warden_session';
/** POST through the unix socket: a one-time login URL for the web UI of a running host. */
export const LOGIN_LINK_ROUTE = `${API_PREFIX}/login-link`;

export type Via = 'unix' | 'tcp';

export interface ControlServerOptions {
  api: WardenApi;
  hub: EventHub;
  /** The bearer token TCP clients must send. */
  token: string;
  /** The built renderer (index.html, assets/) for web mode; null: no page. */
  webRoot: string | null;
  /** The TCP port, for the Host and Origin checks. */
  port: () => number | null;
  maxBodyBytes?: number;
  /** Reports what went wrong inside the host (never a client's bad input). */
  log?: (line: string) => void;
  /**
   * A run started with ?owner=connection whose client's connection closed
   * while it was live (the client died or was killed): the host stops it.
   */
  onOwnerGone?: (runId: string, note?: string) => void;
  /** Whether a run is live: an owner watch of an ended run is dropped. */
  isLive?: (runId: string) => boolean;
}

/**
 * A refusal of the HTTP layer itself, with the status that says it closest
 * (405, 413, 415, 401 are each a kind's finer grain); its kind is the
 * status's unless given.
 */
/** A refusal of the HTTP layer: a kind, or one of HTTP's closer refusals, whose status comes from the table (src/shared/errors.ts). */
class HttpError extends WardenError {
  readonly status: number;
  constructor(
    refusal: ErrorKind | HttpRefusal,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(kindOfRefusal(refusal), message);
    this.status = httpStatusOf(refusal);
  }
}

const JSON_HEADERS = { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' };

/**
 * A body longer than this is written a slice at a time as the socket drains:
 * 50 clients waiting on results of 4 MB each would otherwise hold a 4 MB copy
 * each in their sockets' buffers at once, on top of the results themselves.
 */
const SLICE_CHARS = 64 * 1024;

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { ...JSON_HEADERS, 'Content-Length': String(Buffer.byteLength(text)), ...headers });
  if (text.length <= SLICE_CHARS) {
    res.end(text);
    return;
  }
  let at = 0;
  const pump = () => {
    while (!res.destroyed) {
      let end = Math.min(text.length, at + SLICE_CHARS);
      // Each write is encoded on its own: a surrogate pair split between two would become two U+FFFD.
      const last = text.charCodeAt(end - 1);
      if (end < text.length && last >= 0xd800 && last <= 0xdbff) end -= 1;
      const slice = text.slice(at, end);
      at = end;
      if (at >= text.length) {
        res.end(slice);
        return;
      }
      if (!res.write(slice)) {
        res.once('drain', pump);
        return;
      }
    }
  };
  pump();
}

function sendError(res: ServerResponse, status: number, kind: ErrorKind, message: string, headers: Record<string, string> = {}): void {
  // One plain line: no line breaks, and no control or bidi characters echoed from a client's input into a terminal.
  const line = message.replace(/\s*[\r\n\u2028\u2029]\s*/g, ' ').replace(/[\p{Cc}\u202a-\u202e\u2066-\u2069]/gu, '\ufffd');
  send(res, status, { error: line, kind }, headers);
}

/** A WardenError's answer: its status from its kind (an HttpError's own); null for anything else (a bug: a 500). */
function answerOf(error: unknown): { status: number; kind: ErrorKind; message: string; headers: Record<string, string> } | null {
  if (error instanceof HttpError) return { status: error.status, kind: error.kind, message: error.message, headers: error.headers };
  if (error instanceof URIError) return { status: httpStatusOf('bad-input'), kind: 'bad-input', message: 'The path has a malformed %-escape.', headers: {} };
  if (isWardenError(error)) return { status: httpStatusOf(error.kind), kind: error.kind, message: error.message, headers: {} };
  return null;
}

function readBody(req: IncomingMessage, limit: number): Promise<unknown> {
  return new Promise((resolvePromise, reject) => {
    const declared = req.headers['content-length'];
    if (declared !== undefined && Number(declared) > limit) {
      reject(new HttpError('too-large', `The body is over ${limit} bytes.`, { Connection: 'close' }));
      req.resume();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > limit) {
        failed = true;
        reject(new HttpError('too-large', `The body is over ${limit} bytes.`, { Connection: 'close' }));
        return;
      }
      chunks.push(chunk);
    });
    req.on('error', (error) => {
      if (!failed) reject(new HttpError('bad-input', `The request could not be read: ${error.message}`));
      failed = true;
    });
    req.on('end', () => {
      if (failed) return;
      if (size === 0) return resolvePromise(undefined);
      const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      if (type !== 'application/json') return reject(new HttpError('not-json', 'A request body must be JSON (Content-Type: application/json).'));
      try {
        resolvePromise(JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown);
      } catch (error) {
        reject(new HttpError('bad-input', `The body is not valid JSON: ${(error as Error).message}`));
      }
    });
  });
}

/** The owners a run start names in its query: its connection, and/or a process (pid, start time, label for the note). */
function ownerQuery(params: URLSearchParams): { connection: boolean; pid: PidOwner | null } {
  const allowed = new Set(['owner', 'ownerPid', 'ownerStart', 'ownerLabel']);
  for (const [key, value] of params) {
    if (!allowed.has(key)) throw new HttpError('bad-input', `Starting a run takes only the query owner=connection and ownerPid, ownerStart, ownerLabel, not ${key}.`);
    if (params.getAll(key).length > 1) throw new HttpError('bad-input', `The query gives ${key} twice.`);
    if (key === 'owner' && value !== 'connection') throw new HttpError('bad-input', `owner takes only connection, not ${JSON.stringify(value.slice(0, 40))}.`);
  }
  const pidText = params.get('ownerPid');
  const start = params.get('ownerStart');
  if ((pidText === null) !== (start === null)) throw new HttpError('bad-input', 'ownerPid and ownerStart go together (the start time tells a reused pid from its owner).');
  if (pidText === null || start === null) {
    if (params.has('ownerLabel')) throw new HttpError('bad-input', 'ownerLabel goes with ownerPid.');
    return { connection: params.has('owner'), pid: null };
  }
  const pid = Number(pidText);
  if (!/^\d{1,10}$/.test(pidText) || !Number.isSafeInteger(pid) || pid < 2) throw new HttpError('bad-input', `ownerPid takes a process id (a whole number from 2), not ${JSON.stringify(pidText.slice(0, 40))}.`);
  if (!/^\d{1,20}$/.test(start)) throw new HttpError('bad-input', `ownerStart takes the process's start time from /proc/PID/stat (a whole number), not ${JSON.stringify(start.slice(0, 40))}.`);
  const rawLabel = params.get('ownerLabel') ?? `process ${pid}`;
  const label = rawLabel.replace(/[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu, ' ').trim().slice(0, 120) || `process ${pid}`;
  return { connection: params.has('owner'), pid: { pid, startTime: start, label } };
}

/** A run's id in a route: the engine's, or ID@HOST for a configured remote's run (shared/hosts.ts). */
function runRef(text: string): string {
  if (splitRunId(text) === null) throw new HttpError('bad-input', `A run id is 6 to 32 hex characters, or that and @HOST for a remote's run, not ${JSON.stringify(text.slice(0, 80))}.`);
  return text;
}

/** Takes the host a query names out of it (the rest goes to its schema): a remote's name, 'local', or '*' where every host is allowed. */
function takeHost(params: URLSearchParams, what: string, all: boolean): string | undefined {
  const values = params.getAll('host');
  params.delete('host');
  if (values.length === 0) return undefined;
  const host = values[0]!;
  if (values.length > 1) throw new HttpError('bad-input', 'The query gives host twice.');
  if (host === LOCAL_HOST || HOST_NAME.test(host) || (all && host === ALL_HOSTS)) return host;
  throw new HttpError('bad-input', `${what} takes host=local${all ? ', host=*' : ''} or a remote's name, not ${JSON.stringify(host.slice(0, 40))}.`);
}

/** Query values as the schemas take them: numbers where the text is a number, comma lists for verdicts. */
function queryObject(params: URLSearchParams, numeric: string[], lists: string[] = []): Record<string, unknown> {
  // No prototype: "__proto__", "constructor" or "toString" are keys like any other (and unknown to every schema).
  const out = Object.create(null) as Record<string, unknown>;
  for (const [key, value] of params) {
    if (Object.hasOwn(out, key)) throw new HttpError('bad-input', `The query gives ${key} twice.`);
    if (lists.includes(key)) out[key] = value.includes(',') ? value.split(',') : value;
    else if (numeric.includes(key) && /^-?\d+(\.\d+)?$/.test(value)) out[key] = Number(value);
    else out[key] = value;
  }
  return out;
}

function waitOptionsFrom(params: URLSearchParams) {
  // until=log:/a,b/ keeps its comma: no list keys here.
  const q = queryObject(params, ['timeoutMs', 'stdoutFrom', 'stderrFrom']);
  const { stdoutFrom, stderrFrom, ...rest } = q;
  if ((stdoutFrom === undefined) !== (stderrFrom === undefined)) throw new HttpError('bad-input', 'stdoutFrom and stderrFrom go together.');
  if (stdoutFrom !== undefined) {
    if (rest.output !== undefined) throw new HttpError('bad-input', 'output and stdoutFrom/stderrFrom exclude each other.');
    rest.output = { stdout: stdoutFrom, stderr: stderrFrom };
  }
  return parseWaitOptions(rest);
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};

const PAGE_HEADERS = {
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
};

/**
 * On the app's page: the API answers its first view needs, fetched by the
 * browser as soon as the page arrives rather than after the app's script has
 * downloaded and run (same origin, so the session cookie goes with them); the
 * app's own fetches of the same URLs are served from these.
 */
const FIRST_LOAD_LINK = FIRST_LOAD_PATHS.map((path) => `<${path}>; rel=preload; as=fetch; crossorigin`).join(', ');

/** The build names its scripts and styles by their content (index-B7YFlXlW.js): one name is one content for good. */
const HASHED_ASSET = /^\/assets\/[\w.-]+-[\w-]{8}\.(?:js|css)$/;

/** A browser navigating to a page (not a script calling the API): it asked for HTML. */
function wantsPage(req: IncomingMessage, path: string): boolean {
  if (path === '/api' || path.startsWith('/api/')) return false;
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  return /\btext\/html\b/.test(req.headers.accept ?? '');
}

/**
 * The login page's one script: a browser opened on a deep link (#/runs/ID/output)
 * keeps that hash route in this origin's localStorage, so the login link (opened
 * from a terminal, usually in another tab, and redirected to /) lands on it.
 * Only a hash that looks like a route is kept; the app checks it again.
 */
const KEEP_ROUTE_SCRIPT = `try{var h=location.hash;if(/^#\\/[A-Za-z0-9._~@%\\/:-]{0,500}$/.test(h))localStorage.setItem('${AFTER_LOGIN_KEY}',JSON.stringify({hash:h,at:Date.now()}))}catch(e){}`;

/**
 * The page a browser without a (valid) session gets instead of a JSON error:
 * how to log in. No external resource, one inline style and one inline script,
 * each allowed by its hash: it passes the page's CSP.
 */
export function loginPage(reason: 'no-session' | 'bad-link'): string {
  const lead =
    reason === 'bad-link'
      ? 'This login link was used already or is not valid: each link works once.'
      : 'This browser is not logged in to this Warden host, or its login ended (a host forgets its logins when it restarts).';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Warden: log in</title>
<style>
:root { color-scheme: light dark; --bg: #f6f7f9; --panel: #fff; --text: #1d2127; --muted: #5c6470; --border: #dde1e6; --code: #f0f1f4; --accent: #2f6fd6; }
@media (prefers-color-scheme: dark) { :root { --bg: #16171b; --panel: #1e2026; --text: #e6e8eb; --muted: #9aa1ab; --border: #2e3139; --code: #121317; --accent: #6ea0ff; } }
body { margin: 0; min-height: 100vh; display: grid; place-items: center; background: var(--bg); color: var(--text); font: 14px/1.5 system-ui, sans-serif; }
main { max-width: 560px; margin: 24px; padding: 24px 32px; background: var(--panel); border: 1px solid var(--border); border-radius: 8px; }
h1 { margin: 0 0 8px; font-size: 20px; }
p { margin: 8px 0; }
pre { margin: 8px 0; padding: 8px 12px; background: var(--code); border-radius: 6px; font: 13px/1.5 ui-monospace, monospace; overflow-x: auto; }
.muted { color: var(--muted); }
</style>
</head>
<body>
<main data-testid="login-page">
<h1>Log in to Warden</h1>
<p>${lead}</p>
<p>In a terminal on this machine, ask the running host for a login link, then open it in this browser:</p>
<pre>warden serve --open</pre>
<p class="muted">With a host already running, that prints a fresh one-time link for it (and starts nothing). The link sets a session cookie for this browser only; the page never holds the token.</p>
</main>
<script>${KEEP_ROUTE_SCRIPT}</script>
</body>
</html>
`;
}

/** The app's policy allows no inline style or script; the login page's one <style> block and one <script> (the same for every reason) are allowed by their hashes. */
const LOGIN_PAGE_POLICY = CONTENT_SECURITY_POLICY.replace(
  "style-src 'self'",
  `style-src 'sha256-${createHash('sha256').update(/<style>([\s\S]*?)<\/style>/.exec(loginPage('no-session'))![1]!).digest('base64')}'`,
).replace("script-src 'self'", `script-src 'sha256-${createHash('sha256').update(KEEP_ROUTE_SCRIPT).digest('base64')}'`);

function sendLoginPage(res: ServerResponse, reason: 'no-session' | 'bad-link', method: string | undefined): void {
  if (res.headersSent || res.destroyed) return;
  const html = loginPage(reason);
  res.writeHead(httpStatusOf('no-token'), { ...PAGE_HEADERS, 'Content-Security-Policy': LOGIN_PAGE_POLICY, 'Content-Type': 'text/html; charset=utf-8', 'Content-Length': String(Buffer.byteLength(html)), 'Cache-Control': 'no-store', 'WWW-Authenticate': 'Bearer realm="warden"' });
  res.end(method === 'HEAD' ? undefined : html);
}

/** ?stream=stdout|stderr&offset=N (or line=N)&limit=M of GET /runs/ID/output, each given at most once; anything else is a 400. */
function outputRange(params: URLSearchParams): PageRange {
  for (const key of params.keys()) {
    if (key !== 'stream' && key !== 'offset' && key !== 'line' && key !== 'limit') throw new HttpError('bad-input', `A page of output takes stream, offset or line, and limit, not ${key}.`);
    if (params.getAll(key).length > 1) throw new HttpError('bad-input', `${key} is given more than once.`);
  }
  if (params.has('offset') && params.has('line')) throw new HttpError('bad-input', 'A page of output starts at an offset or at a line, not both.');
  const stream = params.get('stream');
  if (stream !== 'stdout' && stream !== 'stderr') throw new HttpError('bad-input', `stream is stdout or stderr, not ${JSON.stringify(stream ?? '')}.`);
  const whole = (key: string, fallback: number, min: number, max: number): number => {
    const text = params.get(key);
    if (text === null) return fallback;
    const n = Number(text);
    if (!/^\d{1,15}$/.test(text) || n < min || n > max) throw new HttpError('bad-input', `${key} takes a whole number from ${min} to ${max}, not ${JSON.stringify(text.slice(0, 40))}.`);
    return n;
  };
  return {
    stream,
    offset: whole('offset', 0, 0, Number.MAX_SAFE_INTEGER),
    ...(params.has('line') ? { line: whole('line', 1, 1, Number.MAX_SAFE_INTEGER) } : {}),
    limit: whole('limit', OUTPUT_PAGE_DEFAULT_CHARS, 1, OUTPUT_PAGE_MAX_CHARS),
  };
}

function tokensEqual(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function cookie(req: IncomingMessage, name: string): string | null {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

/** What a route's handler answers from: the request, and the handler's state. */
interface RouteCall {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  via: Via;
  /** The path's ID (already checked: a run reference) and NAME (as sent: the handler decodes and checks it). */
  params: { id: string; name: string };
  /** The request's JSON body (undefined when empty), read at most `maxBodyBytes`. */
  body: () => Promise<unknown>;
  api: WardenApi;
  hub: EventHub;
  options: ControlServerOptions;
  /** Runs owned by the connection that started them, each with what hands it over (POST /runs/ID/release). */
  connectionOwned: Map<string, () => void>;
  ownerPids: OwnerPids;
  oneTimeLogin: () => string;
}

export interface ControlRoute {
  method: 'GET' | 'POST';
  /**
   * Under API_PREFIX, as docs/architecture.md writes it ("The host and its
   * API"): a segment ID is a run (ID or ID@HOST, checked before the method),
   * NAME a session's name (checked by its handler, after the method).
   */
  path: string;
  handle: (call: RouteCall) => Promise<void> | void;
}

/** The control API (docs/architecture.md, "The host and its API"; a test holds the two the same). */
export const CONTROL_ROUTES: readonly ControlRoute[] = [
  { method: 'GET', path: '/host', handle: async ({ res, api }) => send(res, 200, await api.host()) },
  {
    method: 'GET',
    path: '/hosts',
    handle: async ({ res, api }) => {
      if (!api.hosts) throw new HttpError('not-found', 'This host relays no remote hosts.');
      send(res, 200, await api.hosts());
    },
  },
  {
    method: 'POST',
    path: '/login-link',
    handle: ({ res, via, options, oneTimeLogin }) => {
      // A browser login for the user at the terminal: only through the private socket.
      if (via !== 'unix') throw new HttpError('denied', 'Login links are given through the control socket only.');
      const port = options.port();
      if (port === null) throw new HttpError('unavailable', 'This host serves no web UI (it was started with --no-tcp).');
      send(res, 200, { url: `http://127.0.0.1:${port}${oneTimeLogin()}` });
    },
  },
  {
    method: 'GET',
    path: '/runs',
    handle: async ({ res, url, api }) => {
      // ?output=none: a listing (each run without stdout and stderr, their lengths in outputChars).
      // ?hosts=all: every connected remote's runs too (the app's list).
      for (const [key, value] of url.searchParams) {
        if ((key !== 'output' || (value !== 'none' && value !== 'all')) && (key !== 'hosts' || value !== 'all')) throw new HttpError('bad-input', `Listing runs takes only the query output=none or output=all, and hosts=all, not ${key}=${value}.`);
      }
      const output = url.searchParams.get('output');
      send(res, 200, await api.list({ ...(output === 'none' ? { output: 'none' } : {}), ...(url.searchParams.has('hosts') ? { hosts: 'all' } : {}) }));
    },
  },
  {
    method: 'POST',
    path: '/runs',
    handle: async ({ req, res, url, body, api, options, connectionOwned, ownerPids }) => {
      // ?owner=connection: the run belongs to this client, as a command belongs to timeout(1);
      // when the connection closes before the run ends, the host stops it.
      // ?ownerPid=PID&ownerStart=T[&ownerLabel=L]: it belongs to that process; when it is gone, the host stops it.
      const host = takeHost(url.searchParams, 'Starting a run', false);
      const owned = ownerQuery(url.searchParams);
      if (host !== undefined && host !== LOCAL_HOST && (owned.connection || owned.pid)) {
        throw new HttpError('bad-input', `A run on remote host ${host} cannot be owned by a client of this host (that host cannot watch it); start it without owner, or through warden --remote ${host}.`);
      }
      const request = parseRunRequest(await body());
      const started = await api.start(request, { ...(host !== undefined ? { host } : {}), ...(owned.pid ? { ownedBy: { pid: owned.pid.pid, label: owned.pid.label } } : {}) });
      if (owned.connection && started.state !== 'ended') {
        const socket = req.socket;
        const gone = () => {
          connectionOwned.delete(started.id);
          options.onOwnerGone?.(started.id);
        };
        if (socket.destroyed) queueMicrotask(gone);
        else {
          socket.once('close', gone);
          // POST /runs/ID/release hands it over (warden run --yield, at its first yield).
          connectionOwned.set(started.id, () => socket.off('close', gone));
        }
      }
      if (owned.pid && started.state !== 'ended') ownerPids.add(started.id, owned.pid);
      send(res, 201, started);
    },
  },
  {
    method: 'GET',
    path: '/runs/ID',
    handle: async ({ res, url, params, api }) => {
      // ?output=none: the run without its output (a view then fetches it in pages from /output).
      const output = url.searchParams.get('output');
      if (output !== null && output !== 'none' && output !== 'all') throw new HttpError('bad-input', `output is none or all, not ${JSON.stringify(output.slice(0, 40))}.`);
      const result = await api.get(params.id, output === 'none' ? { output: 'none' } : {});
      if (!result) throw new WardenError('not-found', `No run with id ${JSON.stringify(params.id)}.`);
      send(res, 200, result);
    },
  },
  { method: 'GET', path: '/runs/ID/wait', handle: async ({ res, url, params, api }) => send(res, 200, await api.wait(params.id, waitOptionsFrom(url.searchParams))) },
  { method: 'POST', path: '/runs/ID/stop', handle: async ({ res, params, body, api }) => send(res, 200, await api.stop(params.id, parse(stopSchema, (await body()) ?? {}))) },
  {
    method: 'POST',
    path: '/runs/ID/extend',
    handle: async ({ res, params, body, api }) => {
      const { byMs } = parse(extendSchema, await body());
      send(res, 200, await api.extend(params.id, byMs));
    },
  },
  { method: 'POST', path: '/runs/ID/input', handle: async ({ res, params, body, api }) => send(res, 200, await api.input(params.id, parse(inputSchema, await body()))) },
  {
    method: 'GET',
    path: '/ports',
    handle: async ({ res, api }) => {
      if (!api.ports) throw new HttpError('not-found', 'This host lists no ports.');
      send(res, 200, await api.ports());
    },
  },
  {
    method: 'POST',
    path: '/runs/ID/signal',
    handle: async ({ res, params, body, api }) => {
      const { pid, signal } = parse(signalSchema, await body());
      send(res, 200, await api.signal(params.id, pid, signal));
    },
  },
  {
    method: 'POST',
    path: '/runs/ID/release',
    handle: async ({ res, params, body, connectionOwned }) => {
      // The connection that started the run (?owner=connection) no longer owns it: `warden run --yield`
      // owns its run until its first yield, then leaves it to its --owner-pid, or to nobody.
      await body();
      const release = connectionOwned.get(params.id);
      connectionOwned.delete(params.id);
      release?.();
      send(res, 200, { released: release !== undefined });
    },
  },
  { method: 'GET', path: '/runs/ID/timeline', handle: async ({ res, params, api }) => send(res, 200, await api.timeline(params.id)) },
  { method: 'GET', path: '/runs/ID/output', handle: async ({ res, url, params, api }) => send(res, 200, await outputPage(api, params.id, outputRange(url.searchParams))) },
  {
    method: 'GET',
    path: '/search',
    handle: async ({ res, url, api }) => {
      if (!api.search) throw new HttpError('not-found', 'This host does not search.');
      const query = parse(searchQuerySchema, queryObject(url.searchParams, ['context', 'maxMatches', 'maxRuns', 'since'], ['verdict']));
      send(res, 200, await api.search(query));
    },
  },
  {
    method: 'GET',
    path: '/history',
    handle: async ({ res, url, api }) => {
      const host = takeHost(url.searchParams, 'The history', true);
      const query = parse(historyQuerySchema, queryObject(url.searchParams, ['exitCode', 'limit', 'since', 'until'], ['verdict']));
      send(res, 200, await api.history(host !== undefined ? { ...query, host } : query));
    },
  },
  { method: 'GET', path: '/settings', handle: async ({ res, api }) => send(res, 200, await api.settings()) },
  { method: 'POST', path: '/settings', handle: async ({ res, body, api }) => send(res, 200, await api.saveSettings(parse(settingsSchema, await body()))) },
  { method: 'GET', path: '/sessions', handle: async ({ res, api }) => send(res, 200, await api.sessions()) },
  {
    method: 'POST',
    path: '/sessions/NAME/restart',
    handle: async ({ res, params, body, api }) => {
      const name = parse(sessionNameSchema, decodeURIComponent(params.name));
      await body();
      send(res, 200, await api.restartSession(name));
    },
  },
  {
    method: 'POST',
    path: '/sessions/NAME/close',
    handle: async ({ res, params, body, api }) => {
      const name = parse(sessionNameSchema, decodeURIComponent(params.name));
      await body();
      send(res, 200, await api.closeSession(name));
    },
  },
  {
    method: 'GET',
    path: '/events',
    handle: ({ req, res, url, hub }) => {
      const run = url.searchParams.get('run');
      if (run !== null) runRef(run);
      const since = url.searchParams.get('since');
      if (since !== null && (since !== 'start' || run === null)) throw new HttpError('bad-input', 'since=start goes with run=ID (replays that run\'s buffered events).');
      for (const key of url.searchParams.keys()) {
        if (key !== 'run' && key !== 'since' && key !== 'lastEventId' && key !== 'batch' && key !== 'ended' && key !== 'types') throw new HttpError('bad-input', `The event stream takes run, since, lastEventId, batch, ended and types, not ${key}.`);
      }
      // types=started,ended: only events of those types (a monitor of ends needs no output).
      const typesText = url.searchParams.get('types');
      const types = typesText === null ? null : new Set(typesText.split(','));
      for (const type of types ?? []) if (!EVENT_TYPES.includes(type)) throw new HttpError('bad-input', `types takes a comma list of ${EVENT_TYPES.join(', ')}, not ${JSON.stringify(type.slice(0, 40))}.`);
      const batch = url.searchParams.get('batch');
      if (batch !== null && batch !== '1' && batch !== '0') throw new HttpError('bad-input', 'batch is 1 or 0.');
      // ended=summary: each ended run's result without its output (outputChars says how long it is), for a page that fetches output only for the run it shows.
      const ended = url.searchParams.get('ended');
      if (ended !== null && ended !== 'summary' && ended !== 'whole') throw new HttpError('bad-input', 'ended is summary or whole.');
      const lastEventId = (req.headers['last-event-id'] as string | undefined) ?? url.searchParams.get('lastEventId');
      hub.attach(res, { lastEventId, run, fromRunStart: since === 'start', batch: batch === '1', summary: ended === 'summary', types });
    },
  },
];

/**
 * The routes whose path matches, with the path's ID and NAME. A placeholder
 * takes one segment, never an empty one; all of a path's routes share one
 * pattern, so the params are one for all.
 */
export function matchRoutes(routes: readonly ControlRoute[], path: string): { routes: ControlRoute[]; params: { id: string; name: string } } {
  if (!path.startsWith(`${API_PREFIX}/`)) return { routes: [], params: { id: '', name: '' } };
  const given = path.slice(API_PREFIX.length).split('/');
  let params = { id: '', name: '' };
  const found = routes.filter((route) => {
    const pattern = route.path.split('/');
    if (pattern.length !== given.length) return false;
    const taken = { id: '', name: '' };
    for (let i = 0; i < pattern.length; i += 1) {
      const want = pattern[i]!;
      const got = given[i]!;
      if (want === 'ID' || want === 'NAME') {
        if (got === '') return false;
        taken[want === 'ID' ? 'id' : 'name'] = got;
      } else if (want !== got) return false;
    }
    params = taken;
    return true;
  });
  return { routes: found, params };
}

export interface ControlHandler {
  (req: IncomingMessage, res: ServerResponse, via: Via): void;
  /** A URL path + one-time token for a browser: the first visit trades it for a session cookie. */
  oneTimeLogin(): string;
}

export function createControlHandler(options: ControlServerOptions): ControlHandler {
  const { api, hub } = options;
  const limit = options.maxBodyBytes ?? MAX_BODY_BYTES;
  const oneTime = new Set<string>();
  const sessions = new Set<string>();
  const webRoot = options.webRoot ? resolve(options.webRoot) : null;
  const heldAssets = new HeldAssets();
  /** Runs owned by the connection that started them, each with what hands it over (POST /runs/ID/release). */
  const connectionOwned = new Map<string, () => void>();
  const ownerPids = new OwnerPids(
    (runId, note) => options.onOwnerGone?.(runId, note),
    (runId) => options.isLive?.(runId) ?? true,
  );

  /** DNS rebinding and cross-site requests: only pages on our own loopback origin. */
  function checkTcpOrigin(req: IncomingMessage): void {
    const port = options.port();
    const allowed = new Set(['127.0.0.1', 'localhost', ...(port !== null ? [`127.0.0.1:${port}`, `localhost:${port}`] : [])]);
    // An Origin names its port unless it is 80: only pages of our own port, never another server on localhost.
    const origins = new Set(port === null ? [] : port === 80 ? ['http://127.0.0.1', 'http://localhost'] : [`http://127.0.0.1:${port}`, `http://localhost:${port}`]);
    if ((req.headersDistinct.host?.length ?? 0) > 1) throw new HttpError('bad-input', 'The request has more than one Host header.');
    const host = (req.headers.host ?? '').toLowerCase();
    if (!allowed.has(host)) throw new HttpError('denied', 'This host answers only to localhost and 127.0.0.1 (the Host header named something else).');
    const origin = req.headers.origin;
    if (origin !== undefined && !origins.has(origin.toLowerCase())) throw new HttpError('denied', 'Requests from other sites are refused.');
  }

  function authorised(req: IncomingMessage): boolean {
    // The scheme is case-insensitive (RFC 9110, 11.1): bearer, BEARER and Bearer alike.
    const bearer = /^bearer[ \t]+(\S+)[ \t]*$/i.exec(req.headers.authorization ?? '');
    if (bearer && tokensEqual(bearer[1]!, options.token)) return true;
    const session = cookie(req, SESSION_COOKIE);
    return session !== null && sessions.has(session);
  }

  /** Answers an API path from CONTROL_ROUTES; any other path is the web page's. */
  async function route(req: IncomingMessage, res: ServerResponse, url: URL, via: Via): Promise<void> {
    const method = req.method ?? 'GET';
    const path = url.pathname;
    const matched = matchRoutes(CONTROL_ROUTES, path);
    if (matched.routes.length === 0) {
      if (path === '/api' || path.startsWith('/api/')) throw new HttpError('not-found', `No route ${path} (see docs/architecture.md, "The host and its API").`);
      return servePage(req, res, path, method);
    }
    // A run's id is checked before the method: a bad one is a 400 whatever the method.
    const params = matched.routes[0]!.path.split('/').includes('ID') ? { ...matched.params, id: runRef(decodeURIComponent(matched.params.id)) } : matched.params;
    const chosen = matched.routes.find((candidate) => candidate.method === method);
    if (!chosen) {
      const methods = matched.routes.map((candidate) => candidate.method);
      throw new HttpError('wrong-method', `${path} takes ${methods.join(' or ')}, not ${method}.`, { Allow: methods.join(', ') });
    }
    await chosen.handle({ req, res, url, via, params, body: async () => readBody(req, limit), api, hub, options, connectionOwned, ownerPids, oneTimeLogin: () => handler.oneTimeLogin() });
  }

  function servePage(req: IncomingMessage, res: ServerResponse, path: string, method: string): void {
    if (method !== 'GET' && method !== 'HEAD') throw new HttpError('wrong-method', `${path} takes GET.`, { Allow: 'GET, HEAD' });
    if (!webRoot) throw new HttpError('not-found', 'This host serves no web UI: build it with npm run build, then start warden serve again.');
    let file = resolve(join(webRoot, decodeURIComponent(path)));
    if (file !== webRoot && !file.startsWith(webRoot + sep)) throw new HttpError('not-found', 'Not found.');
    let stat = statOrNull(file);
    if (stat?.isDirectory()) {
      file = join(file, 'index.html');
      stat = statOrNull(file);
    }
    // The app's own routes (no file extension) get the page; a missing asset is a 404.
    if (!stat && extname(path) === '') {
      file = join(webRoot, 'index.html');
      stat = statOrNull(file);
    }
    if (!stat || !stat.isFile()) throw new HttpError('not-found', 'Not found.');
    const page = file === join(webRoot, 'index.html');
    const headers = {
      ...PAGE_HEADERS,
      'Content-Type': CONTENT_TYPES[extname(file)] ?? 'application/octet-stream',
      'Cache-Control': file.endsWith('index.html') ? 'no-store' : HASHED_ASSET.test(path) ? 'max-age=31536000, immutable' : 'max-age=3600',
      ...(page ? { Link: FIRST_LOAD_LINK } : {}),
    };
    const held = HASHED_ASSET.test(path) ? heldAssets.get(file, stat) : null;
    if (held) {
      // Written in one go from memory: not behind the API answers the same page asked for meanwhile.
      const gzip = held.gzip !== null && acceptsGzip(req.headers['accept-encoding']);
      const body = gzip ? held.gzip! : held.body;
      res.writeHead(200, { ...headers, ...(held.gzip !== null ? { Vary: 'Accept-Encoding' } : {}), ...(gzip ? { 'Content-Encoding': 'gzip' } : {}), 'Content-Length': String(body.length) });
      res.end(method === 'HEAD' ? undefined : body);
      return;
    }
    res.writeHead(200, { ...headers, 'Content-Length': String(stat.size) });
    if (method === 'HEAD') return void res.end();
    createReadStream(file).on('error', () => res.destroy()).pipe(res);
  }

  function login(req: IncomingMessage, res: ServerResponse, url: URL): void {
    const token = url.searchParams.get('token') ?? '';
    if (!oneTime.delete(token)) {
      if (wantsPage(req, url.pathname)) return sendLoginPage(res, 'bad-link', req.method);
      throw new HttpError('no-token', 'This login link was used already or is not valid: run warden serve --open for a new one.');
    }
    const session = randomBytes(32).toString('base64url');
    sessions.add(session);
    res.writeHead(303, {
      ...PAGE_HEADERS,
      'Set-Cookie': `${SESSION_COOKIE}=${session}; HttpOnly; SameSite=Strict; Path=/`,
      Location: '/',
      'Content-Length': '0',
    });
    res.end();
  }

  const handler = ((req: IncomingMessage, res: ServerResponse, via: Via) => {
    res.on('error', () => undefined);
    req.on('error', () => undefined);
    void (async () => {
      try {
        let url: URL;
        try {
          url = new URL(req.url ?? '/', 'http://localhost');
        } catch {
          throw new HttpError('bad-input', 'The request target is not a valid path.');
        }
        if (via === 'tcp') {
          checkTcpOrigin(req);
          if (url.pathname === '/login') {
            if (req.method !== 'GET') throw new HttpError('wrong-method', '/login takes GET.', { Allow: 'GET' });
            return login(req, res, url);
          }
          if (!authorised(req)) {
            // A browser opening the page gets a page that says how to log in, never raw JSON.
            if (wantsPage(req, url.pathname)) return sendLoginPage(res, 'no-session', req.method);
            throw new HttpError('no-token', 'This request needs the token: Authorization: Bearer <token from the token file>, or a login link from warden serve --open.', {
              'WWW-Authenticate': 'Bearer realm="warden"',
            });
          }
        }
        await route(req, res, url, via);
      } catch (error) {
        const known = answerOf(error);
        if (known) {
          if (known.kind === 'internal') options.log?.(`internal error on ${req.method} ${req.url}: ${known.message}`);
          sendError(res, known.status, known.kind, known.message, known.headers);
          if (known.status === httpStatusOf('too-large')) req.resume();
          return;
        }
        const message = error instanceof Error ? error.message : String(error);
        options.log?.(`internal error on ${req.method} ${req.url}: ${message}`);
        sendError(res, httpStatusOf('internal'), 'internal', `Internal error in the Warden host: ${message}`);
      }
    })();
  }) as ControlHandler;

  handler.oneTimeLogin = () => {
    const token = randomBytes(24).toString('base64url');
    oneTime.add(token);
    return `/login?token=${token}`;
  };
  return handler;
}

function statOrNull(file: string) {
  try {
    return statSync(file);
  } catch {
    return null;
  }
}
