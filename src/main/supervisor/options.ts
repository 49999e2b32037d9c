// A run request checked and completed once, at the boundary, so the engine
// never re-checks it. Bad input becomes a WardenInputError with one line.

import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { DEFAULT_SESSION, DEFAULTS, MAX_OUTPUT_CAP_CHARS, RLIMIT_NAMES, type CommandRunRequest, type PythonRunRequest, type Rlimits } from '../../shared/request';
import type { RunOwner } from '../../shared/result';
import { SESSION_NAME } from '../../shared/schemas';

import { MAX_LIMIT_MS } from './deadline';
import { WardenInputError } from './errors';
import { parseMemory } from './cgroup';
import { parseProbes, parseStatusRange } from './ready/probe-spec';
import type { ReadyOptions } from './ready/readiness';

export { WardenInputError };

/** What every run has once checked, a command or a Python script. */
interface CheckedRun {
  id: string;
  /** The marker value, `hostId.runId`, in WARDEN_SCOPE (for a script, the runtime sets it while it runs). */
  scope: string;
  cwd: string;
  env: Record<string, string | undefined>;
  limitMs: number | null;
  graceMs: number;
  drainMs: number;
  teardownBudgetMs: number;
  teardownPassGapMs: number;
  keepDescendants: boolean;
  outputCapChars: number;
  procRoot: string | null;
  /** The memory limit (its own cgroup; for a script, its interpreter's, set when one starts), or null for none. */
  memoryBytes: number | null;
  /** The process it belongs to, as the host was told (recorded in the result). */
  owner?: RunOwner;
}

/** An owner as a request names it: one line (control and bidirectional characters out), at most 120 characters, a pid or none. */
export function ownerOf(given: unknown): { owner: { label: string; pid: number | null } } | Record<string, never> {
  if (given === undefined || given === null) return {};
  if (typeof given !== 'object' || Array.isArray(given)) throw new WardenInputError('owner must be { label, pid? }.');
  const { label, pid } = given as { label?: unknown; pid?: unknown };
  if (typeof label !== 'string') throw new WardenInputError('owner.label must be a string.');
  const line = label.replace(/[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu, ' ').trim().slice(0, 120);
  if (line === '') throw new WardenInputError('owner.label must say who started the run.');
  if (pid !== undefined && (typeof pid !== 'number' || !Number.isSafeInteger(pid) || pid < 1)) throw new WardenInputError(`owner.pid must be a process id, not ${JSON.stringify(pid)}.`);
  return { owner: { label: line, pid: typeof pid === 'number' ? pid : null } };
}

/** The characters kept per stream: 2 (one of head and tail each) to MAX_OUTPUT_CAP_CHARS, which bounds what one run holds in memory. */
function outputCap(given: unknown): number {
  const cap = given ?? DEFAULTS.outputCapChars;
  if (typeof cap !== 'number' || !Number.isInteger(cap) || cap < 2 || cap > MAX_OUTPUT_CAP_CHARS) {
    throw new WardenInputError(`outputCapChars must be a whole number of characters from 2 to ${MAX_OUTPUT_CAP_CHARS.toLocaleString('en-US')}, not ${JSON.stringify(cap)}.`);
  }
  return cap;
}

export interface RunOptions extends CheckedRun {
  argv: string[];
  shell: boolean;
  /** Raise its soft core file size limit to the hard one before it runs (core dumps allowed). */
  core: boolean;
  stdin?: string;
  terminateAfterMs: number;
  /** Exit codes besides 0 that mean success, ascending, each once. */
  okExitCodes: number[];
  /** The client's umask and resource limits, applied at the spawn where they differ from the host's (process-limits.ts). */
  umask?: number;
  rlimits?: Rlimits;
  /** Readiness probes and what to do when they do not pass in time; null: none. */
  ready: (ReadyOptions & { onNotReady: 'stop' | 'keep' }) | null;
  /** A lease, renewed by extend; null: none. */
  leaseMs: number | null;
  /** A pipe on stdin kept open for input. */
  stdinPipe: boolean;
}

/** okExitCodes as given: whole numbers 1 to 255 (0 is success already), each kept once, ascending. */
export function checkOkExitCodes(given: unknown): number[] {
  if (given === undefined || given === null) return [];
  if (!Array.isArray(given)) throw new WardenInputError(`okExitCodes must be an array of exit codes (1 to 255), not ${JSON.stringify(given)}.`);
  for (const code of given) {
    if (code === 0) throw new WardenInputError('okExitCodes lists exit codes besides 0, which always means success.');
    if (typeof code !== 'number' || !Number.isInteger(code) || code < 1 || code > 255) throw new WardenInputError(`okExitCodes takes exit codes from 1 to 255, not ${JSON.stringify(code)}.`);
  }
  return [...new Set(given as number[])].sort((a, b) => a - b);
}

export interface EngineSettings {
  hostId: string;
  /** Where /proc is; null forces the no-/proc paths (as on macOS). */
  procRoot: string | null;
  /** Where cgroup hierarchies are mounted (default /sys/fs/cgroup); tests point it elsewhere. */
  cgroupRoot?: string;
  baseEnv: Record<string, string | undefined>;
}

export const DEFAULT_PROC_ROOT = existsSync('/proc/self/stat') ? '/proc' : null;

const MAX_MS = 2 ** 31 - 1; // setTimeout's ceiling: the stop sequence's steps are single timers


function duration(name: string, value: unknown, options: { min?: number; max?: number } = {}): number {
  const min = options.min ?? 0;
  const max = options.max ?? MAX_MS;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    throw new WardenInputError(`${name} must be a number of milliseconds from ${min} to ${max}, not ${JSON.stringify(value)}.`);
  }
  return value;
}

