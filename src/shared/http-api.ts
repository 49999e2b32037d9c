// WardenApi over HTTP + Server-Sent Events: the route table and the client
// every remote caller uses. The transport is the only thing that differs: a
// unix socket from Node (src/client/transport.ts), fetch + EventSource
// in the browser (web mode). No Node or DOM imports here.

import type { GetOptions, HistoryQuery, HostInfo, InputOptions, ListOptions, OutputPage, OutputRange, ProcessSignal, StartOn, SubscribeOptions, WaitOptions, WardenApi } from './api';
import { ALL_HOSTS, type HostStatus } from './hosts';
import type { RunEvent } from './events';
import type { EventRecord, RunPage } from './history';
import type { RunRequest } from './request';
import type { ListeningPort, RunResult, SessionInfo } from './result';
import type { Settings } from './settings';
import type { SearchAnswer, SearchQuery } from './search';
import { isErrorKind, isWardenError, kindOfHttpStatus, WardenError, type ErrorKind } from './errors';

export const API_PREFIX = '/api/v1';

/**
 * Web mode: the localStorage key where the login page keeps the hash route it
 * was opened on ({ hash, at }), so the login link lands there (the app reads it
 * once, renderer/src/router.ts restoreAfterLogin).
 */
export const AFTER_LOGIN_KEY = 'warden.afterLogin';

/** Where each operation lives. Every body is JSON; every answer is JSON or, for events, text/event-stream. */
export const ROUTES = {
  host: `${API_PREFIX}/host`, // GET
  hosts: `${API_PREFIX}/hosts`, // GET: this host and each configured remote with its connection state (HostStatus[])
  runs: `${API_PREFIX}/runs`, // GET: live list (?output=none: without stdout/stderr, their lengths in outputChars); POST: start (body RunRequest)
  run: (id: string) => `${API_PREFIX}/runs/${encodeURIComponent(id)}`, // GET (?output=none: without stdout/stderr, their lengths in outputChars)
  stop: (id: string) => `${API_PREFIX}/runs/${encodeURIComponent(id)}/stop`, // POST { force? }
  wait: (id: string) => `${API_PREFIX}/runs/${encodeURIComponent(id)}/wait`, // GET ?timeoutMs=&output=all|unseen&stdoutFrom=&stderrFrom=&until=ready|log:/RE/&since=now|start
  extend: (id: string) => `${API_PREFIX}/runs/${encodeURIComponent(id)}/extend`, // POST { byMs }
  input: (id: string) => `${API_PREFIX}/runs/${encodeURIComponent(id)}/input`, // POST { text?, eof? }: to its stdin pipe
  ports: `${API_PREFIX}/ports`, // GET: every live run's listening ports ({ runId: ListeningPort[] })
  signal: (id: string) => `${API_PREFIX}/runs/${encodeURIComponent(id)}/signal`, // POST { pid, signal: 'TERM'|'KILL' }
  timeline: (id: string) => `${API_PREFIX}/runs/${encodeURIComponent(id)}/timeline`, // GET
  release: (id: string) => `${API_PREFIX}/runs/${encodeURIComponent(id)}/release`, // POST: the connection that started it (owner=connection) owns it no more
  output: (id: string) => `${API_PREFIX}/runs/${encodeURIComponent(id)}/output`, // GET ?stream=stdout|stderr&offset=N&limit=M: one page of one stream (OutputPage)
  history: `${API_PREFIX}/history`, // GET ?verdict=a,b&state=&kind=&session=&since=&until=&exitCode=&text=&limit=&cursor=
  sessions: `${API_PREFIX}/sessions`, // GET
  restartSession: (name: string) => `${API_PREFIX}/sessions/${encodeURIComponent(name)}/restart`, // POST
  closeSession: (name: string) => `${API_PREFIX}/sessions/${encodeURIComponent(name)}/close`, // POST
  settings: `${API_PREFIX}/settings`, // GET; POST (body Settings) stores them
  search: `${API_PREFIX}/search`, // GET ?id=&pattern=&literal=&ignoreCase=&stream=&context=&maxMatches=&cursor=&since=&verdict=&maxRuns= (SearchAnswer)
  events: `${API_PREFIX}/events`, // GET, SSE; Last-Event-ID header (or ?lastEventId=) resumes; ?run=ID filters; ?batch=1 batches per frame; ?ended=summary: ended results without stdout/stderr (outputChars)
} as const;

