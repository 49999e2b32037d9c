// A host: the engine, the history store and the control API in one process
// (`warden serve`, and the desktop app). One host per state dir:
//
//   lock     an abstract unix socket named after the user and the state dir's
//            real path: the kernel frees it when the process dies, so a crashed
//            host never leaves a lock behind and two hosts starting at once
//            cannot both win.
//   socket   <state dir>/run/warden.sock, 0600 in a 0700 dir: the CLI and agents.
//   tcp      optional, 127.0.0.1 only, bearer token in <state dir>/run/token (0600).
//
// Shutdown takes no new runs, stops live ones with the stop sequence, records
// them, and only then closes the store and the listeners.

import { createHash, randomBytes } from 'node:crypto';
import { accessSync, chmodSync, constants, existsSync, linkSync, lstatSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createNetServer, type Server as NetServer } from 'node:net';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import type { HostInfo, WardenApi } from '../../shared/api';
import type { RunEvent } from '../../shared/events';
import type { EventRecord } from '../../shared/history';
import { TELEMETRY_EVENT } from '../../shared/telemetry';
import { WardenError, type ErrorKind } from '../../shared/errors';
import { deathNoteName } from '../store/recovery';
import { attachRecorder, ensureStateDir, openStore, resolveStateDir, StoreOpenError, type HistoryStore, type Recorder } from '../store';
import { ensurePrivateDir, notPlainFile, writePrivateFile } from '../store/state-dir';
import { engineApi } from '../supervisor/api';
import { hostPoolSize } from '../supervisor/cgroup-pool';
import { newId, Supervisor, type SupervisorOptions } from '../supervisor/supervisor';
import { packageRoot } from '../../client/package-root';
import { connectToHost, socketPathFor } from '../../client/transport';
import { EventHub, type EventHubLimits } from './event-hub';
import { federate } from './federated-api';
import { RemoteHosts, type RemoteHostsOptions } from './remote-hosts';
import { connectionGuard, socketBacklog } from './connection-guard';
import { createControlHandler, type ControlHandler } from './server';
import { sentinelWanted, startSentinel, type Sentinel } from './sentinel';
import { settingsFile } from './settings-file';
import { PendingByPeer } from './tcp-peers';
import { searchRuns, type SearchBounds } from './search/search';
import { SearchWorker } from './search/worker';

export const TOKEN_NAME = 'token';

export function runDirOf(stateDir: string): string {
  return join(stateDir, 'run');
}

export function tokenPathOf(stateDir: string): string {
  return join(runDirOf(stateDir), TOKEN_NAME);
}

/** A unix socket path must fit in sun_path (108 bytes with its NUL). */
const MAX_SOCKET_PATH = 107;

/** A host that cannot start here (its directory, socket, lock or port): one line for the user. */
export class HostError extends WardenError {
  override name = 'HostError';
  constructor(message: string, kind: ErrorKind = 'unavailable') {
    super(kind, message);
  }
}

/** Another host already serves this state dir. */
export class HostRunningError extends HostError {
  override name = 'HostRunningError';
  constructor(
    message: string,
    readonly other: HostInfo | null,
  ) {
    super(message, 'busy');
  }
}

export interface HostOptions {
  /** Default: resolveStateDir() ($WARDEN_STATE_DIR, $XDG_STATE_HOME/warden, ~/.local/state/warden). */
  stateDir?: string;
  /** Also listen on 127.0.0.1 at this port (0: any free port); null or absent: the unix socket only. */
  port?: number | null;
  /** The built renderer for web mode; default out/renderer of this checkout when built; null: none. */
  webRoot?: string | null;
  /** Record runs in the history (default true). */
  history?: boolean;
  supervisor?: SupervisorOptions;
  events?: EventHubLimits;
  log?: (line: string) => void;
  version?: string;
  /**
   * Shut down by itself after this long with no live run and no client
   * connected to the control socket (a background host a client started);
   * absent: never.
   */
  idleExitMs?: number;
  /** Bounds on the loopback TCP listener (defaults: TCP_LIMITS). */
  tcpLimits?: Partial<typeof TCP_LIMITS>;
  /** How the links to remote hosts retry and probe, and the environment ssh runs with (remote-hosts.ts). */
  remotes?: Omit<RemoteHostsOptions, 'stateDir' | 'log'>;
  /** Lower bounds for a search call than the contract's (tests of what happens at them). */
  searchBounds?: Partial<SearchBounds>;
}

