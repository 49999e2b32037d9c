// HTTP/1.1 to a Warden host, written on node:net by hand. Why not node:http:
// a `warden` call is dominated by start-up, and node:http costs about 3 ms to
// load plus about 4 ms of first-request set-up, measured against a raw socket
// on these machines (bench/ section m; the whole budget for a call through a
// host is about 20 ms over `node -e 0`). The peer is always our own host
// (src/main/host/server.ts, on node:http): answers carry Content-Length,
// event streams are chunked; both are all this has to read.
//
// Connections: one is opened per request in flight and kept for the next
// (keep-alive), unref'd while idle so an idle connection never holds a
// process open. A request that fails on a reused connection before a byte of
// its answer came back is sent again on a fresh one (the host closed the idle
// connection as it was written). A fresh connection the host's socket could
// not take (its listen queue full: EAGAIN; or closed unread, as libuv does
// with a connection it accepts at its descriptor limit: EPIPE, ECONNRESET)
// is tried again with a backoff (about 10 s in all): a busy host is not a lost one.

import { connect, type Socket } from 'node:net';
import { WardenError } from '../shared/errors';

/** A host's socket, loopback TCP with its token, or a byte stream `dial` opens per connection (a remote's bridge, src/client/stdio-link.ts). */
export type Endpoint = { socketPath: string } | { host: string; port: number; token: string } | { dial: () => Socket };

export interface WireReply {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** A connection failure: nobody answered (as opposed to an answer from a host). */
export class WireError extends WardenError {
  constructor(
    message: string,
    readonly code: string | undefined,
    /** Whether any of the answer had arrived (then resending is not safe). */
    readonly answered: boolean,
  ) {
    super('unavailable', message);
  }
}

const HEADER_END = Buffer.from('\r\n\r\n');

/** The code of a WireError whose request a busy host never took: not a lost host. */
export const HOST_BUSY = 'EHOSTBUSY';

/** Pauses before each new try of a request a busy host's socket did not take (about 10 s in all, jittered). */
const BUSY_PAUSES_MS = [10, 25, 50, 100, 200, 400, 800, 1000, 1500, 2000, 2000, 2000];
const BUSY_SECONDS = Math.round(BUSY_PAUSES_MS.reduce((a, b) => a + b, 0) / 1000);

/**
 * Whether a fresh connection failed before the host read anything of it: its
 * listen queue was full (EAGAIN on connect), or it was closed before a byte
 * of an answer came (libuv at its descriptor limit accepts and closes). Safe
 * to send again: the request was not taken.
 */
export function isBusy(error: WireError): boolean {
  return !error.answered && (error.code === 'EAGAIN' || error.code === 'EPIPE' || error.code === 'ECONNRESET');
}

function headerLines(endpoint: Endpoint): string {
  if (!('token' in endpoint)) return 'Host: localhost\r\n';
  return `Host: 127.0.0.1:${endpoint.port}\r\nAuthorization: Bearer ${endpoint.token}\r\n`;
}

export function openSocket(endpoint: Endpoint): Socket {
  if ('dial' in endpoint) return endpoint.dial();
  return 'socketPath' in endpoint ? connect(endpoint.socketPath) : connect(endpoint.port, endpoint.host);
}

export function requestHead(endpoint: Endpoint, method: string, path: string, extra: Record<string, string>, bodyBytes: number | null): string {
  let head = `${method} ${path} HTTP/1.1\r\n${headerLines(endpoint)}`;
  for (const [name, value] of Object.entries(extra)) head += `${name}: ${value}\r\n`;
  if (bodyBytes !== null) head += `Content-Type: application/json\r\nContent-Length: ${bodyBytes}\r\n`;
  return `${head}\r\n`;
}

/** The status line and headers of an answer; null until they have all arrived. */
export function parseHead(buffer: Buffer): { status: number; headers: Record<string, string>; rest: Buffer } | null {
  const end = buffer.indexOf(HEADER_END);
  if (end < 0) return null;
  const lines = buffer.subarray(0, end).toString('latin1').split('\r\n');
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '');
  if (!status) throw new WireError(`The Warden host sent something that is not HTTP: ${JSON.stringify((lines[0] ?? '').slice(0, 40))}`, 'EPROTO', true);
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(status[1]), headers, rest: buffer.subarray(end + HEADER_END.length) };
}

/** Decodes a chunked body as it arrives; `push` returns the data decoded so far and whether the last chunk was seen. */
export class ChunkedDecoder {
  private buffer: Buffer = Buffer.alloc(0);
  private remaining = -1; // bytes of the current chunk still to come; -1: a size line is next
  done = false;

  push(data: Buffer): Buffer[] {
    this.buffer = this.buffer.length === 0 ? data : Buffer.concat([this.buffer, data]);
    const out: Buffer[] = [];
    for (;;) {
      if (this.done) return out;
      if (this.remaining < 0) {
        const eol = this.buffer.indexOf('\r\n');
        if (eol < 0) return out;
        const size = Number.parseInt(this.buffer.subarray(0, eol).toString('latin1').split(';')[0]!.trim(), 16);
        if (!Number.isFinite(size) || size < 0) throw new WireError('The Warden host sent a malformed chunked answer.', 'EPROTO', true);
        this.buffer = this.buffer.subarray(eol + 2);
        if (size === 0) {
          this.done = true;
          return out;
        }
        this.remaining = size;
      }
      if (this.remaining > 0) {
        if (this.buffer.length === 0) return out;
        const take = Math.min(this.remaining, this.buffer.length);
        out.push(this.buffer.subarray(0, take));
        this.buffer = this.buffer.subarray(take);
        this.remaining -= take;
      }
      if (this.remaining === 0) {
        if (this.buffer.length < 2) return out;
        this.buffer = this.buffer.subarray(2); // the CRLF after the chunk's data
        this.remaining = -1;
      }
    }
  }
}