/** The most characters one page of a run's output holds (`limit`), and the default. */
export const OUTPUT_PAGE_MAX_CHARS = 1_000_000;
export const OUTPUT_PAGE_DEFAULT_CHARS = 65_536;


export type { OutputPage };

/** The SSE event name telling a client that events it asked for are no longer buffered. */
export const GAP_EVENT = 'gap';
/** With ?batch=1 (browsers): one message per frame, `event: batch`, data a JSON array of events, id that of the last. */
export const BATCH_EVENT = 'batch';

/**
 * An answer other than 2xx: the host's one-line reason, re-raised with the
 * kind the host named (`{ error, kind }`; from the status when it names
 * none), and the HTTP status.
 */
export class WardenApiError extends WardenError {
  override name = 'WardenApiError';
  constructor(
    message: string,
    readonly status: number,
    kind: ErrorKind = kindOfHttpStatus(status),
  ) {
    super(kind, message);
  }
}

/** The error an answer other than 2xx stands for. */
export function replyError(reply: HttpReply): WardenApiError {
  const body = typeof reply.body === 'object' && reply.body !== null ? (reply.body as { error?: unknown; kind?: unknown }) : {};
  const message = typeof body.error === 'string' ? body.error : `The Warden host answered ${reply.status}.`;
  return new WardenApiError(message, reply.status, isErrorKind(body.kind) ? body.kind : kindOfHttpStatus(reply.status));
}

export interface HttpReply {
  status: number;
  body: unknown;
}

export interface EventStreamHandlers {
  onEvent(event: RunEvent, id: string): void;
  /** Events between the last one received and the next were dropped from the host's buffer (or the host restarted). */
  onGap?(): void;
  /** The stream is open: the host delivers every event from now on (a transport that cannot tell calls it at once). */
  onOpen?(): void;
}

export interface HttpTransport {
  request(method: 'GET' | 'POST', path: string, body?: unknown): Promise<HttpReply>;
  /** Opens the event stream (reconnecting with Last-Event-ID on its own); returns the close function. */
  events(path: string, handlers: EventStreamHandlers): () => void;
}

/** A query string from defined values; arrays become comma lists. */
export function queryString(values: Record<string, string | number | boolean | string[] | null | undefined>): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(values)) {
    if (value === undefined || value === null) continue;
    const text = Array.isArray(value) ? value.join(',') : String(value);
    parts.push(`${encodeURIComponent(key)}=${encodeURIComponent(text)}`);
  }
  return parts.length > 0 ? `?${parts.join('&')}` : '';
}

export function waitQuery(options: WaitOptions = {}): string {
  const output = options.output;
  return queryString({
    timeoutMs: options.timeoutMs,
    output: typeof output === 'string' ? output : undefined,
    stdoutFrom: typeof output === 'object' ? output.stdout : undefined,
    stderrFrom: typeof output === 'object' ? output.stderr : undefined,
    until: options.until,
    since: options.since,
  });
}

export function listQueryString(options: ListOptions = {}): string {
  return queryString({ output: options.output === 'none' ? 'none' : undefined, hosts: options.hosts });
}

/**
 * What the app asks for first, for the Runs view (src/renderer/src/store/):
 * every host's runs without output, and the first page of ended runs with the
 * counts. Web mode's page names these two to the browser as preloads (a Link
 * header on index.html), so the host answers them while the app's script is
 * still loading; the app's own requests are then served from them.
 */
