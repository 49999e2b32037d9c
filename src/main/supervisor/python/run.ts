// One script in a session: queued, then run (the exec op, its deadline, its
// output), then its result, after teardown of what it started.

import { randomBytes } from 'node:crypto';
import type { OutputStream, RunEvent } from '../../../shared/events';
import type { OomReport, PeakFigures, Proc, RunResult, RunState, StopReason, StopRecord, TeardownReport } from '../../../shared/result';
import { extendedLimit, extensionNote, timerDelay } from '../deadline';
import { count, seconds } from '../../../shared/format';
import { oomReport } from '../cgroup';
import { WardenInputError, type PythonRunOptions } from '../options';
import { CappedOutput, type OutputSlice } from '../output';
import { readLastPid } from '../procfs';
import { listScope, teardown, type TeardownTarget } from '../teardown';
import { assembleResult } from '../assemble-result';
import { describeNow, describePids, listProcs, withCgroupSweep } from '../teardown-report';
import { NO_CGROUP, TRACK_AFTER_MS } from '../run';
import { judge, type Judgement } from '../verdict';
import { crashOf, inspectCore, readCoreSettings } from '../core-dump';
import type { Exit, Interpreter, ResultMessage } from './interpreter';
import type { ProcessSampler } from '../proc-tree/sampler';
import { findCrash } from '../../../shared/crash/traceback';
import { tracebackAdvice } from '../advice';
import { PythonStop } from './stop';
import { stalledBetween, watchStalls } from '../stalls';

/** Teardown reads only pids handed out since the exec op for scripts younger than this (no pid wrap-around is possible). */
const PID_RANGE_MAX_AGE_MS = 30_000;

type Outcome =
  | { type: 'result'; message: ResultMessage; atMs: number; wallMs: number; seenAtMs?: number }
  | { type: 'exit'; exit: Exit; atMs: number; wallMs: number }
  | { type: 'spawn-failed'; cause: string; status: 126 | 127 }
  | { type: 'not-run'; reason: StopReason; queuePosition?: number };

/** What a script asks of its session (session.ts), named here so the two files do not import each other. */
export interface RunSession {
  stopRun(run: PythonRun, reason: StopReason, force: boolean): void;
  sampler(): ProcessSampler | undefined;
  release(run: PythonRun): void;
}

/** One script in a session: queued, then run, then its result. */
export class PythonRun {
  readonly id: string;
  private state: RunState = 'queued';
  queuePosition?: number;
  private readonly queuedWallMs = Date.now();
  private startedWallMs?: number;
  /** The interpreter's pid when the script began: the process a crash's core file is named for. */
  private interpreterPid?: number;
  private startMono?: number;
  private startNs?: bigint;
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
  /** Seals the runtime's result and end markers for this script (sent on the exec op only; never in its environment). */
  readonly key = randomBytes(16).toString('hex');
  private markerWaiter?: () => void;
  private result?: RunResult;
  private resolveDone!: (result: RunResult) => void;
  readonly done: Promise<RunResult>;