/** What the event hub streams: this engine's events, and the remotes' with their runs named ID@HOST. */
function relayedEvents(supervisor: Supervisor, remotes: RemoteHosts): { subscribe(listener: (event: RunEvent) => void): () => void } {
  return {
    subscribe(listener) {
      const mine = supervisor.subscribe(listener);
      const theirs = remotes.subscribe(listener);
      return () => {
        mine();
        theirs();
      };
    },
  };
}

/**
 * The TCP listener is reachable by every local user: at most this many
 * connections at once (more are closed as they come), at most
 * perPeerPending of them from one peer address, or from one local user once
 * a few are pending (tcp-peers.ts), without a whole request head yet (more
 * from it are closed as they come, so one source holding
 * half-open connections never fills the listener for the others: the
 * owner's browser still gets in), and a request's headers must arrive
 * within headersTimeoutMs, the whole request within requestTimeoutMs
 * (answers may take as long as they need: a wait or an event stream). The unix socket is a listener of its own, so nothing on TCP
 * takes its descriptors or its turns.
 */
export const TCP_LIMITS = { maxConnections: 256, perPeerPending: 32, headersTimeoutMs: 5_000, requestTimeoutMs: 30_000 };

/** How often a host looks for live runs in its history whose process went away (an embedded `warden run` killed). */
const LOST_CHECK_MS = 2000;

/** How often an idle-exit host looks whether it is idle. */
const IDLE_CHECK_MS = 500;

export interface Host {
  readonly stateDir: string;
  readonly socketPath: string;
  readonly supervisor: Supervisor;
  readonly api: WardenApi;
  readonly hub: EventHub;
  readonly store: HistoryStore | null;
  /** The TCP listener, when asked for. */
  readonly tcp: { port: number; url: string; tokenPath: string; token: string } | null;
  info(): HostInfo;
  /** A URL with a one-time token that logs a browser in (null without TCP). */
  loginUrl(): string | null;
  /** Stops live runs with the stop sequence, records them, closes everything; says what was and was not recorded. Idempotent. */
  shutdown(): Promise<ShutdownReport>;
  readonly closed: Promise<ShutdownReport>;
}

/** What a host's history holds of its runs once it has shut down. */
export interface ShutdownReport {
  /** Why the history was not written at all, or null when it was. */
  historyOff: string | null;
  /** Ended runs written, whole or cut. */
  recorded: number;
  /** Ids of runs written with their output cut to fit (the latest 100), and how many in all. */
  cut: string[];
  cutCount: number;
  /** Runs whose end is not in the history, and why. */
  unrecorded: { id: string; why: string }[];
  /** The history's file was deleted or replaced and could not be mended: where its runs are instead. */
  fileProblem?: string;
}

/** One line for a person: exactly what was and was not recorded. */
export function shutdownLine(report: ShutdownReport): string {
  if (report.historyOff !== null) return `host stopped; its history was not written (${report.historyOff}), so none of its runs is recorded`;
  let line = `host stopped; ${report.recorded} run(s) recorded in the history`;
  if (report.fileProblem) return `${line}, but NOT in the history file others read: ${report.fileProblem}`;
  if (report.cutCount > 0) line += `, ${report.cutCount} with output cut to fit the disk (${report.cut.join(', ')})`;
  if (report.unrecorded.length === 0) return `${line}; none missing`;
  const byWhy = new Map<string, string[]>();
  for (const { id, why } of report.unrecorded) byWhy.set(why, [...(byWhy.get(why) ?? []), id]);
  return `${line}; ${report.unrecorded.length} NOT recorded: ${[...byWhy].map(([why, ids]) => `${ids.join(', ')} (${why})`).join('; ')}`;
}

