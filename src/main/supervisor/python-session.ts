// Python interpreter sessions: one long-lived `python3 -X faulthandler` running
// runtime/warden_runtime.py per session, scripts run one at a time in its
// persistent globals (runtime/PROTOCOL.md is the protocol, followed exactly).
//
// Per script: the exec op, then the `result` message on fd 4 and the end
// markers on fd 1 and fd 2. At the limit (or a client's stop) the cancel op
// and SIGINT to the interpreter's pid (never its group), SIGINT again every
// 200 ms until the result comes or the grace ends; then SIGKILL, and the next
// script starts a fresh interpreter.
//
// Where timing can interleave, and what happens (python-session.test.ts and
// marker.test.ts drive rows 1, 2, 4, 5, 6, 7, 8 and 10; rows 3 and 9 are races
// with no deterministic trigger from outside, handled by the order of checks):
//
// | # | what lands when                                          | what happens                                                       |
// |---|----------------------------------------------------------|--------------------------------------------------------------------|
// | 1 | the result arrives before its end markers                | wait (bounded) for both markers; output before them is the script's|
// | 2 | a marker is split across reads                           | held back until whole, stripped (marker.ts)                        |
// | 3 | the result and the deadline cross                        | the stop was asked first: the stop explains the ending              |
// | 4 | the interpreter exits before the result                  | died under the script: judged by its exit code or signal           |
// | 5 | the interpreter exits after the result                   | died between scripts: a note on the next script, fresh interpreter |
// | 6 | a client stop while queued                               | removed from the queue, verdict stopped, it never ran              |
// | 7 | a client stop while the interpreter starts               | stopped before it ran; the interpreter stays for the next script   |
// | 8 | a client stop during the deadline's sequence             | no second sequence; force: SIGKILL now                             |
// | 9 | SIGKILL sent, the result was already on its way          | the result is used; the interpreter is gone all the same           |
// |10 | the interpreter never says ready                         | killed at the bound; the script is spawn-failed with the cause     |

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Readable, Writable } from 'node:stream';
import type { OutputStream, RunEvent } from '../../shared/events';
import type { OomReport, PeakFigures, Proc, RunResult, RunState, SessionInfo, SignalSent, StopReason, StopRecord, TeardownReport } from '../../shared/result';
import { extendedLimit, extensionNote, timerDelay } from './deadline';
import { count, seconds } from './format';
import { MarkerSplitter } from './marker';
import { oomReport, type MemoryBackend, type RunCgroup } from './memory';
import { WardenInputError, type PythonRunOptions } from './options';
import { CappedOutput, type OutputSlice } from './output';
import { readLastPid, readStat } from './procfs';
import { checkSpawnable, describeSpawnError } from './spawn';
import { listScope, teardown, type TeardownTarget } from './teardown';
import { assembleResult, listProcs } from './result-shape';
import type { ProcessSampler } from './proc-tree';
import { TRACK_AFTER_MS } from './run';
import { judge, type Judgement } from './verdict';

/** Teardown reads only pids handed out since the exec op for scripts younger than this (no pid wrap-around is possible). */
const PID_RANGE_MAX_AGE_MS = 30_000;

/** How often SIGINT is repeated until the script reports. */
export const SIGINT_REPEAT_MS = 200;

export interface SessionSettings {
  hostId: string;
  procRoot: string | null;
  /** The interpreter to run (default python3, looked up on the environment's PATH). */
  pythonCommand: string;
  /** runtime/warden_runtime.py; found next to the sources when not given. */
  runtimePath?: string;
  /** Bound on the interpreter's start, until its `ready` message. */
  readyTimeoutMs: number;
  /** Bound on waiting for the end markers after a script's result. */
  markerWaitMs: number;
  /** Bound on the interpreter's exit after the close op, before SIGKILL. */
  closeTimeoutMs: number;
  emit: (event: RunEvent) => void;
  /** The memory cgroup backend, for interpreters with a memory limit; throws MemoryLimitUnavailable where there is none. */
  memoryBackend?: () => MemoryBackend;
  /** The process sampler for script trees (the interpreter and what the script starts); none when sampling is off. */
  sampler?: () => ProcessSampler | undefined;
}

export const SESSION_DEFAULTS = {
  pythonCommand: 'python3',
  readyTimeoutMs: 10_000,
  markerWaitMs: 2_000,
  closeTimeoutMs: 2_000,
} as const;

