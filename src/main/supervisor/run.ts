// One command run from spawn to result: output capture, the deadline, the end
// at the main process's exit, the bounded drain, teardown and the verdict.
//
// Where timing can interleave, and what happens (interleavings.test.ts has a
// test per row):
//
// | # | what lands when                                        | what happens                                                   |
// |---|--------------------------------------------------------|----------------------------------------------------------------|
// | 1 | the main process exits before the limit                | the deadline timer is cleared; no signal; verdict by the exit  |
// | 2 | the deadline timer fires early (Node timers can, ~1 ms)| it is re-armed; the limit is never enforced before it is due   |
// | 3 | a client stop while the deadline sequence runs         | no second sequence, reason stays 'deadline'; force: SIGKILL now|
// | 4 | a client stop after the main exit (drain, teardown)    | ignored; the verdict comes from the exit                       |
// | 5 | a client stop before a failed spawn is known           | ignored (no group yet); verdict spawn-failed                   |
// | 6 | a step fires after the exit, before it is handled      | the step reached nothing, so it is not endedBy (deadline.ts)   |
// | 7 | a descendant writes after the main exit                | read until the pipes end or the drain bound, then they close   |
// | 8 | SIGKILL sent, the main process never exits (D state)   | the backstop ends the run without an exit status, with a note  |
// | 9 | wait(timeout) races the end                            | whichever is first: the result, or the running snapshot        |
// |12 | an extension races the deadline timer                  | before it fires: re-armed at the new limit; after: refused     |
// |10 | shutdown with live runs                                | each is stopped (reason shutdown); new runs are refused        |
// |11 | a process in scope forks during teardown               | KILL passes rescan until a scan finds nothing alive            |

import { constants } from 'node:os';
import { createInterface } from 'node:readline';
import type { Duplex } from 'node:stream';
import type { RunEvent, OutputStream } from '../../shared/events';
import type { OomReport, PeakFigures, Proc, RunResult, RunState, SignalSent, StopReason, StopStep, TeardownReport } from '../../shared/result';
import { count, seconds } from './format';
import { WardenInputError, type RunOptions } from './options';
import { CappedOutput, type OutputSlice } from './output';
import { readStat } from './procfs';
import { extendedLimit, extensionNote, StopSequence, timerDelay } from './deadline';
import { checkSpawnable, checkSpawnableWrapped, describeSpawnError, effectiveArgv, isShell, spawnCommand, type SpawnFailure, type Subprocess } from './spawn';
import { listScope, teardown, type TeardownTarget } from './teardown';
import { assembleResult } from './assemble-result';
import { describeNow, describePids, listProcs, withCgroupSweep } from './teardown-report';
import { judge } from './verdict';
import { crashOf, culpritOf, inspectCore, readCoreSettings } from './core-dump';
import { coreWrap } from './core-limit';
import { findShellCrash } from '../../shared/crash/shell';
import { cgroupAttachWarm, type MemoryBackend, type RunCgroup } from './cgroup';
import type { ProcessSampler } from './proc-tree/sampler';
import type { ScopeWatch } from './scope-watch';
import { parseReaperLine, reaperArgv, type Reaper } from './reaper';

/** How long to wait for the main process to exit after SIGKILL before giving up on it. */
const KILL_BACKSTOP_MS = 5_000;

/** How long the subreaper has to exit once its pipe is closed. */
const SHIM_EXIT_MS = 2_000;

function withoutScope(env: Record<string, string | undefined>): Record<string, string | undefined> {
  const { WARDEN_SCOPE: _scope, ...rest } = env;
  void _scope;
  return rest;
}

/** A signal's name from its number, as Node reports signals. */
function signalName(n: number): string | null {
  for (const [name, value] of Object.entries(constants.signals)) if (value === n) return name;
  return null;
}

/** What a teardown without the run's own cgroup cannot see. */
export const NO_CGROUP =
  'no cgroup: a process that drops the WARDEN_SCOPE marker and leaves the process group (env -u WARDEN_SCOPE setsid ...) could escape teardown unseen';

/** How long after its start a run's process tree is first sampled. */
export const TRACK_AFTER_MS = 25;

interface Exit {
  exitCode: number | null;
  signal: string | null;
  atMs: number;
  wallMs: number;
}

