// Live events for SSE clients. Every engine event gets an id (`<epoch>-<seq>`,
// the epoch naming this host's life) and is kept in a bounded buffer, so a
// client that reconnects with Last-Event-ID gets what it missed. Events are
// serialised once and written to each client in one write per event-loop turn;
// a client that cannot keep up is buffered, and past its bound disconnected
// (it reconnects and resumes from the buffer): the engine never waits for a
// client, and a slow client never costs another one anything.

import type { ServerResponse } from 'node:http';
import type { RunEvent } from '../../shared/events';
import { appendCoalesced } from '../../shared/coalesce';
import { BATCH_EVENT, GAP_EVENT } from '../../shared/http-api';
import { resultSummary } from '../../shared/result-summary';

/** A batch client (a browser page) gets at most one message per this many ms. */
export const BATCH_MS = 16;

export interface EventSource {
  subscribe(listener: (event: RunEvent) => void): () => void;
}

export interface EventHubLimits {
  /** Events kept for resuming (default 200,000). */
  maxEvents?: number;
  /**
   * Characters held for resuming (default 32 Mi): each event's serialised
   * frame and the text its object holds besides (output, a result's output),
   * which the ring keeps too, for batch clients.
   */
  maxBytes?: number;
  /** Characters waiting for one slow client, in the hub and in its socket's buffer, before it is disconnected (default 16 Mi). */
  maxClientBacklog?: number;
  /** A comment line to each client this often, so proxies and clients see the stream alive (default 15 s). */
  keepAliveMs?: number;
}

interface Buffered {
  runId: string;
  frame: string;
  event: RunEvent;
  /** What it holds in memory, in characters: the frame and the event's own text. */
  weight: number;
  /**
   * An `ended` event for summary clients (?ended=summary): its result without
   * stdout and stderr, serialised once for all of them. Absent for every other
   * event, which every client gets the same.
   */
  summary?: { frame: string; event: RunEvent };
}

/** The text an event's object holds (its frame holds a copy): what a bound on the ring must count. */
function textOf(event: RunEvent): number {
  switch (event.type) {
    case 'output':
      return event.text.length;
    case 'ended':
      return event.result.stdout.length + event.result.stderr.length;
    case 'started':
      return event.snapshot.stdout.length + event.snapshot.stderr.length;
    default:
      return 0;
  }
}

/** Whether a client asked for this event: its run (when it named one) and its type (when it named some). */
function wants(client: Client, buffered: Buffered): boolean {
  return (client.run === null || client.run === buffered.runId) && (client.types === null || client.types.has(buffered.event.type));
}

interface Client {
  res: ServerResponse;
  run: string | null;
  /** Only events of these types (?types=started,ended: a monitor of ends needs no output); null: every one. */
  types: ReadonlySet<string> | null;
  /** Gets each `ended` event as a summary (no stdout and stderr text): a page that shows no run's output does not need it. */
  summary: boolean;
  pending: string[];
  pendingBytes: number;
  blocked: boolean;
  /**
   * A batch client gets one `event: batch` message per BATCH_MS holding every
   * event since the last (output chunks joined), with the id of the last one:
   * a page then handles a few dozen messages a second, not one per chunk.
   */
  batch: { events: RunEvent[]; lastSeq: number } | null;
}

export interface HubStats {
  /** Events the hub has numbered since it started. */
  emitted: number;
  buffered: number;
  bufferedBytes: number;
  clients: number;
  /** Clients disconnected because they fell too far behind. */
  slowDisconnects: number;
}

export class EventHub {
  private readonly ring: Buffered[] = [];
  private head = 0;
  /** Sequence number of ring[head]. */
  private firstSeq = 1;
  private nextSeq = 1;
  private bytes = 0;
  private readonly clients = new Set<Client>();
  private flushScheduled = false;
  private batchTimer: NodeJS.Timeout | null = null;
  private slowDisconnects = 0;
  private readonly maxEvents: number;
  private readonly maxBytes: number;
  private readonly maxClientBacklog: number;
  private readonly unsubscribe: () => void;
  private readonly keepAlive: NodeJS.Timeout;

  constructor(
    source: EventSource,
    /** Names this host's life: ids from another life are not resumed. */
    readonly epoch: string,
    limits: EventHubLimits = {},
  ) {
    this.maxEvents = limits.maxEvents ?? 200_000;
    this.maxBytes = limits.maxBytes ?? 32 * 1024 * 1024;
    this.maxClientBacklog = limits.maxClientBacklog ?? 16 * 1024 * 1024;
    this.unsubscribe = source.subscribe((event) => this.push(event));
    this.keepAlive = setInterval(() => {
      for (const client of this.clients) this.enqueue(client, ': keepalive\n\n');
      this.scheduleFlush();
    }, limits.keepAliveMs ?? 15_000);
    this.keepAlive.unref();
  }

  stats(): HubStats {
    return {
      emitted: this.nextSeq - 1,
      buffered: this.ring.length - this.head,
      bufferedBytes: this.bytes,
      clients: this.clients.size,
      slowDisconnects: this.slowDisconnects,
    };
  }