function defaultWebRoot(): string | null {
  const root = packageRoot();
  if (!root) return null;
  const dir = join(root, 'out', 'renderer');
  return existsSync(join(dir, 'index.html')) ? dir : null;
}

/**
 * The lock's name: an abstract unix socket named after the user, the state
 * dir's real path and a secret kept in <state dir>/run/lock-key (0600, in the
 * 0700 run dir). Abstract names have no permissions, so without the secret
 * another local user could bind the name first and keep every host of ours
 * from starting; they cannot read the key. Two hosts starting at once read
 * the same key (it is created whole, by link(), by whichever comes first).
 */
export function lockName(stateDir: string): string {
  const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
  let real = stateDir;
  try {
    real = realpathSync(stateDir);
  } catch {
    // ensureStateDir made it; a race removing it shows up when the socket is made.
  }
  return `\0warden-host-${uid}-${createHash('sha256').update(`${real}\0${lockKey(stateDir)}`).digest('hex').slice(0, 32)}`;
}

function lockKey(stateDir: string): string {
  const path = join(runDirOf(stateDir), 'lock-key');
  const planted = notPlainFile(path);
  if (planted !== null) throw new HostError(`The host lock's key ${planted}`);
  try {
    return readFileSync(path, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw new HostError(`Cannot read the host lock's key ${path}: ${(error as Error).message}`);
  }
  ensurePrivateDir(runDirOf(stateDir));
  const draft = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(draft, `${randomBytes(24).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  try {
    linkSync(draft, path); // whole or not at all; EEXIST: another host made it first, and its key is the one
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw new HostError(`Cannot make the host lock's key ${path}: ${(error as Error).message}`);
  } finally {
    rmSync(draft, { force: true });
  }
  return readFileSync(path, 'utf8').trim();
}

function listenNet(server: NetServer | Server, target: string | { port: number; host: string } | { path: string; backlog: number }): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const onError = (error: Error) => reject(error);
    server.once('error', onError);
    const done = () => {
      server.off('error', onError);
      resolvePromise();
    };
    if (typeof target === 'string') server.listen(target, done);
    else if ('path' in target) server.listen({ path: target.path, backlog: target.backlog }, done);
    else server.listen(target.port, target.host, done);
  });
}

async function takeLock(stateDir: string): Promise<NetServer> {
  const lock = createNetServer((socket) => socket.destroy());
  let locked = false;
  try {
    await listenNet(lock, lockName(stateDir));
    locked = true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
  }
  if (locked) {
    // The lock is ours; a host that still answers on the socket holds another lock (a Warden of
    // another version, or one whose lock key was removed): never take the socket from it.
    const answering = await connectToHost(stateDir, { timeoutMs: 1000 }).catch(() => null);
    if (!answering) return lock;
    lock.close();
  }
  const other = await connectToHost(stateDir, { timeoutMs: 2000 });
  const info = other ? await other.host().catch(() => null) : null;
  throw new HostRunningError(
    info
      ? `A Warden host is already running for ${stateDir} (pid ${info.pid}, since ${info.startedAt}); the CLI uses it. Stop it first to start another.`
      : `Another Warden host holds the lock for ${stateDir} but does not answer on ${socketPathFor(stateDir)}; stop it first.`,
    info,
  );
}

/**
 * What a host's heap may grow past its live data before V8 collects, in
 * percent. The live data is bounded (each run's cap, the ended-output budget,
 * the event ring), but output arrives as chunks that live for a while and are
 * then garbage, and V8's default lets such a heap grow to several times its
 * live size: 50 runs of 10 MB took a host to 1.2 GB with 300 MB live. At 50 %
 * the same load peaks near 600 MB, for a few more collections (bench (o)).
 */