/** runtime/warden_runtime.py, looked for upwards from this file (src/main/supervisor, or out/main when built). */
export function findRuntime(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  let dir = here;
  for (let i = 0; i < 6; i += 1) {
    const candidate = join(dir, 'runtime', 'warden_runtime.py');
    if (existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  return resolve(here, '../../../runtime/warden_runtime.py');
}

interface Exit {
  exitCode: number | null;
  signal: string | null;
}

type ScriptStatus = 'ok' | 'error' | 'interrupted' | 'cancelled';

interface ResultMessage {
  type: 'result';
  id: string;
  status: ScriptStatus;
  line: number | null;
  error: string | null;
}

type Ready = { ok: true } | { ok: false; cause: string; status: 126 | 127 };

function describeExit(exit: Exit): string {
  if (exit.signal !== null) return `it was ended by ${exit.signal}`;
  if (exit.exitCode !== null) return `it exited with code ${exit.exitCode}`;
  return 'it ended without an exit status';
}

/** "Check the traceback..." -> "check the traceback..." */
function lowerFirst(text: string): string {
  return text.length > 0 ? text[0]!.toLowerCase() + text.slice(1) : text;
}

const LEFTOVER_CAP_BYTES = 1_000_000;

/** One interpreter process and its pipes. */
class Interpreter {
  readonly child: ChildProcess;
  readonly pid: number | undefined;
  readonly startedWallMs = Date.now();
  /** Processes started before this (clock ticks after boot) cannot carry a script's marker. */
  startTicks?: number;
  nonce?: string;
  python?: string;
  exit?: Exit;
  readonly exited: Promise<Exit>;
  readonly ready: Promise<Ready>;
  /** Both output pipes ended (bounded by the caller). */
  readonly outputEnded: Promise<void>;
  /** Set once the interpreter said ready. */
  isReady = false;
  /** It never became ready (spawn failure, died or hung at start). */
  startFailed = false;
  /** Warden sent it SIGKILL (after the grace, a restart, a close): its death needs no "died" note. */
  killedByUs = false;
  /** The memory cgroup's counters as the interpreter exited, before the cgroup was removed. */
  countersAtExit?: { oomKills: number | null; peakBytes: number | null };
  closing = false;
  /** The script the output is for now, per stream (until its end marker); without one, output waits for the next script. */
  readonly owners: Partial<Record<OutputStream, PythonRun>> = {};
  /** The script running now (its result not yet handled). */
  owner?: PythonRun;
  /** Killed by a restart of its session. */
  restarted = false;
  /** The script sent and not yet reported on. */
  underScript?: string;
  /** The last script that ran here. */
  lastRunId?: string;
  /** Output written after the last script's end marker, for the next script (PROTOCOL.md: it belongs to the next). */
  readonly leftover: Record<OutputStream, Buffer[]> = { stdout: [], stderr: [] };
  leftoverBytes = 0;
  leftoverDropped = 0;
  private readonly startupStderr: Buffer[] = [];
  private readonly waiters = new Map<string, (message: ResultMessage) => void>();
  private readonly splitters: Partial<Record<OutputStream, MarkerSplitter>> = {};
  private readonly pending: Record<OutputStream, Buffer[]> = { stdout: [], stderr: [] };
  private messageBuffer = '';
  private readonly ops?: Writable;
  private resolveReady!: (ready: Ready) => void;

  constructor(
    readonly generation: number,
    readonly cwd: string,
    env: Record<string, string | undefined>,
    private readonly settings: SessionSettings,
    private readonly onLog: (text: string) => void,
    /** The interpreter's memory cgroup, when its session has a memory limit. */
    readonly cgroup?: RunCgroup,
  ) {
    this.ready = new Promise((r) => (this.resolveReady = r));
    void this.ready.then((ready) => (this.startFailed = !ready.ok));
    const runtime = settings.runtimePath ?? findRuntime();
    let child: ChildProcess | undefined;
    let failure: Ready | undefined;
    if (!existsSync(runtime)) {
      failure = { ok: false, cause: `The Python runtime was not found at ${runtime}.`, status: 126 };
    } else {
      try {
        const argv = [settings.pythonCommand, '-X', 'faulthandler', '-u', runtime];
        // The wrapper joins the cgroup and execs the interpreter: same pid, same group.
        const [file, ...args] = cgroup ? cgroup.wrap(argv) : argv;
        child = spawn(file!, args, {
          cwd,
          env,
          detached: true,
          stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe'],
        });
      } catch (error) {
        failure = this.spawnFailure(error as NodeJS.ErrnoException, env);
      }
    }
    this.child = child ?? (undefined as unknown as ChildProcess);
    this.pid = child?.pid;
    if (!child || this.pid === undefined) {
      let resolveExit!: (exit: Exit) => void;
      this.exited = new Promise((r) => (resolveExit = r));
      this.outputEnded = Promise.resolve();
      this.exit = { exitCode: null, signal: null };
      resolveExit(this.exit);
      if (failure) this.resolveReady(failure);
      else child!.once('error', (error: NodeJS.ErrnoException) => this.resolveReady(this.spawnFailure(error, env)));
      return;
    }
    child.on('error', () => undefined);
    if (settings.procRoot !== null) this.startTicks = readStat(settings.procRoot, this.pid)?.startTicks;
    this.ops = child.stdio[3] as Writable;
    this.ops.on('error', () => undefined);
    const messages = child.stdio[4] as Readable;
    messages.on('data', (chunk: Buffer) => this.onMessages(chunk));
    messages.on('error', () => undefined);
    const ends: Promise<void>[] = [];
    for (const stream of ['stdout', 'stderr'] as const) {
      const readable = child[stream]!;
      readable.on('data', (chunk: Buffer) => this.onOutput(stream, chunk));
      readable.on('error', () => undefined);
      ends.push(new Promise((r) => { readable.once('end', r); readable.once('close', r); }));
    }
    this.outputEnded = Promise.all(ends).then(() => {
      for (const stream of ['stdout', 'stderr'] as const) this.splitters[stream]?.flush();
    });
    this.exited = new Promise((r) =>
      child.once('exit', (code, signal) => {
        this.exit = { exitCode: code, signal };
        r(this.exit);
      }),
    );
    const timer = setTimeout(() => {
      this.kill();
      this.resolveReady({ ok: false, cause: `The Python runtime did not report ready within ${seconds(settings.readyTimeoutMs)}; it was killed.`, status: 126 });
    }, settings.readyTimeoutMs);
    void this.exited.then(async (exit) => {
      clearTimeout(timer);
      if (this.isReady) return;
      // Let the pipes end so its last words are in the cause.
      await Promise.race([this.outputEnded, new Promise((r) => setTimeout(r, 500))]);
      const said = Buffer.concat(this.startupStderr).toString('utf8').trim().split('\n').filter(Boolean).pop();
      this.resolveReady({
        ok: false,
        cause: `The Python runtime (${settings.pythonCommand} ${runtime}) ${describeExit(exit).replace(/^it /, '')} before it was ready${said ? `: ${said}` : ''}.`,
        status: 126,
      });
    });
    void this.ready.then(() => clearTimeout(timer));
  }

  private spawnFailure(error: NodeJS.ErrnoException, env: Record<string, string | undefined>): Ready {
    const spec = { argv: [this.settings.pythonCommand], shell: false, cwd: this.cwd, env };
    const failure = checkSpawnable(spec) ?? describeSpawnError(error, spec);
    return { ok: false, cause: failure.cause, status: failure.status };
  }

  get alive(): boolean {
    return this.exit === undefined;
  }

  /** Sends one op; false when the pipe is gone. */
  send(op: object): boolean {
    if (!this.ops || this.ops.destroyed || !this.ops.writable) return false;
    this.ops.write(`${JSON.stringify(op)}\n`);
    return true;
  }

  /** The result message for one script. */
  resultFor(id: string): Promise<ResultMessage> {
    return new Promise((r) => this.waiters.set(id, r));
  }

  signal(signal: NodeJS.Signals): boolean {
    if (this.pid === undefined || this.exit !== undefined) return false;
    try {
      process.kill(this.pid, signal); // the interpreter only, never its group
      return true;
    } catch {
      return false;
    }
  }

  kill(): boolean {
    this.killedByUs = true;
    return this.signal('SIGKILL');
  }

  /** Output after the last end marker: moved out, for the next script. */
  takeLeftover(): { stdout: Buffer; stderr: Buffer; dropped: number } | undefined {
    if (this.leftoverBytes === 0 && this.leftoverDropped === 0) return undefined;
    const taken = { stdout: Buffer.concat(this.leftover.stdout), stderr: Buffer.concat(this.leftover.stderr), dropped: this.leftoverDropped };
    this.leftover.stdout = [];
    this.leftover.stderr = [];
    this.leftoverBytes = 0;
    this.leftoverDropped = 0;
    return taken;
  }

  private onOutput(stream: OutputStream, chunk: Buffer): void {
    if (!this.isReady) {
      // Before ready there is no nonce: keep it until the splitter exists (and for a start failure's cause).
      this.pending[stream].push(chunk);
      if (stream === 'stderr') this.startupStderr.push(chunk);
      return;
    }
    this.splitters[stream]!.push(chunk);
  }

  private route(stream: OutputStream, chunk: Buffer): void {
    const owner = this.owners[stream];
    if (owner) {
      owner.pushOutput(stream, chunk);
      return;
    }
    if (this.leftoverBytes + chunk.length > LEFTOVER_CAP_BYTES) {
      this.leftoverDropped += chunk.length;
      return;
    }
    this.leftover[stream].push(Buffer.from(chunk));
    this.leftoverBytes += chunk.length;
  }

  private onMessages(chunk: Buffer): void {
    this.messageBuffer += chunk.toString('utf8');
    let newline = this.messageBuffer.indexOf('\n');
    while (newline >= 0) {
      const line = this.messageBuffer.slice(0, newline);
      this.messageBuffer = this.messageBuffer.slice(newline + 1);
      if (line.trim().length > 0) this.onMessage(line);
      newline = this.messageBuffer.indexOf('\n');
    }
  }

  private onMessage(line: string): void {
    let message: { type?: unknown; [key: string]: unknown };
    try {
      message = JSON.parse(line) as typeof message;
    } catch {
      this.onLog(`The runtime sent a line that is not JSON: ${line.slice(0, 200)}`);
      return;
    }
    if (message.type === 'ready' && !this.isReady && typeof message.nonce === 'string') {
      this.nonce = message.nonce;
      this.python = typeof message.python === 'string' ? message.python : undefined;
      for (const stream of ['stdout', 'stderr'] as const) {
        const splitter = new MarkerSplitter(
          message.nonce,
          (data) => this.route(stream, data),
          (id) => this.onMarker(stream, id),
        );
        this.splitters[stream] = splitter;
        for (const chunk of this.pending[stream].splice(0)) splitter.push(chunk);
      }
      this.isReady = true;
      this.resolveReady({ ok: true });
    } else if (message.type === 'result' && typeof message.id === 'string') {
      const waiter = this.waiters.get(message.id);
      this.waiters.delete(message.id);
      const status = message.status as ScriptStatus;
      waiter?.({
        type: 'result',
        id: message.id,
        status: ['ok', 'error', 'interrupted', 'cancelled'].includes(status) ? status : 'error',
        line: typeof message.line === 'number' ? message.line : null,
        error: typeof message.error === 'string' ? message.error : null,
      });
    } else if (message.type === 'log' && typeof message.text === 'string') {
      this.onLog(message.text);
    }
  }

  private onMarker(stream: OutputStream, id: string): void {
    const owner = this.owners[stream];
    if (owner?.id === id) {
      // What follows the marker is not this script's.
      this.owners[stream] = undefined;
      owner.markerSeen(stream);
    }
  }
}

/** The per-script stop: cancel op + SIGINT, SIGINT every 200 ms, SIGKILL at the grace. Starts at most once. */
class PythonStop {
  reason?: StopReason;
  requestedAtMs = 0;
  readonly sent: SignalSent[] = [];
  killed = false;
  /** The kill was asked for (force), not reached at the end of the grace. */
  forced = false;
  private forcedAtMs?: number;
  private repeat?: NodeJS.Timeout;
  private killTimer?: NodeJS.Timeout;
  private settled = false;

  constructor(
    private readonly graceMs: number,
    private readonly nowMs: () => number,
    private readonly interp: () => Interpreter | undefined,
    private readonly runId: string,
    private readonly onSignal: (sent: SignalSent, step: 'interrupt' | 'kill') => void,
  ) {}

  /** The sequence began, or the script already reported: too late to move its deadline. */
  get begunOrSettled(): boolean {
    return this.reason !== undefined || this.settled;
  }

  begin(reason: StopReason, force: boolean): void {
    if (this.settled) return;
    if (this.reason === undefined) {
      this.reason = reason;
      this.requestedAtMs = this.nowMs();
      if (!force) {
        this.interp()?.send({ op: 'cancel', id: this.runId });
        this.interrupt();
        this.repeat = setInterval(() => this.interrupt(), SIGINT_REPEAT_MS);
        this.killTimer = setTimeout(() => this.kill(), this.graceMs);
      }
    }
    if (force && !this.killed) {
      this.forced = true;
      this.forcedAtMs = this.nowMs();
      this.kill();
    }
  }

  /** The script reported, or the interpreter died: no more signals. */
  settle(): void {
    this.settled = true;
    clearInterval(this.repeat);
    clearTimeout(this.killTimer);
  }

  record(): StopRecord | undefined {
    if (this.reason === undefined) return undefined;
    return { reason: this.reason, requestedAtMs: this.requestedAtMs, signals: [...this.sent], endedBy: this.killed ? 'kill' : 'interrupt', ...(this.forcedAtMs !== undefined ? { forcedAtMs: this.forcedAtMs } : {}) };
  }

  private interrupt(): void {
    if (this.interp()?.signal('SIGINT')) this.note('SIGINT', 'interrupt');
  }

  private kill(): void {
    clearInterval(this.repeat);
    clearTimeout(this.killTimer);
    const interp = this.interp();
    if (interp?.kill()) {
      this.killed = true;
      this.note('SIGKILL', 'kill');
    }
  }

  private note(signal: string, step: 'interrupt' | 'kill'): void {
    const sent = { signal, atMs: this.nowMs() };
    this.sent.push(sent);
    this.onSignal(sent, step);
  }
}

type Outcome =
  | { type: 'result'; message: ResultMessage; atMs: number; wallMs: number }
  | { type: 'exit'; exit: Exit; atMs: number; wallMs: number }
  | { type: 'spawn-failed'; cause: string; status: 126 | 127 }
  | { type: 'not-run'; reason: StopReason; queuePosition?: number };

/** One script in a session: queued, then run, then its result. */
export class PythonRun {
  readonly id: string;
  private state: RunState = 'queued';
  queuePosition?: number;
  private readonly queuedWallMs = Date.now();
  private startedWallMs?: number;
  private startMono?: number;
  private readonly out: Record<OutputStream, CappedOutput>;
  /** When the first stop signal went out (ms since start), for killAtMs. */
  private stopBeganAtMs: number | undefined;
  readonly stopper: PythonStop;
  interp?: Interpreter;
  private cwd: string;
  private readonly notes: string[] = [];
  /** The limit now: the request's, moved by extensions. */
  private limitMs: number | null;
  private readonly markers = new Set<OutputStream>();
  private markerWaiter?: () => void;
  private result?: RunResult;
  private resolveDone!: (result: RunResult) => void;
  readonly done: Promise<RunResult>;

  constructor(
    readonly options: PythonRunOptions,
    private readonly session: PythonSession,
    private readonly emit: (event: RunEvent) => void,
  ) {
    this.id = options.id;
    this.cwd = options.cwd;
    this.limitMs = options.limitMs;
    this.out = { stdout: new CappedOutput(options.outputCapChars), stderr: new CappedOutput(options.outputCapChars) };
    this.done = new Promise((r) => (this.resolveDone = r));
    this.stopper = new PythonStop(
      options.graceMs,
      () => this.elapsedMs(),
      () => this.interp,
      this.id,
      (sent, step) => {
        this.state = 'stopping';
        // SIGKILL of the interpreter is due at the grace after the first stop signal.
        this.stopBeganAtMs ??= sent.atMs;
        const killAtMs = Math.round(step === 'kill' ? sent.atMs : this.stopBeganAtMs + options.graceMs);
        this.emit({ type: 'signal-sent', runId: this.id, signal: sent.signal, atMs: sent.atMs, step, killAtMs });
      },
    );
  }

  get ended(): boolean {
    return this.result !== undefined;
  }

  /** True once the exec op was sent. */
  get begun(): boolean {
    return this.startMono !== undefined;
  }

  stop(reason: StopReason, options: { force?: boolean; note?: string } = {}): void {
    if (options.note && !this.ended) this.notes.push(options.note);
    this.session.stopRun(this, reason, options.force === true);
  }

  addNote(note: string): void {
    this.notes.push(note);
  }

  elapsedMs(): number {
    return this.startMono === undefined ? 0 : performance.now() - this.startMono;
  }

  /** It left the queue: the interpreter is being readied for it. */
  leaveQueue(): void {
    this.state = 'running';
    this.queuePosition = undefined;
    // A script first announced as queued is announced again as it starts.
    if (this.announcedQueued) this.emit({ type: 'started', runId: this.id, snapshot: this.snapshot() });
  }

  private announcedQueued = false;

  /** The 'started' event at submission: its state is 'running', or 'queued' with its position. */
  announce(): void {
    this.announcedQueued = this.state === 'queued';
    this.emit({ type: 'started', runId: this.id, snapshot: this.snapshot() });
  }

  /** Sends the exec op; the run's clock and its limit start here. */
  begin(interp: Interpreter, armDeadline: boolean): void {
    this.interp = interp;
    this.cwd = interp.cwd;
    this.startedWallMs = Date.now();
    this.startMono = performance.now();
    interp.owner = this;
    interp.owners.stdout = this;
    interp.owners.stderr = this;
    interp.underScript = this.id;
    interp.lastRunId = this.id;
    this.oomKillsBefore = interp.cgroup?.readOomKills() ?? null;
    interp.send({ op: 'exec', id: this.id, code: this.options.code, scope: this.options.scope });
    const sampler = this.session.sampler();
    const rootPid = interp.pid;
    if (sampler && rootPid !== undefined) {
      // As for commands: a script that ends at once costs no sample.
      this.trackTimer = setTimeout(() => {
        if (!this.result) sampler.track(this.id, { rootPid, scope: this.options.scope });
      }, TRACK_AFTER_MS);
    }
    if (armDeadline && this.limitMs !== null) this.armDeadline(this.limitMs);
  }

  private deadlineTimer?: NodeJS.Timeout;
  private oomKillsBefore: number | null = null;
  private trackTimer?: NodeJS.Timeout;
  /** The tree's peak (the interpreter and what the script started) while the script ran. */
  private peak?: PeakFigures;
  private oom?: OomReport;

  /** The interpreter's cgroup counter across this script: the out-of-memory killer's work, when it rose. */
  private readOom(): OomReport | undefined {
    const cgroup = this.interp?.cgroup;
    if (!cgroup) return undefined;
    const atExit = this.interp?.countersAtExit;
    const peakBytes = atExit ? atExit.peakBytes : cgroup.readPeakBytes();
    return oomReport({
      killsBefore: this.oomKillsBefore,
      killsAfter: atExit ? atExit.oomKills : cgroup.readOomKills(),
      ...(peakBytes !== null && peakBytes !== undefined ? { peakBytes } : {}),
      limitBytes: cgroup.limitBytes,
    });
  }

  /**
   * Node's timers can fire a millisecond early, and one timer reaches 24.8
   * days at most: a timer that fires before the limit re-arms for the rest,
   * so the limit is never enforced before it is reached, however far it is.
   */
  private armDeadline(delayMs: number): void {
    this.deadlineTimer = setTimeout(() => {
      const early = this.limitMs! - this.elapsedMs();
      if (early > 0) this.armDeadline(Math.ceil(early));
      else this.stopper.begin('deadline', false);
    }, timerDelay(delayMs));
  }

  clearDeadline(): void {
    clearTimeout(this.deadlineTimer);
  }

  /**
   * Moves the deadline `byMs` later (no limit: the elapsed time plus `byMs`);
   * a queued script just gets the bigger limit. Refused once it has ended,
   * reported, or its stop has begun.
   */
  extend(byMs: number): RunResult {
    if (this.result || this.stopper.begunOrSettled) {
      const why = this.result || this.stopper.reason === undefined ? 'has ended' : 'is already being stopped';
      throw new WardenInputError(`Run ${this.id} ${why}; its limit can no longer be extended.`);
    }
    const atMs = this.begun ? this.elapsedMs() : null;
    const limitMs = extendedLimit(this.limitMs, atMs ?? 0, byMs);
    this.limitMs = limitMs;
    if (this.begun) {
      clearTimeout(this.deadlineTimer);
      this.armDeadline(Math.max(0, limitMs - atMs!));
    }
    this.notes.push(extensionNote(byMs, atMs ?? (this.state === 'queued' ? 'while it was queued' : 'before it started'), limitMs));
    this.emit({ type: 'limit-extended', runId: this.id, limitMs, byMs, atMs: Math.round(atMs ?? 0) });
    return this.snapshot();
  }

  pushOutput(stream: OutputStream, chunk: Uint8Array): void {
    const sink = this.out[stream];
    const text = sink.push(chunk);
    if (text.length > 0) this.emit({ type: 'output', runId: this.id, stream, text, offset: sink.totalChars - text.length, atMs: Math.round(this.elapsedMs()) });
  }

  /** Characters of a stream's kept output from `from` on (see CappedOutput.slice), and the stream's length now. */
  outputFrom(stream: OutputStream, from: number): OutputSlice & { total: number } {
    return { ...this.out[stream].slice(from), total: this.out[stream].totalChars };
  }

  markerSeen(stream: OutputStream): void {
    this.markers.add(stream);
    if (this.markers.size === 2) this.markerWaiter?.();
  }

  /** Both end markers, the interpreter's pipes ending, or the bound; returns the streams whose marker never came. */
  async waitMarkers(interp: Interpreter, boundMs: number): Promise<OutputStream[]> {
    if (this.markers.size < 2) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        new Promise<void>((r) => (this.markerWaiter = r)),
        interp.exited.then(() => Promise.race([interp.outputEnded, new Promise((r) => setTimeout(r, boundMs))])),
        new Promise((r) => (timer = setTimeout(r, boundMs))),
      ]);
      clearTimeout(timer);
    }
    return (['stdout', 'stderr'] as const).filter((s) => !this.markers.has(s));
  }

  snapshot(): RunResult {
    if (this.result) return this.result;
    return this.build({ state: this.state, elapsedMs: this.elapsedMs(), exitCode: null, signal: null });
  }

  /** Ends the run; teardown of what the script started comes first. */
  async finish(outcome: Outcome, sessionNotes: { interpreterGone?: string } = {}): Promise<void> {
    if (this.result) return;
    this.clearDeadline();
    this.stopper.settle();
    clearTimeout(this.trackTimer);
    this.peak = this.session.sampler()?.untrack(this.id) ?? this.peak;
    let report: TeardownReport | undefined;
    if (this.begun && this.interp?.pid !== undefined) report = await this.teardown(this.interp);
    for (const stream of ['stdout', 'stderr'] as const) {
      const text = this.out[stream].end();
      if (text.length > 0) this.emit({ type: 'output', runId: this.id, stream, text, offset: this.out[stream].totalChars - text.length, atMs: Math.round(this.elapsedMs()) });
    }
    if (this.result) return;
    const stdout = this.out.stdout.text();
    const stderr = this.out.stderr.text();
    const stop = this.stopper.record();
    const { judgement, exitCode, signal, elapsedMs, wallMs } = this.judgeOutcome(outcome, stop, `${stdout}\n${stderr}`);
    const notes = [...judgement.notes, ...this.notes];
    if (sessionNotes.interpreterGone) notes.push(sessionNotes.interpreterGone);
    for (const stream of ['stdout', 'stderr'] as const) {
      const dropped = this.out[stream].dropped;
      if (dropped > 0) notes.push(`${stream} was ${count(this.out[stream].totalChars)} characters, over the cap of ${count(this.options.outputCapChars)}: the first and last ${count(Math.floor(this.options.outputCapChars / 2))} are kept and the ${count(dropped)} in between were dropped.`);
    }
    this.state = 'ended';
    this.result = this.build({
      state: 'ended',
      elapsedMs,
      exitCode,
      signal,
      verdict: judgement.verdict,
      advice: judgement.advice,
      notes,
      endedAt: new Date(wallMs).toISOString(),
      stop: outcome.type === 'not-run' ? { reason: outcome.reason, requestedAtMs: 0, signals: [], endedBy: 'interrupt' } : stop,
      teardown: report,
      stdout,
      stderr,
    });
    // The session is free before anyone hears of the end, so a script sent on 'ended' is not queued behind this one.
    this.session.release(this);
    this.emit({ type: 'ended', runId: this.id, result: this.result });
    this.resolveDone(this.result);
  }

  private judgeOutcome(outcome: Outcome, stop: StopRecord | undefined, outputKept: string): { judgement: Judgement; exitCode: number | null; signal: string | null; elapsedMs: number; wallMs: number } {
    const limitMs = this.limitMs;
    if (outcome.type === 'spawn-failed') {
      const judgement = judge({ kind: 'python', spawnFailure: outcome.cause, exitCode: outcome.status, signal: null, elapsedMs: 0, limitMs, outputKept, viaShell: false });
      judgement.notes.push(`The session's interpreter never started; exit status ${outcome.status} is what a shell reports for this.`);
      return { judgement, exitCode: outcome.status, signal: null, elapsedMs: 0, wallMs: Date.now() };
    }
    if (outcome.type === 'not-run') {
      const where = outcome.queuePosition !== undefined ? ` while it waited in the session's queue (position ${outcome.queuePosition})` : " while the session's interpreter started";
      const who = outcome.reason === 'shutdown' ? 'Stopped because Warden shut down' : outcome.reason === 'deadline' ? 'Stopped' : 'Stopped on request';
      return {
        judgement: { verdict: 'stopped', advice: null, notes: [`${who}${where}: it never ran.`] },
        exitCode: null,
        signal: null,
        elapsedMs: 0,
        wallMs: Date.now(),
      };
    }
    if (outcome.type === 'exit') {
      const { exitCode, signal } = outcome.exit;
      this.oom = this.readOom();
      const judgement = judge({
        kind: 'python',
        exitCode,
        signal,
        elapsedMs: outcome.atMs,
        limitMs,
        ...(stop ? { stop } : {}),
        ...(this.oom ? { oom: this.oom } : {}),
        outputKept,
        viaShell: false,
      });
      return { judgement, exitCode, signal, elapsedMs: outcome.atMs, wallMs: outcome.wallMs };
    }
    const { message } = outcome;
    const stoppedByStatus = message.status === 'interrupted' || message.status === 'cancelled';
    const exitCode = stoppedByStatus ? null : message.status === 'ok' ? 0 : 1;
    const signal = stoppedByStatus ? 'SIGINT' : null;
    const where = message.line !== null ? `File "<script>", line ${message.line}` : undefined;
    if (stop) {
      const judgement = judge({ kind: 'python', exitCode, signal, elapsedMs: outcome.atMs, limitMs, stop, outputKept, viaShell: false });
      if (stoppedByStatus) {
        const how = message.status === 'cancelled' ? 'cancelled at an await' : 'interrupted (KeyboardInterrupt)';
        judgement.notes.push(
          where
            ? `The script was ${how} at ${where}; the interpreter and its variables are kept.`
            : `The script was ${how} outside its own code, so no script line is known; the interpreter and its variables are kept.`,
        );
      } else {
        judgement.notes.push(`The script was asked to stop but ended by itself with status "${message.status}" (it may catch KeyboardInterrupt); the interpreter and its variables are kept.`);
      }
      return { judgement, exitCode, signal: stoppedByStatus ? 'SIGINT' : null, elapsedMs: outcome.atMs, wallMs: outcome.wallMs };
    }
    let judgement: Judgement;
    if (message.status === 'ok') {
      judgement = { verdict: 'completed', advice: null, notes: [] };
    } else if (message.status === 'error') {
      const last = (message.error ?? '').trim().split('\n').filter(Boolean).pop();
      judgement = {
        verdict: 'failed',
        advice: 'Read the traceback in stderr for the exception the script raised.',
        notes: [last ? `The script raised ${last}` : 'The script raised an exception.'],
      };
    } else if (message.status === 'interrupted') {
      judgement = {
        verdict: 'failed',
        advice: 'Check whether the script interrupts itself, for example with os.kill(os.getpid(), signal.SIGINT); if not, ask whoever runs this host what sends the interpreter SIGINT.',
        notes: [`The script was interrupted (KeyboardInterrupt)${where ? ` at ${where}` : ''} by a SIGINT Warden did not send; the interpreter and its variables are kept.`],
      };
    } else {
      judgement = {
        verdict: 'failed',
        advice: 'Check what cancels the task the script awaits: Warden did not stop it.',
        notes: [`The script's task was cancelled${where ? ` at ${where}` : ''} though Warden did not stop it; the interpreter and its variables are kept.`],
      };
    }
    // Without a stop of Warden's, an interrupted or cancelled script failed like any uncaught exception.
    return { judgement, exitCode: message.status === 'ok' ? 0 : 1, signal: null, elapsedMs: outcome.atMs, wallMs: outcome.wallMs };
  }

  private async teardown(interp: Interpreter): Promise<TeardownReport | undefined> {
    const target: TeardownTarget = {
      scope: this.options.scope,
      pgid: null, // the interpreter leads the group and stays for the next script
      sparePids: interp.alive && interp.pid !== undefined ? [interp.pid] : [],
      // The script's processes got pids after the exec op; far too soon for the pids to wrap around.
      ...(this.lastPidBefore !== undefined && this.elapsedMs() < PID_RANGE_MAX_AGE_MS ? { pidsAfter: this.lastPidBefore } : {}),
      procRoot: this.options.procRoot,
      notBeforeTicks: interp.startTicks,
      budgetMs: this.options.teardownBudgetMs,
      passGapMs: this.options.teardownPassGapMs,
      onSignal: (pid, sig) =>
        this.emit({ type: 'signal-sent', runId: this.id, signal: `${sig} to ${pid < 0 ? `group ${-pid}` : `pid ${pid}`}`, atMs: this.elapsedMs(), step: 'teardown' }),
    };
    if (this.options.keepDescendants) {
      const kept = await listScope(target).catch(() => [] as Proc[]);
      if (kept.length > 0) this.notes.push(`${kept.length} process${kept.length === 1 ? ' the script started was' : 'es the script started were'} kept running as asked: ${listProcs(kept)}.`);
      return undefined;
    }
    if (this.nothingStarted()) return { killed: [], survivors: [], elapsedMs: 0, complete: true };
    const report = await teardown(target);
    if (report.killed.length > 0) this.notes.push(`Teardown ended ${report.killed.length} process${report.killed.length === 1 ? '' : 'es'} the script left behind: ${listProcs(report.killed)}.`);
    if (report.survivors.length > 0) this.notes.push(`${report.survivors.length} process${report.survivors.length === 1 ? '' : 'es'} survived teardown: ${listProcs(report.survivors)}.`);
    else if (!report.complete) this.notes.push('Teardown could not finish looking for leftover processes within its budget.');
    return report;
  }

  /** The last pid handed out before the exec op, to skip the /proc scan when nothing was created since. */
  lastPidBefore?: number;

  private nothingStarted(): boolean {
    if (this.options.procRoot === null || this.lastPidBefore === undefined) return false;
    // No process or thread was created anywhere in this pid namespace since the exec op was sent.
    return readLastPid(this.options.procRoot) === this.lastPidBefore;
  }

  private build(fields: Partial<RunResult> & Pick<RunResult, 'state' | 'elapsedMs' | 'exitCode' | 'signal'>): RunResult {
    const stop = fields.stop ?? this.stopper.record();
    // Live snapshots show the peak so far; the memory cgroup's counter counts too when it saw more (an out-of-memory spike).
    const sampled = this.peak ?? this.session.sampler()?.latest(this.id)?.peak;
    const cgroupPeak = this.oom?.peakBytes;
    const peak = sampled && cgroupPeak !== undefined && cgroupPeak > sampled.rssBytes ? { ...sampled, rssBytes: cgroupPeak } : sampled;
    return assembleResult({
      id: this.id,
      kind: 'python',
      code: this.options.code,
      session: this.options.session,
      cwd: this.cwd,
      state: fields.state,
      ...(this.queuePosition !== undefined && fields.state === 'queued' ? { queuePosition: this.queuePosition } : {}),
      ...(fields.verdict !== undefined ? { verdict: fields.verdict } : {}),
      exitCode: fields.exitCode,
      signal: fields.signal,
      startedWallMs: this.startedWallMs ?? this.queuedWallMs,
      ...(fields.endedAt !== undefined ? { endedAt: fields.endedAt } : {}),
      elapsedMs: fields.elapsedMs,
      limitMs: this.limitMs,
      ...(stop ? { stop } : {}),
      ...(this.oom && fields.state === 'ended' ? { oom: this.oom } : {}),
      advice: fields.advice ?? null,
      notes: fields.notes ?? [...this.notes],
      stdout: fields.stdout ?? this.out.stdout.text(),
      stderr: fields.stderr ?? this.out.stderr.text(),
      stdoutTruncated: this.out.stdout.dropped,
      stderrTruncated: this.out.stderr.dropped,
      ...(fields.teardown ? { teardown: fields.teardown } : {}),
      ...(peak ? { peak } : {}),
    });
  }
}