export class CommandRun {
  readonly id: string;
  private state: RunState = 'running';
  private readonly startedWallMs = Date.now();
  private readonly startMono = performance.now();
  private readonly out: Record<OutputStream, CappedOutput>;
  private readonly stopper: StopSequence;
  private readonly argv: string[];
  /** What is executed: argv, or argv under the wrapper that allows core dumps (--core). */
  private readonly exec: RunOptions;
  private subprocess?: Subprocess;
  private pgid?: number;
  private exit?: Exit;
  private result?: RunResult;
  private deadlineTimer?: NodeJS.Timeout;
  private backstopTimer?: NodeJS.Timeout;
  private readonly notes: string[] = [];
  /** The limit now: the request's, moved by extensions. */
  private limitMs: number | null;
  private resolveDone!: (result: RunResult) => void;
  readonly done: Promise<RunResult>;

  /** The run's own cgroup (a memory cgroup, with or without a limit). */
  private cgroup?: RunCgroup;
  /** Whether the command was born in its cgroup (spawnInside), so every process of the run is in there. */
  private bornInCgroup = false;
  /** The cgroup's peak counter at the exit, for a run without a memory limit (with one, it is in `oom`). */
  private cgroupPeakBytes?: number;
  private oomKillsBefore: number | null = null;
  private oom?: OomReport;
  private peak?: PeakFigures;
  private trackTimer?: NodeJS.Timeout;
  /** The subreaper the command runs under, and its status pipe. */
  private shim?: { pid: number; pipe: Duplex; adopting: boolean };
  private readonly shimPending: NodeJS.Signals[] = [];
  private trackedRoot?: number;
  /** The main process as the last sample before its exit saw it: what the culprit of a crash is called. */
  private lastRoot?: { pid: number; command: string };

  constructor(
    private readonly options: RunOptions,
    private readonly emit: (event: RunEvent) => void,
    private readonly memory?: MemoryBackend,
    /** Samples the run's process tree while it lives (peak figures, tree events). */
    private readonly sampler?: ProcessSampler,
    /** Told of the run's group and cgroup, so they are ended if this process dies (the sentinel). */
    private readonly watch?: ScopeWatch,
    /** The subreaper shim, for a run that gets no cgroup (null: none on this machine). */
    private readonly reaperShim?: Reaper | null,
  ) {
    this.id = options.id;
    this.argv = effectiveArgv(options);
    this.exec = options.core ? { ...options, argv: coreWrap(this.argv), shell: false } : options;
    this.limitMs = options.limitMs;
    this.out = { stdout: new CappedOutput(options.outputCapChars), stderr: new CappedOutput(options.outputCapChars) };
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
    this.stopper = new StopSequence(
      options,
      (signal) => this.signalGroup(signal),
      () => this.elapsedMs(),
      (step, sent) => this.onStopStep(step, sent),
    );
  }