const HEAP_GROWING_PERCENT = 50;

export async function startHost(options: HostOptions = {}): Promise<Host> {
  const log = options.log ?? (() => undefined);
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  const stateDir = ensureStateDir(options.stateDir ?? resolveStateDir());
  const runDir = makeRunDir(stateDir);
  const socketPath = socketPathThatFits(stateDir);
  const parts: HostParts = { lock: await takeLock(stateDir), servers: [] };
  try {
    return await startOnLock(options, log, stateDir, runDir, socketPath, parts);
  } catch (error) {
    // A failed start closes what it had opened, as a shutdown does; the start's error is the one to tell.
    await closeHost(parts).catch((closing: unknown) => log(`closing after a failed start: ${closing instanceof Error ? closing.message : String(closing)}`));
    throw error;
  }
}

/** The run dir (the socket's, the lock key's, the token's), private and writable, or why no host can serve this state dir. */
function makeRunDir(stateDir: string): string {
  const runDir = runDirOf(stateDir);
  try {
    ensurePrivateDir(runDir);
    accessSync(runDir, constants.W_OK); // the socket and the lock's key are made in it
  } catch (error) {
    if (error instanceof StoreOpenError) throw new HostError(error.message);
    // A read-only or foreign state dir: no socket can be made there, so no host can serve it.
    let why = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    try {
      accessSync(stateDir, constants.W_OK); // a recursive mkdir says ENOENT where the state dir is read-only
    } catch (denied) {
      why = (denied as NodeJS.ErrnoException).code ?? why;
    }
    throw new HostError(`Cannot make the host's directory ${runDir} (${why}), so no host can serve ${stateDir}; set WARDEN_STATE_DIR to a writable directory.`);
  }
  return runDir;
}

function socketPathThatFits(stateDir: string): string {
  const socketPath = socketPathFor(stateDir);
  if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH) {
    throw new HostError(`The control socket path ${socketPath} is longer than a unix socket allows (${MAX_SOCKET_PATH} bytes); set WARDEN_STATE_DIR to a shorter directory.`);
  }
  return socketPath;
}

/** What a host holds, filled in as its start goes on: closeHost closes whatever is there, in one order. */
interface HostParts {
  lock: NetServer;
  sentinel?: Sentinel;
  supervisor?: Supervisor;
  history?: HostHistory;
  remotes?: RemoteHosts;
  hub?: EventHub;
  searchWorker?: SearchWorker;
  /** The control socket's listeners and the TCP one, in the order made. */
  servers: (Server | NetServer)[];
  /** The control socket, once the one at the path is the one this host made. */
  socketPath?: string;
  /** The TCP token's file, once written. */
  tokenPath?: string;
  idleTimer?: NodeJS.Timeout;
}

