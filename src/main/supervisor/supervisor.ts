// The Supervisor, the run registry: start, stop, wait, extend, get, list and typed events,
// for many concurrent runs. This is the engine object the CLI, IPC and HTTP
// layers use.
//
// Yielded waits that ask for 'unseen' output (or give offsets) move a per-run
// mark of what has been returned. The mark moves in the same synchronous step
// that takes the result, so a yielded wait followed by another returns every
// character once: output read from the pipes runs in later turns of the
// event loop, never between the snapshot and the mark. A final result moves
// no mark: every client waiting on the end gets the same answer, and asking
// again gives it again.
//
// Memory: a live run holds its kept output (at most outputCapChars per
// stream, itself bounded by MAX_OUTPUT_CAP_CHARS). An ended run's output is
// kept only within a budget of characters over all ended runs: past it, the
// oldest ended runs the history holds in full are let go, and wait, stop and
// extend read them back from the history (get falls back to the store in
// api.ts). Without a history, or while it cannot be written, ended runs past
// twice the budget are forgotten, oldest first.

import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { InputOptions, OutputOffsets, WaitOptions } from '../../shared/api';
import type { OutputStream, RunEvent } from '../../shared/events';
import type { ProcNode } from '../../shared/proc-tree';
import { isPythonRequest, type RunRequest } from '../../shared/request';
import type { ListeningPort, RunOwner, RunResult, SessionInfo, StopReason, UntilReport } from '../../shared/result';
import { checkExtension, MAX_TIMER_MS } from './deadline';
import { checkSessionName, DEFAULT_PROC_ROOT, normalizePythonRequest, normalizeRequest, WardenInputError, type EngineSettings } from './options';
import { WardenError } from './errors';
import { PythonRun } from './python/run';
import { PythonSession } from './python/session';
import { SESSION_DEFAULTS, type SessionSettings } from './python/settings';
import { CgroupPool, type PoolStats } from './cgroup-pool';
import { memoryBackendOnce, MemoryLimitUnavailable, type MemoryBackend, type StaleSweep } from './cgroup';
import { ProcessSampler } from './proc-tree/sampler';
import { sliceOfKept, type OutputSlice } from './output';
import { CommandRun, type RunPorts } from './run';
import { PortFinder } from './ports/finder';
import { procSocketTable } from './ports/socket-table';
import { PORTS_EVERY_MS, PortWatch } from './ports/watch';
import { holdersOf } from './ports/holder';
import { parseProbe } from './ready/probe-spec';
import { LineFeed, MAX_LINE_CHARS } from './lines';
import type { ScopeWatch } from './scope-watch';
import { reaperOnce } from './reaper';
import { descriptorCheck, type DescriptorCheck } from './descriptors';
import { WardenUnavailableError } from './errors';

/** What the registry needs of a run, command or Python script. */
interface SupervisedRun {
  readonly id: string;
  readonly done: Promise<RunResult>;
  readonly ended: boolean;
  snapshot(): RunResult;
  /** `note` is added to the result's notes (why it was stopped, when a client's words are not enough). */
  stop(reason: StopReason, options?: { force?: boolean; note?: string }): void;
  /** Moves the deadline later; throws WardenInputError once it has ended or its stop began. */
  extend(byMs: number): RunResult;
  /** A stream's kept output from a character offset, and the stream's length now. */
  outputFrom(stream: OutputStream, from: number): OutputSlice & { total: number };
  /** Adds a line to the result's notes (a signal a person sent to one of its processes). */
  addNote?(note: string): void;
  /** Its memory cgroup's peak counter now, when it has a cgroup of its own: the figure its peak is. */
  memoryPeakBytes?(): number | undefined;
}

type OutputChoice = 'all' | 'unseen' | OutputOffsets;

/** What a wait waits for besides the end: readiness, or a line matching a pattern (from now, or from the start). */
type Until = { kind: 'ready'; text: string } | { kind: 'log'; text: string; regex: RegExp; fromStart: boolean };

