// The Node side of the HTTP client: requests and the event stream over the
// host's unix socket (or loopback TCP with the token). HttpWardenApi
// (src/shared/http-api.ts) turns this transport into a WardenApi.

import { Agent, request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import type { RunEvent } from '../shared/events';
import { GAP_EVENT, HttpWardenApi, type EventStreamHandlers, type HttpReply, type HttpTransport } from '../shared/http-api';
import { resolveStateDir } from '../main/store/state-dir';
import { join } from 'node:path';

export type Endpoint = { socketPath: string } | { host: string; port: number; token: string };

/** A connection failure: no host there (as opposed to an answer from one). */
export class HostUnreachableError extends Error {
  override name = 'HostUnreachableError';
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

function baseOptions(endpoint: Endpoint): RequestOptions {
  if ('socketPath' in endpoint) return { socketPath: endpoint.socketPath, headers: { Host: 'localhost' } };
  return { host: endpoint.host, port: endpoint.port, headers: { Host: `127.0.0.1:${endpoint.port}`, Authorization: `Bearer ${endpoint.token}` } };
}

/** Reads text/event-stream frames; calls back per event with its id and name. */
export class SseParser {
  private buffer = '';
  private id = '';
  private name = '';
  private data: string[] = [];

  constructor(private readonly onFrame: (frame: { id: string; event: string; data: string }) => void) {}

  push(text: string): void {
    this.buffer += text;
    let newline: number;
    while ((newline = this.buffer.indexOf('\n')) >= 0) {
      let line = this.buffer.slice(0, newline);
      this.buffer = this.buffer.slice(newline + 1);
      if (line.endsWith('\r')) line = line.slice(0, -1);
      this.line(line);
    }
  }

  private line(line: string): void {
    if (line === '') {
      if (this.data.length > 0 || this.name) this.onFrame({ id: this.id, event: this.name || 'message', data: this.data.join('\n') });
      this.name = '';
      this.data = [];
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.name = value;
    else if (field === 'id') this.id = value;
  }
}

export class NodeTransport implements HttpTransport {
  /**
   * Connections kept alive for this endpoint alone: the global agent pools by
   * host and port, so requests to two hosts' sockets could share (and reuse a
   * dead) connection.
   */
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 64 });

  constructor(
    private readonly endpoint: Endpoint,
    private readonly options: { timeoutMs?: number } = {},
  ) {}

  /** Closes the idle kept-alive connections. */
  close(): void {
    this.agent.destroy();
  }

  request(method: 'GET' | 'POST', path: string, body?: unknown): Promise<HttpReply> {
    return new Promise((resolvePromise, reject) => {
      const base = baseOptions(this.endpoint);
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = httpRequest({
        ...base,
        agent: this.agent,
        method,
        path,
        headers: { ...base.headers, ...(payload !== undefined ? { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(payload)) } : {}) },
      });
      if (this.options.timeoutMs !== undefined) {
        req.setTimeout(this.options.timeoutMs, () => req.destroy(Object.assign(new Error('the host did not answer in time'), { code: 'ETIMEDOUT' })));
      }
      req.on('error', (error: NodeJS.ErrnoException) => reject(new HostUnreachableError(`Cannot reach the Warden host: ${error.message}`, error.code)));
      req.on('response', (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', (error: NodeJS.ErrnoException) => reject(new HostUnreachableError(`The Warden host went away mid-answer: ${error.message}`, error.code)));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = text.length > 0 ? JSON.parse(text) : null;
          } catch {
            // Not JSON: kept as text for the error message.
          }
          resolvePromise({ status: res.statusCode ?? 0, body: parsed });
        });
      });
      req.end(payload);
    });
  }

  /** The event stream, reconnecting with Last-Event-ID until closed. */
  events(path: string, handlers: EventStreamHandlers & { onConnect?: () => void; onDisconnect?: () => void }): () => void {
    let closed = false;
    let lastId = '';
    let current: ReturnType<typeof httpRequest> | null = null;
    let retry: NodeJS.Timeout | undefined;
    const connect = () => {
      if (closed) return;
      const base = baseOptions(this.endpoint);
      const req = httpRequest({ ...base, agent: false, method: 'GET', path, headers: { ...base.headers, Accept: 'text/event-stream', ...(lastId ? { 'Last-Event-ID': lastId } : {}) } });
      current = req;
      const again = () => {
        if (closed || current !== req) return;
        current = null;
        handlers.onDisconnect?.();
        retry = setTimeout(connect, 250);
      };
      req.on('error', again);
      req.on('response', (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          again();
          return;
        }
        handlers.onConnect?.();
        const parser = new SseParser((frame) => {
          if (frame.id) lastId = frame.id;
          if (frame.event === GAP_EVENT) return handlers.onGap?.();
          if (frame.event !== 'message') return;
          try {
            handlers.onEvent(JSON.parse(frame.data) as RunEvent, frame.id);
          } catch {
            // A frame that is not an event is skipped; the stream goes on.
          }
        });
        res.setEncoding('utf8');
        res.on('data', (text: string) => parser.push(text));
        res.on('end', again);
        res.on('error', again);
      });
      req.end();
    };
    connect();
    return () => {
      closed = true;
      clearTimeout(retry);
      current?.destroy();
      current = null;
    };
  }
}

/** The control socket of a state dir: <state dir>/run/warden.sock (the host listens there, clients connect). */
export function socketPathFor(stateDir: string): string {
  return join(stateDir, 'run', 'warden.sock');
}

/**
 * The live host of a state dir as a WardenApi, or null when none answers
 * (no socket, nobody listening, or a dead host's socket file).
 */
export async function connectToHost(stateDir: string = resolveStateDir(), options: { timeoutMs?: number } = {}): Promise<HttpWardenApi | null> {
  const probe = new NodeTransport({ socketPath: socketPathFor(stateDir) }, { timeoutMs: options.timeoutMs ?? 2000 });
  try {
    const reply = await probe.request('GET', '/api/v1/host');
    if (reply.status !== 200) return null;
  } catch (error) {
    if (error instanceof HostUnreachableError) return null;
    throw error;
  } finally {
    probe.close();
  }
  return new HttpWardenApi(new NodeTransport({ socketPath: socketPathFor(stateDir) }));
}