/** The rest of a start, with the lock held: every part it makes goes into `parts` as it is made. */
async function startOnLock(options: HostOptions, log: (line: string) => void, stateDir: string, runDir: string, socketPath: string, parts: HostParts): Promise<Host> {
  // Ends every run of this host if the host dies, SIGKILL included (sentinel.ts).
  const hostId = options.supervisor?.hostId ?? newId();
  const sentinel = (parts.sentinel = sentinelWanted() ? startSentinel(hostId, { onError: log, deathNote: join(runDir, deathNoteName(hostId)) }) : undefined);
  const supervisor = (parts.supervisor = new Supervisor({ cgroupPool: hostPoolSize(), ...options.supervisor, hostId, ...(sentinel ? { watch: sentinel } : {}) }));
  const history = (parts.history = await openHistory(stateDir, supervisor, options.history !== false, log));

  const startedAt = new Date().toISOString();
  const state = { accepting: true, tcpPort: null as number | null };
  const info = (): HostInfo => ({
    hostId: supervisor.hostId,
    pid: process.pid,
    version: options.version ?? 'unknown',
    stateDir,
    startedAt,
    accepting: state.accepting,
    history: history.store !== null,
    historyOff: history.historyOff,
    historyNotices: [...history.notices],
    port: state.tcpPort,
    idleExitMs: options.idleExitMs ?? null,
    uncovered: sentinel ? sentinel.uncovered() : 'WARDEN_SENTINEL=0: runs will not be ended if this host is killed (the next host records them lost and ends what is left)',
    sentinel: sentinel ? { pid: sentinel.pid ?? null, restarts: sentinel.restarts } : null,
    descriptors: supervisor.descriptorFigures(),
  });
  // The app's and the web UI's view of every host: this engine, and the configured remotes over their links (federated-api.ts).
  const remotes = (parts.remotes = new RemoteHosts({ stateDir, log, ...options.remotes }));
  const store = history.store;
  const api = federate(engineApi(supervisor, { ...(store ? { store: historyWithLiveTelemetry(store, history.recorder) } : {}), host: info, settings: settingsThatPrune(stateDir, store, log) }), remotes, startedAt);
  // Searches scan in a worker thread of their own (search/worker.ts), made at the first search.
  const searchWorker = (parts.searchWorker = new SearchWorker());
  api.search = (query) => searchRuns(api, query, searchWorker, options.searchBounds);
  const hub = (parts.hub = new EventHub(relayedEvents(supervisor, remotes), `${supervisor.hostId}${randomBytes(3).toString('hex')}`, options.events));
  const token = randomBytes(32).toString('base64url');
  const handler = controlHandler(options, supervisor, api, hub, token, () => state.tcpPort, log);

  const socket = await listenOnSocket(handler, socketPath, parts, log);
  let tcp: Host['tcp'] = null;
  if (options.port !== undefined && options.port !== null) {
    tcp = await listenOnTcp(handler, options.port, { ...TCP_LIMITS, ...options.tcpLimits }, tokenPathOf(stateDir), token, parts, log);
    state.tcpPort = tcp.port;
  }

  let resolveClosed!: (report: ShutdownReport) => void;
  const closed = new Promise<ShutdownReport>((r) => (resolveClosed = r));
  let shuttingDown: Promise<ShutdownReport> | null = null;
  const shutdown = () => {
    shuttingDown ??= (async () => {
      state.accepting = false;
      const report = await closeHost(parts);
      resolveClosed(report);
      return report;
    })();
    return shuttingDown;
  };
  if (options.idleExitMs !== undefined) {
    parts.idleTimer = exitWhenIdle(options.idleExitMs, () => socket.clients() > 0 || supervisor.list().some((run) => run.state !== 'ended'), () => void shutdown(), log);
  }

  return {
    stateDir,
    socketPath,
    supervisor,
    api,
    hub,
    store,
    tcp,
    info,
    loginUrl: () => (tcp ? `${tcp.url}${handler.oneTimeLogin()}` : null),
    shutdown,
    closed,
  };
}

/** A host's history: the store and its recorder, or why there is none; its notices; the watch for runs of Warden processes that went away. */
interface HostHistory {
  store: HistoryStore | null;
  recorder: Recorder | null;
  historyOff: string | null;
  /** Its last 20 notices about its history file, with their times (GET /host). */
  notices: { at: string; line: string }[];
  /** Stops the watch for lost runs, after the look under way. */
  stopWatch(): Promise<void>;
}