export const FIRST_LIST: ListOptions = { output: 'none', hosts: 'all' };
export const FIRST_ENDED_PAGE = { state: 'ended', limit: 50, counts: true, host: ALL_HOSTS } as const satisfies HistoryQuery;
export const FIRST_LOAD_PATHS = [`${ROUTES.runs}${listQueryString(FIRST_LIST)}`, `${ROUTES.history}${historyQueryString(FIRST_ENDED_PAGE)}`] as const;

export function historyQueryString(query: HistoryQuery = {}): string {
  return queryString({
    verdict: query.verdict,
    oom: query.oom,
    state: query.state,
    kind: query.kind,
    session: query.session,
    since: query.since,
    until: query.until,
    exitCode: query.exitCode,
    text: query.text,
    limit: query.limit,
    cursor: query.cursor,
    sort: query.sort,
    order: query.order,
    counts: query.counts,
    host: query.host,
  });
}

/**
 * Who owns a run being started. `owner: 'connection'`: this client's
 * connection; the host stops the run if it closes before the run ends (a
 * transport that keeps one connection, as the CLI's does, makes that "while
 * this process lives"). `ownerPid`: a process, known by its pid and start
 * time (/proc/PID/stat field 22, so a reused pid does not count); the host
 * stops the run when that process is gone, with a note naming `label`.
 */
export interface StartOptions extends StartOn {
  owner?: 'connection';
  ownerPid?: { pid: number; startTime: string; label?: string };
}

export function startQuery(options: StartOptions = {}): string {
  return queryString({
    owner: options.owner,
    ownerPid: options.ownerPid?.pid,
    ownerStart: options.ownerPid?.startTime,
    ownerLabel: options.ownerPid?.label,
    host: options.host,
  });
}

export interface HttpWardenApiOptions {
  /** Called when the event stream reports a gap: a UI refetches what it shows. */
  onGap?: () => void;
}

export class HttpWardenApi implements WardenApi {
  private readonly listeners = new Set<(event: RunEvent) => void>();
  private closeStream: (() => void) | null = null;
  /** Whether the shared stream has opened (its transport said so), and who waits for that. */
  private streamOpen = false;
  private readonly waitingOpen = new Set<() => void>();

  constructor(
    private readonly transport: HttpTransport,
    private readonly options: HttpWardenApiOptions = {},
  ) {}

