// Where the desktop app's engine lives. At launch the app hosts the engine of
// its state dir in this process (startHost), unless a host already serves that
// state dir (`warden serve`, or a background host a CLI started): then it
// attaches to it over the control socket and serves its IPC from the HTTP
// client of that host, the same WardenApi. Plain Node (no electron import), so
// it is tested against real hosts in other processes; index.ts shows what it
// reports.
//
// The races it handles:
//   - the other host goes away between our failed lock and our connect: the
//     lock is free again, so it tries to host once more;
//   - the other host is shutting down (it answers, but takes no new runs): it
//     waits for it to go, then hosts;
//   - the other host holds the lock but does not answer (hung, stopped, or
//     still opening its history before it listens): it retries for a while,
//     then gives up with that host's one-line error.
//
// When an attached host goes away later (its event stream disconnects and it
// no longer answers), the app does not go on showing what that host last
// said. A person at the window expects it to keep working, and agents' CLIs
// expect a host to be there: so the app takes over, hosting the engine itself
// exactly as it would have at launch (the next host records the runs the dead
// one left as `lost`), or attaches to whichever host won the race to replace
// it. The `api` handed out is one object whose backend is switched, so the IPC
// handlers, the window's event forwarding and the notifications carry on
// unchanged; index.ts reloads the page (the renderer then refetches
// everything from the new backend) and says in a notification what happened.
// Only when neither works (another process holds the lock and does not
// answer) does it report `lost`: index.ts then says in a dialog that the
// window is no longer live and offers Retry or Quit, while hosting is still
// tried again every few seconds, and the dialog closes itself once a host is
// found. A dialog alone at the first disconnect would make a person do by hand
// what the app can do itself, and leave agents without a host meanwhile.

import type { GetOptions, HistoryQuery, HostInfo, InputOptions, ListOptions, OutputPage, OutputRange, ProcessSignal, StartOn, WaitOptions, WardenApi } from '../../shared/api';
import type { HostStatus } from '../../shared/hosts';
import type { RunEvent } from '../../shared/events';
import { HttpWardenApi, OUTPUT_PAGE_DEFAULT_CHARS, ROUTES, type HttpTransport } from '../../shared/http-api';
import type { RunRequest } from '../../shared/request';
import type { RunResult } from '../../shared/result';
import type { Settings } from '../../shared/settings';
import { HostUnreachableError, NodeTransport, socketPathFor } from '../../client/transport';
import { HostRunningError, startHost, type Host, type HostOptions } from '../host/host';
import { outputPage } from '../host/output-page';
import { resolveStateDir } from '../store';

export type AppHostMode = 'host' | 'attached';

/** What happened to the backend after launch (index.ts tells the person). */
export type AppHostChange =
  /** The attached host went away; this app now hosts the engine. `lostRuns`: the ids it held live. */
  | { kind: 'took-over'; from: HostInfo; lostRuns: string[] }
  /** The attached host went away and another one serves the state dir now; the app attached to it. */
  | { kind: 'reattached'; from: HostInfo; to: HostInfo; lostRuns: string[] }
  /** The attached host went away and the app can neither host nor attach; reconnect() tries again. */
  | { kind: 'lost'; from: HostInfo; error: Error };

export interface AppHostOptions {
  /** Default: resolveStateDir(). */
  stateDir?: string;
  /** Passed to startHost when this app hosts (the app: no TCP, no web root). */
  host?: Omit<HostOptions, 'stateDir'>;
  /** How long to keep trying when another host holds the lock but cannot be attached to (default 15 s). */
  retryForMs?: number;
  /** How long a host has to answer a probe (default 2 s). */
  probeTimeoutMs?: number;
  onChange?: (change: AppHostChange) => void;
  /**
   * Attached: the event stream came back after events were dropped from the
   * host's buffer, so what a view built from them may be stale (index.ts
   * reloads the page; the renderer's IPC transport has no gap signal).
   */
  onGap?: () => void;
  log?: (line: string) => void;
}