/** Opens the history, records what earlier hosts left live as lost (before the socket answers), and watches for more; a history that cannot open is off, with why. */
async function openHistory(stateDir: string, supervisor: Supervisor, wanted: boolean, log: (line: string) => void): Promise<HostHistory> {
  let store: HistoryStore | null = null;
  let recorder: Recorder | null = null;
  let historyOff: string | null = wanted ? null : 'turned off';
  let lostTimer: NodeJS.Timeout | undefined;
  let lostLook: Promise<void> | null = null;
  const notices: { at: string; line: string }[] = [];
  const historyNotice = (line: string) => {
    notices.push({ at: new Date().toISOString(), line });
    if (notices.length > 20) notices.shift();
    log(`history: ${line}`);
  };
  if (wanted) {
    try {
      store = openStore({ dir: stateDir, notice: historyNotice });
      if (store.movedAside) historyNotice(store.movedAside.message);
      // Ended results the history holds whole may leave memory: they are read back from it.
      supervisor.keepEndedIn(store);
      recorder = attachRecorder(store, supervisor, {
        onError: (e) => log(`history: ${e.message}`),
        onEndWritten: (result, written) => {
          if (written.whole) supervisor.endStored(result.id);
        },
      });
      // Before the socket answers, so no client sees a dead host's run as running; one /proc scan per dead host.
      const report = await store.recoverLostRuns({ tearDown: true });
      if (report.recovered.length > 0) log(`recovered ${report.recovered.length} run(s) left live by a Warden that went away (see warden list --verdict lost).`);
      // And the cgroups of those runs, which no sentinel removed; what cannot be judged from here is only named.
      void supervisor.sweepStaleCgroups().then((sweep) => {
        if (sweep && sweep.removed.length + sweep.killed.length > 0) log(`ended ${sweep.killed.length} process(es) and removed ${sweep.removed.length} cgroup(s) left by a Warden that went away.`);
        const alone = sweep?.leftAlone ?? [];
        for (const { path, why } of alone.slice(0, 3)) log(`left the cgroup ${path} alone: ${why}.`);
        if (alone.length > 3) log(`left ${alone.length - 3} more cgroup(s) alone whose owner cannot be judged from here.`);
      });
      // Runs of other processes recording here (an embedded `warden run`) that die while this host is up: found
      // within LOST_CHECK_MS and recorded lost, as a start would (one indexed query while there are none).
      const watched = store;
      lostTimer = setInterval(() => {
        if (lostLook !== null || watched.isClosed) return;
        lostLook = watched
          .recoverLostRuns({ tearDown: true })
          .then((found) => {
            if (found.recovered.length > 0) log(`recovered ${found.recovered.length} run(s) of a Warden process that went away while this host ran (${found.recovered.map((r) => r.id).join(', ')}).`);
          })
          .catch((error: unknown) => log(`history: looking for runs of Warden processes that went away failed: ${error instanceof Error ? error.message : String(error)}`))
          .finally(() => (lostLook = null));
      }, LOST_CHECK_MS);
      lostTimer.unref();
    } catch (error) {
      historyOff = error instanceof Error ? error.message : String(error);
      log(`history is off: ${historyOff}`);
      clearInterval(lostTimer);
      await recorder?.close().catch(() => undefined);
      supervisor.keepEndedIn(null);
      store?.close();
      store = null;
      recorder = null;
    }
  }
  return {
    store,
    recorder,
    historyOff,
    notices,
    stopWatch: async () => {
      clearInterval(lostTimer);
      await lostLook;
    },
  };
}

/** The settings file; new retention limits apply now, not after the next 500 runs. */
function settingsThatPrune(stateDir: string, store: HistoryStore | null, log: (line: string) => void) {
  const savedSettings = settingsFile(stateDir, log);
  return {
    get: savedSettings.get,
    save: (next: Parameters<typeof savedSettings.save>[0]) => {
      const stored = savedSettings.save(next);
      setImmediate(() => {
        try {
          if (store && !store.isClosed) store.prune(stored.retention);
        } catch (error) {
          log(`history: pruning to the new retention failed: ${error instanceof Error ? error.message : String(error)}`);
        }
      });
      return stored;
    },
  };
}

/** The history as the engine's API reads it: a live run's timeline carries its telemetry so far, as an ended run's does (a page opened late charts it from the first sample). */
function historyWithLiveTelemetry(kept: HistoryStore, recorder: Recorder | null) {
  return {
    list: kept.list.bind(kept),
    get: kept.get.bind(kept),
    events: (id: string): EventRecord[] => {
      const stored = kept.events(id);
      const live = recorder?.liveTelemetry(id) ?? null;
      if (!live || stored.some((e) => e.kind === TELEMETRY_EVENT)) return stored;
      return [...stored, { runId: id, at: new Date().toISOString(), atMs: null, kind: TELEMETRY_EVENT, detail: live as unknown as Record<string, unknown> }];
    },
  };
}

