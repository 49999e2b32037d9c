// `warden run` arguments to a run request. Every mistake is one line for the
// user, raised as a UsageError (exit status 125).

import { parseDuration } from '../shared/duration';
import type { CommandRunRequest, PythonRunRequest } from '../shared/request';

export class UsageError extends Error {
  override name = 'UsageError';
}

export type OutputFormat = 'human' | 'json' | 'shell-results';

export interface RunCommand {
  request: CommandRunRequest;
  format: OutputFormat;
}

/** `warden run --python`: the script's source comes from -c CODE, or from FILE ('-' is stdin), read by the caller. */
export interface PythonRunCommand {
  request: Omit<PythonRunRequest, 'code'>;
  source: { code: string } | { file: string };
  format: OutputFormat;
}

/** Options a session script cannot take: they belong to command runs. */
const COMMAND_ONLY = new Set(['--shell', '--stdin', '--terminate-after', '--drain', '--teardown-budget']);

/** `warden run` arguments: a command run, or a Python script with --python. */
export function parseAnyRunArgs(args: string[]): RunCommand | PythonRunCommand {
  const end = args.indexOf('--');
  const options = end >= 0 ? args.slice(0, end) : args;
  return options.includes('--python') ? parsePythonArgs(args) : parseRunArgs(args);
}

export function isPythonCommand(command: RunCommand | PythonRunCommand): command is PythonRunCommand {
  return 'source' in command;
}

/** Walks the words of `warden run`; an option's value is `--flag=value` or the next word. */
class ArgCursor {
  i = 0;
  constructor(private readonly args: string[]) {}

  value(flag: string): string {
    const inline = flag.indexOf('=');
    if (inline >= 0 && flag.startsWith('--')) return flag.slice(inline + 1);
    const next = this.args[this.i + 1];
    if (next === undefined) throw new UsageError(`${flag} needs a value.`);
    this.i += 1;
    return next;
  }
}

function parsePythonArgs(args: string[]): PythonRunCommand {
  const request: Omit<PythonRunRequest, 'code'> = {};
  let format: OutputFormat = 'human';
  const env: Record<string, string> = {};
  let code: string | undefined;
  const files: string[] = [];
  const cursor = new ArgCursor(args);
  const value = (flag: string) => cursor.value(flag);
  for (; cursor.i < args.length; cursor.i += 1) {
    const arg = args[cursor.i]!;
    if (arg === '--') {
      files.push(...args.slice(cursor.i + 1));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      files.push(arg);
      continue;
    }
    const flag = arg.startsWith('--') && arg.includes('=') ? arg.slice(0, arg.indexOf('=')) : arg;
    if (COMMAND_ONLY.has(flag)) throw new UsageError(`${flag} is for commands, not with --python.`);
    if (flag === '--python') continue;
    const shared = sharedOption(flag, () => value(arg), request, env);
    if (shared === true) continue;
    if (shared !== false) {
      format = shared;
      continue;
    }
    if (flag === '--limit' || flag === '--grace') {
      const text = value(arg);
      const ms = parseDuration(text);
      if (ms === undefined) throw new UsageError(`${flag} takes a duration such as 500ms, 30s, 2m or 1h, not ${JSON.stringify(text)}.`);
      if (flag === '--limit' && ms <= 0) throw new UsageError('--limit must be more than 0.');
      if (flag === '--limit') request.limitMs = ms;
      else request.graceMs = ms;
    } else if (flag === '-c') {
      if (code !== undefined) throw new UsageError('-c was given twice.');
      code = value(arg);
    } else if (flag === '--session') {
      const name = value(arg);
      if (!/^[A-Za-z0-9_.-]{1,64}$/.test(name)) throw new UsageError(`--session takes 1 to 64 letters, digits, '_', '.' or '-', not ${JSON.stringify(name)}.`);
      request.session = name;
    } else if (flag === '--on-busy') {
      const text = value(arg);
      if (text !== 'queue' && text !== 'refuse') throw new UsageError(`--on-busy takes queue or refuse, not ${JSON.stringify(text)}.`);
      request.onBusy = text;
    } else {
      throw new UsageError(`Unknown option ${flag} for warden run --python (see warden run --help).`);
    }
  }
  if (code !== undefined && files.length > 0) throw new UsageError('--python takes -c CODE or FILE, not both.');
  if (files.length > 1) throw new UsageError(`--python runs one FILE, not ${files.length} (session scripts take no arguments).`);
  if (code === undefined && files.length === 0) throw new UsageError('No script given: warden run --python [options] (-c CODE | FILE)');
  if (Object.keys(env).length > 0) request.env = env;
  return { request, source: code !== undefined ? { code } : { file: files[0]! }, format };
}

/**
 * The options a command run and a Python script both take. Returns true when
 * it took the flag, the output format for --json and --format, false otherwise.
 */
