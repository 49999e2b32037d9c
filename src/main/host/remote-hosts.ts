// The local host's links to the remote hosts configured in its state dir
// (remotes.json, `warden remote add`), so the app and the web UI see every
// host's runs without holding ssh themselves. One link per remote, over the
// same stdio bridge and shared ssh session the CLI uses (src/client), each
// with its own connection state:
//
//   connecting    the first try since the host started (or the remote was added)
//   connected     a probe (GET /host) answered and its event stream is open
//   disconnected  the last try failed or the link dropped; lastError says why,
//                 and the next try comes by itself every retryMs
//
// What moves a link between states, and why each is there:
//   - the event stream dropping (the ssh session died, the remote host
//     stopped): the stream is the link's heartbeat, so it marks the remote
//     disconnected at once rather than at the next request;
//   - a request to the remote failing to connect: the same, for a remote
//     that went away between two events;
//   - a probe every checkMs while connected that does not answer in
//     probeTimeoutMs: a link that hangs (a network gone quiet) sends no
//     error at all, and would otherwise look connected for ever;
//   - remotes.json changing (a remote added or removed while the host runs):
//     read again whenever the states are asked for.
// Nothing is dialled until something asks about remotes (the app's host bar,
// a list of all hosts, a remote's run): a background host a CLI command
// started, which nobody looks at across hosts, opens no ssh session.
// Only the remote's own link changes state: the local host and the other
// remotes go on as they were.

import { loadRemotes, dialArgv, describeRemote, RemoteError, type Remote } from '../../client/remotes';
import { dialCommand } from '../../client/stdio-link';
import { NodeTransport } from '../../client/transport';
import type { RunEvent } from '../../shared/events';
import { HOST_NAME, LOCAL_HOST, type HostLinkState, type HostStatus } from '../../shared/hosts';
import { HttpWardenApi, ROUTES } from '../../shared/http-api';
import type { RunSummary } from '../../shared/history';
import type { RunResult } from '../../shared/result';
import { WardenError, WardenUnavailableError } from '../supervisor/errors';

export interface RemoteHostsOptions {
  stateDir: string;
  /** Between tries to reach a disconnected remote (default 2 s). */
  retryMs?: number;
  /** Between probes of a connected remote (default 10 s). */
  checkMs?: number;
  /** How long a probe may take before the remote counts as gone (default 20 s: above ssh's ConnectTimeout of 15 s). */
  probeTimeoutMs?: number;
  /** The environment ssh (or a remote's command) runs with: WARDEN_SSH and the user's ssh agent. */
  env?: NodeJS.ProcessEnv;
  log?: (line: string) => void;
}

interface Link {
  remote: Remote;
  /** What the remote was configured as, to notice it was changed. */
  key: string;
  api: HttpWardenApi;
  transport: NodeTransport;
  state: HostLinkState;
  lastError: string | null;
  since: string;
  closeEvents: (() => void) | null;
  timer: NodeJS.Timeout | undefined;
  closed: boolean;
  /** Times connected (HostStatus.connections). */
  connections: number;
  /** The last event id from the remote: a new stream resumes there, so a short drop loses nothing the remote still buffers. */
  lastEventId: string;
}

/** A remote's run as the local host relays it: its id named with the host's (shared/hosts.ts). */
export function relayRun<T extends RunResult | RunSummary>(run: T, host: string): T {
  return { ...run, id: `${run.id}@${host}`, host };
}

export function relayEvent(event: RunEvent, host: string): RunEvent {
  const runId = `${event.runId}@${host}`;
  if (event.type === 'started') return { ...event, runId, snapshot: relayRun(event.snapshot, host) };
  if (event.type === 'ended') return { ...event, runId, result: relayRun(event.result, host) };
  if (event.type === 'tree') return { ...event, runId, snapshot: { ...event.snapshot, runId } };
  return { ...event, runId };
}

function oneLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.replace(/\s+/g, ' ').trim().slice(0, 300);
}