/** Checks a wait's options at the boundary: one line for what is wrong. */
function checkWaitOptions(options: unknown): { timeoutMs: number | undefined; output: OutputChoice; until?: Until } {
  if (options === undefined || options === null) return { timeoutMs: undefined, output: 'all' };
  if (typeof options !== 'object' || Array.isArray(options)) throw new WardenInputError('The wait options must be an object: { timeoutMs?, output?, until?, since? }.');
  const { timeoutMs, output, until, since } = options as WaitOptions;
  if (timeoutMs !== undefined && (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs < 0 || timeoutMs > MAX_TIMER_MS)) {
    throw new WardenInputError(`timeoutMs must be a number of milliseconds from 0 to ${MAX_TIMER_MS}, not ${typeof timeoutMs === 'number' ? String(timeoutMs) : JSON.stringify(timeoutMs)}.`);
  }
  const checkedUntil = checkUntil(until, since);
  const withUntil = checkedUntil ? { until: checkedUntil } : {};
  if (output === undefined || output === 'all' || output === 'unseen') return { timeoutMs, output: output ?? 'all', ...withUntil };
  const offset = (value: unknown) => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
  if (typeof output !== 'object' || output === null || !offset(output.stdout) || !offset(output.stderr)) {
    throw new WardenInputError('output must be "all", "unseen", or { stdout, stderr } with each a whole number of characters from 0.');
  }
  return { timeoutMs, output: { stdout: output.stdout, stderr: output.stderr }, ...withUntil };
}

function checkUntil(until: unknown, since: unknown): Until | undefined {
  if (since !== undefined && since !== 'now' && since !== 'start') throw new WardenInputError(`since must be "now" or "start", not ${JSON.stringify(since)}.`);
  if (until === undefined) {
    if (since !== undefined) throw new WardenInputError('since goes with until: a log pattern to wait for.');
    return undefined;
  }
  if (until === 'ready') {
    if (since !== undefined) throw new WardenInputError('since goes with a log pattern, not with until ready.');
    return { kind: 'ready', text: 'ready' };
  }
  if (typeof until !== 'string' || !until.startsWith('log:')) throw new WardenInputError(`until takes "ready" or a log pattern such as log:/Compiled/ or log:/error TS\\d+/i, not ${JSON.stringify(until)}.`);
  const probe = parseProbe(until);
  if (probe.kind !== 'log') throw new WardenInputError(`until takes "ready" or log:/REGEX/[flags], not ${JSON.stringify(until)}.`);
  return { kind: 'log', text: until, regex: probe.regex, fromStart: since === 'start' };
}

/** The first line of kept text matching `regex` (the text after the last line break counts as a line). */
function firstMatchingLine(text: string, regex: RegExp): string | undefined {
  const feed = new LineFeed();
  let found: string | undefined;
  const off = feed.subscribe((line) => {
    if (found === undefined && regex.test(line)) found = line;
  });
  feed.push('stdout', text);
  feed.end();
  off();
  return found;
}

export interface SupervisorOptions {
  hostId?: string;
  /** Override where /proc is; null forces the paths used without /proc. */
  procRoot?: string | null;
  /** The environment runs start from (default: this process's). */
  baseEnv?: Record<string, string | undefined>;
  /** Ended runs kept in memory for get/wait; older ones are forgotten first. */
  keepEnded?: number;
  /** Characters of ended runs' output kept in memory, over all of them (default 32 Mi); see the top of this file. */
  endedOutputBudgetChars?: number;
  /** Process-tree samples per second while runs are live (default 2); 0 turns sampling off. */
  sampleRateHz?: number;
  /** Where cgroup hierarchies are mounted (default /sys/fs/cgroup); tests point it at an empty dir. */
  cgroupRoot?: string;
  /** Told of every run's group and cgroup while it lives (the host's sentinel). */
  watch?: ScopeWatch;
  /** Runs without a cgroup run under the subreaper shim (default true; reaper.ts). */
  reaper?: boolean;
  /** Descriptors kept free for the process itself: new runs are refused below it (default: a tenth of RLIMIT_NOFILE, 64-1024; null: no check). */
  descriptorReserve?: number | null;
  /** How often every live run's listening ports are looked at (default 1 s, ports/watch.ts); 0: never (the port probe still looks). */
  portsEveryMs?: number;
  /** Python sessions: the interpreter (default python3), the runtime's path and bounds. */
  python?: Partial<Omit<SessionSettings, 'hostId' | 'procRoot' | 'emit'>>;
  /**
   * Run cgroups kept made ahead, each with a helper inside that execs the next
   * run's command (cgroup-pool.ts; cgroup v1): the join is off the run's path.
   * Default 0 (none); the host keeps HOST_CGROUP_POOL. Closed by shutdown().
   */
  cgroupPool?: number;
}

