// The Node side of the HTTP client: requests and the event stream over the
// host's unix socket (or loopback TCP with the token), on the hand-written
// HTTP/1.1 of wire.ts (why: see there). HttpWardenApi
// (src/shared/http-api.ts) turns this transport into a WardenApi.

import type { Socket } from 'node:net';
import { join } from 'node:path';
import type { RunEvent } from '../shared/events';
import { GAP_EVENT, HttpWardenApi, type EventStreamHandlers, type HttpReply, type HttpTransport } from '../shared/http-api';
import { resolveStateDir } from './state-dir';
import { ChunkedDecoder, openSocket, parseHead, requestHead, WireError, WirePool, type Endpoint, type WireReply } from './wire';

export type { Endpoint };

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
  /** Connections kept alive for this endpoint alone (see wire.ts). */
  private readonly pool: WirePool;

  constructor(
    private readonly endpoint: Endpoint,
    private readonly options: { timeoutMs?: number } = {},
  ) {
    this.pool = new WirePool(endpoint);
  }

  /** Closes the kept-alive connections. */
  close(): void {
    this.pool.close();
  }

  async request(method: 'GET' | 'POST', path: string, body?: unknown): Promise<HttpReply> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    let reply: WireReply;
    try {
      reply = await this.pool.request(method, path, payload, this.options.timeoutMs);
    } catch (error) {
      if (error instanceof WireError) throw new HostUnreachableError(error.message, error.code);
      throw error;
    }
    const text = reply.body.toString('utf8');
    let parsed: unknown = text;
    try {
      parsed = text.length > 0 ? JSON.parse(text) : null;
    } catch {
      // Not JSON: kept as text for the error message.
    }
    return { status: reply.status, body: parsed };
  }

  /** The event stream, reconnecting with Last-Event-ID until closed. */
  events(path: string, handlers: EventStreamHandlers & { onConnect?: () => void; onDisconnect?: () => void }): () => void {
    let closed = false;
    let lastId = '';
    let current: Socket | null = null;
    let retry: NodeJS.Timeout | undefined;
    const connect = () => {
      if (closed) return;
      const socket = openSocket(this.endpoint);
      current = socket;
      let head: ReturnType<typeof parseHead> = null;
      let buffer: Buffer = Buffer.alloc(0);
      let decoder: ChunkedDecoder | null = null;
      const decoderText = new TextDecoder();
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
      const again = () => {
        if (closed || current !== socket) return;
        current = null;
        socket.destroy();
        handlers.onDisconnect?.();
        retry = setTimeout(connect, 250);
      };
      socket.on('error', again);
      socket.on('close', again);
      socket.on('data', (chunk: Buffer) => {
        let data: Buffer = chunk;
        try {
          if (!head) {
            buffer = buffer.length === 0 ? data : Buffer.concat([buffer, data]);
            head = parseHead(buffer);
            if (!head) return;
            if (head.status !== 200) return again();
            handlers.onConnect?.();
            decoder = (head.headers['transfer-encoding'] ?? '').toLowerCase().includes('chunked') ? new ChunkedDecoder() : null;
            data = head.rest;
          }
          const parts = decoder ? decoder.push(data) : [data];
          for (const part of parts) parser.push(decoderText.decode(part, { stream: true }));
          if (decoder?.done) again();
        } catch {
          again();
        }
      });
      socket.write(requestHead(this.endpoint, 'GET', path, { Accept: 'text/event-stream', ...(lastId ? { 'Last-Event-ID': lastId } : {}) }, null));
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