function sharedOption(
  flag: string,
  value: () => string,
  request: { memory?: string | number; keepDescendants?: boolean; cwd?: string; outputCapChars?: number },
  env: Record<string, string>,
): boolean | OutputFormat {
  switch (flag) {
    case '--json':
      return 'json';
    case '--format': {
      const text = value();
      if (text !== 'shell-results' && text !== 'json' && text !== 'human') {
        throw new UsageError(`--format takes shell-results, json or human, not ${JSON.stringify(text)}.`);
      }
      return text;
    }
    case '--memory':
      // Checked when the run starts (parseMemory), with the same one-line errors as the API.
      request.memory = value();
      return true;
    case '--keep-descendants':
      request.keepDescendants = true;
      return true;
    case '--cwd':
      request.cwd = value();
      return true;
    case '--env': {
      const pair = value();
      const eq = pair.indexOf('=');
      if (eq <= 0) throw new UsageError(`--env takes NAME=value, not ${JSON.stringify(pair)}.`);
      env[pair.slice(0, eq)] = pair.slice(eq + 1);
      return true;
    }
    case '--output-cap': {
      const text = value();
      const n = Number(text);
      if (!Number.isInteger(n) || n < 2) throw new UsageError(`--output-cap takes a number of characters (at least 2), not ${JSON.stringify(text)}.`);
      request.outputCapChars = n;
      return true;
    }
    default:
      return false;
  }
}

const DURATION_FLAGS: Record<string, keyof CommandRunRequest> = {
  '--limit': 'limitMs',
  '--grace': 'graceMs',
  '--terminate-after': 'terminateAfterMs',
  '--drain': 'drainMs',
  '--teardown-budget': 'teardownBudgetMs',
};

export function parseRunArgs(args: string[]): RunCommand {
  const request: CommandRunRequest = { argv: [] };
  let format: OutputFormat = 'human';
  const env: Record<string, string> = {};
  const cursor = new ArgCursor(args);
  const value = (flag: string) => cursor.value(flag);
  for (; cursor.i < args.length; cursor.i += 1) {
    const arg = args[cursor.i]!;
    if (arg === '--') {
      request.argv = args.slice(cursor.i + 1);
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      request.argv = args.slice(cursor.i);
      break;
    }
    const flag = arg.includes('=') ? arg.slice(0, arg.indexOf('=')) : arg;
    const shared = sharedOption(flag, () => value(arg), request, env);
    if (shared === true) continue;
    if (shared !== false) {
      format = shared;
      continue;
    }
    if (flag in DURATION_FLAGS) {
      const text = value(arg);
      const ms = parseDuration(text);
      if (ms === undefined) throw new UsageError(`${flag} takes a duration such as 500ms, 30s, 2m or 1h, not ${JSON.stringify(text)}.`);
      if (flag === '--limit' && ms <= 0) throw new UsageError('--limit must be more than 0.');
      (request as unknown as Record<string, number>)[DURATION_FLAGS[flag]!] = ms;
    } else if (flag === '--shell') {
      request.shell = true;
    } else if (flag === '--stdin') {
      request.stdin = value(arg);
    } else if (flag === '-c' || flag === '--session' || flag === '--on-busy') {
      throw new UsageError(`${flag} is for Python scripts: add --python.`);
    } else {
      throw new UsageError(`Unknown option ${flag} for warden run (see warden run --help).`);
    }
  }
  if (request.argv.length === 0) throw new UsageError('No command given: warden run [options] -- COMMAND [ARGS...]');
  if (request.shell && request.argv.length > 1) {
    // One shell string is what a user means; several words are joined as sh would see them.
    request.argv = [request.argv.join(' ')];
  }
  if (Object.keys(env).length > 0) request.env = env;
  return { request, format };
}

export const RUN_HELP = `Usage: warden run [options] -- COMMAND [ARGS...]
       warden run --python [--session NAME] [options] (-c CODE | FILE)

Runs COMMAND under supervision and reports how it ended. With --python, runs a
Python script in an interpreter session (FILE '-' reads the script from stdin):
at the limit it is interrupted (cancel, then SIGINT every 200 ms) and killed
only after the grace. Run embedded (no Warden host), each warden run has a
session of its own.

Options:
  --limit DURATION        stop it after this long (SIGINT, then SIGTERM, then SIGKILL); default: no limit
  --grace DURATION        from the limit to SIGKILL (default 5s; 10s with --python)
  --terminate-after DUR   from the limit to SIGTERM (default 2s)
  --drain DURATION        how long to read output a descendant holds open after the command exits (default 2s)
  --teardown-budget DUR   bound on ending leftover processes (default 10s)
  --keep-descendants      leave processes it started running after it exits
  --shell                 run COMMAND as one string through /bin/sh -c
  --cwd DIR               working directory
  --env NAME=VALUE        extra environment variable (repeatable)
  --stdin TEXT            text given on stdin (default: /dev/null)
  --memory SIZE           memory limit in its own cgroup, e.g. 256M or 1G (refused where no memory cgroup is writable)
  --output-cap CHARS      characters kept per stream, head and tail (default 2000000)
  --python                run a Python script (-c CODE or FILE) in a session
  -c CODE                 with --python: the script's source
  --session NAME          with --python: the session (default "default")
  --on-busy queue|refuse  with --python: wait behind a running script (default) or refuse
  --json                  print the result as one JSON object
  --format shell-results  print a block for a model to read
  --yield DURATION        return when it ends or after DURATION, whichever is first; a run still
                          going is left running in the host (exit 75; continue with warden wait ID)

Durations: 500ms, 30s, 2m, 1h (a bare number is seconds).
With a Warden host running (warden serve, or the app), the run goes through it
and appears live there; without one it is supervised in this process.

Exit status: the command's own; 124 when the limit stopped it; 128+n when signal n
ended it; 126 or 127 when it could not be run or was not found; 75 when --yield
returned first; 125 for Warden's own errors (bad arguments).`;
