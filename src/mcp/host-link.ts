// The MCP server's one connection to a Warden host: made at first need (the
// running host of the state dir, or a background one started now), kept with
// an open event-stream subscription, so a background host does not idle out
// while an agent is attached, and made again when the host went away.

import type { RunEvent } from '../shared/events';
import type { HttpWardenApi } from '../shared/http-api';
import { ensureHost, HostStartError } from '../client/autostart';
import { HostUnreachableError } from '../client/transport';
import { HOST_BUSY } from '../client/wire';
import { WardenError, type ErrorKind } from '../shared/errors';

export type Connect = (stateDir: string) => Promise<HttpWardenApi>;

/** No host could be had: the one-line reason a tool call answers with. */
export class NoHostError extends WardenError {
  override name = 'NoHostError';
  constructor(message: string, kind: ErrorKind = 'unavailable') {
    super(kind, message);
  }
}

/** Connection errors that mean the request never reached a host: safe to send again to a new one. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOENT']);

/**
 * At most this many calls to the host at once; the rest wait their turn.
 * Each call in flight holds a connection: an agent's burst of hundreds of
 * calls opened as many, filled the host's listen queue (EAGAIN) and was
 * told its host was lost while that host completed every run.
 */
export const MAX_IN_FLIGHT = 32;

export class HostLink {
  private pending: Promise<HttpWardenApi> | null = null;
  private current: HttpWardenApi | null = null;
  private unsubscribe: (() => void) | null = null;
  private readonly watchers = new Map<string, Set<(event: RunEvent) => void>>();
  private readonly everyRun = new Set<(event: RunEvent) => void>();
  private closed = false;
  /** A line every run answer carries while this link's host is not the state dir's own (a read-only state dir). */
  notice: string | null = null;

  constructor(
    readonly stateDir: string,
    private readonly connect: Connect = (dir) => ensureHost(dir),
  ) {}

  /** The host's API; starts one when none runs. Throws NoHostError with one line. */
  api(): Promise<HttpWardenApi> {
    if (this.closed) return Promise.reject(new NoHostError('The Warden MCP server is shutting down.', 'shutting-down'));
    if (!this.pending) {
      const attempt = this.connect(this.stateDir).then(
        (api) => {
          if (this.closed) return api;
          this.current = api;
          this.unsubscribe = api.subscribe((event) => this.dispatch(event));
          return api;
        },
        (error: unknown) => {
          if (this.pending === attempt) this.pending = null; // the next call tries again
          const why = error instanceof Error ? error.message : String(error);
          throw new NoHostError(error instanceof HostStartError ? why : `Cannot reach or start a Warden host for ${this.stateDir}: ${why}`);
        },
      );
      this.pending = attempt;
    }
    return this.pending;
  }

  /**
   * Calls `fn` with the host's API. When the host is gone (nothing listens on
   * its socket), forgets it and, if the request cannot have reached it, tries
   * once more with a new host.
   */
  async call<T>(fn: (api: HttpWardenApi) => Promise<T>): Promise<T> {
    await this.turn();
    try {
      return await this.callNow(fn);
    } finally {
      this.done();
    }
  }

  private inFlight = 0;
  private readonly waiting: (() => void)[] = [];

  /** Resolves when a call may go to the host (MAX_IN_FLIGHT), in the order asked. */
  private turn(): Promise<void> {
    if (this.inFlight < MAX_IN_FLIGHT) {
      this.inFlight += 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private done(): void {
    const next = this.waiting.shift();
    if (next) next(); // the turn passes on: inFlight stays
    else this.inFlight -= 1;
  }

  private async callNow<T>(fn: (api: HttpWardenApi) => Promise<T>): Promise<T> {
    const api = await this.api();
    try {
      return await fn(api);
    } catch (error) {
      if (!(error instanceof HostUnreachableError)) throw error;
      // Busy (wire.ts tried again for about 10 s): the host is there, and so is its connection.
      if (error.code === HOST_BUSY) throw new NoHostError(error.message);
      this.forget(api);
      if (error.code === undefined || !NOT_SENT.has(error.code)) {
        throw new NoHostError(`Lost the Warden host (${error.message}); what it recorded is in the history (the list tool); the next call starts a new host.`);
      }
      return fn(await this.api());
    }
  }

  /** Calls `listener` with the events of one run until the returned function is called. */
  watch(runId: string, listener: (event: RunEvent) => void): () => void {
    let set = this.watchers.get(runId);
    if (!set) this.watchers.set(runId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.watchers.get(runId) === set) this.watchers.delete(runId);
    };
  }

  /** Calls `listener` with every run's events until the returned function is called. */
  watchAll(listener: (event: RunEvent) => void): () => void {
    this.everyRun.add(listener);
    return () => this.everyRun.delete(listener);
  }

  /** Closes the event stream; later calls are refused. */
  close(): void {
    this.closed = true;
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.current = null;
    this.pending = null;
  }

  private dispatch(event: RunEvent): void {
    const set = this.watchers.get(event.runId);
    for (const listener of [...this.everyRun, ...(set ?? [])]) {
      try {
        listener(event);
      } catch {
        // A watcher's failure is its own; the stream goes on.
      }
    }
  }

  /** Drops the connection to `api` (not a newer one another call made meanwhile). */
  private forget(api: HttpWardenApi): void {
    if (this.current !== api) return;
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.current = null;
    this.pending = null;
  }
}
