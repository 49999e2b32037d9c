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
// |13 | a snapshot after the main exit, before the end         | still running (or stopping), no exit code or signal yet        |
// |14 | a service's main process exits 0, others live on       | not ready yet, or they listen: the run goes on (mainExit) until|
// |   |                                                        | they end or it is stopped; else it ends as any run             |
// |15 | the ready timeout, the lease or the owner during #14   | the stop sequence reaches each of its processes by pid         |
// |16 | readiness passes as the main process exits             | ready is told first (same turn as the line); the end follows   |

import { constants } from 'node:os';
import { createInterface } from 'node:readline';
import type { Duplex } from 'node:stream';
import type { RunEvent, OutputStream } from '../../shared/events';
import type { ListeningPort, MainExit, OomReport, PeakFigures, Proc, ReadyReport, RunResult, RunState, SignalSent, StopReason, StopStep, TeardownReport } from '../../shared/result';
import { count, seconds } from '../../shared/format';
import { WardenInputError, type RunOptions } from './options';
import { CappedOutput, type OutputSlice } from './output';
import { readStat, readStatChecked, UNCHECKED } from './procfs';
import { stallJustBefore, watchStalls } from './stalls';
import { extendedLimit, extensionNote, StopSequence, timerDelay } from './deadline';
import { hostProcess, preludeFor } from './process-limits';
import { checkSpawnable, checkSpawnableWrapped, describeSpawnError, effectiveArgv, isShell, spawnCommand, type SpawnFailure, type Subprocess } from './spawn';
import { listScope, teardown, type TeardownTarget } from './teardown';
import { assembleResult } from './assemble-result';
import { describeNow, describePids, listProcs, withCgroupSweep } from './teardown-report';
import { judge } from './verdict';
import { crashOf, culpritOf, inspectCore, readCoreSettings } from './core-dump';
import { coreWrap } from './core-limit';
import { findShellCrash } from '../../shared/crash/shell';
import { cgroupAttachWarm, type MemoryBackend, type RunCgroup } from './cgroup';
import type { CgroupPool } from './cgroup-pool';
import type { ProcessSampler } from './proc-tree/sampler';
import type { ScopeWatch } from './scope-watch';
import { parseReaperLine, reaperArgv, type Reaper } from './reaper';
import { LineFeed, MAX_LINE_CHARS } from './lines';
import { ReadyWatch } from './ready/readiness';
import { failingProbes } from '../../shared/ready-text';
import { Lease, leaseEndNote, renewalNote } from './lease';
import { StdinPipe } from './stdin-pipe';
import { addressInUse } from './ports/in-use';
import { descendantsOf } from './ports/holder';

/** What a run asks of the engine about its sockets (supervisor.ts keeps one finder for every run). */
export interface RunPorts {
  /** The run's listening ports now, freshly read, among the processes given; null where they cannot be read. */
  find(runId: string, pids: readonly number[]): ListeningPort[] | null;
  /** One sentence on who holds `port` now (a process, a Warden run), for a run that could not bind it. */
  holder(port: number, runId: string): Promise<string>;
}

/** How often a service whose main process exited looks whether the rest of it still lives. */
export const LIVED_ON_POLL_MS = 250;

/** How long to wait for the main process to exit after SIGKILL before giving up on it. */
const KILL_BACKSTOP_MS = 5_000;