/** Keep-alive connections to one endpoint; one request at a time on each. */
export class WirePool {
  private readonly idle: Socket[] = [];
  private readonly all = new Set<Socket>();
  private closed = false;

  constructor(private readonly endpoint: Endpoint) {}

  /** Destroys every connection, idle or busy. */
  close(): void {
    this.closed = true;
    for (const socket of this.all) socket.destroy();
    this.all.clear();
    this.idle.length = 0;
  }

  async request(method: 'GET' | 'POST', path: string, payload: string | undefined, timeoutMs: number | undefined): Promise<WireReply> {
    const reused = this.idle.pop();
    if (reused) {
      try {
        return await this.exchange(reused, method, path, payload, timeoutMs);
      } catch (error) {
        if (!(error instanceof WireError) || error.answered || error.code === 'ETIMEDOUT') throw error;
        // The host closed this idle connection as the request went out: a fresh one gets it.
      }
    }
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.exchange(this.fresh(), method, path, payload, timeoutMs);
      } catch (error) {
        const pause = BUSY_PAUSES_MS[attempt];
        if (!(error instanceof WireError) || !isBusy(error) || this.closed) throw error;
        if (pause === undefined) throw new WireError(`The Warden host is busy: its socket took no new connection in ${BUSY_PAUSES_MS.length + 1} tries over about ${BUSY_SECONDS} s (${error.code}), so nothing was sent. Try again in a moment.`, HOST_BUSY, false);
        await new Promise((resolve) => setTimeout(resolve, pause * (0.5 + Math.random())));
      }
    }
  }

  private fresh(): Socket {
    if (this.closed) throw new WireError('The connection to the Warden host was closed.', 'ECONNRESET', false);
    const socket = openSocket(this.endpoint);
    this.all.add(socket);
    socket.on('close', () => {
      this.all.delete(socket);
      const at = this.idle.indexOf(socket);
      if (at >= 0) this.idle.splice(at, 1);
    });
    // An idle connection's error (the host went away) needs a listener; a busy one has its own.
    socket.on('error', () => undefined);
    return socket;
  }

  private exchange(socket: Socket, method: string, path: string, payload: string | undefined, timeoutMs: number | undefined): Promise<WireReply> {
    return new Promise((resolvePromise, reject) => {
      socket.ref();
      let buffer: Buffer = Buffer.alloc(0);
      let head: ReturnType<typeof parseHead> = null;
      let answered = false;
      let settled = false;
      const chunks: Buffer[] = [];
      let decoder: ChunkedDecoder | null = null;
      let bodyLength = 0;
      const cleanup = () => {
        socket.off('data', onData);
        socket.off('error', onError);
        socket.off('close', onClose);
        socket.off('timeout', onTimeout);
        if (timeoutMs !== undefined) socket.setTimeout(0);
      };
      const fail = (error: WireError) => {
        if (settled) return;
        settled = true;
        cleanup();
        socket.destroy();
        reject(error);
      };
      const finish = (status: number, headers: Record<string, string>, body: Buffer) => {
        if (settled) return;
        settled = true;
        cleanup();
        if ((headers.connection ?? '').toLowerCase() === 'close' || this.closed) socket.destroy();
        else {
          socket.unref();
          this.idle.push(socket);
        }
        resolvePromise({ status, headers, body });
      };
      const onData = (chunk: Buffer) => {
        let data: Buffer = chunk;
        answered = true;
        try {
          if (!head) {
            buffer = buffer.length === 0 ? data : Buffer.concat([buffer, data]);
            head = parseHead(buffer);
            if (!head) return;
            data = head.rest;
            if ((head.headers['transfer-encoding'] ?? '').toLowerCase().includes('chunked')) decoder = new ChunkedDecoder();
          }
          if (decoder) {
            chunks.push(...decoder.push(data));
            if (decoder.done) finish(head.status, head.headers, Buffer.concat(chunks));
            return;
          }
          chunks.push(data);
          bodyLength += data.length;
          const declared = head.headers['content-length'];
          if (declared !== undefined && bodyLength >= Number(declared)) finish(head.status, head.headers, Buffer.concat(chunks).subarray(0, Number(declared)));
        } catch (error) {
          fail(error instanceof WireError ? error : new WireError(String(error), 'EPROTO', true));
        }
      };
      const onError = (error: NodeJS.ErrnoException) => fail(new WireError(`Cannot reach the Warden host: ${error.message}`, error.code, answered));
      const onClose = () => {
        // An answer without a length ends with the connection.
        if (head && !decoder && head.headers['content-length'] === undefined) return finish(head.status, head.headers, Buffer.concat(chunks));
        fail(new WireError(answered ? 'The Warden host went away mid-answer.' : 'The Warden host closed the connection before answering.', 'ECONNRESET', answered));
      };
      const onTimeout = () => fail(new WireError('Cannot reach the Warden host: it did not answer in time', 'ETIMEDOUT', answered));
      socket.on('data', onData);
      socket.on('error', onError);
      socket.on('close', onClose);
      if (timeoutMs !== undefined) {
        socket.setTimeout(timeoutMs);
        socket.on('timeout', onTimeout);
      }
      const bodyBytes = payload === undefined ? null : Buffer.byteLength(payload);
      socket.write(requestHead(this.endpoint, method, path, {}, bodyBytes) + (payload ?? ''));
    });
  }
}