const GONE = 'the variables from earlier scripts are gone';

/** One named session: its interpreter (started lazily, restarted after a death), its queue, one script at a time. */
export class PythonSession {
  private interp?: Interpreter;
  private generation = 0;
  private readonly queue: PythonRun[] = [];
  private current?: PythonRun;
  private scriptsRun = 0;
  private closed = false;
  /** The last interpreter died or was killed: nothing runs until the next script. */
  private dead = false;
  /** Why the next script's interpreter is a fresh one, for its notes. */
  private freshNote?: string;
  /** A between-scripts death being recorded (its output drained first). */
  private deathRecorded?: Promise<void>;
  /** Output the dead interpreter wrote after its last script, for the next script. */
  private orphanOutput?: { stdout: Buffer; stderr: Buffer; dropped: number };
  private closing?: Promise<SessionInfo>;

  constructor(
    readonly name: string,
    private readonly settings: SessionSettings,
  ) {}

  /** The sampler for this session's script trees, when sampling is on. */
  sampler(): ProcessSampler | undefined {
    return this.settings.sampler?.();
  }

  /** Queues a script, or refuses it at once when busy and the request says so. */
  submit(run: PythonRun): void {
    if (this.closed) throw new WardenInputError(`The session "${this.name}" is closing and takes no new scripts.`);
    const busy = this.current !== undefined || this.queue.length > 0;
    if (busy && run.options.onBusy === 'refuse') {
      const waiting = this.queue.length > 0 ? ` and ${this.queue.length} queued` : '';
      throw new WardenInputError(`The session "${this.name}" is busy with run ${this.current?.id ?? this.queue[0]!.id}${waiting}; the script was refused (onBusy: "refuse").`);
    }
    this.queue.push(run);
    this.renumber();
    this.pump();
    run.announce();
  }

