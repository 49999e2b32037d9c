// The run registry: start, stop, wait, get, list and typed events, for many
// concurrent runs. This is the engine object the CLI, IPC and HTTP layers use.

import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { RunEvent } from '../../shared/events';
import type { CommandRunRequest } from '../../shared/request';
import type { RunResult, StopReason } from '../../shared/result';
import { DEFAULT_PROC_ROOT, normalizeRequest, WardenInputError, type EngineSettings } from './options';
import { CommandRun } from './run';

export interface SupervisorOptions {
  hostId?: string;
  /** Override where /proc is; null forces the paths used without /proc. */
  procRoot?: string | null;
  /** The environment runs start from (default: this process's). */
  baseEnv?: Record<string, string | undefined>;
  /** Ended runs kept in memory for get/wait; older ones are forgotten first. */
  keepEnded?: number;
}

/** 12 hex characters; randomUUID draws from a cached pool, much cheaper per call than randomBytes. */
export function newId(): string {
  return randomUUID().replace(/-/g, '').slice(0, 12);
}

export class Supervisor {
  readonly hostId: string;
  private readonly settings: EngineSettings;
  private readonly runs = new Map<string, CommandRun>();
  /** Ids of ended runs, oldest first, so forgetting the oldest costs O(1). */
  private readonly endedOrder: string[] = [];
  private readonly events = new EventEmitter();
  private readonly keepEnded: number;
  private closing = false;

  constructor(options: SupervisorOptions = {}) {
    this.hostId = options.hostId ?? newId();
    this.settings = {
      hostId: this.hostId,
      procRoot: options.procRoot === undefined ? DEFAULT_PROC_ROOT : options.procRoot,
      baseEnv: options.baseEnv ?? { ...process.env },
    };
    // Each ended run holds up to two capped streams (a few MB): keep a bounded number.
    this.keepEnded = options.keepEnded ?? 200;
    this.events.setMaxListeners(0);
  }

  /** Starts a command run and returns its first snapshot. Throws WardenInputError on bad input only. */
  start(request: CommandRunRequest): RunResult {
    if (this.closing) throw new WardenInputError('Warden is shutting down and takes no new runs.');
    const id = newId();
    const options = normalizeRequest(request, id, this.settings);
    const run = new CommandRun(options, (event) => this.events.emit('event', event));
    this.runs.set(id, run);
    run.start();
    void run.done.then(() => this.forgetOldRuns(id));
    return run.snapshot();
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
    for (const run of live) run.stop('shutdown');
    return Promise.all(live.map((run) => run.done));
  }

  private find(id: string): CommandRun {
    const run = this.runs.get(id);
    if (!run) throw new WardenInputError(`No run with id ${JSON.stringify(id)}.`);
    return run;
  }

  private forgetOldRuns(endedId: string): void {
    this.endedOrder.push(endedId);
    while (this.endedOrder.length > this.keepEnded) this.runs.delete(this.endedOrder.shift()!);
  }
}
