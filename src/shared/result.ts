// The result contract (docs/architecture.md, "The result contract"). Field names are fixed: tests and
// agents outside the project read them.

export type RunKind = 'command' | 'python';
export type RunState = 'queued' | 'running' | 'stopping' | 'ended';
export type Verdict =
  | 'completed'
  | 'failed'
  | 'timed-out'
  | 'stopped'
  | 'killed'
  | 'crashed'
  | 'signaled'
  | 'lost'
  | 'spawn-failed';

/**
 * 'owner': the process that owned the run (an agent's warden mcp, a hook's agent, a warden run) went away.
 * 'lease': a service's lease ran out (nobody renewed it with extend). 'not-ready': its readiness probes did not pass in time.
 */
export type StopReason = 'deadline' | 'user' | 'shutdown' | 'owner' | 'lease' | 'not-ready';
export type StopStep = 'interrupt' | 'terminate' | 'kill';

export interface SignalSent {
  signal: string;
  /** Milliseconds since the run started, on the monotonic clock. */
  atMs: number;
}

export interface StopRecord {
  reason: StopReason;
  requestedAtMs: number;
  signals: SignalSent[];
  /** The last step whose signals were sent before the main process exited. */
  endedBy: StopStep;
  /** When a person or client forced the kill (SIGKILL at once, not after the grace), in ms since the start. */
  forcedAtMs?: number;
}

export interface OomReport {
  confirmed: boolean;
  peakBytes?: number;
  limitBytes?: number;
}

export interface Proc {
  pid: number;
  ppid: number;
  pgid: number;
  command: string;
}

export interface TeardownReport {
  killed: Proc[];
  survivors: Proc[];
  elapsedMs: number;
  /** False when the budget ran out or a step could not look everywhere. */
  complete: boolean;
  /** What teardown could not see, when a process could have escaped it (no cgroup, no subreaper). */
  unseen?: string;
  /** What teardown could not look at for lack of file descriptors (one line), when any: it cannot say nothing is left. */
  unchecked?: string;
}

/**
 * What became of a crash's core dump (core(5)): read from the kernel's
 * core_pattern and the file system, as the exit status Node gives has no core
 * flag.
 */
export interface CoreReport {
  /**
   * true: the file the pattern names was found, written during the run;
   * false: it was not there; null: the pattern pipes the dump to a program
   * (which decides), or names a place this side cannot resolve or read.
   */
  dumped: boolean | null;
  /** /proc/sys/kernel/core_pattern when the run ended. */
  pattern: string;
  /** The core file's path (found, or where it would be), or the program the pattern pipes it to. */
  where?: string;
  /** The soft core file size limit (ulimit -c) the run was started with, in bytes; null: unlimited. A process can raise its own. */
  limitBytes: number | null;
}

/**
 * The process that died of a crash signal or SIGKILL nobody at Warden sent:
 * the main process (from its last sample, else its command), or a command a
 * shell ran, as the shell reported it in stderr ("bash: 812 Segmentation
 * fault  ./prog"). Kept in the result, so a page opened after the end names it.
 */
export interface Culprit {
  /** Null when nobody said it (dash prints no pid). */
  pid: number | null;
  /** Its command line, when known. */
  command: string | null;
  signal: string;
  /** 'exit': the main process's own ending; 'shell': a shell's report of a command it ran. */
  source: 'exit' | 'shell';
  /** For 'shell': the line of stderr that says it (1-based). */
  stderrLine?: number;
}

/** A TCP socket a run's processes listen on (from /proc/net/tcp and tcp6, matched to their descriptors). */
export interface ListeningPort {
  port: number;
  /** The local address as the kernel shows it: 127.0.0.1, 0.0.0.0, ::1, ::. */
  address: string;
  /** The process holding it, when known. */
  pid?: number;
  /** It answered an HTTP request (one HEAD / when it was first seen): a page may be opened there. Absent: not asked yet. */
  http?: boolean;
}

/** One readiness probe as the run last saw it. */
export interface ReadyProbe {
  /** As given: "tcp:5173", "http://localhost:5173/", "log:/ready/i", "exec:CMD", "file:PATH", "port". */
  probe: string;
  passed: boolean;
  /** When it passed, in ms since the run started. */
  afterMs?: number;
  /** Attempts made (log probes: lines read). */
  attempts: number;
  /** Why its last attempt failed, one line (absent once passed). */
  last?: string;
  /** A port it found (a log line's numeric first group, a tcp probe's port, the port probe's first). */
  port?: number;
}

/** A run whose readiness probes all passed: when, and where it listens. */
export interface ReadyReport {
  /** When the last probe passed, in ms since the run started. */
  afterMs: number;
  probes: ReadyProbe[];
  /** The output line a log probe matched (ANSI escapes removed). */
  line?: string;
  /** What its processes listened on when it became ready, and ports its log line named. */
  ports: ListeningPort[];
}

