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
  /** A memory limit for the run's own cgroup: bytes, or text such as "256M". Refused where no memory cgroup is writable. */
  memory?: string | number;
  /** Characters kept per stream (head and tail). */
  outputCapChars?: number;
  /**
   * Let a crash leave a core dump: the run's soft core file size limit is
   * raised to its hard one (unlimited where that is), whatever the host's
   * own is (`warden run --core`).
   */
  core?: boolean;
}

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
} as const;

/**
 * The most characters a run may keep per stream: a live run holds its kept
 * output in the host's memory, so a client asking for more than this could
 * grow the host without bound (50 runs asking for 1e9 each would exhaust it).
 */
export const MAX_OUTPUT_CAP_CHARS = 10_000_000;