  info(): SessionInfo {
    // An interpreter Warden killed is gone, even before its exit is seen.
    const interp = this.interp?.alive && !this.interp.killedByUs ? this.interp : undefined;
    let state: SessionInfo['state'];
    if (this.closed) state = 'closed';
    else if ((interp && !interp.isReady) || (this.current && !this.current.begun && !this.current.ended)) state = 'starting';
    else if (this.current) state = 'busy';
    else if (!interp && this.dead) state = 'dead';
    else state = 'idle';
    return {
      name: this.name,
      pid: interp?.pid ?? null,
      state,
      scriptsRun: this.scriptsRun,
      queued: this.queue.length,
      running: this.current?.id ?? null,
      pythonVersion: interp?.python ?? null,
      startedAt: interp ? new Date(interp.startedWallMs).toISOString() : null,
    };
  }

  /** A client's stop of one of this session's scripts. */
  stopRun(run: PythonRun, reason: StopReason, force: boolean): void {
    if (run.ended) return;
    const queued = this.queue.indexOf(run);
    if (queued >= 0) {
      this.queue.splice(queued, 1);
      const position = run.queuePosition;
      this.renumber();
      void run.finish({ type: 'not-run', reason, ...(position !== undefined ? { queuePosition: position } : {}) });
      return;
    }
    if (!run.begun) {
      // Its interpreter is still starting: it ends now, without running.
      void run.finish({ type: 'not-run', reason });
      return;
    }
    run.stopper.begin(reason, force);
  }