export class RemoteHosts {
  private readonly links = new Map<string, Link>();
  private readonly listeners = new Set<(event: RunEvent) => void>();
  private readonly retryMs: number;
  private readonly checkMs: number;
  private readonly probeTimeoutMs: number;
  private readonly env: NodeJS.ProcessEnv;
  private closed = false;
  private active = false;
  /** Why remotes.json could not be read, said once per reason. */
  private loadError: string | null = null;

  constructor(private readonly options: RemoteHostsOptions) {
    this.retryMs = options.retryMs ?? 2000;
    this.checkMs = options.checkMs ?? 10_000;
    this.probeTimeoutMs = options.probeTimeoutMs ?? 20_000;
    this.env = options.env ?? process.env;
  }

  /** The first question about remotes: the links are made now, and kept. */
  private activate(): void {
    if (this.active) return;
    this.active = true;
    this.reload();
  }

  /** Reads remotes.json again: links for new remotes, none for removed ones; a changed one is linked anew. */
  reload(): void {
    if (this.closed || !this.active) return;
    let remotes: Remote[];
    try {
      remotes = loadRemotes(this.options.stateDir);
      this.loadError = null;
    } catch (error) {
      // A damaged file changes nothing: the links made from the last good one stay.
      const why = error instanceof RemoteError ? error.message : oneLine(error);
      if (why !== this.loadError) this.options.log?.(`remote hosts: ${why}`);
      this.loadError = why;
      return;
    }
    const wanted = new Map(remotes.map((r) => [r.name, r]));
    for (const [name, link] of this.links) {
      const remote = wanted.get(name);
      if (!remote || JSON.stringify(remote) !== link.key) this.drop(name);
    }
    for (const remote of remotes) if (!this.links.has(remote.name)) this.add(remote);
  }

  /** A transport for the remote's bridge: one pool of connections, closed for good when the link drops. */
  private dial(remote: Remote): { transport: NodeTransport; api: HttpWardenApi } {
    const argv = dialArgv(this.options.stateDir, remote, this.env);
    const label = 'ssh' in remote ? `ssh to ${remote.name}` : `the command of remote ${remote.name}`;
    const transport = new NodeTransport({ dial: () => dialCommand(argv, label, this.env) });
    return { transport, api: new HttpWardenApi(transport) };
  }

  private add(remote: Remote): void {
    const link: Link = {
      remote,
      key: JSON.stringify(remote),
      ...this.dial(remote),
      state: 'connecting',
      lastError: null,
      since: new Date().toISOString(),
      closeEvents: null,
      timer: undefined,
      closed: false,
      connections: 0,
      lastEventId: '',
    };
    this.links.set(remote.name, link);
    void this.connect(link);
  }

  private drop(name: string): void {
    const link = this.links.get(name);
    if (!link) return;
    link.closed = true;
    clearTimeout(link.timer);
    link.closeEvents?.();
    link.transport.close();
    this.links.delete(name);
  }

  private setState(link: Link, state: HostLinkState, error?: string): void {
    if (error !== undefined) link.lastError = error;
    if (link.state === state) return;
    link.state = state;
    link.since = new Date().toISOString();
    this.options.log?.(`remote ${link.remote.name}: ${state}${state === 'disconnected' && link.lastError ? ` (${link.lastError})` : ''}`);
  }

  private schedule(link: Link, ms: number, fn: () => void): void {
    clearTimeout(link.timer);
    if (link.closed) return;
    link.timer = setTimeout(fn, ms);
    link.timer.unref();
  }