  private async call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const reply = await this.transport.request(method, path, body);
    if (reply.status >= 200 && reply.status < 300) return reply.body as T;
    throw replyError(reply);
  }

  /**
   * `owner: 'connection'`: the run belongs to this client's connection; the
   * host stops it if the connection closes before the run ends (a transport
   * that keeps one connection, as the CLI's does, makes that "while this
   * process lives").
   */
  async start(request: RunRequest, options: StartOptions = {}): Promise<RunResult> {
    const path = `${ROUTES.runs}${startQuery(options)}`;
    try {
      return await this.call<RunResult>('POST', path, request);
    } catch (error) {
      // A host older than this client knows no umask or rlimits (it refuses the fields): the run as that host runs it.
      if (!(error instanceof WardenApiError) || error.status !== 400 || !/has no field .*"(umask|rlimits)"/.test(error.message) || !('umask' in request || 'rlimits' in request)) throw error;
      const { umask: _umask, rlimits: _rlimits, ...older } = request as RunRequest & { umask?: unknown; rlimits?: unknown };
      return this.call<RunResult>('POST', path, older);
    }
  }

  stop(id: string, options: { force?: boolean; note?: string } = {}): Promise<RunResult> {
    return this.call('POST', ROUTES.stop(id), { ...(options.force ? { force: true } : {}), ...(options.note ? { note: options.note } : {}) });
  }

  wait(id: string, options: WaitOptions = {}): Promise<RunResult> {
    return this.call('GET', `${ROUTES.wait(id)}${waitQuery(options)}`);
  }

  extend(id: string, byMs: number): Promise<RunResult> {
    return this.call('POST', ROUTES.extend(id), { byMs });
  }

  /** The connection that started `id` with owner=connection owns it no more (HTTP only: ownership by connection is the host's). */
  release(id: string): Promise<{ released: boolean }> {
    return this.call('POST', ROUTES.release(id), {});
  }

  input(id: string, input: InputOptions): Promise<RunResult> {
    return this.call('POST', ROUTES.input(id), input);
  }

  signal(id: string, pid: number, signal: ProcessSignal): Promise<RunResult> {
    return this.call('POST', ROUTES.signal(id), { pid, signal });
  }

  async get(id: string, options: GetOptions = {}): Promise<RunResult | null> {
    try {
      return await this.call<RunResult>('GET', `${ROUTES.run(id)}${queryString({ output: options.output === 'none' ? 'none' : undefined })}`);
    } catch (error) {
      if (isWardenError(error) && error.kind === 'not-found') return null;
      throw error;
    }
  }

  output(id: string, range: OutputRange): Promise<OutputPage> {
    return this.call('GET', `${ROUTES.output(id)}${queryString({ stream: range.stream, offset: range.offset, line: range.line, limit: range.limit })}`);
  }

  search(query: SearchQuery): Promise<SearchAnswer> {
    return this.call('GET', `${ROUTES.search}${queryString({
      id: query.id,
      pattern: query.pattern,
      literal: query.literal,
      ignoreCase: query.ignoreCase,
      stream: query.stream,
      context: query.context,
      maxMatches: query.maxMatches,
      cursor: query.cursor,
      since: query.since,
      verdict: query.verdict,
      maxRuns: query.maxRuns,
    })}`);
  }

  list(options: ListOptions = {}): Promise<RunResult[]> {
    return this.call('GET', `${ROUTES.runs}${listQueryString(options)}`);
  }

  ports(): Promise<Record<string, ListeningPort[]>> {
    return this.call('GET', ROUTES.ports);
  }

  history(query: HistoryQuery = {}): Promise<RunPage> {
    return this.call('GET', `${ROUTES.history}${historyQueryString(query)}`);
  }

  timeline(id: string): Promise<EventRecord[]> {
    return this.call('GET', ROUTES.timeline(id));
  }

  sessions(): Promise<SessionInfo[]> {
    return this.call('GET', ROUTES.sessions);
  }

  restartSession(name: string): Promise<SessionInfo> {
    return this.call('POST', ROUTES.restartSession(name), {});
  }

  closeSession(name: string): Promise<SessionInfo> {
    return this.call('POST', ROUTES.closeSession(name), {});
  }

  host(): Promise<HostInfo> {
    return this.call('GET', ROUTES.host);
  }

  hosts(): Promise<HostStatus[]> {
    return this.call('GET', ROUTES.hosts);
  }

  settings(): Promise<Settings> {
    return this.call('GET', ROUTES.settings);
  }

  saveSettings(settings: Settings): Promise<Settings> {
    return this.call('POST', ROUTES.settings, settings);
  }

  /** One event stream for all listeners, opened with the first and closed with the last. */
  subscribe(listener: (event: RunEvent) => void, options: SubscribeOptions = {}): () => void {
    this.listeners.add(listener);
    if (options.onOpen) {
      if (this.streamOpen) options.onOpen();
      else this.waitingOpen.add(options.onOpen);
    }
    if (!this.closeStream) {
      this.streamOpen = false;
      this.closeStream = this.transport.events(ROUTES.events, {
        onEvent: (event) => {
          for (const l of [...this.listeners]) l(event);
        },
        onGap: () => this.options.onGap?.(),
        onOpen: () => {
          this.streamOpen = true;
          const waiting = [...this.waitingOpen];
          this.waitingOpen.clear();
          for (const fn of waiting) fn();
        },
      });
    }
    return () => {
      this.listeners.delete(listener);
      if (options.onOpen) this.waitingOpen.delete(options.onOpen);
      if (this.listeners.size === 0 && this.closeStream) {
        this.closeStream();
        this.closeStream = null;
      }
    };
  }
}