  /** Kills the interpreter (and with it a running script); the next script starts a fresh one. */
  async restart(): Promise<SessionInfo> {
    const interp = this.interp;
    if (interp?.alive) {
      this.freshNote = `This script ran in a fresh interpreter: the session was restarted, so ${GONE}.`;
      interp.restarted = true;
      if (this.current?.begun && this.current.interp === interp && !this.current.ended) {
        this.current.stopper.begin('user', true);
      } else {
        interp.kill();
      }
      await Promise.race([interp.exited, sleep(this.settings.closeTimeoutMs)]);
    }
    this.dead = false;
    return this.info();
  }

  /** Stops queued scripts, stops the running one with the stop sequence, closes the interpreter. */
  close(reason: StopReason = 'user'): Promise<SessionInfo> {
    this.closing ??= this.doClose(reason);
    return this.closing;
  }

  private async doClose(reason: StopReason): Promise<SessionInfo> {
    this.closed = true;
    for (const run of [...this.queue]) this.stopRun(run, reason, false);
    const running = this.current;
    if (running) {
      this.stopRun(running, reason, false);
      await running.done;
    }
    const interp = this.interp;
    if (interp?.alive) {
      interp.closing = true;
      if (interp.isReady && interp.send({ op: 'close' })) {
        await Promise.race([interp.exited, sleep(this.settings.closeTimeoutMs)]);
      }
      if (interp.alive) {
        interp.kill();
        await Promise.race([interp.exited, sleep(this.settings.closeTimeoutMs)]);
      }
    }
    return this.info();
  }