  constructor(
    readonly options: PythonRunOptions,
    private readonly session: RunSession,
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

  /**
   * When the script ended on the run's clock: the runtime's monotonic time
   * when this host stalled (stopped, starved) between then and now, so the
   * record says what it took, not when the host could read it; else now.
   */
  endedAtMs(endedNs: bigint | null): number {
    const now = this.elapsedMs();
    if (endedNs === null || this.startNs === undefined || this.startMono === undefined) return now;
    const said = Number(endedNs - this.startNs) / 1e6;
    if (!(said >= 0 && said < now)) return now;
    return stalledBetween(this.startMono + said, this.startMono + now) ? said : now;
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
    this.startNs = process.hrtime.bigint(); // the same monotonic clock the runtime reads, in ns
    watchStalls();
    interp.owner = this;
    interp.owners.stdout = this;
    interp.owners.stderr = this;
    interp.underScript = this.id;
    interp.lastRunId = this.id;
    this.oomKillsBefore = interp.cgroup?.readOomKills() ?? null;
    interp.send({ op: 'exec', id: this.id, code: this.options.code, scope: this.options.scope, key: this.key });
    const sampler = this.session.sampler();
    const rootPid = interp.pid;
    this.interpreterPid = rootPid;
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
    const { judgement, exitCode, signal, elapsedMs, wallMs, stopCameLate } = this.judgeOutcome(outcome, stop, `${stdout}\n${stderr}`, { stdout, stderr });
    const crash = crashOf(judgement.verdict, exitCode, signal, this.interpreterPid);
    const coreSettings = crash && this.options.procRoot !== null ? readCoreSettings(this.options.procRoot) : null;
    const core = crash && coreSettings ? inspectCore(coreSettings, { ...crash, cwd: this.cwd, startedWallMs: this.startedWallMs ?? this.queuedWallMs }) : undefined;
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
      stop: outcome.type === 'not-run' ? { reason: outcome.reason, requestedAtMs: 0, signals: [], endedBy: 'interrupt' } : stopCameLate ? undefined : stop,
      teardown: report,
      ...(core ? { core } : {}),
      stdout,
      stderr,
    });
    // The session is free before anyone hears of the end, so a script sent on 'ended' is not queued behind this one.
    this.session.release(this);
    this.emit({ type: 'ended', runId: this.id, result: this.result });
    this.resolveDone(this.result);
  }

  private judgeOutcome(outcome: Outcome, stop: StopRecord | undefined, outputKept: string, streams: { stdout: string; stderr: string }): { judgement: Judgement; exitCode: number | null; signal: string | null; elapsedMs: number; wallMs: number; stopCameLate?: boolean } {
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
        streams,
        cwd: this.cwd,
        viaShell: false,
      });
      return { judgement, exitCode, signal, elapsedMs: outcome.atMs, wallMs: outcome.wallMs };
    }
    const { message } = outcome;
    const stoppedByStatus = message.status === 'interrupted' || message.status === 'cancelled';
    const exitCode = stoppedByStatus ? null : message.status === 'ok' ? 0 : 1;
    const signal = stoppedByStatus ? 'SIGINT' : null;
    const where = message.line !== null ? `File "<script>", line ${message.line}` : undefined;
    // A stop asked after the script had already ended by itself (the host could not act meanwhile) stopped nothing.
    const lateNote = stop && !stoppedByStatus && stop.requestedAtMs > outcome.atMs ? this.lateStopNote(outcome.atMs, stop) : null;
    if (stop && lateNote === null) {
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
      const crash = findCrash(streams);
      judgement = {
        verdict: 'failed',
        // The traceback's innermost frame of the user's (the script's line, or a module of its own) is where to look.
        advice: crash ? tracebackAdvice(crash, this.cwd) : 'Read the traceback in stderr for the exception the script raised.',
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
    if (lateNote !== null) judgement.notes.push(lateNote);
    // Without a stop of Warden's, an interrupted or cancelled script failed like any uncaught exception.
    return { judgement, exitCode: message.status === 'ok' ? 0 : 1, signal: null, elapsedMs: outcome.atMs, wallMs: outcome.wallMs, ...(lateNote !== null ? { stopCameLate: true } : {}) };
  }

  private lateStopNote(endedAtMs: number, stop: StopRecord): string {
    const limit = this.limitMs;
    const past = limit !== null && endedAtMs > limit ? `, past its ${seconds(limit)} limit` : '';
    return `It ran ${seconds(endedAtMs)}${past} and ended by itself: the Warden host could not act (it was stopped, e.g. by SIGSTOP, or starved of CPU) until ${seconds(stop.requestedAtMs)}, when its ${stop.reason === 'deadline' ? 'limit' : 'stop'} came too late to stop anything. The time is the script's own, from the machine's monotonic clock.`;
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
      // The interpreter's cgroup holds what the script started; without one a process that drops the marker could escape.
      // Without one, the subreaper it runs under adopts every orphan of its scripts: found by parentage.
      ...(interp.cgroup ? {} : interp.shim?.adopting ? { adopter: interp.shim.pid } : { blindSpot: NO_CGROUP }),
      onSignal: (pid, sig) =>
        this.emit({ type: 'signal-sent', runId: this.id, signal: `${sig} to ${pid < 0 ? `group ${-pid}` : `pid ${pid}`}`, atMs: this.elapsedMs(), step: 'teardown' }),
    };
    if (this.options.keepDescendants) {
      // What the shim adopted from it stays when the interpreter goes.
      interp.keepAdopted = true;
      const kept = await listScope(target).catch(() => [] as Proc[]);
      if (kept.length > 0) this.notes.push(`${kept.length} process${kept.length === 1 ? ' the script started was' : 'es the script started were'} kept running as asked: ${listProcs(kept)}.`);
      return undefined;
    }
    if (this.nothingStarted()) return { killed: [], survivors: [], elapsedMs: 0, complete: true };
    let report = await teardown(target);
    if (interp.cgroup) {
      // The script is the only one in its interpreter's cgroup: everything there but the interpreter is its.
      const described = await describePids(this.options.procRoot, interp.cgroup.pids().filter((pid) => pid !== interp.pid));
      const swept = await interp.cgroup.killAll({ spare: interp.pid !== undefined ? [interp.pid] : [], onFound: (pid) => describeNow(this.options.procRoot, pid, described) }).catch(() => undefined);
      if (swept) report = withCgroupSweep(report, swept, "(in the session's cgroup)", described);
    }
    if (report.killed.length > 0) this.notes.push(`Teardown ended ${report.killed.length} process${report.killed.length === 1 ? '' : 'es'} the script left behind: ${listProcs(report.killed)}.`);
    if (report.survivors.length > 0) this.notes.push(`${report.survivors.length} process${report.survivors.length === 1 ? '' : 'es'} survived teardown: ${listProcs(report.survivors)}.`);
    else if (!report.complete && report.unseen === undefined && report.unchecked === undefined) this.notes.push('Teardown could not finish looking for leftover processes within its budget.');
    if (report.unchecked !== undefined) this.notes.push(`Teardown ${report.unchecked}.`);
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
    const stop = 'stop' in fields ? fields.stop : this.stopper.record();
    // Live snapshots show the peak so far, sampled; at the end the memory cgroup's counter, when it was read (a memory limit).
    const sampled = this.peak ?? this.session.sampler()?.latest(this.id)?.peak;
    const cgroupPeak = this.oom?.peakBytes;
    // One figure, named for what it is: the cgroup's counter when read, else the RSS sum sampled.
    const peak: PeakFigures | undefined = cgroupPeak !== undefined ? { rssBytes: cgroupPeak, processes: sampled?.processes ?? 1, source: 'cgroup' } : sampled ? { rssBytes: sampled.rssBytes, processes: sampled.processes, source: 'sampled' } : undefined;
    return assembleResult({
      id: this.id,
      kind: 'python',
      code: this.options.code,
      session: this.options.session,
      cwd: this.cwd,
      ...(this.options.owner ? { owner: this.options.owner } : {}),
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
      // As for a command: a live script with a memory limit carries it, so every view shows it beside the peak so far.
      ...(fields.state === 'ended' ? (this.oom ? { oom: this.oom } : {}) : this.options.memoryBytes !== null ? { oom: { confirmed: false, limitBytes: this.options.memoryBytes } } : {}),
      advice: fields.advice ?? null,
      notes: fields.notes ?? [...this.notes],
      stdout: fields.stdout ?? this.out.stdout.text(),
      stderr: fields.stderr ?? this.out.stderr.text(),
      stdoutTruncated: this.out.stdout.dropped,
      stderrTruncated: this.out.stderr.dropped,
      ...(fields.teardown ? { teardown: fields.teardown } : {}),
      ...(fields.core ? { core: fields.core } : {}),
      ...(peak ? { peak } : {}),
      ...(this.options.owner ? { owner: this.options.owner } : {}),
    });
  }
}