export function normalizeRequest(request: CommandRunRequest, id: string, settings: EngineSettings): RunOptions {
  if (typeof request !== 'object' || request === null) throw new WardenInputError('The run request must be an object.');
  const { argv } = request;
  if (!Array.isArray(argv) || argv.length === 0 || !argv.every((a) => typeof a === 'string')) {
    throw new WardenInputError('argv must be a non-empty array of strings: the command and its arguments.');
  }
  if (argv[0] === '') throw new WardenInputError('The command (argv[0]) is empty.');
  if (argv.some((a) => a.includes('\0'))) throw new WardenInputError('An argument contains a NUL character, which no command can receive.');
  if (request.cwd !== undefined && typeof request.cwd !== 'string') throw new WardenInputError('cwd must be a string.');
  const env = mergeEnv(baseEnvOf(request.baseEnv, settings), request.env);
  const scope = `${settings.hostId}.${id}`;
  env.WARDEN_SCOPE = scope;
  if (request.stdin !== undefined && typeof request.stdin !== 'string') throw new WardenInputError('stdin must be a string.');
  if (request.stdinPipe !== undefined && typeof request.stdinPipe !== 'boolean') throw new WardenInputError('stdinPipe must be true or false.');
  if (request.stdinPipe === true && request.stdin !== undefined) throw new WardenInputError('stdin (text given at once) and stdinPipe (input sent later) exclude each other: give one.');
  const ready = readyOptions(request.ready);
  const leaseMs = request.leaseMs === undefined ? (ready !== null ? DEFAULTS.leaseMs : null) : request.leaseMs === null || request.leaseMs === 0 ? null : duration('leaseMs', request.leaseMs, { min: 1, max: MAX_LIMIT_MS });
  const limitMs = request.limitMs === undefined || request.limitMs === null ? null : duration('limitMs', request.limitMs, { min: 1, max: MAX_LIMIT_MS });
  const graceMs = request.graceMs === undefined ? DEFAULTS.graceMs : duration('graceMs', request.graceMs);
  const terminateAfterMs = request.terminateAfterMs === undefined ? DEFAULTS.terminateAfterMs : duration('terminateAfterMs', request.terminateAfterMs);
  const cap = outputCap(request.outputCapChars);
  return {
    id,
    scope,
    argv,
    shell: request.shell === true,
    core: request.core === true,
    cwd: resolve(request.cwd ?? process.cwd()),
    env,
    ...(request.stdin !== undefined ? { stdin: request.stdin } : {}),
    limitMs,
    graceMs,
    terminateAfterMs,
    drainMs: request.drainMs === undefined ? DEFAULTS.drainMs : duration('drainMs', request.drainMs),
    teardownBudgetMs: request.teardownBudgetMs === undefined ? DEFAULTS.teardownBudgetMs : duration('teardownBudgetMs', request.teardownBudgetMs, { min: 1 }),
    teardownPassGapMs: DEFAULTS.teardownPassGapMs,
    keepDescendants: request.keepDescendants === true,
    outputCapChars: cap,
    procRoot: settings.procRoot,
    memoryBytes: request.memory === undefined || request.memory === null ? null : parseMemory(request.memory, 'memory'),
    okExitCodes: checkOkExitCodes(request.okExitCodes),
    ...processContext(request),
    ready,
    leaseMs,
    stdinPipe: request.stdinPipe === true,
    ...ownerOf(request.owner),
  };
}