  /** Spawns the command; never throws. */
  start(): void {
    // A run without a limit is born in its cgroup where it can be (memory.ts, spawnInside): no wrapper.
    // Cold, moving this thread would hold the event loop for a grace period: the wrapper's child waits instead.
    const mayBeBornInside = this.memory?.version === 1 && this.options.memoryBytes === null && cgroupAttachWarm();
    if ((this.memory || this.reaperShim) && !mayBeBornInside) {
      // Checked first: through a wrapper a missing command would read as the wrapper's exit 127.
      const failure = checkSpawnableWrapped(this.options);
      if (failure) return this.failSpawn(failure);
    }
    if (this.memory) {
      if (this.options.memoryBytes !== null) {
        try {
          this.cgroup = this.memory.createRunCgroup(this.id, this.options.memoryBytes);
        } catch (error) {
          return this.failSpawn({ cause: `The memory limit could not be set up: ${error instanceof Error ? error.message : String(error)}`, status: 126 });
        }
        this.oomKillsBefore = this.cgroup.readOomKills();
      } else {
        // A cgroup of its own only for teardown (no process can leave one); without it the run still runs.
        try {
          this.cgroup = this.memory.createRunCgroup(this.id, null);
        } catch {
          this.cgroup = undefined;
        }
      }
    }
    // Without a cgroup, a subreaper adopts the orphans of the run's tree (reaper.ts).
    const shim = this.cgroup ? undefined : this.reaperShim;
    let subprocess: Subprocess | undefined;
    try {
      subprocess = mayBeBornInside ? this.cgroup?.spawnInside(() => spawnCommand(this.exec)) : undefined;
      this.bornInCgroup = subprocess !== undefined;
      if (subprocess === undefined && mayBeBornInside && (this.cgroup || shim)) {
        const failure = checkSpawnableWrapped(this.options);
        if (failure) return this.failSpawn(failure);
      }
      // The cgroup's wrapper joins the cgroup and then execs the command: same pid, same group.
      // The subreaper forks the command into a group of its own and says its pid on fd 3.
      subprocess ??= spawnCommand(
        this.cgroup
          ? { ...this.exec, argv: this.cgroup.wrap(this.exec.argv), shell: false }
          : shim
            ? { ...this.exec, argv: reaperArgv(shim, this.exec.argv, this.options.scope), env: withoutScope(this.options.env), shell: false, extraPipe: true }
            : this.exec,
      );
    } catch (error) {
      return this.failSpawn(checkSpawnable(this.options) ?? describeSpawnError(error as { code?: string; message?: string }, this.options));
    }
    this.subprocess = subprocess;
    if (subprocess.pid === undefined) {
      // It could not start. The cause (cwd, PATH, permissions, a #! line) is
      // looked up only now, so a command that starts pays nothing for it.
      subprocess.once('error', (error: NodeJS.ErrnoException) =>
        this.failSpawn(checkSpawnable(this.options) ?? describeSpawnError(error, this.options)),
      );
      return;
    }
    this.pgid = subprocess.pid;
    // Under the subreaper the run's group is the command's, told when it says its pid (listenToShim).
    if (!shim) this.watch?.group(this.pgid, true);
    if (this.cgroup) this.watch?.cgroup(this.cgroup.path, true);
    // Errors after a successful spawn (a destroyed pipe) are reflected in the result, not thrown.
    subprocess.on('error', () => undefined);
    const notBeforeTicks = this.options.procRoot !== null ? readStat(this.options.procRoot, subprocess.pid)?.startTicks : undefined;
    this.capture('stdout', subprocess.stdout);
    this.capture('stderr', subprocess.stderr);
    if (shim) this.listenToShim(subprocess, notBeforeTicks);
    // Under the subreaper this is the shim's exit: only when it died before saying the command's (SIGKILL).
    subprocess.on('exit', (code, signal) => void this.onExit(code, signal, notBeforeTicks));
    if (this.sampler) {
      // Tracked a moment after the start: a command that ends at once (most of
      // an agent's) costs no sample, and the spawn stays as cheap as a plain one.
      const sampler = this.sampler;
      this.trackTimer = setTimeout(() => {
        // Under the subreaper the tree is the command's: the shim is Warden's, not the run's.
        const rootPid = this.shim && this.pgid !== this.shim.pid ? this.pgid! : subprocess.pid!;
        if (this.exit === undefined) sampler.track(this.id, { rootPid, scope: this.options.scope, ...(notBeforeTicks !== undefined ? { notBeforeTicks } : {}) });
        this.trackedRoot = rootPid;
      }, TRACK_AFTER_MS);
    }
    if (this.limitMs !== null) {
      // The run's clock started before the spawn; the limit counts from there too.
      this.armDeadline(Math.max(0, this.limitMs - this.elapsedMs()));
    }
    this.emit({ type: 'started', runId: this.id, snapshot: this.snapshot() });
  }

  /** The subreaper's status pipe: the command's pid (its group is the run's), then its exit. */
  private listenToShim(subprocess: Subprocess, notBeforeTicks: number | undefined): void {
    const pipe = subprocess.stdio[3] as Duplex | null | undefined;
    if (!pipe) return;
    this.shim = { pid: subprocess.pid!, pipe, adopting: true };
    pipe.on('error', () => undefined);
    const lines = createInterface({ input: pipe });
    lines.on('line', (line) => {
      const message = parseReaperLine(line, signalName);
      if (message?.type === 'pid' && this.exit === undefined) {
        this.pgid = message.pid;
        this.watch?.group(message.pid, true);
        // A stop that came before the command had its group reaches it now.
        for (const signal of this.shimPending.splice(0)) this.signalGroup(signal);
        // Tracked before the command said its pid: its tree, not the shim's.
        if (this.trackedRoot === this.shim?.pid) {
          this.sampler?.track(this.id, { rootPid: message.pid, scope: this.options.scope, ...(notBeforeTicks !== undefined ? { notBeforeTicks } : {}) });
          this.trackedRoot = message.pid;
        }
      } else if (message?.type === 'exit') {
        void this.onExit(message.exitCode, message.signal, notBeforeTicks);
      } else if (message?.type === 'error' && this.shim) {
        // It could not become a subreaper after all: orphans go to init, as without it.
        this.shim.adopting = false;
      }
    });
  }

