// A host that is always there: the CLI and `warden mcp` call ensureHost(),
// which connects to the host of the state dir or, when none answers, starts
// one in the background (`warden serve --no-tcp --idle-exit ...`, detached in
// its own session, its output in <state dir>/host.log) and connects to that.
//
// Two clients starting at once may both spawn a host: the host lock (an
// abstract socket, see src/main/host/host.ts) lets exactly one of them listen;
// the other exits at once, and both clients find the one that listens.

import { closeSync, constants, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { parseDuration } from '../shared/duration';
import { WardenError } from '../shared/errors';
import { unsafeDirReason } from './state-dir';
import { join } from 'node:path';
import { HttpWardenApi, type EventStreamHandlers, type HttpReply, type HttpTransport } from '../shared/http-api';
import { packageRoot } from './package-root';
import { connectToHost, HostUnreachableError, NodeTransport, socketPathFor } from './transport';

/** How long a background host waits with no live run and no client before it exits (WARDEN_HOST_IDLE overrides). */
export const DEFAULT_IDLE_EXIT = '10m';
/** How long a client waits for the host it started to listen. */
const START_TIMEOUT_MS = 10_000;

/** No host could be started for the state dir: one line saying why. */
export class HostStartError extends WardenError {
  override name = 'HostStartError';
  constructor(message: string) {
    super('unavailable', message);
  }
}

/** Whether the caller asked for the engine in process: --embedded, or WARDEN_EMBEDDED=1. */
export function embeddedFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env.WARDEN_EMBEDDED;
  return value !== undefined && value !== '' && value !== '0' && value.toLowerCase() !== 'false';
}

/** bin/warden.mjs of this checkout, which a background host is started with. */
export function wardenBin(): string {
  const root = packageRoot();
  if (!root) throw new HostStartError('Cannot find bin/warden.mjs to start a Warden host from.');
  return join(root, 'bin', 'warden.mjs');
}

export function hostLogPath(stateDir: string): string {
  return join(stateDir, 'host.log');
}

export interface EnsureHostOptions {
  /** Exit after this long with no live run and no client (default WARDEN_HOST_IDLE, else 10m). */
  idleExit?: string;
  /** Called once when a host is being started (the CLI says so on stderr). */
  onStart?: (logPath: string) => void;
}

/** A background host just spawned: `failure` is set once it cannot answer (it could not be run, or it exited with an error). */
export interface SpawnedHost {
  failure: string | null;
}

/** The last line the host wrote to its log, without its timestamp: why it stopped. */
function lastLogLine(logPath: string): string | null {
  try {
    const text = readFileSync(logPath, 'utf8');
    const lines = text.split('\n').map((line) => line.replace(/^\d{4}-\d\d-\d\dT[\d:.]+Z /, '').trim()).filter(Boolean);
    return lines.at(-1)?.slice(0, 500) ?? null;
  } catch {
    return null;
  }
}

/** Spawns a background host for the state dir; returns at once (the caller polls its socket, and reads `failure`). */
export async function spawnBackgroundHost(stateDir: string, options: EnsureHostOptions = {}): Promise<SpawnedHost> {
  const spawned: SpawnedHost = { failure: null };
  const idle = options.idleExit ?? (process.env.WARDEN_HOST_IDLE || DEFAULT_IDLE_EXIT);
  const idleMs = parseDuration(idle);
  if (idleMs === undefined || idleMs <= 0) {
    throw new HostStartError(`${options.idleExit === undefined ? 'WARDEN_HOST_IDLE' : 'The host idle time'} takes a duration such as 30s or 10m, not ${JSON.stringify(idle)}.`);
  }
  // Loaded only here: most calls find a host and never spawn one.
  const { spawn } = await import('node:child_process');
  try {
    mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new HostStartError(`Cannot make the state directory ${stateDir} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); set WARDEN_STATE_DIR to a directory you can write.`);
  }
  // One that others own or can write is refused before any file is made in it (the host says the same).
  const unsafe = unsafeDirReason(stateDir);
  if (unsafe !== null) throw new HostStartError(unsafe);
  const logPath = hostLogPath(stateDir);
  let log: number;
  try {
    // Never through a link planted at the log's name.
    log = openSync(logPath, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK, 0o600);
  } catch (error) {
    throw new HostStartError(`Cannot open the background host's log ${logPath} (${(error as NodeJS.ErrnoException).code === 'ELOOP' ? 'it is a symbolic link; remove it' : (error as Error).message}).`);
  }
  try {
    writeSync(log, `${new Date().toISOString()} starting a background host (asked by pid ${process.pid})\n`);

    const env: NodeJS.ProcessEnv = { ...process.env, WARDEN_STATE_DIR: stateDir };
    delete env.WARDEN_EMBEDDED;
    const child = spawn(process.execPath, [wardenBin(), 'serve', '--no-tcp', '--idle-exit', idle, '--background'], {
      detached: true, // its own session and group: a client's Ctrl-C or death does not reach it
      stdio: ['ignore', log, log],
      env,
      cwd: stateDir,
    });
    // Without these a client waited its whole START_TIMEOUT_MS for a host that never ran
    // (a Node this user may not execute: EACCES) or that had already said why it stopped.
    child.on('error', (error: NodeJS.ErrnoException) => {
      spawned.failure = `Cannot start a Warden host: ${process.execPath} could not be run (${error.code ?? error.message}).`;
    });
    child.on('exit', (code, signal) => {
      // 0: it lost the race to a host started at the same moment, which the caller will find.
      if (code === 0) return;
      const why = lastLogLine(logPath);
      spawned.failure = `The Warden host started for ${stateDir} exited (${signal ?? `status ${code}`}) before it answered${why ? `: ${why.replace(/^warden: /, '').replace(/\.$/, '')}` : ''}; see ${logPath}.`;
    });
    child.unref();
  } finally {
    closeSync(log);
  }
  return spawned;
}