export interface AppHost {
  /** 'host': the engine runs in this process; 'attached': another process's host. Changes on a takeover. */
  readonly mode: AppHostMode;
  /** The API to serve the window from; the same object across a takeover. */
  readonly api: WardenApi;
  readonly stateDir: string;
  /** The host in this process, when hosting. */
  readonly host: Host | null;
  /** The host attached to, when attached (as it answered then). */
  readonly attachedTo: HostInfo | null;
  /** The live runs that close() stops: those this app hosts (none when attached: they are the other host's). */
  liveRuns(): Promise<RunResult[]>;
  /** After a 'lost' change: tries again to host or attach. */
  reconnect(): Promise<void>;
  /** Hosting: stops live runs with the stop sequence, records them, closes the host. Attached: only disconnects. */
  close(): Promise<void>;
}

/** While the attached host is lost, how often hosting in its place is tried again. */
const LOST_RETRY_MS = 5000;

const delay = (ms: number) => new Promise<void>((resolvePromise) => setTimeout(resolvePromise, ms));

/** The host answering on the state dir's socket, or null when none does (in time). */
export async function probeHost(stateDir: string, timeoutMs = 2000): Promise<HostInfo | null> {
  const transport = new NodeTransport({ socketPath: socketPathFor(stateDir) }, { timeoutMs });
  try {
    const reply = await transport.request('GET', ROUTES.host);
    return reply.status === 200 && typeof reply.body === 'object' && reply.body !== null ? (reply.body as HostInfo) : null;
  } catch (error) {
    if (error instanceof HostUnreachableError) return null;
    throw error;
  } finally {
    transport.close();
  }
}

/**
 * A WardenApi whose backend can be replaced: calls go to the current one
 * (waiting for a switch under way), and subscribers stay subscribed across a
 * switch.
 */
class SwitchingApi implements WardenApi {
  private readonly listeners = new Set<(event: RunEvent) => void>();
  private unsubscribeInner: (() => void) | null = null;
  private pending: Promise<unknown> | null = null;

  constructor(private current: WardenApi) {}

  /** Calls wait for this before they go out (a takeover under way). */
  hold(pending: Promise<unknown>): void {
    const held = pending.catch(() => undefined).finally(() => {
      if (this.pending === held) this.pending = null;
    });
    this.pending = held;
  }

  use(next: WardenApi): void {
    this.unsubscribeInner?.();
    this.unsubscribeInner = null;
    this.current = next;
    if (this.listeners.size > 0) this.subscribeInner();
  }

  /** Drops the backend's event stream (close). */
  detach(): void {
    this.unsubscribeInner?.();
    this.unsubscribeInner = null;
    this.listeners.clear();
  }

  private subscribeInner(): void {
    this.unsubscribeInner = this.current.subscribe((event) => {
      for (const listener of [...this.listeners]) listener(event);
    });
  }

  private async call<T>(fn: (api: WardenApi) => Promise<T>): Promise<T> {
    if (this.pending) await this.pending;
    return fn(this.current);
  }

  start(request: RunRequest, on?: StartOn): Promise<RunResult> {
    return this.call((api) => (on ? api.start(request, on) : api.start(request)));
  }
  stop(id: string, options?: { force?: boolean }): Promise<RunResult> {
    return this.call((api) => api.stop(id, options));
  }
  wait(id: string, options?: WaitOptions): Promise<RunResult> {
    return this.call((api) => api.wait(id, options));
  }
  extend(id: string, byMs: number): Promise<RunResult> {
    return this.call((api) => api.extend(id, byMs));
  }

  input(id: string, input: InputOptions): Promise<RunResult> {
    return this.call((api) => api.input(id, input));
  }