const READY_FIELDS = new Set(['probes', 'timeoutMs', 'intervalMs', 'delayMs', 'status', 'onNotReady']);

/** A request's readiness, checked: its probes parsed, its timing within bounds, defaults filled in. */
function readyOptions(given: unknown): RunOptions['ready'] {
  if (given === undefined || given === null) return null;
  if (typeof given !== 'object' || Array.isArray(given)) throw new WardenInputError('ready must be an object: { probes, timeoutMs?, intervalMs?, delayMs?, status?, onNotReady? }.');
  for (const key of Object.keys(given)) if (!READY_FIELDS.has(key)) throw new WardenInputError(`ready has no field ${JSON.stringify(key)}: it takes probes, timeoutMs, intervalMs, delayMs, status and onNotReady.`);
  const spec = given as NonNullable<CommandRunRequest['ready']>;
  const onNotReady = spec.onNotReady ?? 'stop';
  if (onNotReady !== 'stop' && onNotReady !== 'keep') throw new WardenInputError(`ready.onNotReady must be "stop" or "keep", not ${JSON.stringify(onNotReady)}.`);
  return {
    probes: parseProbes(spec.probes),
    timeoutMs: spec.timeoutMs === undefined ? DEFAULTS.readyTimeoutMs : duration('ready.timeoutMs', spec.timeoutMs, { min: 1 }),
    // Below 10 ms a probe would be tried faster than its own answer comes.
    intervalMs: spec.intervalMs === undefined ? DEFAULTS.readyIntervalMs : duration('ready.intervalMs', spec.intervalMs, { min: 10, max: 600_000 }),
    delayMs: spec.delayMs === undefined ? 0 : duration('ready.delayMs', spec.delayMs),
    status: parseStatusRange(spec.status ?? '200-399'),
    onNotReady,
  };
}

/** The request's umask and rlimits, checked (the HTTP layer's schema says the same; an in-process caller gets it here). */
function processContext(request: CommandRunRequest): { umask?: number; rlimits?: Rlimits } {
  const { umask, rlimits } = request;
  if (umask !== undefined && (typeof umask !== 'number' || !Number.isInteger(umask) || umask < 0 || umask > 0o777)) throw new WardenInputError(`umask must be a mode from 0 to 0o777, not ${JSON.stringify(umask)}.`);
  if (rlimits !== undefined) {
    if (typeof rlimits !== 'object' || rlimits === null || Array.isArray(rlimits)) throw new WardenInputError('rlimits must be an object of [soft, hard] by limit name.');
    const value = (v: unknown) => v === null || (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0);
    for (const [name, pair] of Object.entries(rlimits)) {
      if (!(RLIMIT_NAMES as readonly string[]).includes(name)) throw new WardenInputError(`rlimits names one of ${RLIMIT_NAMES.join(', ')}, not ${JSON.stringify(name)}.`);
      if (!Array.isArray(pair) || pair.length !== 2 || !pair.every(value)) throw new WardenInputError(`rlimits.${name} must be [soft, hard], each a whole number or null (unlimited).`);
    }
  }
  return { ...(umask !== undefined ? { umask } : {}), ...(rlimits !== undefined ? { rlimits } : {}) };
}

