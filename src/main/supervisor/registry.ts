// The run registry: start, stop, wait, get, list and typed events, for many
// concurrent runs. This is the engine object the CLI, IPC and HTTP layers use.

import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { RunEvent } from '../../shared/events';
import { isPythonRequest, type RunRequest } from '../../shared/request';
import type { RunResult, SessionInfo, StopReason } from '../../shared/result';
import { checkSessionName, DEFAULT_PROC_ROOT, normalizePythonRequest, normalizeRequest, WardenInputError, type EngineSettings } from './options';
import { PythonRun, PythonSession, SESSION_DEFAULTS, type SessionSettings } from './python-session';
import { memoryBackendOnce, MemoryLimitUnavailable, type MemoryBackend } from './memory';
import { ProcessSampler } from './proc-tree';
import { CommandRun } from './run';

/** What the registry needs of a run, command or Python script. */
interface SupervisedRun {
  readonly id: string;
  readonly done: Promise<RunResult>;
  readonly ended: boolean;
  snapshot(): RunResult;
  stop(reason: StopReason, options?: { force?: boolean }): void;
}

export interface SupervisorOptions {
  hostId?: string;
  /** Override where /proc is; null forces the paths used without /proc. */
  procRoot?: string | null;
  /** The environment runs start from (default: this process's). */
  baseEnv?: Record<string, string | undefined>;
  /** Ended runs kept in memory for get/wait; older ones are forgotten first. */
  keepEnded?: number;
  /** Process-tree samples per second while runs are live (default 2); 0 turns sampling off. */
  sampleRateHz?: number;
  /** Where cgroup hierarchies are mounted (default /sys/fs/cgroup); tests point it at an empty dir. */
  cgroupRoot?: string;
  /** Python sessions: the interpreter (default python3), the runtime's path and bounds. */
  python?: Partial<Omit<SessionSettings, 'hostId' | 'procRoot' | 'emit'>>;
}

/** 12 hex characters; randomUUID draws from a cached pool, much cheaper per call than randomBytes. */
export function newId(): string {
  return randomUUID().replace(/-/g, '').slice(0, 12);
}

export class Supervisor {
  readonly hostId: string;
  private readonly settings: EngineSettings;
  private readonly runs = new Map<string, SupervisedRun>();
  private readonly pythonSessions = new Map<string, PythonSession>();
  private readonly sessionSettings: SessionSettings;
  /** Ids of ended runs, oldest first, so forgetting the oldest costs O(1). */
  private readonly endedOrder: string[] = [];
  private readonly events = new EventEmitter();
  private readonly keepEnded: number;
  private closing = false;
  private staleCgroupsSwept = false;
  private sampler?: ProcessSampler;
  private readonly sampleRateHz: number;

  constructor(options: SupervisorOptions = {}) {
    this.hostId = options.hostId ?? newId();
    this.settings = {
      hostId: this.hostId,
      procRoot: options.procRoot === undefined ? DEFAULT_PROC_ROOT : options.procRoot,
      baseEnv: options.baseEnv ?? { ...process.env },
      ...(options.cgroupRoot !== undefined ? { cgroupRoot: options.cgroupRoot } : {}),
    };
    // Each ended run holds up to two capped streams (a few MB): keep a bounded number.
    this.keepEnded = options.keepEnded ?? 200;
    this.events.setMaxListeners(0);
    this.sampleRateHz = options.sampleRateHz ?? 2;
    this.sessionSettings = {
      ...SESSION_DEFAULTS,
      ...options.python,
      hostId: this.hostId,
      procRoot: this.settings.procRoot,
      emit: (event) => this.events.emit('event', event),
      memoryBackend: () => this.memoryBackend(),
      sampler: () => this.processSampler(),
    };
  }

  /**
   * Starts a command run, or queues a Python script in its session, and
   * returns its first snapshot. Throws WardenInputError on bad input only (and
   * for a busy session when the request says onBusy: 'refuse').
   */
  start(request: RunRequest): RunResult {
    if (this.closing) throw new WardenInputError('Warden is shutting down and takes no new runs.');
    const id = newId();
    if (typeof request === 'object' && request !== null && isPythonRequest(request)) return this.startPython(request, id);
    const options = normalizeRequest(request, id, this.settings);
    const memory = options.memoryBytes !== null ? this.memoryBackend() : undefined;
    const run = new CommandRun(options, (event) => this.events.emit('event', event), memory, this.processSampler());
    this.runs.set(id, run);
    run.start();
    void run.done.then(() => this.forgetOldRuns(id));
    return run.snapshot();
  }