  signal(id: string, pid: number, signal: ProcessSignal): Promise<RunResult> {
    return this.call((api) => api.signal(id, pid, signal));
  }
  get(id: string, options?: GetOptions): Promise<RunResult | null> {
    return this.call((api) => api.get(id, options));
  }
  output(id: string, range: OutputRange): Promise<OutputPage> {
    return this.call((api) => outputPage(api, id, { offset: 0, limit: OUTPUT_PAGE_DEFAULT_CHARS, ...range }));
  }
  list(options?: ListOptions): Promise<RunResult[]> {
    return this.call((api) => api.list(options));
  }
  history(query?: HistoryQuery) {
    return this.call((api) => api.history(query));
  }
  timeline(id: string) {
    return this.call((api) => api.timeline(id));
  }
  sessions() {
    return this.call((api) => api.sessions());
  }
  restartSession(name: string) {
    return this.call((api) => api.restartSession(name));
  }
  closeSession(name: string) {
    return this.call((api) => api.closeSession(name));
  }
  host(): Promise<HostInfo> {
    return this.call((api) => api.host());
  }
  hosts(): Promise<HostStatus[]> {
    return this.call(async (api) => (api.hosts ? api.hosts() : []));
  }
  settings(): Promise<Settings> {
    return this.call((api) => api.settings());
  }
  saveSettings(settings: Settings): Promise<Settings> {
    return this.call((api) => api.saveSettings(settings));
  }
  subscribe(listener: (event: RunEvent) => void): () => void {
    this.listeners.add(listener);
    if (!this.unsubscribeInner) this.subscribeInner();
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) {
        this.unsubscribeInner?.();
        this.unsubscribeInner = null;
      }
    };
  }
}

interface Hosting {
  mode: 'host';
  host: Host;
  api: WardenApi;
}

interface Attached {
  mode: 'attached';
  info: HostInfo;
  api: HttpWardenApi;
  /** Ids of the runs live at that host, from its list and its events. */
  live: Set<string>;
  dispose(): void;
}

type Backend = Hosting | Attached;

interface StreamHooks {
  onConnect(): void;
  onDisconnect(): void;
  onGap(): void;
}

/**
 * The HTTP client of the host on the state dir's socket. Built here rather
 * than with connectToHost so that the app sees its event stream connect and
 * disconnect (connectToHost's client keeps its transport to itself).
 */
function attachTo(stateDir: string, info: HostInfo, hooks: StreamHooks): Attached {
  const transport = new NodeTransport({ socketPath: socketPathFor(stateDir) });
  const watched: HttpTransport = {
    request: (method, path, body) => transport.request(method, path, body),
    events: (path, handlers) => transport.events(path, { ...handlers, onConnect: hooks.onConnect, onDisconnect: hooks.onDisconnect }),
  };
  const api = new HttpWardenApi(watched, { onGap: hooks.onGap });
  const live = new Set<string>();
  const ended = new Set<string>();
  // The watch: this subscription keeps the event stream open for as long as the app is attached.
  const unsubscribe = api.subscribe((event) => {
    if (event.type === 'started' && event.snapshot.state !== 'ended') live.add(event.runId);
    else if (event.type === 'ended') {
      live.delete(event.runId);
      ended.add(event.runId);
    }
  });
  void api.list().then(
    (runs) => {
      // An end that arrived before the list did wins.
      for (const run of runs) if (run.state !== 'ended' && !ended.has(run.id)) live.add(run.id);
      ended.clear();
    },
    () => undefined,
  );
  return {
    mode: 'attached',
    info,
    api,
    live,
    dispose: () => {
      unsubscribe();
      transport.close();
    },
  };
}

/**
 * Hosts the engine of the state dir, or attaches to the host that serves it.
 * Rejects with startHost's error when it can do neither (a HostRunningError
 * when another host holds the lock and does not answer).
 */
