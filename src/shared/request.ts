// What a caller asks for when it starts a command run. Durations are in
// milliseconds; every field but argv has a default (see DEFAULTS).

/** Who started a run, to group a list by (an agent's warden mcp, a hook's agent, a terminal's shell): a label and its process. */
export interface RunOwner {
  /** One line: "warden mcp for claude-code", "bash". */
  label: string;
  pid?: number;
}

export interface CommandRunRequest {
  argv: string[];
  /** Who started it (shown and grouped by; the host watches an owner only when asked, with ?ownerPid). */
  owner?: RunOwner;
  /** Run argv joined as one string through /bin/sh -c. Only when asked. */
  shell?: boolean;
  cwd?: string;
  env?: Record<string, string>;
  /**
   * The environment the run starts from instead of the host's own, `env` then
   * added on top: a CLI or MCP client sends its own, so a run through the host
   * sees what the same command would see run by that client.
   */
  baseEnv?: Record<string, string>;
  /** Text written to stdin, then closed. Without it stdin is /dev/null. */
  stdin?: string;
  /** null or absent: no limit. */
  limitMs?: number | null;
  /** From the limit (or a stop request) to SIGKILL. */
  graceMs?: number;
  /** From the limit to SIGTERM; a value >= graceMs skips the SIGTERM step. */
  terminateAfterMs?: number;
  /** How long output held open by a descendant is read after the main process exits. */
  drainMs?: number;
  teardownBudgetMs?: number;
  /** Leave descendants running after the main process exits. */
  keepDescendants?: boolean;
  /** A memory limit for the run's own cgroup: bytes, or text such as "512Mi" or "2G" (shared/size.ts). Refused where no memory cgroup is writable. */
  memory?: string | number;
  /** Characters kept per stream (head and tail). */
  outputCapChars?: number;
  /** Exit codes besides 0 that mean success (grep's 1 "no match", diff's 1 "they differ"): verdict completed, with a note. 1 to 255. */
  okExitCodes?: number[];
  /** Readiness: the run is ready once every probe passed (see ReadySpec); a run with probes gets a lease. */
  ready?: ReadySpec;
  /**
   * A lease: the run is stopped (stop sequence, reason 'lease') when it runs out; extend renews it.
   * Default DEFAULTS.leaseMs for a run with `ready`, none otherwise; null or 0: none.
   */
  leaseMs?: number | null;
  /** Keep a pipe on stdin open for input (input/send) instead of /dev/null. Not with `stdin`. */
  stdinPipe?: boolean;
  /** The file mode creation mask the command starts with (0 to 0o777); absent: the host's. A client sends its own. */
  umask?: number;
  /** Resource limits the command starts with, by prlimit(1)'s names, each [soft, hard] (null: unlimited); absent: the host's. A client sends its own. */
  rlimits?: Rlimits;
  /**
   * Let a crash leave a core dump: the run's soft core file size limit is
   * raised to its hard one (unlimited where that is), whatever the host's
   * own is (`warden run --core`).
   */
  core?: boolean;
}

/**
 * Readiness probes, all of which must pass (as in wait-on): `tcp:[HOST:]PORT`,
 * `http(s)://...`, `log:/REGEX/[flags]`, `exec:CMD`, `file:PATH`, `port`
 * (the run's processes listen on a TCP port) or `port:N` (on that one).
 */
export interface ReadySpec {
  probes: string[];
  /** From the start to giving up (default 120 s). */
  timeoutMs?: number;
  /** Between attempts of the polled probes (default 250 ms). */
  intervalMs?: number;
  /** Before the first attempt (default 0). */
  delayMs?: number;
  /** HTTP statuses that pass, "200-399" (default) or e.g. "200-499". */
  status?: string;
  /** When the timeout passes first: 'stop' (default) the run with the stop sequence, or 'keep' it running. */
  onNotReady?: 'stop' | 'keep';
}

/** The resource limits a run request may carry: prlimit(1)'s long option names. */
export const RLIMIT_NAMES = ['as', 'core', 'cpu', 'data', 'fsize', 'locks', 'memlock', 'msgqueue', 'nice', 'nofile', 'nproc', 'rss', 'rtprio', 'rttime', 'sigpending', 'stack'] as const;
export type RlimitName = (typeof RLIMIT_NAMES)[number];
export type Rlimits = Partial<Record<RlimitName, [number | null, number | null]>>;

/** What a caller asks for when it runs a Python script in an interpreter session. */
export interface PythonRunRequest {
  /** The script's source; it runs in the session's persistent globals. Top-level await works. */
  code: string;
  /** Who started it (see CommandRunRequest.owner). */
  owner?: RunOwner;
  /** The session's name (default 'default'): letters, digits, '_', '.', '-', at most 64. */
  session?: string;
  /** When the session is busy: wait in its queue (default), or refuse at once. */
  onBusy?: 'queue' | 'refuse';
  /** null or absent: no limit. Counted from when the script is sent to the interpreter. */
  limitMs?: number | null;
  /** From the limit (or a stop request) to SIGKILL of the interpreter (default 10 s). */
  graceMs?: number;
  /** Used when the session's interpreter starts; a running interpreter keeps its own. */
  cwd?: string;
  /** Used when the session's interpreter starts; a running interpreter keeps its own. */
  env?: Record<string, string>;
  /** The environment a fresh interpreter starts from instead of the host's (see CommandRunRequest.baseEnv). */
  baseEnv?: Record<string, string>;
  /** Leave processes the script started running after it ends. */
  /** A memory limit for the session's interpreter (its own cgroup), set when an interpreter starts. */
  memory?: string | number;
  keepDescendants?: boolean;
  /** Characters kept per stream (head and tail). */
  outputCapChars?: number;
}

export type RunRequest = CommandRunRequest | PythonRunRequest;

export function isPythonRequest(request: RunRequest): request is PythonRunRequest {
  return typeof request === 'object' && request !== null && 'code' in request;
}

export const DEFAULT_SESSION = 'default';

export const DEFAULTS = {
  graceMs: 5_000,
  pythonGraceMs: 10_000,
  terminateAfterMs: 2_000,
  drainMs: 2_000,
  teardownBudgetMs: 10_000,
  teardownPassGapMs: 200,
  outputCapChars: 2_000_000,
  readyTimeoutMs: 120_000,
  readyIntervalMs: 250,
  /** A service's lease when none is named. */
  leaseMs: 2 * 3_600_000,
} as const;

/**
 * The most characters a run may keep per stream: a live run holds its kept
 * output in the host's memory, so a client asking for more than this could
 * grow the host without bound (50 runs asking for 1e9 each would exhaust it).
 */
export const MAX_OUTPUT_CAP_CHARS = 10_000_000;
