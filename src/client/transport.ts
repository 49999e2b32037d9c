// The Node side of the HTTP client: requests and the event stream over the
// host's unix socket (or loopback TCP with the token), on the hand-written
// HTTP/1.1 of wire.ts (why: see there). HttpWardenApi
// (src/shared/http-api.ts) turns this transport into a WardenApi.

import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import type { Socket } from 'node:net';
import { dirname, join } from 'node:path';
import type { RunEvent } from '../shared/events';
import { WardenError } from '../shared/errors';
import { GAP_EVENT, HttpWardenApi, type EventStreamHandlers, type HttpReply, type HttpTransport } from '../shared/http-api';
import { resolveStateDir, unsafeDirReason } from './state-dir';
import { ChunkedDecoder, openSocket, parseHead, requestHead, WireError, WirePool, type Endpoint, type WireReply } from './wire';

export type { Endpoint };

/** A connection failure: no host there (as opposed to an answer from one). */
export class HostUnreachableError extends WardenError {
  override name = 'HostUnreachableError';
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super('unavailable', message);
  }
}

/**
 * The host at a unix socket is not one to trust: the socket file, or the
 * directories it is in, belong to someone else or can be written by others.
 * Nothing is sent to it, the environment least of all.
 */
export class UntrustedHostError extends WardenError {
  override name = 'UntrustedHostError';
  constructor(message: string) {
    super('denied', message);
  }
}

/**
 * Why the listener at `socketPath` may be someone else's; null when it can
 * only be this user's (or root's). Node has no SO_PEERCRED, so this reads
 * what decides who could have bound it: the socket file's owner (the uid
 * that bound it), and that its directory and the state dir above it are this
 * user's (or root's) and writable by no one else, so no one else could have
 * put a socket there. A missing socket is not a reason (no host).
 */
export function untrustedSocketReason(socketPath: string): string | null {
  if (typeof process.getuid !== 'function') return null;
  const uid = process.getuid();
  let stat;
  try {
    stat = lstatSync(socketPath);
  } catch {
    return null;
  }
  const refuse = (why: string) => `Warden will not talk to the host at ${socketPath}: ${why} Set WARDEN_STATE_DIR to a directory of yours.`;
  if (!stat.isSocket()) return refuse('it is not a socket.');
  if (stat.uid !== uid && stat.uid !== 0) return refuse(`the socket belongs to uid ${stat.uid}, not to you (uid ${uid}) or root, so the process listening there is someone else's.`);
  const runDir = dirname(socketPath);
  let dirStat;
  try {
    dirStat = lstatSync(runDir);
  } catch {
    return null;
  }
  if (dirStat.isSymbolicLink() || !dirStat.isDirectory()) return refuse(`${runDir} is not a plain directory.`);
  if (dirStat.uid !== uid && dirStat.uid !== 0) return refuse(`${runDir} belongs to uid ${dirStat.uid}, not to you (uid ${uid}) or root.`);
  if ((dirStat.mode & 0o022) !== 0) return refuse(`${runDir} can be written by others (mode ${(dirStat.mode & 0o7777).toString(8).padStart(4, '0')}), so the socket in it may be theirs.`);
  const above = unsafeDirReason(dirname(runDir));
  return above === null ? null : refuse(above.replace(/ Set WARDEN_STATE_DIR to a directory of yours\.$/, ''));
}

/**
 * Whether the process `pid` holds the socket listening at `socketPath`
 * (/proc/net/unix names the listening socket's inode, /proc/PID/fd the
 * sockets a process holds); null where /proc cannot tell (no /proc,
 * another namespace, a process this user may not look into).
 */
export function holdsListener(socketPath: string, pid: number): boolean | null {
  let table: string;
  try {
    table = readFileSync('/proc/net/unix', 'utf8');
  } catch {
    return null;
  }
  const inodes = new Set<string>();
  for (const line of table.split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    // Num RefCount Protocol Flags Type St Inode Path; __SO_ACCEPTCON (0x10000) marks a listening socket.
    if (fields.length >= 8 && fields.slice(7).join(' ') === socketPath && (parseInt(fields[3]!, 16) & 0x10000) !== 0) inodes.add(fields[6]!);
  }
  if (inodes.size === 0) return null;
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return null;
  }
  for (const fd of fds) {
    try {
      const held = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (held && inodes.has(held[1]!)) return true;
    } catch {
      // closed meanwhile
    }
  }
  return false;
}