/** The main process of a service exited while other processes of the run lived on (a daemon that forked). */
export interface MainExit {
  exitCode: number | null;
  signal: string | null;
  atMs: number;
}

/** What a wait with `until` (a log pattern, or readiness) found: only on such a wait's answer. */
export interface UntilReport {
  /** As asked: "ready", "log:/Compiled/". */
  condition: string;
  met: boolean;
  /** The line that matched (ANSI escapes removed). */
  line?: string;
  stream?: 'stdout' | 'stderr';
}

/**
 * Who started a run: the process it belongs to when it was started owned by
 * one (an agent's warden mcp, the agent a hook named, --owner-pid: the host
 * stops the run when it is gone), else who its request names (a terminal's
 * shell, for a list that groups runs by who started them; pid null when none
 * was said).
 */
export interface RunOwner {
  pid: number | null;
  /** Who it is, as its client named it: "warden mcp for claude-code", "claude", "bash". */
  label: string;
}

export interface PeakFigures {
  /** The run's peak memory: what `source` says it is. */
  rssBytes: number;
  /** The most of its processes alive at once (zombies not counted), as the samples saw them. */
  processes: number;
  /**
   * What rssBytes is: 'cgroup', the run's memory cgroup's own peak counter
   * (every page charged to it, which the kernel caps at its limit);
   * 'sampled' (or absent, in older results), the highest sum of its
   * processes' RSS over the samples (shared pages counted in each).
   */
  source?: 'cgroup' | 'sampled';
}

export interface RunResult {
  id: string;
  /** The remote host the run lives on, as the local host relays it (its id is then `ID@HOST`); absent for this host's runs. */
  host?: string;
  kind: RunKind;
  argv?: string[];
  code?: string;
  session?: string;
  cwd: string;
  state: RunState;
  /** While queued in a busy session: 1 is next to run. */
  queuePosition?: number;
  verdict?: Verdict;
  exitCode: number | null;
  signal: string | null;
  startedAt: string;
  endedAt?: string;
  elapsedMs: number;
  limitMs: number | null;
  stop?: StopRecord;
  oom?: OomReport;
  /** After a crash (a crash signal, or a shell's 128 + n for one): whether a core was dumped, and where. */
  core?: CoreReport;
  /** After a crash or a SIGKILL Warden did not send: the process it was. */
  culprit?: Culprit;
  advice: string | null;
  notes: string[];
  stdout: string;
  stderr: string;
  stdoutTruncated: number;
  stderrTruncated: number;
  teardown?: TeardownReport;
  peak?: PeakFigures;
  /** Runs with readiness probes: their report once all passed, false when the ready timeout passed first; absent while waiting. */
  ready?: ReadyReport | false;
  /** Runs with readiness probes: each probe's state now (or at the end). */
  probes?: ReadyProbe[];
  /** A live run's listening TCP sockets (absent when none; not kept once it ended: see ready.ports). */
  ports?: ListeningPort[];
  /** A run with a lease: how long one lease is, and when it ends in ms since the run started (extend renews it). */
  lease?: { ms: number; endsAtMs: number };
  /** A run started with a stdin pipe: whether it is still open for input (send), or closed (EOF sent, or the run ended). */
  stdinPipe?: 'open' | 'closed';
  /** A service whose main process exited while the rest of it lived on. */
  mainExit?: MainExit;
  /** Only on the answer of a wait with `until`. */
  until?: UntilReport;
  /** Who started it: the process it belongs to (warden mcp, --owner-pid), else who its request named; absent: none said. */
  owner?: RunOwner;
  /**
   * Only in a listing without output (list({ output: 'none' })): stdout and
   * stderr are left empty, and this says how many characters each stream has
   * had (dropped ones included), so a view knows there is output to fetch.
   */
  outputChars?: { stdout: number; stderr: number };
}

export const CRASH_SIGNALS: readonly string[] = ['SIGSEGV', 'SIGABRT', 'SIGBUS', 'SIGFPE', 'SIGILL'];

export type SessionState = 'idle' | 'busy' | 'starting' | 'dead' | 'closed';

/** One Python interpreter session, as `sessions()` lists it. */
export interface SessionInfo {
  name: string;
  /** The interpreter's pid; null before it starts or after it died. */
  pid: number | null;
  state: SessionState;
  /** Scripts that ended in this session (all its interpreters). */
  scriptsRun: number;
  /** Scripts waiting in its queue. */
  queued: number;
  /** Run id of the script running now, if any. */
  running: string | null;
  pythonVersion: string | null;
  /** When the current interpreter started (ISO 8601); null when none runs. */
  startedAt: string | null;
}