/** How long the subreaper has to exit once its pipe is closed. */
const SHIM_EXIT_MS = 2_000;
/** How long a deadline that found the main process already exited waits for its exit to be read before stopping after all. */
const LATE_EXIT_WAIT_MS = 200;

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
  /** When the deadline found the main process already exited (the host could not act at the limit): on the run's clock. */
  private lateLimitAtMs?: number;
  private readonly argv: string[];
  /** What is executed: argv, or argv under the wrapper that allows core dumps (--core). */
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
  private notBeforeTicks?: number;
  /** The output as lines, for log probes and waits until a line. */
  readonly lines: LineFeed;
  private readyWatch?: ReadyWatch;
  /** The report once ready; false once the ready timeout passed first. */
  private readyReport?: ReadyReport | false;
  private lease?: Lease;
  private stdin?: StdinPipe;
  /** Its listening ports as last found (setPorts). */
  private ports: ListeningPort[] = [];
  /** A service whose main process exited while the rest of it lived on: when and how. */
  private mainExit?: MainExit;
  /** The main process's exit was seen (the look at what lives on may still be under way). */
  private mainExitSeen = false;
  /** While it lives on: its processes as last seen (the stop sequence signals each), and the poll. */
  private livedOnPids: number[] = [];
  private livedOnTimer?: NodeJS.Timeout;

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
    /** Its listening sockets (ports, the port probe, who holds a port it could not bind). */
    private readonly portLookup?: RunPorts,
    /** Cgroups made ahead with a helper inside (cgroup-pool.ts): a run without a limit takes one where it can. */
    private readonly pool?: CgroupPool,
  ) {
    this.id = options.id;
    this.argv = effectiveArgv(options);
    this.limitMs = options.limitMs;
    this.out = { stdout: new CappedOutput(options.outputCapChars), stderr: new CappedOutput(options.outputCapChars) };
    this.lines = new LineFeed((stream) => this.out[stream].slice(Math.max(0, this.out[stream].totalChars - MAX_LINE_CHARS)).text);
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
    watchStalls();
    // The client's umask and limits, where they differ from the host's: words before the command (process-limits.ts).
    const prelude = preludeFor(this.options, hostProcess());
    // Then --core's wrapper, which raises the core limit to the hard one (core-limit.ts), then the command.
    const argv = [...prelude, ...(this.options.core ? coreWrap(this.argv) : this.argv)];
    const direct = argv.length === this.argv.length ? this.options : { ...this.options, argv, shell: false };
    // A run without a limit is born in its cgroup where it can be (memory.ts, spawnInside): no wrapper.
    // Cold, moving this thread would hold the event loop for a grace period: the wrapper's child waits instead.
    const mayBeBornInside = this.memory?.version === 1 && this.options.memoryBytes === null && cgroupAttachWarm();
    // A helper of the pool is a wrapper too: it is checked for.
    const pooled = this.pool !== undefined && this.options.memoryBytes === null;
    if ((this.memory || this.reaperShim || direct !== this.options) && (!mayBeBornInside || pooled)) {
      // Checked first: through a wrapper a missing command would read as the wrapper's exit 127.
      const failure = checkSpawnableWrapped(this.options);
      if (failure) return this.failSpawn(failure);
    }
    let subprocess: Subprocess | undefined;
    if (pooled) {
      const taken = this.pool!.take(this.id, direct);
      if (taken) {
        this.cgroup = taken.cgroup;
        this.bornInCgroup = true;
        subprocess = taken.subprocess;
      }
    }
    if (this.memory && subprocess === undefined) {
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
    try {
      subprocess ??= mayBeBornInside ? this.cgroup?.spawnInside(() => spawnCommand(direct)) : undefined;
      this.bornInCgroup = subprocess !== undefined;
      if (subprocess === undefined && mayBeBornInside && (this.cgroup || shim || direct !== this.options)) {
        const failure = checkSpawnableWrapped(this.options);
        if (failure) return this.failSpawn(failure);
      }
      // The cgroup's wrapper joins the cgroup and then execs the command: same pid, same group.
      // The subreaper forks the command into a group of its own and says its pid on fd 3.
      subprocess ??= spawnCommand(
        this.cgroup
          ? { ...this.options, argv: this.cgroup.wrap(argv), shell: false }
          : shim
            ? { ...this.options, argv: reaperArgv(shim, argv, this.options.scope), env: withoutScope(this.options.env), shell: false, extraPipe: true }
            : direct,
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
    this.notBeforeTicks = notBeforeTicks;
    if (this.options.stdinPipe) this.stdin = new StdinPipe(this.id, subprocess.stdin);
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
    if (this.options.leaseMs !== null) {
      const leaseMs = this.options.leaseMs;
      this.lease = new Lease(leaseMs, () => this.elapsedMs(), () => this.stop('lease', { note: leaseEndNote(leaseMs, this.elapsedMs()) }));
    }
    if (this.options.ready) this.watchReadiness(this.options.ready);
    this.emit({ type: 'started', runId: this.id, snapshot: this.snapshot() });
  }

  /** Starts its readiness probes; ready, or not ready by the timeout, is told once (an event, and the result's ready). */
  private watchReadiness(ready: NonNullable<RunOptions['ready']>): void {
    this.readyWatch = new ReadyWatch(ready, {
      cwd: this.options.cwd,
      env: this.options.env,
      lines: this.lines,
      portsOf: () => this.portLookup?.find(this.id, this.processPids()) ?? null,
      nowMs: () => this.elapsedMs(),
      onReady: (report) => {
        this.readyReport = report;
        if (report.ports.some((p) => p.pid !== undefined)) this.ports = report.ports.filter((p) => p.pid !== undefined);
        this.emit({ type: 'ready', runId: this.id, ready: report, atMs: report.afterMs });
      },
      onNotReady: (probes) => {
        this.readyReport = false;
        const atMs = this.elapsedMs();
        this.notes.push(`It was not ready after ${seconds(ready.timeoutMs)}: ${failingProbes(probes)}.${ready.onNotReady === 'keep' ? ' It was kept running, as asked (on-not-ready keep).' : ''}`);
        this.emit({ type: 'ready', runId: this.id, ready: false, atMs: Math.round(atMs) });
        if (ready.onNotReady === 'stop') this.stop('not-ready');
      },
    });
    this.readyWatch.start();
  }

  /** 'none' without probes; else waiting, ready, or not-ready. */
  get readiness(): 'none' | 'waiting' | 'ready' | 'not-ready' {
    if (this.readyReport !== undefined) return this.readyReport === false ? 'not-ready' : 'ready';
    return this.options.ready === null ? 'none' : 'waiting';
  }

  /** Whether it was started with readiness probes (a service). */
  get service(): boolean {
    return this.options.ready !== null;
  }

  /** Whether it was started with readiness probes and stops when they do not pass. */
  get stopsWhenNotReady(): boolean {
    return this.options.ready?.onNotReady === 'stop';
  }

  /**
   * The run's processes now, for its ports: its cgroup's (no process leaves
   * one); else the sampler's last tree (descendants and marked escapees) with
   * the main process's descendants read from the kernel's child lists, so a
   * child that started since the last sample counts at once.
   */
  processPids(): number[] {
    if (this.result || this.pgid === undefined) return [];
    if (this.cgroup) {
      try {
        return this.cgroup.pids();
      } catch {
        // read below
      }
    }
    const pids = new Set<number>(this.livedOnPids);
    const main = this.shim && this.pgid !== this.shim.pid ? this.pgid : this.subprocess?.pid;
    if (main !== undefined && this.exit === undefined && this.mainExit === undefined) pids.add(main);
    const latest = this.sampler?.latest(this.id);
    if (latest) collectPids(latest.roots, pids);
    if (main !== undefined && this.options.procRoot !== null && this.mainExit === undefined) for (const pid of descendantsOf(this.options.procRoot, main, 256)) pids.add(pid);
    if (this.shim) pids.delete(this.shim.pid);
    return [...pids];
  }

  /**
   * The run's processes as the sampler last saw them (no file read: the
   * every-second look at every live run's ports uses these); before its
   * first sample, processPids().
   */
  knownPids(): number[] {
    if (this.result || this.pgid === undefined) return [];
    const latest = this.sampler?.latest(this.id);
    if (!latest) return this.processPids();
    const pids = new Set<number>(this.livedOnPids);
    collectPids(latest.roots, pids);
    if (this.shim) pids.delete(this.shim.pid);
    return [...pids];
  }

  /** Its listening ports as last found. */
  get listeningPorts(): ListeningPort[] {
    return this.result ? [] : this.ports;
  }

  /** Its listening ports as found now; returns whether they changed. Not after it ended. */
  setPorts(ports: ListeningPort[]): boolean {
    if (this.result) return false;
    const same = ports.length === this.ports.length && ports.every((p, i) => p.port === this.ports[i]!.port && p.address === this.ports[i]!.address && p.http === this.ports[i]!.http && p.pid === this.ports[i]!.pid);
    if (same) return false;
    this.ports = ports;
    this.emit({ type: 'ports', runId: this.id, ports, atMs: Math.round(this.elapsedMs()) });
    return true;
  }

  /** Writes to its stdin pipe (and ends it when `eof`); refused (one line) without one, or once closed. */
  send(text: string, eof: boolean): RunResult {
    if (this.result || this.exit !== undefined) throw new WardenInputError(`Run ${this.id} has ended; it takes no more input.`);
    if (!this.stdin) throw new WardenInputError(`Run ${this.id} has no stdin pipe: its stdin is ${this.options.stdin !== undefined ? 'the text given when it started' : '/dev/null'}. Start it with --stdin-pipe (MCP stdinPipe: true) to send it input.`);
    this.stdin.send(text, eof);
    const atMs = Math.round(this.elapsedMs());
    this.emit({ type: 'input', runId: this.id, text: text.length > INPUT_EVENT_CHARS ? text.slice(0, INPUT_EVENT_CHARS) : text, chars: text.length, eof, atMs });
    return this.snapshot();
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
      else if (this.lateLimitAtMs === undefined && this.mainEnded()) {
        // It ended by itself while this host could not act (stopped, starved): its exit is on its way, and
        // a stop now would stop nothing. Should the exit not come, the stop follows after all.
        this.lateLimitAtMs = this.elapsedMs();
        this.armDeadline(LATE_EXIT_WAIT_MS);
      } else this.stopper.begin('deadline');
    }, timerDelay(delayMs));
  }

  /** Whether the main process has already exited (a zombie not yet reaped, or reaped by the subreaper): never guessed without /proc. */
  private mainEnded(): boolean {
    if (this.options.procRoot === null || this.pgid === undefined || (this.shim && this.pgid === this.shim.pid)) return false;
    const stat = readStatChecked(this.options.procRoot, this.pgid);
    return stat !== UNCHECKED && (stat === undefined || stat.state === 'Z');
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
    if (this.lease) {
      // A service's extend renews its lease; a limit it also has moves as well.
      const endsAtMs = this.lease.renew(byMs, atMs);
      this.notes.push(renewalNote(byMs, atMs, endsAtMs));
      this.emit({ type: 'lease-renewed', runId: this.id, endsAtMs: Math.round(endsAtMs), byMs, atMs: Math.round(atMs) });
      if (this.limitMs === null) return this.snapshot();
    }
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
    // Between the main exit and the end (drain, teardown) the run is not over: its exit status is
    // the end's to give, with the verdict, so no snapshot reads "running" with an exit code (row 13).
    return this.build({ state: this.state, elapsedMs: this.exit?.atMs ?? this.elapsedMs(), exitCode: null, signal: null });
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
      if (text.length > 0) {
        this.emit({ type: 'output', runId: this.id, stream, text, offset: sink.totalChars - text.length, atMs: Math.round(this.elapsedMs()) });
        // After the output's event: a ready event follows the output that made it ready.
        this.lines.push(stream, text);
      }
    });
    readable.on('error', () => undefined);
  }

  private signalGroup(signal: NodeJS.Signals): boolean {
    if (this.pgid === undefined) return false;
    // A service living on after its main process: its processes left the group (setsid), so each is signalled.
    if (this.mainExit !== undefined && this.exit === undefined) return this.signalLivedOn(signal);
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

  /** What a stall of this host (stopped, starved) did to the record of the end: said, never hidden (stalls.ts). */
  private noteStall(): void {
    const stall = stallJustBefore(performance.now());
    if (!stall) return;
    const from = Math.max(0, stall.fromMs - this.startMono);
    const to = stall.toMs - this.startMono;
    const late = this.lateLimitAtMs !== undefined && !this.stopper.started ? ` It ran past its ${seconds(this.limitMs!)} limit and ended by itself before Warden could stop it.` : '';
    this.notes.push(`The Warden host could not run from ${seconds(from)} to ${seconds(to)} (stopped, e.g. by SIGSTOP, or starved of CPU) and saw the command's end only after: it ended in that span, so ${seconds(this.exit!.atMs)} is when Warden saw it, at most what it took.${late}`);
  }

  private async onExit(code: number | null, signal: string | null, notBeforeTicks: number | undefined): Promise<void> {
    if (this.exit !== undefined || this.mainExitSeen) {
      // The backstop after SIGKILL ends a service living on; anything else said of its main process is old news.
      if (this.mainExit !== undefined && code === null && signal === null && this.livedOnPids.length > 0) return this.endLivedOn('kill-backstop');
      return;
    }
    this.mainExitSeen = true;
    const atMs = this.elapsedMs();
    if (this.options.ready !== null && code === 0 && signal === null && !this.stopper.started) {
      // A service whose main process forked and exited 0 may live on in its other processes (a daemon).
      const left = await this.processesLeft();
      const ports = left.length > 0 ? (this.portLookup?.find(this.id, left) ?? []) : [];
      if (left.length > 0 && (this.readyWatch?.state === 'waiting' || ports.length > 0) && this.exit === undefined && !this.stopper.started) {
        this.mainExit = { exitCode: code, signal, atMs: Math.round(atMs) };
        this.liveOn(left, ports);
        return;
      }
    }
    return this.endAfterExit(code, signal, notBeforeTicks, atMs);
  }

  /** Every process of the run still alive (the subreaper's own aside): its cgroup's, else the marker's and the group's. */
  private async processesLeft(): Promise<number[]> {
    if (this.cgroup) {
      try {
        return this.cgroup.pids();
      } catch {
        return [];
      }
    }
    const found = await listScope(this.teardownTarget(this.notBeforeTicks)).catch(() => [] as Proc[]);
    return found.map((p) => p.pid).filter((pid) => pid !== this.shim?.pid);
  }

  /** The main process exited 0 and the rest of the service lives on: tracked until it ends or is stopped. */
  private liveOn(pids: number[], ports: ListeningPort[]): void {
    const mainExit = this.mainExit!;
    this.livedOnPids = pids;
    if (ports.length > 0) this.ports = ports;
    const listening = ports.length > 0 ? `, listening on ${[...new Set(ports.map((p) => p.port))].join(', ')}` : '';
    this.notes.push(
      `The main process exited 0 after ${seconds(mainExit.atMs)}; the service lived on in ${pids.length} other process${pids.length === 1 ? '' : 'es'} (pid ${pids.slice(0, 5).join(', ')}${pids.length > 5 ? ', ...' : ''})${listening}, which Warden kept tracking and ends with the run.`,
    );
    this.emit({ type: 'main-exited', runId: this.id, mainExit });
    const poll = () => {
      this.livedOnTimer = setTimeout(() => {
        void this.processesLeft().then((left) => {
          if (this.exit !== undefined) return;
          if (left.length === 0) return this.endLivedOn(this.stopper.started ? 'stopped' : 'ended');
          this.livedOnPids = left;
          poll();
        });
      }, LIVED_ON_POLL_MS);
    };
    poll();
  }

  /** The signal to each process of a service living on (its cgroup's, read now, or those last seen). */
  private signalLivedOn(signal: NodeJS.Signals): boolean {
    let pids = this.livedOnPids;
    if (this.cgroup) {
      try {
        pids = this.cgroup.pids();
      } catch {
        // those last seen
      }
    }
    let reached = false;
    for (const pid of pids) {
      try {
        process.kill(pid, signal);
        reached = true;
      } catch {
        // gone already
      }
    }
    return reached;
  }

  /** A service that lived on after its main process ended: by itself, stopped, or past the SIGKILL backstop. */
  private endLivedOn(how: 'ended' | 'stopped' | 'kill-backstop'): Promise<void> {
    clearTimeout(this.livedOnTimer);
    const mainExit = this.mainExit!;
    if (how === 'ended') this.notes.push(`Its other processes ended on their own after ${seconds(this.elapsedMs())} (their exit statuses are not Warden's to read: they were not its children).`);
    return this.endAfterExit(mainExit.exitCode, mainExit.signal, this.notBeforeTicks, this.elapsedMs());
  }

  /** What teardown ends: the run's scope, group, cgroup and subreaper. */
  private teardownTarget(notBeforeTicks: number | undefined): TeardownTarget {
    return {
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
  }

  private async endAfterExit(code: number | null, signal: string | null, notBeforeTicks: number | undefined, atMs: number): Promise<void> {
    if (this.exit !== undefined) return;
    this.exit = { exitCode: code, signal, atMs, wallMs: Date.now() };
    this.noteStall();
    // Another run often starts right after this one: it may then be born in its cgroup.
    this.cgroup?.warmAttach();
    clearTimeout(this.deadlineTimer);
    clearTimeout(this.backstopTimer);
    clearTimeout(this.livedOnTimer);
    this.stopper.cancel();
    this.lease?.cancel();
    this.stdin?.close();
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
    // Who holds the port it could not bind, asked while that holder still runs (before teardown ends any of this run's).
    const inUse = code !== 0 || signal !== null ? addressInUse(`${this.out.stdout.text()}\n${this.out.stderr.text()}`) : null;
    if (inUse && inUse.port !== null && this.portLookup) this.notes.push(await this.portLookup.holder(inUse.port, this.id).catch(() => `Port ${inUse.port} was already in use.`));
    else if (inUse) this.notes.push(`It could not bind its address ("${inUse.line.slice(0, 160)}"): another process holds the port; stop it, or start this one on another port.`);
    const target = this.teardownTarget(notBeforeTicks);
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
    this.readyWatch?.cancel();
    this.lease?.cancel();
    this.stdin?.close();
    this.lines.end();
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
      okExitCodes: this.options.okExitCodes,
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
      ...(this.options.owner ? { owner: this.options.owner } : {}),
      ...(this.readyReport !== undefined ? { ready: this.readyReport } : {}),
      ...(this.readyWatch ? { probes: this.readyWatch.report() } : {}),
      ...(fields.state !== 'ended' && this.ports.length > 0 ? { ports: this.ports } : {}),
      ...(this.lease && fields.state !== 'ended' ? { lease: { ms: this.lease.ms, endsAtMs: Math.round(this.lease.endsAtMs) } } : {}),
      ...(this.stdin ? { stdinPipe: this.stdin.open && fields.state !== 'ended' ? ('open' as const) : ('closed' as const) } : {}),
      ...(this.mainExit ? { mainExit: this.mainExit } : {}),
    });
  }
}

/** Characters of input an input event (and so the timeline) carries; `chars` says how many were sent. */
export const INPUT_EVENT_CHARS = 4000;

function collectPids(nodes: readonly { pid: number; children: readonly unknown[] }[], into: Set<number>): void {
  for (const node of nodes) {
    into.add(node.pid);
    collectPids(node.children as { pid: number; children: readonly unknown[] }[], into);
  }
}