  private startPython(request: Parameters<typeof normalizePythonRequest>[0], id: string): RunResult {
    const options = normalizePythonRequest(request, id, this.settings);
    // Refused now, never run without its limit, when no memory cgroup can be used.
    if (options.memoryBytes !== null) this.memoryBackend();
    let session = this.pythonSessions.get(options.session);
    if (!session) {
      session = new PythonSession(options.session, this.sessionSettings);
      this.pythonSessions.set(options.session, session);
    }
    const run = new PythonRun(options, session, (event) => this.events.emit('event', event));
    session.submit(run); // throws when refused: nothing is registered
    this.runs.set(id, run);
    void run.done.then(() => this.forgetOldRuns(id));
    return run.snapshot();
  }

  /** One sampler for every run, made on first use; it samples only while some run is tracked. */
  private processSampler(): ProcessSampler | undefined {
    if (this.sampleRateHz === 0) return undefined;
    if (!this.sampler) {
      this.sampler = new ProcessSampler({ procRoot: this.settings.procRoot, rateHz: this.sampleRateHz });
      this.sampler.onSample((snapshots) => {
        for (const snapshot of snapshots) this.events.emit('event', { type: 'tree', runId: snapshot.runId, snapshot });
      });
    }
    return this.sampler;
  }

  /**
   * The memory cgroup backend, found once. A run that asks for a limit where
   * none can be set is refused: it never runs silently without its limit.
   */
  private memoryBackend(): MemoryBackend {
    const detection = memoryBackendOnce(this.settings.cgroupRoot !== undefined ? { cgroupRoot: this.settings.cgroupRoot } : {});
    if (!detection.ok) throw new MemoryLimitUnavailable(detection.reason);
    if (!this.staleCgroupsSwept) {
      // Cgroups a crashed Warden left behind: their processes are ended and the cgroups removed.
      this.staleCgroupsSwept = true;
      void detection.backend.removeStaleCgroups({ kill: true }).catch(() => undefined);
    }
    return detection.backend;
  }

  /** Every Python session: its interpreter, state and queue. */
  sessions(): SessionInfo[] {
    return [...this.pythonSessions.values()].map((s) => s.info());
  }

  /** Kills the session's interpreter (a running script ends with it); the next script starts a fresh one. */
  async restartSession(name: string): Promise<SessionInfo> {
    return this.findSession(name).restart();
  }

  /** Stops its queued and running scripts, closes its interpreter, and forgets the session. */
  async closeSession(name: string, reason: StopReason = 'user'): Promise<SessionInfo> {
    const session = this.findSession(name);
    const info = await session.close(reason);
    if (this.pythonSessions.get(name) === session) this.pythonSessions.delete(name);
    return info;
  }

  private findSession(name: string): PythonSession {
    const session = this.pythonSessions.get(checkSessionName(name));
    if (!session) throw new WardenInputError(`No session named ${JSON.stringify(name)}.`);
    return session;
  }

  stop(id: string, options: { force?: boolean; reason?: StopReason } = {}): RunResult {
    const run = this.find(id);
    run.stop(options.reason ?? 'user', options);
    return run.snapshot();
  }

  /** The final result, or the running snapshot when `timeoutMs` passes first. */
  async wait(id: string, timeoutMs?: number): Promise<RunResult> {
    const run = this.find(id);
    if (timeoutMs === undefined) return run.done;
    let timer: NodeJS.Timeout | undefined;
    const yielded = new Promise<RunResult>((resolve) => (timer = setTimeout(() => resolve(run.snapshot()), timeoutMs)));
    try {
      return await Promise.race([run.done, yielded]);
    } finally {
      clearTimeout(timer);
    }
  }

  get(id: string): RunResult | undefined {
    return this.runs.get(id)?.snapshot();
  }

  list(): RunResult[] {
    return [...this.runs.values()].map((run) => run.snapshot());
  }

  /** Subscribes to every run's events; returns the unsubscribe function. */
  subscribe(listener: (event: RunEvent) => void): () => void {
    this.events.on('event', listener);
    return () => this.events.off('event', listener);
  }

  /** Takes no new runs, stops live ones with the stop sequence, and waits for their results. */
  async shutdown(): Promise<RunResult[]> {
    this.closing = true;
    const live = [...this.runs.values()].filter((run) => !run.ended);
    for (const run of live) if (run instanceof CommandRun) run.stop('shutdown');
    // Sessions stop their queued and running scripts, then close their interpreters.
    await Promise.all([...this.pythonSessions.keys()].map((name) => this.closeSession(name, 'shutdown')));
    const results = await Promise.all(live.map((run) => run.done));
    this.sampler?.close();
    return results;
  }

  private find(id: string): SupervisedRun {
    const run = this.runs.get(id);
    if (!run) throw new WardenInputError(`No run with id ${JSON.stringify(id)}.`);
    return run;
  }

  private forgetOldRuns(endedId: string): void {
    this.endedOrder.push(endedId);
    while (this.endedOrder.length > this.keepEnded) this.runs.delete(this.endedOrder.shift()!);
  }
}