/** The control API's handler, which stops a run whose owner (its client's connection, or a process) went away before its end. */
function controlHandler(options: HostOptions, supervisor: Supervisor, api: WardenApi, hub: EventHub, token: string, port: () => number | null, log: (line: string) => void): ControlHandler {
  return createControlHandler({
    api,
    hub,
    token,
    webRoot: options.webRoot === undefined ? defaultWebRoot() : options.webRoot,
    port,
    log,
    onOwnerGone: (id, note) => {
      const run = supervisor.get(id);
      if (!run || run.state === 'ended') return;
      log(`run ${id}: its ${note ? 'owner' : 'client'} went away before the end; stopping it`);
      supervisor.stop(id, {
        reason: 'owner',
        note: note ?? 'Its client (the warden run that started it) went away before the end, so the host stopped it: a run started without --yield belongs to its command, as with timeout(1).',
      });
    },
    isLive: (id) => {
      const run = supervisor.get(id);
      return run !== undefined && run !== null && run.state !== 'ended';
    },
  });
}

/** The control socket (0600), made afresh at its path; says how many clients are connected to it. */
async function listenOnSocket(handler: ControlHandler, socketPath: string, parts: HostParts, log: (line: string) => void): Promise<{ clients: () => number }> {
  const unixServer = createHttpServer((req, res) => handler(req, res, 'unix'));
  // The socket's listener: each connection goes to the HTTP server, or, near the descriptor limit, gets its 503 (connection-guard.ts).
  const guard = connectionGuard({ onLow: () => unixServer.closeIdleConnections() });
  const unixFront = createNetServer((socket) => {
    if (!guard(socket)) unixServer.emit('connection', socket);
  });
  parts.servers.push(unixFront, unixServer);
  let clients = 0;
  unixServer.on('connection', (socket) => {
    clients += 1;
    socket.once('close', () => (clients -= 1));
  });
  // Runs may wait for hours: no request or idle timeouts on long polls and streams.
  unixServer.requestTimeout = 0;
  unixServer.on('clientError', (_error, socket) => socket.destroy());
  try {
    // The lock is ours: whatever is at the socket path is a dead host's.
    rmSync(socketPath, { force: true });
    await listenNet(unixFront, { path: socketPath, backlog: socketBacklog() });
    // An accept refused for lack of descriptors is an 'error' on the server: logged, never the host's end.
    unixFront.on('error', acceptErrorLog(log));
    // Never through a link: the socket just made, checked for what it is first.
    if (!lstatSync(socketPath).isSocket()) throw new Error(`${socketPath} was replaced by something else than the socket just made`);
    chmodSync(socketPath, 0o600);
  } catch (error) {
    throw new HostError(`Cannot listen on ${socketPath}: ${(error as Error).message}`);
  }
  parts.socketPath = socketPath;
  return { clients: () => clients };
}

const acceptErrorLog = (log: (line: string) => void) => (error: Error) => log(`control socket: ${error.message}`);