export async function startOrAttach(options: AppHostOptions = {}): Promise<AppHost> {
  const stateDir = options.stateDir ?? resolveStateDir();
  const retryForMs = options.retryForMs ?? 15_000;
  const probeTimeoutMs = options.probeTimeoutMs ?? 2000;
  const log = options.log ?? (() => undefined);
  let closed = false;
  let checking = false;
  let switching: Promise<void> | null = null;
  /** Set while the attached host is gone and neither hosting nor attaching worked. */
  let lost: { atMs: number } | null = null;

  const hooks: StreamHooks = {
    onConnect: () => void check(),
    onDisconnect: () => void check(),
    onGap: () => options.onGap?.(),
  };

  async function acquire(budgetMs: number): Promise<Backend> {
    const deadline = performance.now() + budgetMs;
    for (;;) {
      try {
        const host = await startHost({ ...options.host, stateDir });
        return { mode: 'host', host, api: host.api };
      } catch (error) {
        if (!(error instanceof HostRunningError)) throw error;
        const info = await probeHost(stateDir, probeTimeoutMs);
        if (info?.accepting) return attachTo(stateDir, info, hooks);
        // Gone since the lock said otherwise (host at once), shutting down (wait for it), or silent (retry, then give up).
        if (closed || performance.now() >= deadline) throw error;
        if (info || !error.other) {
          log(info ? `the host (pid ${info.pid}) is shutting down; waiting for it to go.` : 'the host holding the lock does not answer; retrying.');
          await delay(250);
        }
      }
    }
  }

  // The stream's hooks call check() only from I/O callbacks, so never before this is set.
  let backend: Backend = await acquire(retryForMs);
  const api = new SwitchingApi(backend.api);

  function change(next: Backend, from: HostInfo, lostRuns: string[]): void {
    const previous = backend;
    backend = next;
    lost = null;
    api.use(next.api);
    if (previous.mode === 'attached') previous.dispose();
    if (next.mode === 'host') {
      log(`the host for ${stateDir} (pid ${from.pid}) went away; this app hosts the engine now.`);
      options.onChange?.({ kind: 'took-over', from, lostRuns });
    } else {
      log(`the host for ${stateDir} (pid ${from.pid}) went away; attached to pid ${next.info.pid}.`);
      options.onChange?.({ kind: 'reattached', from, to: next.info, lostRuns });
    }
  }

  /** Replaces a dead attached host: host here, or attach to whoever serves the state dir now. */
  function replace(from: Attached, found: HostInfo | null, budgetMs: number): Promise<void> {
    const lostRuns = [...from.live];
    const work = (async () => {
      try {
        const next = found ? attachTo(stateDir, found, hooks) : await acquire(budgetMs);
        if (closed) {
          // close() came while this ran: leave nothing behind.
          if (next.mode === 'host') await next.host.shutdown();
          else next.dispose();
          return;
        }
        change(next, from.info, lostRuns);
      } catch (error) {
        if (closed) return;
        const reason = error instanceof Error ? error : new Error(String(error));
        const first = lost === null;
        lost = { atMs: performance.now() };
        if (!first) return;
        log(`the host for ${stateDir} went away and this app can neither host nor attach: ${reason.message}`);
        options.onChange?.({ kind: 'lost', from: from.info, error: reason });
      }
    })();
    const tracked: Promise<void> = work.finally(() => {
      if (switching === tracked) switching = null;
    });
    switching = tracked;
    api.hold(tracked);
    return tracked;
  }

  /** After the stream dropped or came back: is it still the same host, and does it answer? */
  async function check(): Promise<void> {
    if (closed || checking || switching || backend.mode !== 'attached') return;
    const attached = backend;
    checking = true;
    try {
      const info = await probeHost(stateDir, probeTimeoutMs);
      if (closed || backend !== attached || switching) return;
      const other = info?.accepting ? info : null;
      if (other && other.hostId === attached.info.hostId) {
        // A dropped stream, which reconnects by itself; or the host answers again after it was lost.
        if (lost) change(attachTo(stateDir, other, hooks), attached.info, []);
        return;
      }
      // While lost, the stream retries every 250 ms: hosting is tried again at most every few seconds.
      if (lost && !other && performance.now() - lost.atMs < LOST_RETRY_MS) return;
      await replace(attached, other, lost ? 0 : retryForMs);
    } finally {
      checking = false;
    }
  }

  return {
    get mode() {
      return backend.mode;
    },
    api,
    stateDir,
    get host() {
      return backend.mode === 'host' ? backend.host : null;
    },
    get attachedTo() {
      return backend.mode === 'attached' ? backend.info : null;
    },
    async liveRuns() {
      if (switching) await switching;
      if (backend.mode !== 'host') return [];
      return (await backend.api.list()).filter((run) => run.state !== 'ended');
    },
    async reconnect() {
      if (switching) return switching;
      if (closed || backend.mode !== 'attached') return;
      // A failure reports 'lost' again (a person asked).
      lost = null;
      await replace(backend, null, retryForMs);
    },
    async close() {
      closed = true;
      if (switching) await switching;
      api.detach();
      if (backend.mode === 'host') await backend.host.shutdown();
      else backend.dispose();
    },
  };
}