/** The uid a process runs as (/proc/PID/status), or null when unknown. */
function uidOf(pid: number): number | null {
  try {
    const m = /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
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

const HOST_PATH = '/api/v1/host';

export class NodeTransport implements HttpTransport {
  /** Connections kept alive for this endpoint alone (see wire.ts). */
  private readonly pool: WirePool;

  /** The process answering on the socket was checked to be the one holding it (checkAnswer). */
  private peerChecked: boolean;

  constructor(
    private readonly endpoint: Endpoint,
    private readonly options: { timeoutMs?: number; peerChecked?: boolean } = {},
  ) {
    this.pool = new WirePool(endpoint);
    this.peerChecked = options.peerChecked === true;
  }

  /**
   * The host's answer to GET /host names its pid: that process must hold the
   * listening socket (holdsListener) and run as this user or root, else
   * whatever answers is someone else's. Unknowable without /proc: then only
   * the socket file's checks stand.
   */
  private checkAnswer(socketPath: string, body: unknown): void {
    const pid = (body as { pid?: unknown } | null)?.pid;
    if (typeof pid !== 'number' || !Number.isInteger(pid) || pid <= 0) throw new UntrustedHostError(`Warden will not talk to the host at ${socketPath}: what answers there gives no pid.`);
    const holds = holdsListener(socketPath, pid);
    if (holds === false) throw new UntrustedHostError(`Warden will not talk to the host at ${socketPath}: what answers there says it is pid ${pid}, and that process does not hold the socket. Stop whatever listens there (fuser ${socketPath}).`);
    const uid = holds ? uidOf(pid) : null;
    const me = typeof process.getuid === 'function' ? process.getuid() : null;
    if (uid !== null && me !== null && uid !== me && uid !== 0) throw new UntrustedHostError(`Warden will not talk to the host at ${socketPath}: it runs as uid ${uid}, not as you (uid ${me}) or root.`);
  }

  /** Closes the kept-alive connections. */
  close(): void {
    this.pool.close();
  }

  /** Throws UntrustedHostError before anything is sent to a listener that may be someone else's. */
  private checkPeer(): void {
    if (!('socketPath' in this.endpoint)) return;
    const why = untrustedSocketReason(this.endpoint.socketPath);
    if (why !== null) throw new UntrustedHostError(why);
  }

  async request(method: 'GET' | 'POST', path: string, body?: unknown): Promise<HttpReply> {
    this.checkPeer();
    const isProbe = method === 'GET' && path === HOST_PATH;
    // Before the first request that carries anything (a run request holds the environment): who answers is checked.
    if ('socketPath' in this.endpoint && !this.peerChecked && !isProbe) {
      const probe = await this.request('GET', HOST_PATH);
      if (!this.peerChecked) throw new UntrustedHostError(`Warden will not talk to the host at ${this.endpoint.socketPath}: it answered GET ${HOST_PATH} with status ${probe.status}, not as a Warden host does.`);
    }
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
    if ('socketPath' in this.endpoint && !this.peerChecked && isProbe && reply.status === 200) {
      this.checkAnswer(this.endpoint.socketPath, parsed);
      this.peerChecked = true;
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
      if ('socketPath' in this.endpoint && untrustedSocketReason(this.endpoint.socketPath) !== null) {
        // Nothing is sent; the stream stays down (a request says why).
        handlers.onDisconnect?.();
        return;
      }
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
  const socketPath = socketPathFor(stateDir);
  const probe = new NodeTransport({ socketPath }, { timeoutMs: options.timeoutMs ?? 2000 });
  try {
    // The probe carries nothing of the user's; what it answers is checked before anything else is sent.
    const reply = await probe.request('GET', '/api/v1/host');
    if (reply.status !== 200) return null;
  } catch (error) {
    if (error instanceof HostUnreachableError) return null;
    throw error;
  } finally {
    probe.close();
  }
  return new HttpWardenApi(new NodeTransport({ socketPath }, { peerChecked: true }));
}