  private push(event: RunEvent): void {
    const seq = this.nextSeq++;
    const frame = `id: ${this.epoch}-${seq}\ndata: ${JSON.stringify(event)}\n\n`;
    const buffered: Buffered = { runId: event.runId, frame, event, weight: frame.length + textOf(event) };
    if (event.type === 'ended') {
      // Serialised once here, whichever number of summary clients there are.
      const short: RunEvent = { ...event, result: resultSummary(event.result) };
      buffered.summary = { frame: `id: ${this.epoch}-${seq}\ndata: ${JSON.stringify(short)}\n\n`, event: short };
      buffered.weight += buffered.summary.frame.length;
    }
    this.ring.push(buffered);
    this.bytes += buffered.weight;
    while (this.ring.length - this.head > this.maxEvents || (this.bytes > this.maxBytes && this.ring.length - this.head > 1)) {
      this.bytes -= this.ring[this.head]!.weight;
      this.ring[this.head] = undefined as unknown as Buffered;
      this.head += 1;
      this.firstSeq += 1;
    }
    if (this.head > 65_536 && this.head * 2 > this.ring.length) {
      this.ring.splice(0, this.head);
      this.head = 0;
    }
    if (this.clients.size === 0) return;
    for (const client of this.clients) {
      if (wants(client, buffered)) this.send(client, buffered, seq);
    }
    this.scheduleFlush();
  }

  /**
   * Serves the stream on `res` (headers not yet sent). `lastEventId` resumes
   * after that event when it is still buffered; otherwise the client is told
   * of the gap first. `run` limits the stream to one run's events;
   * `fromRunStart` (with `run`, without `lastEventId`) first replays that run's
   * events still buffered, so a client that learns a run's id from starting it
   * misses none of its output. `summary`: each `ended` event's result comes
   * without its output (resultSummary), for a page that fetches output only
   * for the run it shows.
   */
  attach(res: ServerResponse, options: { lastEventId?: string | null; run?: string | null; fromRunStart?: boolean; batch?: boolean; summary?: boolean; types?: ReadonlySet<string> | null } = {}): void {
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    res.socket?.setNoDelay(true);
    const client: Client = { res, run: options.run ?? null, types: options.types ?? null, summary: options.summary === true, pending: [], pendingBytes: 0, blocked: false, batch: options.batch ? { events: [], lastSeq: 0 } : null };
    let opening = 'retry: 1000\n\n';
    let resume = this.resumePoint(options.lastEventId ?? null);
    if (resume === null && options.fromRunStart && client.run !== null) resume = this.firstSeq;
    if (resume === 'gap') opening += `event: ${GAP_EVENT}\ndata: {}\n\n`;
    res.write(opening);
    if (typeof resume === 'number') {
      for (let seq = resume; seq < this.nextSeq; seq++) {
        const buffered = this.ring[this.head + (seq - this.firstSeq)]!;
        if (wants(client, buffered)) this.send(client, buffered, seq);
      }
      this.scheduleFlush();
    }
    this.clients.add(client);
    const forget = () => this.clients.delete(client);
    res.on('close', forget);
    res.on('error', forget);
  }

  /** The first sequence number to replay, 'gap' when some are gone, or null to start from now. */
  private resumePoint(lastEventId: string | null): number | 'gap' | null {
    if (lastEventId === null || lastEventId === '') return null;
    const dash = lastEventId.lastIndexOf('-');
    const epoch = lastEventId.slice(0, dash);
    const seq = Number(lastEventId.slice(dash + 1));
    if (dash <= 0 || epoch !== this.epoch || !Number.isInteger(seq) || seq < 0 || seq >= this.nextSeq) return 'gap';
    if (seq + 1 < this.firstSeq) return 'gap';
    return seq + 1;
  }

  /** A buffered event to one client, in the variant it asked for. */
  private send(client: Client, buffered: Buffered, seq: number): void {
    const variant = client.summary && buffered.summary ? buffered.summary : buffered;
    this.enqueue(client, variant.frame, variant.event, seq);
  }

  private enqueue(client: Client, frame: string, event?: RunEvent, seq?: number): void {
    if (client.batch && event && seq !== undefined) {
      appendCoalesced(client.batch.events, event);
      client.batch.lastSeq = seq;
    } else {
      client.pending.push(frame);
    }
    client.pendingBytes += frame.length;
    // What the socket still holds counts too: a write that returned false keeps its text there.
    if (client.pendingBytes + client.res.writableLength > this.maxClientBacklog) {
      // Too far behind: it reconnects with its Last-Event-ID and resumes from the buffer.
      this.slowDisconnects += 1;
      this.clients.delete(client);
      client.pending = [];
      if (client.batch) client.batch.events = [];
      client.pendingBytes = 0;
      client.res.destroy();
    }
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.flushScheduled = false;
    let batchesWaiting = false;
    for (const client of this.clients) {
      if (client.batch?.events.length) batchesWaiting = true;
      this.flushClient(client);
    }
    if (batchesWaiting && !this.batchTimer) {
      this.batchTimer = setTimeout(() => {
        this.batchTimer = null;
        for (const client of this.clients) this.flushBatch(client);
      }, BATCH_MS);
    }
  }

  /** A batch client's events since the last message, as one message. */
  private flushBatch(client: Client): void {
    const batch = client.batch;
    if (!batch || batch.events.length === 0) return;
    const frame = `id: ${this.epoch}-${batch.lastSeq}\nevent: ${BATCH_EVENT}\ndata: ${JSON.stringify(batch.events)}\n\n`;
    batch.events = [];
    client.pending.push(frame);
    this.flushClient(client);
  }

  private flushClient(client: Client): void {
    if (client.blocked || client.pending.length === 0) return;
    const text = client.pending.length === 1 ? client.pending[0]! : client.pending.join('');
    client.pending = [];
    client.pendingBytes = 0;
    if (!client.res.write(text)) {
      client.blocked = true;
      client.res.once('drain', () => {
        client.blocked = false;
        this.flushClient(client);
      });
    }
  }

  /** Ends every stream and stops listening to the engine. */
  close(): void {
    this.unsubscribe();
    clearInterval(this.keepAlive);
    if (this.batchTimer) clearTimeout(this.batchTimer);
    for (const client of this.clients) {
      this.flushBatch(client);
      this.flushClient(client);
      client.res.end();
    }
    this.clients.clear();
  }
}