/** The loopback TCP listener (127.0.0.1 only), with its bounds, and the token file its clients read. */
async function listenOnTcp(handler: ControlHandler, port: number, limits: typeof TCP_LIMITS, tokenPath: string, token: string, parts: HostParts, log: (line: string) => void): Promise<NonNullable<Host['tcp']>> {
  // The timeouts are checked this often (Node's default is 30 s).
  const tcpServer = createHttpServer({ connectionsCheckingInterval: Math.min(1000, limits.headersTimeoutMs) }, (req, res) => handler(req, res, 'tcp'));
  tcpServer.maxConnections = limits.maxConnections;
  tcpServer.headersTimeout = limits.headersTimeoutMs;
  tcpServer.requestTimeout = limits.requestTimeoutMs;
  tcpServer.on('clientError', (_error, socket) => socket.destroy());
  // Connections without a whole request head yet, per peer address and, under pressure, per local user (tcp-peers.ts).
  const pending = new PendingByPeer(limits.perPeerPending);
  const settle = new WeakMap<object, () => void>();
  tcpServer.on('connection', (socket) => {
    const release = pending.admit(socket);
    if (release === null) {
      socket.destroy();
      return;
    }
    settle.set(socket, release);
    socket.once('close', release);
  });
  tcpServer.on('request', (req) => settle.get(req.socket)?.());
  // A fresh file (O_EXCL) renamed into place: never written through a link planted at the name.
  try {
    writePrivateFile(tokenPath, `${token}\n`);
  } catch (error) {
    throw new HostError(`Cannot write the TCP token: ${(error as Error).message}`);
  }
  parts.tokenPath = tokenPath;
  try {
    await listenNet(tcpServer, { port, host: '127.0.0.1' });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new HostError(code === 'EADDRINUSE' ? `Port ${port} on 127.0.0.1 is in use; pick another with --port (0 for any free port).` : `Cannot listen on 127.0.0.1:${port}: ${(error as Error).message}`);
  }
  tcpServer.on('error', acceptErrorLog(log));
  parts.servers.push(tcpServer);
  const address = tcpServer.address();
  const bound = typeof address === 'object' && address !== null ? address.port : port;
  return { port: bound, url: `http://127.0.0.1:${bound}`, tokenPath, token };
}

/** Calls onIdle once nothing has been busy for idleExitMs (looked at every IDLE_CHECK_MS at most). */
function exitWhenIdle(idleExitMs: number, busy: () => boolean, onIdle: () => void, log: (line: string) => void): NodeJS.Timeout {
  let idleSince: number | null = null;
  const timer = setInterval(() => {
    if (busy()) {
      idleSince = null;
      return;
    }
    idleSince ??= performance.now();
    if (performance.now() - idleSince >= idleExitMs) {
      clearInterval(timer);
      log(`no live run and no client for ${Math.round(idleExitMs / 1000)} s: exiting`);
      onIdle();
    }
  }, Math.min(IDLE_CHECK_MS, idleExitMs));
  return timer;
}

/**
 * The one close sequence, for a shutdown and for a start that failed part
 * way (it closes what `parts` holds): no more lost-run looks; the stop
 * sequence for every live run, whose ends are recorded before the store
 * closes; then the links, the hub and the search worker; then the listeners,
 * the socket and the token; the lock last, so no other host starts on this
 * state dir before this one is done with it.
 */
async function closeHost(parts: HostParts): Promise<ShutdownReport> {
  clearInterval(parts.idleTimer);
  const history = parts.history;
  await history?.stopWatch();
  await parts.supervisor?.shutdown();
  parts.sentinel?.close();
  const status = (await history?.recorder?.close()) ?? null;
  parts.supervisor?.keepEndedIn(null);
  history?.store?.close();
  parts.remotes?.close();
  parts.hub?.close();
  void parts.searchWorker?.close();
  const fileProblem = history?.store?.fileProblem ?? null;
  const report: ShutdownReport = {
    ...(fileProblem !== null ? { fileProblem } : {}),
    historyOff: history?.historyOff ?? null,
    recorded: status?.endsWritten ?? 0,
    cut: status?.cutEnds ?? [],
    cutCount: status?.cutEndsCount ?? 0,
    unrecorded: status?.unrecorded ?? [],
  };
  for (const server of parts.servers) {
    server.close();
    if ('closeAllConnections' in server) server.closeAllConnections();
  }
  if (parts.socketPath !== undefined) rmSync(parts.socketPath, { force: true });
  if (parts.tokenPath !== undefined) rmSync(parts.tokenPath, { force: true });
  parts.lock.close();
  return report;
}
