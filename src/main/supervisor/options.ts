// A run request checked and completed once, at the boundary, so the engine
// never re-checks it. Bad input becomes a WardenInputError with one line.

import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { DEFAULTS, type CommandRunRequest } from '../../shared/request';

export class WardenInputError extends Error {
  override name = 'WardenInputError';
}

export interface RunOptions {
  id: string;
  /** The marker value, `hostId.runId`, in WARDEN_SCOPE. */
  scope: string;
  argv: string[];
  shell: boolean;
  cwd: string;
  env: Record<string, string | undefined>;
  stdin?: string;
  limitMs: number | null;
  graceMs: number;
  terminateAfterMs: number;
  drainMs: number;
  teardownBudgetMs: number;
  teardownPassGapMs: number;
  keepDescendants: boolean;
  outputCapChars: number;
  procRoot: string | null;
}

export interface EngineSettings {
  hostId: string;
  /** Where /proc is; null forces the no-/proc paths (as on macOS). */
  procRoot: string | null;
  baseEnv: Record<string, string | undefined>;
}

export const DEFAULT_PROC_ROOT = existsSync('/proc/self/stat') ? '/proc' : null;

const MAX_MS = 2 ** 31 - 1; // setTimeout's ceiling

function duration(name: string, value: unknown, options: { min?: number } = {}): number {
  const min = options.min ?? 0;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > MAX_MS) {
    throw new WardenInputError(`${name} must be a number of milliseconds from ${min} to ${MAX_MS}, not ${JSON.stringify(value)}.`);
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
  const env: Record<string, string | undefined> = { ...settings.baseEnv };
  for (const [key, value] of Object.entries(request.env ?? {})) {
    if (typeof value !== 'string' || key === '' || key.includes('=') || key.includes('\0') || value.includes('\0')) {
      throw new WardenInputError(`The environment entry ${JSON.stringify(key)} is not a valid NAME=value pair.`);
    }
    env[key] = value;
  }
  const scope = `${settings.hostId}.${id}`;
  env.WARDEN_SCOPE = scope;
  if (request.stdin !== undefined && typeof request.stdin !== 'string') throw new WardenInputError('stdin must be a string.');
  const limitMs = request.limitMs === undefined || request.limitMs === null ? null : duration('limitMs', request.limitMs, { min: 1 });
  const graceMs = request.graceMs === undefined ? DEFAULTS.graceMs : duration('graceMs', request.graceMs);
  const terminateAfterMs = request.terminateAfterMs === undefined ? DEFAULTS.terminateAfterMs : duration('terminateAfterMs', request.terminateAfterMs);
  const cap = request.outputCapChars ?? DEFAULTS.outputCapChars;
  if (!Number.isInteger(cap) || cap < 2) throw new WardenInputError(`outputCapChars must be an integer of at least 2, not ${JSON.stringify(cap)}.`);
  return {
    id,
    scope,
    argv,
    shell: request.shell === true,
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
  };
}