/** Where ended runs let go from memory are read back: the history store. */
export interface EndedRunSource {
  get(id: string): RunResult | null;
}

export const ENDED_OUTPUT_BUDGET_CHARS = 32 * 1024 * 1024;

/** An ended run read back from the history: answers like the run did, from its stored result. */
function storedRun(result: RunResult): SupervisedRun {
  return {
    id: result.id,
    done: Promise.resolve(result),
    ended: true,
    snapshot: () => result,
    stop: () => undefined,
    extend: () => {
      throw new WardenInputError(`Run ${result.id} has ended; its limit can no longer be extended.`);
    },
    outputFrom: (stream, from) => sliceOfKept(result[stream], stream === 'stdout' ? result.stdoutTruncated : result.stderrTruncated, from),
  };
}

function findNode(nodes: readonly ProcNode[], pid: number): ProcNode | undefined {
  for (const node of nodes) {
    if (node.pid === pid) return node;
    const found = findNode(node.children, pid);
    if (found) return found;
  }
  return undefined;
}

function flatPids(nodes: readonly ProcNode[], into: number[] = []): number[] {
  for (const node of nodes) {
    into.push(node.pid);
    flatPids(node.children, into);
  }
  return into;
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
  /** Ended runs still in memory, oldest first, with the characters of output each holds. */
  private readonly ended = new Map<string, number>();
  private endedChars = 0;
  /** Ended runs in memory whose whole result the history holds: the first let go past the budget. */
  private readonly stored = new Set<string>();
  private history: EndedRunSource | null = null;
  private readonly endedBudget: number;
  private readonly events = new EventEmitter();
  /** Per run, the output returned so far by waits that asked for 'unseen' output or gave offsets. */
  private readonly marks = new Map<string, OutputOffsets>();
  private readonly keepEnded: number;
  private closing = false;
  /** The one sweep of a crashed Warden's cgroups, started with the first use of the backend. */
  private staleSweep?: Promise<StaleSweep>;
  private readonly poolSize: number;
  /** Prepared run cgroups (null: none here, or shut down). */
  private pool?: CgroupPool | null;
  private sampler?: ProcessSampler;
  private readonly sampleRateHz: number;
  private readonly watch?: ScopeWatch;
  private readonly useReaper: boolean;
  private readonly descriptors?: DescriptorCheck;
  private portFinder?: PortFinder | null;
  private portWatch?: PortWatch;
  private readonly portsEveryMs: number;

  /** Refuses a new run while fewer descriptors than the reserve would be left (descriptors.ts). */
  private refuseIfLow(): void {
    const refusal = this.descriptors?.refusal();
    if (refusal !== undefined) throw new WardenUnavailableError(refusal);
  }

  /** The descriptor figures behind refusals: open now, the limit, the reserve (null where unknown). */
  descriptorFigures(): { open: number; limit: number; reserve: number } | null {
    return this.descriptors?.figures() ?? null;
  }

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
    this.endedBudget = options.endedOutputBudgetChars ?? ENDED_OUTPUT_BUDGET_CHARS;
    this.events.setMaxListeners(0);
    this.sampleRateHz = options.sampleRateHz ?? 2;
    if (options.watch) this.watch = options.watch;
    this.useReaper = options.reaper ?? true;
    this.portsEveryMs = options.portsEveryMs ?? PORTS_EVERY_MS;
    this.poolSize = options.cgroupPool ?? 0;
    // Made ready before the first run comes, off its path.
    if (this.poolSize > 0) setImmediate(() => this.cgroupPool());
    if (options.descriptorReserve !== null) this.descriptors = descriptorCheck(options.descriptorReserve === undefined ? {} : { reserve: options.descriptorReserve });
    this.sessionSettings = {
      ...SESSION_DEFAULTS,
      ...options.python,
      hostId: this.hostId,
      procRoot: this.settings.procRoot,
      emit: (event) => this.emitRun(event),
      memoryBackend: () => this.memoryBackend(),
      sampler: () => this.processSampler(),
      reaper: () => (this.useReaper && this.settings.procRoot !== null ? reaperOnce() : null),
      ...(options.watch ? { watch: options.watch } : {}),
    };
  }

  /**
   * Starts a command run, or queues a Python script in its session, and
   * returns its first snapshot. Throws WardenInputError on bad input only (and
   * for a busy session when the request says onBusy: 'refuse').
   */
  start(request: RunRequest, extra: { owner?: RunOwner } = {}): RunResult {
    if (this.closing) throw new WardenError('shutting-down', 'Warden is shutting down and takes no new runs.');
    const id = newId();
    const owner = extra.owner ? { owner: { pid: extra.owner.pid, label: extra.owner.label } } : {};
    if (typeof request === 'object' && request !== null && isPythonRequest(request)) return this.startPython(request, id, owner);
    const options = { ...normalizeRequest(request, id, this.settings), ...owner };
    this.refuseIfLow();
    // Every run gets a cgroup of its own where one can be made; a memory limit needs one.
    const memory = options.memoryBytes !== null ? this.memoryBackend() : this.cgroupBackend();
    // No cgroup: a subreaper adopts the run's orphans instead (where python3 and /proc are).
    const reaper = memory === undefined && this.useReaper && this.settings.procRoot !== null ? reaperOnce() : null;
    const pool = options.memoryBytes === null && memory !== undefined ? this.cgroupPool() : undefined;
    const run = new CommandRun(options, (event) => this.emitRun(event), memory, this.processSampler(), this.watch, reaper, this.runPorts(), pool);
    this.runs.set(id, run);
    pool?.runStarted(id);
    run.start();
    if (this.portsEveryMs > 0) this.portWatch?.wake();
    void run.done.then(() => {
      pool?.runEnded(id);
      this.portWatch?.forget(id);
      this.forgetOldRuns(id);
    });
    return run.snapshot();
  }

  /** The one port finder (made at first use; none without /proc), and what runs ask of it. */
  private runPorts(): RunPorts | undefined {
    if (this.portFinder === undefined) {
      this.portFinder = this.settings.procRoot === null ? null : new PortFinder(procSocketTable(this.settings.procRoot));
      if (this.portFinder) {
        this.portWatch = new PortWatch(this.portFinder, () => [...this.runs.values()].filter((run): run is CommandRun => run instanceof CommandRun), this.portsEveryMs);
      }
    }
    const finder = this.portFinder;
    if (!finder) return undefined;
    return {
      find: (runId, pids) => finder.find(new Map([[runId, pids]]), { fresh: true })?.get(runId) ?? null,
      holder: (port, runId) => this.describeHolder(finder, port, runId),
    };
  }

  /** One sentence on who holds `port`, for a run that failed to bind it: a Warden run by name, else the process. */
  private async describeHolder(finder: PortFinder, port: number, runId: string): Promise<string> {
    const listeners = finder.listenersOn(port);
    if (listeners.length === 0) return `Port ${port} was in use when it started, and nothing listens there now: start it again.`;
    // The live runs' sockets are found first, so a holder that is a Warden run is named as one.
    this.portWatch?.pass();
    const owner = finder.ownerOfPort(port);
    if (owner && owner.runId !== runId) {
      const other = this.runs.get(owner.runId)?.snapshot();
      const what = other?.argv ? other.argv.join(' ') : 'a run';
      return `Port ${port} is held by pid ${owner.pid}, which belongs to Warden run ${owner.runId} (${what.length > 60 ? `${what.slice(0, 59)}…` : what}): use that server, or stop it (warden stop ${owner.runId}) to free the port.`;
    }
    const holders = this.settings.procRoot === null ? [] : await holdersOf(this.settings.procRoot, procSocketTable(this.settings.procRoot), new Set(listeners.map((l) => l.inode)));
    if (holders.length === 0) return `Port ${port} is held by a process Warden cannot see (another user's, or in another network namespace): free it, or start this one on another port.`;
    const named = holders.map((h) => `pid ${h.pid} (${h.command})`).join(', ');
    return `Port ${port} is held by ${named}, which is not a Warden run of this host: stop it, or start this one on another port.`;
  }

  private startPython(request: Parameters<typeof normalizePythonRequest>[0], id: string, owner: { owner?: RunOwner }): RunResult {
    const options = { ...normalizePythonRequest(request, id, this.settings), ...owner };
    this.refuseIfLow();
    // Refused now, never run without its limit, when no memory cgroup can be used.
    if (options.memoryBytes !== null) this.memoryBackend();
    let session = this.pythonSessions.get(options.session);
    if (!session) {
      session = new PythonSession(options.session, this.sessionSettings);
      this.pythonSessions.set(options.session, session);
    }
    const run = new PythonRun(options, session, (event) => this.emitRun(event));
    session.submit(run); // throws when refused: nothing is registered
    this.runs.set(id, run);
    void run.done.then(() => this.forgetOldRuns(id));
    return run.snapshot();
  }

  /**
   * A run's event to the subscribers; an end says whether an answer had left
   * the run going (a yielded wait moved its mark): an agent may not have
   * seen that end, so a monitor tells it (warden events --yielded).
   */
  private emitRun(event: RunEvent): void {
    this.events.emit('event', event.type === 'ended' && this.marks.has(event.runId) ? { ...event, yielded: true } : event);
  }

  /** One sampler for every run, made on first use; it samples only while some run is tracked. */
  private processSampler(): ProcessSampler | undefined {
    if (this.sampleRateHz === 0) return undefined;
    if (!this.sampler) {
      this.sampler = new ProcessSampler({ procRoot: this.settings.procRoot, rateHz: this.sampleRateHz });
      this.sampler.onSample((snapshots) => {
        for (const sampled of snapshots) {
          // A run in a memory cgroup of its own: its peak is the cgroup's counter, as its result will say (never the RSS sum beside it).
          const cgroupPeak = this.runs.get(sampled.runId)?.memoryPeakBytes?.();
          const snapshot = cgroupPeak === undefined ? sampled : { ...sampled, peak: { rssBytes: cgroupPeak, processes: sampled.peak.processes, source: 'cgroup' as const } };
          this.events.emit('event', { type: 'tree', runId: snapshot.runId, snapshot });
        }
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
    // Cgroups a crashed Warden left behind: their processes are ended and the cgroups removed.
    this.staleSweep ??= detection.backend.removeStaleCgroups({ kill: true }).catch(() => ({ removed: [], busy: [], killed: [], leftAlone: [] }));
    return detection.backend;
  }

  /**
   * Ends and removes the cgroups a crashed Warden left behind (done once, also
   * before the first run that uses cgroups); null without cgroups. The sweep
   * says which cgroups it left alone because their owner cannot be judged.
   */
  sweepStaleCgroups(): Promise<StaleSweep | null> {
    this.cgroupBackend();
    return this.staleSweep ?? Promise.resolve(null);
  }

  /** How many runs took a prepared cgroup, how many found none ready, how many are ready now; null without a pool. */
  cgroupPoolStats(): (PoolStats & { ready: number }) | null {
    return this.pool ? { ...this.pool.stats, ready: this.pool.idle().filter((e) => e.ready).length } : null;
  }

  /** The pool of prepared run cgroups, made on first use; undefined without one (cgroup v1 only). */
  private cgroupPool(): CgroupPool | undefined {
    if (this.pool === undefined) {
      const backend = this.poolSize > 0 && !this.closing ? this.cgroupBackend() : undefined;
      this.pool = backend?.version === 1 ? new CgroupPool(backend, this.poolSize) : null;
      this.pool?.fill();
    }
    return this.pool ?? undefined;
  }

  /** The cgroup backend when one is writable, for runs without a memory limit; never throws. */
  private cgroupBackend(): MemoryBackend | undefined {
    if (this.settings.cgroupRoot === undefined && process.env.WARDEN_CGROUPS === '0') return undefined;
    try {
      return this.memoryBackend();
    } catch {
      return undefined;
    }
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
    if (!session) throw new WardenError('not-found', `No session named ${JSON.stringify(name)}.`);
    return session;
  }

  stop(id: string, options: { force?: boolean; reason?: StopReason; note?: string } = {}): RunResult {
    const run = this.find(id);
    run.stop(options.reason ?? 'user', options);
    return run.snapshot();
  }

  /**
   * The final result, or the running snapshot when `timeoutMs` passes first.
   * `output`: 'all' (the default) the whole kept output; 'unseen' only what
   * no earlier yielded 'unseen' or offset wait of this run returned; offsets:
   * each stream from there. A yielded answer of the last two moves the run's
   * mark to the end of what it returns; their stdoutTruncated/stderrTruncated
   * count what the slice leaves out.
   */
  async wait(id: string, options?: WaitOptions): Promise<RunResult> {
    const run = this.find(id);
    const { timeoutMs, output, until } = checkWaitOptions(options);
    if (until) return this.waitUntil(id, run, until, timeoutMs, output);
    if (run.ended) return this.take(id, run, output);
    return new Promise<RunResult>((resolve) => {
      let taken = false;
      let timer: NodeJS.Timeout | undefined;
      // Exactly one result is taken: taking one moves the mark.
      const settle = () => {
        if (taken) return;
        taken = true;
        clearTimeout(timer);
        resolve(this.take(id, run, output));
      };
      if (timeoutMs !== undefined) timer = setTimeout(settle, timeoutMs);
      void run.done.then(settle);
    });
  }

  /**
   * A wait that also returns when `until` is met: readiness decided (ready,
   * or not ready and kept running), or a line matching the pattern. The
   * answer carries `until` (met or not, and the line).
   */
  private waitUntil(id: string, run: SupervisedRun, until: Until, timeoutMs: number | undefined, output: OutputChoice): Promise<RunResult> {
    const answer = (report: UntilReport) => ({ ...this.take(id, run, output), until: report });
    if (until.kind === 'ready' && !(run instanceof CommandRun ? run.readiness !== 'none' : run.snapshot().probes !== undefined)) {
      throw new WardenInputError(`Run ${id} was started without readiness probes, so there is no ready to wait for: wait without until, or until a log line.`);
    }
    const decided = (): UntilReport | null => {
      const snapshot = run.snapshot();
      if (until.kind !== 'ready') return snapshot.state === 'ended' ? { condition: until.text, met: false } : null;
      // Not ready and being stopped for it: the answer waits for the end, whose result says so.
      if (snapshot.ready === false && snapshot.state !== 'ended' && run instanceof CommandRun && run.stopsWhenNotReady) return null;
      if (snapshot.ready !== undefined) return { condition: 'ready', met: snapshot.ready !== false, ...(snapshot.ready && snapshot.ready.line !== undefined ? { line: snapshot.ready.line } : {}) };
      return snapshot.state === 'ended' ? { condition: 'ready', met: false } : null;
    };
    if (until.kind === 'log' && until.fromStart) {
      for (const stream of ['stdout', 'stderr'] as const) {
        const line = firstMatchingLine(run.outputFrom(stream, 0).text, until.regex);
        if (line !== undefined) return Promise.resolve(answer({ condition: until.text, met: true, line: line.trim(), stream }));
      }
    }
    const now = decided();
    if (now) return Promise.resolve(answer(now));
    return new Promise<RunResult>((resolve) => {
      let done = false;
      const cleanups: (() => void)[] = [];
      const settle = (report: UntilReport) => {
        if (done) return;
        done = true;
        for (const fn of cleanups) fn();
        resolve(answer(report));
      };
      if (timeoutMs !== undefined) {
        const timer = setTimeout(() => settle({ condition: until.text, met: false }), timeoutMs);
        cleanups.push(() => clearTimeout(timer));
      }
      if (until.kind === 'log') {
        // Lines from now on, the line open at the call included; fed by the run's output events.
        const tail = (stream: 'stdout' | 'stderr') => {
          const total = run.outputFrom(stream, 0).total;
          return run.outputFrom(stream, Math.max(0, total - MAX_LINE_CHARS)).text;
        };
        const feed = new LineFeed(tail, true);
        cleanups.push(feed.subscribe((line, stream) => {
          if (until.regex.test(line)) settle({ condition: until.text, met: true, line: line.trim(), stream });
        }));
        const off = this.subscribe((event) => {
          if (event.runId !== id) return;
          if (event.type === 'output') feed.push(event.stream, event.text);
          else if (event.type === 'ended') {
            feed.end();
            settle({ condition: until.text, met: false });
          }
        });
        cleanups.push(off);
      } else {
        const off = this.subscribe((event) => {
          if (event.runId !== id || (event.type !== 'ready' && event.type !== 'ended')) return;
          const report = decided();
          if (report) settle(report);
        });
        cleanups.push(off);
      }
      void run.done.then(() => {
        const report = decided();
        settle(report ?? { condition: until.text, met: false });
      });
    });
  }

  /** Writes input to a live run's stdin pipe (and/or closes it); refused (one line) when it has none or it is closed. */
  input(id: string, input: InputOptions): RunResult {
    const run = this.find(id);
    if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new WardenInputError('input takes { text?, eof? }.');
    const text = input.text ?? '';
    if (typeof text !== 'string') throw new WardenInputError('input.text must be a string.');
    if (input.eof !== undefined && typeof input.eof !== 'boolean') throw new WardenInputError('input.eof must be true or false.');
    if (text === '' && input.eof !== true) throw new WardenInputError('Give text to send, or eof: true to close its stdin (or both).');
    if (!(run instanceof CommandRun)) throw new WardenInputError(`Run ${id} ${run.ended ? 'has ended; it takes no more input' : 'is a Python script, which reads no stdin pipe'}.`);
    return run.send(text, input.eof === true);
  }

  /** What the port finder has read so far (benchmarks); null before any run or without /proc. */
  portStats(): PortFinder['stats'] | null {
    return this.portFinder ? { ...this.portFinder.stats } : null;
  }

  /** Every live run's listening ports now (a fresh look), by run id. */
  ports(): Map<string, ListeningPort[]> {
    this.portWatch?.pass(true);
    const found = new Map<string, ListeningPort[]>();
    for (const run of this.runs.values()) {
      if (run.ended || !(run instanceof CommandRun)) continue;
      found.set(run.id, run.listeningPorts);
    }
    return found;
  }

  /** The run's result now with the output asked for; a yielded (not ended) answer moves its mark unless all output was asked for. */
  private take(id: string, run: SupervisedRun, output: OutputChoice): RunResult {
    const result = run.snapshot();
    if (output === 'all') return result;
    const from = output === 'unseen' ? (this.marks.get(id) ?? { stdout: 0, stderr: 0 }) : output;
    const stdout = run.outputFrom('stdout', from.stdout);
    const stderr = run.outputFrom('stderr', from.stderr);
    // A run forgotten meanwhile keeps no mark; an ended run's answer is final and moves none.
    if (result.state !== 'ended' && this.runs.get(id) === run) this.marks.set(id, { stdout: stdout.total, stderr: stderr.total });
    return { ...result, stdout: stdout.text, stderr: stderr.text, stdoutTruncated: stdout.dropped, stderrTruncated: stderr.dropped };
  }

  /**
   * Moves a live run's deadline `byMs` later (a run with no limit gets its
   * elapsed time plus `byMs`) and returns its snapshot. Refused with a
   * WardenInputError once it has ended or its stop sequence has begun.
   */
  extend(id: string, byMs: number): RunResult {
    const run = this.find(id);
    return run.extend(checkExtension(byMs));
  }

  /**
   * Sends SIGTERM or SIGKILL to one process of a live run, and records it on
   * the run's timeline (a signal-sent event of step 'user'). The pid must be
   * in the run's process tree in a sample taken now, not the last one: a
   * process that ended since, and whatever took its pid, is refused. Any
   * other pid (another run's, Warden's own, an unrelated process) is a
   * WardenInputError naming what the tree holds.
   */
  async signal(id: string, pid: number, signal: 'TERM' | 'KILL'): Promise<RunResult> {
    const run = this.find(id);
    if (signal !== 'TERM' && signal !== 'KILL') throw new WardenInputError(`signal must be "TERM" or "KILL", not ${JSON.stringify(signal)}.`);
    if (!Number.isSafeInteger(pid) || pid <= 0) throw new WardenInputError(`pid must be a positive whole number, not ${JSON.stringify(pid)}.`);
    if (run.ended) throw new WardenInputError(`Run ${id} has ended; its processes can no longer be signalled.`);
    const sampler = this.sampler;
    if (!sampler?.latest(id)) throw new WardenInputError(`Run ${id} has no process tree sampled yet; try again in a moment.`);
    const fresh = (await sampler.sample()).find((snapshot) => snapshot.runId === id);
    const node = fresh && findNode(fresh.roots, pid);
    if (!node) {
      const pids = fresh ? flatPids(fresh.roots) : [];
      throw new WardenInputError(`Process ${pid} is not in run ${id}'s process tree${pids.length > 0 ? ` (its processes: ${pids.slice(0, 20).join(', ')}${pids.length > 20 ? ', …' : ''})` : ' (it has no process left)'}.`);
    }
    const name = `SIG${signal}` as const;
    try {
      process.kill(pid, name);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new WardenInputError(code === 'ESRCH' ? `Process ${pid} ended before ${name} reached it.` : `${name} could not be sent to process ${pid}: ${code ?? String(error)}.`);
    }
    const command = node.command.length > 80 ? `${node.command.slice(0, 79)}…` : node.command;
    // The verdict judges what the run's processes did; the note says this signal came from here.
    run.addNote?.(`${name} was sent to pid ${pid} (${command}) from Warden's Process tree at ${(run.snapshot().elapsedMs / 1000).toFixed(2)} s.`);
    const snapshot = run.snapshot();
    this.events.emit('event', { type: 'signal-sent', runId: id, signal: `${name} to pid ${pid} (${command})`, atMs: Math.round(snapshot.elapsedMs), step: 'user' } satisfies RunEvent);
    return snapshot;
  }

  get(id: string): RunResult | undefined {
    return this.runs.get(id)?.snapshot();
  }

  list(): RunResult[] {
    return [...this.runs.values()].map((run) => run.snapshot());
  }

  /** Whether new runs are taken (false once shutdown began). */
  get accepting(): boolean {
    return !this.closing;
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
    // Its idle helpers end and their cgroups go; none is made after this.
    const pool = this.pool;
    this.pool = null;
    await pool?.close();
    return results;
  }

  /**
   * Reads ended runs let go from memory back from `source` (the history
   * store), so they may be let go once `endStored` says the source holds them.
   */
  keepEndedIn(source: EndedRunSource | null): void {
    this.history = source;
  }

  /** The history now holds this ended run's whole result: its output may leave memory when over the budget. */
  endStored(id: string): void {
    if (!this.runs.has(id)) return;
    this.stored.add(id);
    this.enforceEndedBudget();
  }

  /** Characters of ended runs' output held in memory now, and how many such runs. */
  endedMemory(): { runs: number; chars: number } {
    return { runs: this.ended.size, chars: this.endedChars };
  }

  private find(id: string): SupervisedRun {
    const run = this.runs.get(id);
    if (run) return run;
    const stored = this.history?.get(id);
    if (stored && stored.state === 'ended') return storedRun(stored);
    throw new WardenError('not-found', `No run with id ${JSON.stringify(id)}.`);
  }

  private forgetOldRuns(endedId: string): void {
    const run = this.runs.get(endedId);
    if (!run || this.ended.has(endedId)) return;
    const result = run.snapshot();
    const chars = result.stdout.length + result.stderr.length;
    this.ended.set(endedId, chars);
    this.endedChars += chars;
    this.enforceEndedBudget();
  }

  private enforceEndedBudget(): void {
    for (const id of this.ended.keys()) {
      if (this.ended.size <= this.keepEnded) break;
      this.letGo(id);
    }
    if (this.endedChars <= this.endedBudget) return;
    // First the runs the history holds whole: they are read back from it when asked.
    for (const id of this.ended.keys()) {
      if (this.endedChars <= this.endedBudget) return;
      if (this.stored.has(id)) this.letGo(id);
    }
    // The rest stay while the history may still write them, up to twice the budget.
    const hardLimit = this.history ? 2 * this.endedBudget : this.endedBudget;
    for (const id of this.ended.keys()) {
      if (this.endedChars <= hardLimit) return;
      this.letGo(id);
    }
  }

  private letGo(id: string): void {
    this.endedChars -= this.ended.get(id) ?? 0;
    this.ended.delete(id);
    this.stored.delete(id);
    this.runs.delete(id);
    this.marks.delete(id);
  }
}