  /** GET /host within probeTimeoutMs; resolves with why it failed, or null. */
  private async probe(link: Link): Promise<string | null> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve(`it did not answer within ${this.probeTimeoutMs / 1000} s`), this.probeTimeoutMs);
    });
    try {
      return await Promise.race([link.api.host().then(() => null, (error: unknown) => oneLine(error)), late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** A try to reach the remote: the probe, then its event stream; on failure, the next try after retryMs. */
  private async connect(link: Link): Promise<void> {
    if (link.closed) return;
    const failed = await this.probe(link);
    if (link.closed) return;
    if (failed !== null) {
      this.lost(link, failed);
      return;
    }
    let opened = false;
    const path = link.lastEventId ? `${ROUTES.events}?lastEventId=${encodeURIComponent(link.lastEventId)}` : ROUTES.events;
    link.closeEvents = link.transport.events(path, {
      onEvent: (event, id) => {
        if (id) link.lastEventId = id;
        for (const listener of [...this.listeners]) listener(relayEvent(event, link.remote.name));
      },
      onConnect: () => {
        opened = true;
        link.connections += 1;
        link.lastError = null;
        this.setState(link, 'connected');
        this.schedule(link, this.checkMs, () => void this.check(link));
      },
      onDisconnect: () => {
        // The transport would redial every 250 ms: the retries are paced here instead.
        this.lost(link, opened ? 'its event stream ended (the link dropped or the remote host stopped)' : 'its event stream could not be opened');
      },
    });
  }

  /** A connected remote that stops answering is gone, though no error came. */
  private async check(link: Link): Promise<void> {
    if (link.closed || link.state !== 'connected') return;
    const failed = await this.probe(link);
    if (link.closed || link.state !== 'connected') return;
    if (failed !== null) this.lost(link, failed);
    else this.schedule(link, this.checkMs, () => void this.check(link));
  }

  private lost(link: Link, why: string): void {
    if (link.closed) return;
    link.closeEvents?.();
    link.closeEvents = null;
    // Connections kept alive for requests ride on the link that went away: the next try dials afresh.
    link.transport.close();
    Object.assign(link, this.dial(link.remote));
    this.setState(link, 'disconnected', why);
    this.schedule(link, this.retryMs, () => void this.connect(link));
  }

  /** This host and every configured remote, in the order they were added. */
  statuses(localSince: string): HostStatus[] {
    if (this.active) this.reload();
    else this.activate();
    return [
      { name: LOCAL_HOST, local: true, state: 'connected', lastError: null, since: localSince, target: null, connections: 1 },
      ...[...this.links.values()].map((link) => ({
        name: link.remote.name,
        local: false,
        state: link.state,
        lastError: link.lastError,
        since: link.since,
        target: describeRemote(link.remote),
        connections: link.connections,
      })),
    ];
  }

  /** The names of the remotes connected now. */
  connected(): string[] {
    this.activate();
    return [...this.links.values()].filter((l) => l.state === 'connected').map((l) => l.remote.name);
  }

  /**
   * The API of a configured remote that is connected. A name that is not a
   * configured remote is the caller's mistake (400); a remote that cannot be
   * reached now is a 503 saying why and that it comes back by itself.
   */
  api(name: string): HttpWardenApi {
    this.activate();
    let link = this.links.get(name);
    if (!link && HOST_NAME.test(name)) {
      this.reload();
      link = this.links.get(name);
    }
    if (!link) throw new WardenError('not-found', `No remote host named ${JSON.stringify(name.slice(0, 40))} is configured here (warden remote list shows them).`);
    if (link.state !== 'connected') {
      throw new WardenUnavailableError(
        `Remote host ${name} cannot be reached now${link.lastError ? ` (${link.lastError})` : ''}; Warden reconnects by itself, and its runs go on there meanwhile.`,
      );
    }
    return link.api;
  }

  /** A call to a remote that could not connect: the link is down, said at once (not at the next probe). */
  failed(name: string, error: unknown): void {
    const link = this.links.get(name);
    if (link && link.state === 'connected' && error instanceof Error && error.name === 'HostUnreachableError') this.lost(link, oneLine(error));
  }

  /** Every remote's events, each run named `ID@HOST`. */
  subscribe(listener: (event: RunEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  close(): void {
    this.closed = true;
    for (const name of [...this.links.keys()]) this.drop(name);
    this.listeners.clear();
  }
}