/**
 * The host of the state dir as a WardenApi: the running one, or one started
 * now in the background. Throws HostStartError (one line, naming the log)
 * when a started host does not answer in time.
 */
export async function ensureHost(stateDir: string, options: EnsureHostOptions = {}): Promise<HttpWardenApi> {
  const running = await connectToHost(stateDir);
  if (running) return running;
  return startAndConnect(stateDir, options);
}

async function startAndConnect(stateDir: string, options: EnsureHostOptions): Promise<HttpWardenApi> {
  options.onStart?.(hostLogPath(stateDir));
  const spawned = await spawnBackgroundHost(stateDir, options);
  const deadline = Date.now() + START_TIMEOUT_MS;
  let delay = 5;
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 50);
    const host = await connectToHost(stateDir, { timeoutMs: 1000 });
    if (host) return host;
    if (spawned.failure !== null) throw new HostStartError(spawned.failure);
  }
  throw new HostStartError(`Started a Warden host for ${stateDir} but it did not answer within ${START_TIMEOUT_MS / 1000} s; see ${hostLogPath(stateDir)}.`);
}

/**
 * No host listens there: the socket file is missing (ENOTDIR: something that
 * is no directory stands where its directory belongs, which the host started
 * next says), or nobody accepts on it. A request that failed so never reached a host.
 */
function nobodyThere(error: unknown): boolean {
  return error instanceof HostUnreachableError && (error.code === 'ENOENT' || error.code === 'ENOTDIR' || error.code === 'ECONNREFUSED');
}

/**
 * A transport to the state dir's host that starts one when none answers: the
 * first request goes straight to the socket (no probe first: a call through
 * a running host costs one round trip less), and only when nobody is there
 * is a background host started and the request sent again. Safe to resend:
 * a request that found nobody listening was never received.
 */
export class AutoStartTransport implements HttpTransport {
  private inner: NodeTransport;
  private starting: Promise<void> | null = null;

  constructor(
    private readonly stateDir: string,
    private readonly options: EnsureHostOptions = {},
  ) {
    this.inner = new NodeTransport({ socketPath: socketPathFor(stateDir) });
  }

  async request(method: 'GET' | 'POST', path: string, body?: unknown): Promise<HttpReply> {
    try {
      return await this.inner.request(method, path, body);
    } catch (error) {
      if (!nobodyThere(error)) throw error;
    }
    // The API connectToHost hands back has opened nothing yet: it is dropped, and this transport resends.
    this.starting ??= startAndConnect(this.stateDir, this.options).then(() => undefined).finally(() => {
      this.starting = null;
    });
    await this.starting;
    return this.inner.request(method, path, body);
  }

  events(path: string, handlers: EventStreamHandlers): () => void {
    return this.inner.events(path, handlers);
  }

  close(): void {
    this.inner.close();
  }
}

/** The state dir's host as a WardenApi that starts a background host on first need (see AutoStartTransport). */
export function hostApi(stateDir: string, options: EnsureHostOptions = {}): HttpWardenApi {
  return new HttpWardenApi(new AutoStartTransport(stateDir, options));
}