  /** After teardown: the shim reaps what it adopted and exits when its pipe closes; SIGKILL if it does not. */
  private releaseShim(): void {
    const shim = this.shim;
    if (!shim) return;
    // Kept descendants stay; otherwise the shim ends what it still parents as it goes.
    shim.pipe.end(this.options.keepDescendants ? 'keep\n' : undefined);
    const timer = setTimeout(() => {
      try {
        process.kill(shim.pid, 'SIGKILL');
      } catch {
        // gone, as it should be
      }
    }, SHIM_EXIT_MS);
    timer.unref();
    this.subprocess?.once('exit', () => clearTimeout(timer));
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
      else this.stopper.begin('deadline');
    }, timerDelay(delayMs));
  }

  /**
   * Moves the deadline `byMs` later (no limit: the elapsed time plus `byMs`);
   * refused once the run has ended or its stop sequence has begun.
   */
  extend(byMs: number): RunResult {
    if (this.exit !== undefined || this.result) throw new WardenInputError(`Run ${this.id} has ended; its limit can no longer be extended.`);
    if (this.pgid === undefined) throw new WardenInputError(`Run ${this.id} has not started; its limit cannot be extended.`);
    if (this.stopper.started) throw new WardenInputError(`Run ${this.id} is already being stopped; its limit can no longer be extended.`);
    const atMs = this.elapsedMs();
    const limitMs = extendedLimit(this.limitMs, atMs, byMs);
    this.limitMs = limitMs;
    clearTimeout(this.deadlineTimer);
    this.armDeadline(Math.max(0, limitMs - atMs));
    this.notes.push(extensionNote(byMs, atMs, limitMs));
    this.emit({ type: 'limit-extended', runId: this.id, limitMs, byMs, atMs: Math.round(atMs) });
    return this.snapshot();
  }

  /** A line for the result's notes, while the run lives. */
  addNote(note: string): void {
    if (!this.result) this.notes.push(note);
  }

  /** Runs the stop sequence from its first step; `force` goes straight to SIGKILL. */
  stop(reason: StopReason, options: { force?: boolean; note?: string } = {}): void {
    if (this.exit !== undefined || this.pgid === undefined) return;
    if (options.note) this.notes.push(options.note);
    this.stopper.begin(reason, options);
  }

  get ended(): boolean {
    return this.result !== undefined;
  }

  snapshot(): RunResult {
    if (this.result) return this.result;
    return this.build({
      state: this.state,
      elapsedMs: this.exit?.atMs ?? this.elapsedMs(),
      exitCode: this.exit?.exitCode ?? null,
      signal: this.exit?.signal ?? null,
    });
  }

  private elapsedMs(): number {
    return performance.now() - this.startMono;
  }

  /** Characters of a stream's kept output from `from` on (see CappedOutput.slice), and the stream's length now. */
  outputFrom(stream: OutputStream, from: number): OutputSlice & { total: number } {
    return { ...this.out[stream].slice(from), total: this.out[stream].totalChars };
  }

  private capture(stream: OutputStream, readable: NodeJS.ReadableStream | null): void {
    if (!readable) return;
    const sink = this.out[stream];
    readable.on('data', (chunk: Buffer) => {
      const text = sink.push(chunk);
      if (text.length > 0) this.emit({ type: 'output', runId: this.id, stream, text, offset: sink.totalChars - text.length, atMs: Math.round(this.elapsedMs()) });
    });
    readable.on('error', () => undefined);
  }

  private signalGroup(signal: NodeJS.Signals): boolean {
    if (this.pgid === undefined) return false;
    if (this.shim && this.pgid === this.shim.pid) {
      // The command has not said its group yet; the shim's own must never get the run's signals.
      this.shimPending.push(signal);
      return true;
    }
    try {
      process.kill(-this.pgid, signal);
      return true;
    } catch {
      return false;
    }
  }

  private onStopStep(step: StopStep, sent: SignalSent[]): void {
    this.state = 'stopping';
    // SIGKILL is due at the grace after the stop began (now, when this is the kill step).
    const began = this.stopper.record()?.requestedAtMs ?? sent[0]?.atMs ?? 0;
    const killAtMs = Math.round(step === 'kill' ? (sent[0]?.atMs ?? began) : began + this.options.graceMs);
    for (const s of sent) this.emit({ type: 'signal-sent', runId: this.id, signal: s.signal, atMs: s.atMs, step, killAtMs });
    if (step === 'kill' && this.exit === undefined) {
      // A process stuck in the kernel may not exit even on SIGKILL: the run still ends.
      this.backstopTimer = setTimeout(() => {
        this.notes.push(`The main process did not exit ${seconds(KILL_BACKSTOP_MS)} after SIGKILL (stuck in the kernel?); the run was ended without its exit status.`);
        void this.onExit(null, null, undefined);
      }, KILL_BACKSTOP_MS);
    }
  }

  private async onExit(code: number | null, signal: string | null, notBeforeTicks: number | undefined): Promise<void> {
    if (this.exit !== undefined) return;
    this.exit = { exitCode: code, signal, atMs: this.elapsedMs(), wallMs: Date.now() };
    // Another run often starts right after this one: it may then be born in its cgroup.
    this.cgroup?.warmAttach();
    clearTimeout(this.deadlineTimer);
    clearTimeout(this.backstopTimer);
    this.stopper.cancel();
    await this.drain();
    // The tree is sampled until the pipes are closed: descendants that held them count.
    clearTimeout(this.trackTimer);
    const root = this.sampler?.latest(this.id)?.roots[0];
    if (root && root.pid === this.trackedRoot) this.lastRoot = { pid: root.pid, command: root.command };
    this.peak = this.sampler?.untrack(this.id);
    let spawnFailure: string | undefined;
    if (this.cgroup) {
      spawnFailure = this.cgroup.joinFailure(code, this.out.stderr.text());
      if (spawnFailure !== undefined) this.exit.exitCode = 126;
      // Read before teardown and removal, which end the processes and delete the counters.
      else if (this.options.memoryBytes !== null) this.oom = await this.cgroup.observeOom(this.oomKillsBefore, { exitCode: code, signal });
      // Without a limit its cgroup still counts every page: a spike between two samples is in the peak.
      else this.cgroupPeakBytes = this.cgroup.readPeakBytes();
    }
    let report: TeardownReport | undefined;
    const target: TeardownTarget = {
      scope: this.options.scope,
      pgid: this.pgid!,
      procRoot: this.options.procRoot,
      notBeforeTicks,
      budgetMs: this.options.teardownBudgetMs,
      passGapMs: this.options.teardownPassGapMs,
      // With the subreaper, what it adopted is found by parentage; it is never signalled itself.
      ...(this.shim ? { adopter: this.shim.pid, sparePids: [this.shim.pid] } : {}),
      ...(this.cgroup || this.shim?.adopting ? {} : { blindSpot: NO_CGROUP }),
      ...(this.bornInCgroup ? { wholeRunIn: this.cgroup! } : {}),
      onSignal: (pid, sig) =>
        this.emit({ type: 'signal-sent', runId: this.id, signal: `${sig} to ${pid < 0 ? `group ${-pid}` : `pid ${pid}`}`, atMs: this.elapsedMs(), step: 'teardown' }),
    };
    if (this.options.keepDescendants) {
      const kept = await listScope(target).catch(() => [] as Proc[]);
      if (kept.length > 0) this.notes.push(`${kept.length} descendant process${kept.length === 1 ? ' was' : 'es were'} kept running as asked: ${listProcs(kept)}.`);
    } else {
      report = await teardown(target);
      if (report.killed.length > 0) this.notes.push(`Teardown ended ${report.killed.length} process${report.killed.length === 1 ? '' : 'es'} left behind: ${listProcs(report.killed)}.`);
      if (report.survivors.length > 0) this.notes.push(`${report.survivors.length} process${report.survivors.length === 1 ? '' : 'es'} survived teardown: ${listProcs(report.survivors)}.`);
      else if (!report.complete && report.unseen === undefined && report.unchecked === undefined) this.notes.push('Teardown could not finish looking for leftover processes within its budget.');
      if (report.unchecked !== undefined) this.notes.push(`Teardown ${report.unchecked}.`);
    }
    if (this.cgroup) report = await this.closeCgroup(report);
    // Nothing of it is left to end if this process dies now, or what is left was kept as asked.
    if (this.options.keepDescendants) this.watch?.kept(this.options.scope);
    this.watch?.group(this.pgid!, false);
    if (this.cgroup) this.watch?.cgroup(this.cgroup.path, false);
    this.releaseShim();
    this.finish(report, spawnFailure);
  }

  /**
   * The run's peak: the memory cgroup's own counter where the run has one
   * (it sees every page, such as the spike an out-of-memory kill ends, and
   * the kernel caps it at the limit), else the sampler's highest RSS sum;
   * the process count is the sampler's. Live runs show the peak so far.
   */
  private peakFigures(): PeakFigures | undefined {
    const sampled = this.peak ?? this.sampler?.latest(this.id)?.peak;
    // One figure, named for what it is: the cgroup's own counter when there is one (never mixed with the RSS sum).
    const cgroupPeak = this.memoryPeakBytes();
    if (cgroupPeak !== undefined) return { rssBytes: cgroupPeak, processes: sampled?.processes ?? 1, source: 'cgroup' };
    return sampled ? { rssBytes: sampled.rssBytes, processes: sampled.processes, source: 'sampled' } : undefined;
  }

  /** The run's memory cgroup's peak counter: read now while it runs (one small file), as read at its end after. */
  memoryPeakBytes(): number | undefined {
    return this.oom?.peakBytes ?? this.cgroupPeakBytes ?? (this.exit === undefined ? this.cgroup?.readPeakBytes() : undefined);
  }

  /** Nothing in the run's cgroup survives it (unless asked to keep descendants); then the cgroup goes. */
  private async closeCgroup(report: TeardownReport | undefined): Promise<TeardownReport | undefined> {
    const cgroup = this.cgroup!;
    // An empty cgroup stays empty (nothing of the run is left to fork into it): nothing to describe or sweep.
    const left = this.options.keepDescendants ? [] : cgroup.pids();
    if (left.length > 0) {
      const described = await describePids(this.options.procRoot, left);
      const swept = await cgroup.killAll({ onFound: (pid) => describeNow(this.options.procRoot, pid, described) }).catch(() => undefined);
      if (swept && report) report = withCgroupSweep(report, swept, "(in the run's cgroup)", described);
    }
    if (!(await cgroup.remove())) {
      this.notes.push(`Its cgroup ${cgroup.path} still holds processes; it is removed once they are gone.`);
    }
    return report;
  }

  /** Reads what descendants still write, for at most the drain bound, then closes the pipes. */
  private async drain(): Promise<void> {
    const streams = [this.subprocess?.stdout, this.subprocess?.stderr].filter((s): s is NonNullable<typeof s> => !!s);
    const open = streams.filter((s) => !s.readableEnded && !s.destroyed);
    if (open.length === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const ended = Promise.all(open.map((s) => new Promise<void>((resolve) => { s.once('end', resolve); s.once('close', resolve); })));
    const bound = new Promise<'bound'>((resolve) => (timer = setTimeout(() => resolve('bound'), this.options.drainMs)));
    const outcome = await Promise.race([ended, bound]);
    clearTimeout(timer);
    if (outcome === 'bound') {
      this.notes.push(`A descendant still held the output open ${seconds(this.options.drainMs)} after the main process exited; the pipes were closed.`);
      for (const s of open) s.destroy();
    }
  }

  private failSpawn(failure: SpawnFailure): void {
    this.exit = { exitCode: failure.status, signal: null, atMs: this.elapsedMs(), wallMs: Date.now() };
    void this.cgroup?.remove();
    this.notes.push(`It never started; exit status ${failure.status} is what a shell reports for this.`);
    this.emit({ type: 'started', runId: this.id, snapshot: this.snapshot() });
    this.finish(undefined, failure.cause);
  }

  private finish(report: TeardownReport | undefined, spawnFailure?: string): void {
    const exit = this.exit!;
    for (const stream of ['stdout', 'stderr'] as const) {
      const text = this.out[stream].end();
      if (text.length > 0) this.emit({ type: 'output', runId: this.id, stream, text, offset: this.out[stream].totalChars - text.length, atMs: Math.round(this.elapsedMs()) });
    }
    const stdout = this.out.stdout.text();
    const stderr = this.out.stderr.text();
    const stop = this.stopper.record();
    const judgement = judge({
      kind: 'command',
      spawnFailure,
      exitCode: exit.exitCode,
      signal: exit.signal,
      elapsedMs: exit.atMs,
      limitMs: this.limitMs,
      stop,
      ...(this.oom ? { oom: this.oom } : {}),
      outputKept: `${stdout}\n${stderr}`,
      streams: { stdout, stderr },
      cwd: this.options.cwd,
      viaShell: isShell(this.argv),
    });
    // Until the subreaper says the command's pid, the group is its own: no pid to name.
    const mainPid = this.shim && this.pgid === this.shim.pid ? undefined : this.pgid;
    const shellCrash = judgement.verdict === 'failed' ? findShellCrash(stderr) : null;
    const culprit = culpritOf(judgement.verdict, exit.signal, mainPid, this.lastRoot, this.argv, shellCrash);
    const crash = crashOf(judgement.verdict, exit.exitCode, exit.signal, mainPid, shellCrash);
    const read = crash && this.options.procRoot !== null ? readCoreSettings(this.options.procRoot) : null;
    // --core started it with its soft limit raised to the hard one: that is the limit it ran under.
    const coreSettings = read && this.options.core ? { ...read, limitBytes: read.hardLimitBytes } : read;
    const core = crash && coreSettings ? inspectCore(coreSettings, { ...crash, cwd: this.options.cwd, startedWallMs: this.startedWallMs }) : undefined;
    // No core for want of a limit: how to get one, through the host (a ulimit in the caller's shell does not reach the host's runs).
    if (core?.dumped === false && core.limitBytes === 0) this.notes.push(`No core dump was written: its core file size limit was 0 when it started; run it again with warden run --core to get one.`);
    for (const stream of ['stdout', 'stderr'] as const) {
      const dropped = this.out[stream].dropped;
      if (dropped > 0) this.notes.push(`${stream} was ${count(this.out[stream].totalChars)} characters, over the cap of ${count(this.options.outputCapChars)}: the first and last ${count(Math.floor(this.options.outputCapChars / 2))} are kept and the ${count(dropped)} in between were dropped.`);
    }
    this.state = 'ended';
    this.result = this.build({
      state: 'ended',
      elapsedMs: exit.atMs,
      exitCode: exit.exitCode,
      signal: exit.signal,
      verdict: judgement.verdict,
      advice: judgement.advice,
      notes: [...judgement.notes, ...this.notes],
      endedAt: new Date(exit.wallMs).toISOString(),
      stop,
      teardown: report,
      ...(core ? { core } : {}),
      ...(culprit ? { culprit } : {}),
      stdout,
      stderr,
    });
    this.emit({ type: 'ended', runId: this.id, result: this.result });
    this.resolveDone(this.result);
  }

  private build(fields: Partial<RunResult> & Pick<RunResult, 'state' | 'elapsedMs' | 'exitCode' | 'signal'>): RunResult {
    const stop = fields.stop ?? this.stopper.record();
    const peak = this.peakFigures();
    return assembleResult({
      id: this.id,
      kind: 'command',
      argv: this.argv,
      cwd: this.options.cwd,
      ...(this.options.owner ? { owner: this.options.owner } : {}),
      state: fields.state,
      ...(fields.verdict !== undefined ? { verdict: fields.verdict } : {}),
      exitCode: fields.exitCode,
      signal: fields.signal,
      startedWallMs: this.startedWallMs,
      ...(fields.endedAt !== undefined ? { endedAt: fields.endedAt } : {}),
      elapsedMs: fields.elapsedMs,
      limitMs: this.limitMs,
      ...(stop ? { stop } : {}),
      // A live run in its memory cgroup carries its limit, so every view shows it beside the peak so far.
      ...(fields.state === 'ended' ? (this.oom ? { oom: this.oom } : {}) : this.cgroup && this.options.memoryBytes !== null ? { oom: { confirmed: false, limitBytes: this.options.memoryBytes } } : {}),
      advice: fields.advice ?? null,
      notes: fields.notes ?? [...this.notes],
      stdout: fields.stdout ?? this.out.stdout.text(),
      stderr: fields.stderr ?? this.out.stderr.text(),
      stdoutTruncated: this.out.stdout.dropped,
      stderrTruncated: this.out.stderr.dropped,
      ...(fields.teardown ? { teardown: fields.teardown } : {}),
      ...(fields.core ? { core: fields.core } : {}),
      ...(fields.culprit ? { culprit: fields.culprit } : {}),
      ...(peak ? { peak } : {}),
    });
  }
}