/** The client's environment when it sent one (checked as env is), else the host's. */
function baseEnvOf(given: unknown, settings: EngineSettings): Record<string, string | undefined> {
  if (given === undefined) return settings.baseEnv;
  if (typeof given !== 'object' || given === null || Array.isArray(given)) throw new WardenInputError('baseEnv must be an object of NAME: value strings.');
  return mergeEnv({}, given);
}

function mergeEnv(base: Record<string, string | undefined>, extra: unknown): Record<string, string | undefined> {
  if (extra !== undefined && (typeof extra !== 'object' || extra === null || Array.isArray(extra))) {
    throw new WardenInputError('env must be an object of NAME: value strings.');
  }
  const env: Record<string, string | undefined> = { ...base };
  for (const [key, value] of Object.entries(extra ?? {})) {
    if (typeof value !== 'string' || key === '' || key.includes('=') || key.includes('\0') || value.includes('\0')) {
      throw new WardenInputError(`The environment entry ${JSON.stringify(key)} is not a valid NAME=value pair.`);
    }
    env[key] = value;
  }
  return env;
}

export interface PythonRunOptions extends CheckedRun {
  code: string;
  session: string;
  onBusy: 'queue' | 'refuse';
  /** cwd and env apply to a fresh interpreter only; a running one keeps its own. */
  cwdGiven: boolean;
  envGiven: boolean;
}

export { SESSION_NAME };

export function checkSessionName(name: unknown): string {
  if (typeof name !== 'string' || !SESSION_NAME.test(name)) {
    throw new WardenInputError(`A session name is 1 to 64 letters, digits, '_', '.' or '-', starting with a letter, digit or '_'; not ${JSON.stringify(name)}.`);
  }
  return name;
}

export function normalizePythonRequest(request: PythonRunRequest, id: string, settings: EngineSettings): PythonRunOptions {
  if (typeof request !== 'object' || request === null) throw new WardenInputError('The run request must be an object.');
  if ('argv' in request) throw new WardenInputError('A run request has argv (a command) or code (a Python script), not both.');
  if (typeof request.code !== 'string') throw new WardenInputError('code must be a string: the Python script to run.');
  const session = request.session === undefined ? DEFAULT_SESSION : checkSessionName(request.session);
  const onBusy = request.onBusy ?? 'queue';
  if (onBusy !== 'queue' && onBusy !== 'refuse') throw new WardenInputError(`onBusy must be "queue" or "refuse", not ${JSON.stringify(onBusy)}.`);
  if (request.cwd !== undefined && typeof request.cwd !== 'string') throw new WardenInputError('cwd must be a string.');
  const env = mergeEnv(baseEnvOf(request.baseEnv, settings), request.env);
  const limitMs = request.limitMs === undefined || request.limitMs === null ? null : duration('limitMs', request.limitMs, { min: 1, max: MAX_LIMIT_MS });
  const graceMs = request.graceMs === undefined ? DEFAULTS.pythonGraceMs : duration('graceMs', request.graceMs);
  const cap = outputCap(request.outputCapChars);
  if (request.keepDescendants !== undefined && typeof request.keepDescendants !== 'boolean') throw new WardenInputError('keepDescendants must be true or false.');
  const owned = ownerOf(request.owner);
  return {
    id,
    scope: `${settings.hostId}.${id}`,
    ...owned,
    code: request.code,
    session,
    onBusy,
    cwd: resolve(request.cwd ?? process.cwd()),
    cwdGiven: request.cwd !== undefined,
    env,
    envGiven: request.env !== undefined && Object.keys(request.env).length > 0,
    limitMs,
    graceMs,
    drainMs: DEFAULTS.drainMs,
    teardownBudgetMs: DEFAULTS.teardownBudgetMs,
    teardownPassGapMs: DEFAULTS.teardownPassGapMs,
    keepDescendants: request.keepDescendants === true,
    outputCapChars: cap,
    memoryBytes: request.memory === undefined || request.memory === null ? null : parseMemory(request.memory, 'memory'),
    procRoot: settings.procRoot,
  };
}