  private renumber(): void {
    this.queue.forEach((run, i) => (run.queuePosition = i + 1));
  }

  private pump(): void {
    if (this.current !== undefined) return;
    const run = this.queue.shift();
    if (!run) return;
    this.renumber();
    this.current = run;
    run.leaveQueue();
    void this.execute(run)
      .catch(async (error: unknown) => {
        run.addNote(`Warden's session code failed: ${error instanceof Error ? error.message : String(error)}.`);
        await run.finish({ type: 'spawn-failed', cause: 'Warden could not run the script in its session (an internal error).', status: 126 });
      })
      .finally(() => this.release(run));
  }

  /** The script is done with the session (its result is final): the next one may start. */
  release(run: PythonRun): void {
    if (this.current !== run) return;
    this.current = undefined;
    this.pump();
  }

  private startInterpreter(run: PythonRun): Interpreter {
    this.generation += 1;
    const env = { ...run.options.env, WARDEN_SCOPE: `${this.settings.hostId}.session-${this.name}-${this.generation}` };
    let cgroup: RunCgroup | undefined;
    if (run.options.memoryBytes !== null && this.settings.memoryBackend) {
      try {
        cgroup = this.settings.memoryBackend().createRunCgroup(`session-${this.name}-${this.generation}`, run.options.memoryBytes);
      } catch (error) {
        run.addNote(`The interpreter runs without its memory limit: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    const interp = new Interpreter(this.generation, run.options.cwd, env, this.settings, (text) => {
      interp.owner?.addNote(`The Python runtime warned: ${text}`);
    }, cgroup);
    if (cgroup) {
      // Nothing of the interpreter's cgroup outlives it.
      void interp.exited.then(async () => {
        // Kept for the judgement of the script it died under, which comes after the cgroup is gone.
        interp.countersAtExit = { oomKills: cgroup.readOomKills(), peakBytes: cgroup.readPeakBytes() ?? null };
        await cgroup.killAll().catch(() => undefined);
        await cgroup.remove();
      });
    }
    void interp.exited.then((exit) => {
      if (interp.underScript !== undefined || interp.killedByUs || interp.closing || !interp.isReady) return;
      // It died between scripts: the next script gets a note and a fresh interpreter.
      this.dead = true;
      this.deathRecorded = this.recordDeathBetween(interp, exit).finally(() => (this.deathRecorded = undefined));
    });
    return interp;
  }

  private async recordDeathBetween(interp: Interpreter, exit: Exit): Promise<void> {
    await Promise.race([interp.outputEnded, sleep(2_000)]);
    const leftover = interp.takeLeftover();
    this.orphanOutput = leftover;
    const said = leftover ? `${leftover.stdout.toString('utf8')}\n${leftover.stderr.toString('utf8')}` : '';
    const judgement = judge({ kind: 'python', exitCode: exit.exitCode, signal: exit.signal, elapsedMs: 0, limitMs: null, outputKept: said, viaShell: false });
    const after = interp.lastRunId ? ` (run ${interp.lastRunId})` : '';
    const advice = judgement.advice ? ` If it happens again, ${lowerFirst(judgement.advice)}` : '';
    const where = leftover && leftover.stderr.length > 0 ? ' What it wrote after that script is at the start of this script\'s output.' : '';
    this.freshNote = `The interpreter died after the previous script${after} had ended: ${describeExit(exit)}.${advice}${where} This script ran in a fresh interpreter, so ${GONE}.`;
  }

  private async execute(run: PythonRun, attempt = 1): Promise<void> {
    // Only when a death is being recorded: otherwise the interpreter starts now, in this call.
    if (this.deathRecorded) await this.deathRecorded;
    let interp = this.interp;
    if (!interp || !interp.alive || interp.killedByUs || interp.startFailed) {
      if (interp && !interp.alive && !interp.killedByUs && !this.freshNote && interp.isReady) {
        // It died between scripts and its exit was not yet recorded.
        await interp.exited;
        await this.deathRecorded;
      }
      interp = this.startInterpreter(run);
      this.interp = interp;
    }
    const ready = await interp.ready;
    if (!ready.ok) {
      this.dead = true;
      await run.finish({ type: 'spawn-failed', cause: ready.cause, status: ready.status });
      return;
    }
    if (run.ended) return; // stopped while the interpreter started
    if (!interp.alive || interp.killedByUs) {
      // It died after ready, before this script was sent: run it in another one, once.
      await this.deathRecorded;
      if (attempt < 2) return this.execute(run, attempt + 1);
      this.dead = true;
      await run.finish({ type: 'spawn-failed', cause: `The Python runtime died twice right after it started (${describeExit(interp.exit!).replace(/^it /, '')}).`, status: 126 });
      return;
    }
    this.dead = false;
    // The first script this interpreter runs.
    const fresh = interp.lastRunId === undefined;
    if (fresh && this.freshNote) {
      run.addNote(this.freshNote);
      this.freshNote = undefined;
    }
    const orphan = fresh ? this.orphanOutput : interp.takeLeftover();
    if (fresh) this.orphanOutput = undefined;
    if (orphan) {
      run.pushOutput('stdout', orphan.stdout);
      run.pushOutput('stderr', orphan.stderr);
      if (!fresh) run.addNote('The interpreter wrote output between the previous script\'s end and this script\'s start (a thread or process an earlier script left running?); it is at the start of this script\'s output.');
      if (orphan.dropped > 0) run.addNote(`${count(orphan.dropped)} bytes written between scripts were dropped.`);
    }
    if (!fresh && ((run.options.cwdGiven && run.options.cwd !== interp.cwd) || run.options.envGiven)) {
      run.addNote(`The session's interpreter was already running (in ${interp.cwd}), so this script's cwd and env were not applied: they take effect when an interpreter starts. Restart the session to apply them.`);
    }
    if (this.settings.procRoot !== null) run.lastPidBefore = readLastPid(this.settings.procRoot);
    const resultP = interp.resultFor(run.id);
    run.begin(interp, true);
    const first = await Promise.race([
      resultP.then((message) => ({ type: 'result' as const, message, atMs: run.elapsedMs(), wallMs: Date.now() })),
      interp.exited.then((exit) => ({ type: 'exit' as const, exit, atMs: run.elapsedMs(), wallMs: Date.now() })),
    ]);
    run.clearDeadline();
    run.stopper.settle();
    if (first.type === 'result') {
      interp.underScript = undefined;
      const missing = await run.waitMarkers(interp, this.settings.markerWaitMs);
      interp.owner = interp.owners.stdout = interp.owners.stderr = undefined;
      if (missing.length > 0 && interp.alive) {
        run.addNote(`The end marker on ${missing.join(' and ')} did not arrive within ${seconds(this.settings.markerWaitMs)} of the script's result; later output of this script goes to the next one.`);
      }
      this.scriptsRun += 1;
      let gone: string | undefined;
      if (run.stopper.killed || !interp.alive) {
        // SIGKILL crossed the result, or it died right after: the next script starts fresh.
        this.dead = true;
        if (run.stopper.killed) {
          gone = `The interpreter was killed with SIGKILL as the result came, so ${GONE}; the next script starts a fresh interpreter.`;
          this.freshNote = `This script ran in a fresh interpreter: the previous one was killed (run ${run.id}), so ${GONE}.`;
        }
      }
      await run.finish(first, gone ? { interpreterGone: gone } : {});
      return;
    }
    // The interpreter died under the script.
    await Promise.race([interp.outputEnded, sleep(run.options.drainMs)]);
    interp.owner = interp.owners.stdout = interp.owners.stderr = undefined;
    this.scriptsRun += 1;
    this.dead = !interp.restarted;
    if (interp.restarted) {
      await run.finish(first, { interpreterGone: `The session was restarted while the script ran: its interpreter was killed, so ${GONE}.` });
      return;
    }
    const { killed, forced } = run.stopper;
    const gone = !killed
      ? `The interpreter died under the script: ${GONE}, and the next script starts a fresh interpreter.`
      : forced
        ? `The stop was forced, so the interpreter was killed with SIGKILL at once: ${GONE}, and the next script starts a fresh interpreter.`
        : `The script did not stop within the ${seconds(run.options.graceMs)} grace after the cancel and SIGINT, so the interpreter was killed with SIGKILL: ${GONE}, and the next script starts a fresh interpreter.`;
    this.freshNote = !killed
      ? `This script ran in a fresh interpreter: the previous one died under run ${run.id} (${describeExit(first.exit).replace(/^it /, '')}), so ${GONE}.`
      : `This script ran in a fresh interpreter: the previous one was killed ${forced ? 'by a forced stop' : 'after the grace'} (run ${run.id}), so ${GONE}.`;
    await run.finish(first, { interpreterGone: gone });
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
