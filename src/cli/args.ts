// `warden run` arguments to a run request. util.parseArgs splits the words
// (src/cli/parse.ts); every value is checked here, and every mistake is one
// line for the user, raised as a UsageError (exit status 125).

import { readFileSync } from 'node:fs';
import { parseDuration } from '../shared/duration';
import { MAX_OUTPUT_CAP_CHARS, type CommandRunRequest, type PythonRunRequest } from '../shared/request';
import { splitAtCommand, tokensOf, UsageError, type OptionSpec, type OptionToken } from './parse';

export { UsageError };

export type OutputFormat = 'human' | 'json' | 'shell-results';

/** What the client does rather than the run: wait at most yieldMs, or run the engine in this process. */
export interface ClientChoices {
  yieldMs?: number;
  embedded?: boolean;
  /** --owner-pid: the host stops the run when this process exits. */
  ownerPid?: number;
  /** --detach: the run does not belong to this command (it outlives it). */
  detach?: boolean;
  /** --stream-chars: characters of each stream a shell-results answer shows. */
  streamChars?: number;
  /** --termination-log: where the run's end is written for Kubernetes (src/cli/termination-log.ts). */
  terminationLog?: string;
}

/** WARDEN_DEFAULT_LIMIT when not set: agents' runs are never unbounded by accident. */
export const DEFAULT_AGENT_LIMIT = '10m';

/**
 * The limit an agent's run gets when it names none (MCP runs, and warden run
 * with --owner-pid): WARDEN_DEFAULT_LIMIT, else 10m; "0", "none" or "off": none.
 */
export function defaultLimitFrom(env: NodeJS.ProcessEnv = process.env): string | null {
  const text = env.WARDEN_DEFAULT_LIMIT?.trim();
  if (text === undefined || text === '') return DEFAULT_AGENT_LIMIT;
  if (/^(0|none|off)$/i.test(text)) return null;
  const ms = parseDuration(text);
  if (ms === undefined) throw new UsageError(`WARDEN_DEFAULT_LIMIT takes a duration such as 10m or 1h, or 0 or none for no limit, not ${JSON.stringify(text)}.`);
  return ms === 0 ? null : text;
}

export interface RunCommand extends ClientChoices {
  request: CommandRunRequest;
  format: OutputFormat;
}

/** `warden run --python`: the script's source comes from -c CODE, or from FILE ('-' is stdin), read by the caller. */
export interface PythonRunCommand extends ClientChoices {
  request: Omit<PythonRunRequest, 'code'>;
  source: { code: string } | { file: string };
  format: OutputFormat;
}

const SHARED: Record<string, OptionSpec> = {
  'termination-log': { type: 'string' },
  limit: { type: 'string' },
  grace: { type: 'string' },
  memory: { type: 'string' },
  'keep-descendants': { type: 'boolean' },
  cwd: { type: 'string' },
  env: { type: 'string' },
  'env-file': { type: 'string' },
  'output-cap': { type: 'string' },
  json: { type: 'boolean' },
  format: { type: 'string' },
  yield: { type: 'string' },
  embedded: { type: 'boolean' },
  python: { type: 'boolean' },
  'owner-pid': { type: 'string' },
  detach: { type: 'boolean' },
  'stream-chars': { type: 'string' },
};
const COMMAND_ONLY: Record<string, OptionSpec> = {
  shell: { type: 'boolean' },
  core: { type: 'boolean' },
  stdin: { type: 'string' },
  'terminate-after': { type: 'string' },
  drain: { type: 'string' },
  'teardown-budget': { type: 'string' },
};
const PYTHON_ONLY: Record<string, OptionSpec> = {
  c: { type: 'string', short: 'c' },
  session: { type: 'string' },
  'on-busy': { type: 'string' },
};
/** Every option either kind knows, so the other kind's options get a helpful refusal instead of "unknown". */
const ALL: Record<string, OptionSpec> = { ...SHARED, ...COMMAND_ONLY, ...PYTHON_ONLY };

/** `warden run` arguments: a command run, or a Python script with --python. */
export function parseAnyRunArgs(given: string[]): RunCommand | PythonRunCommand {
  const args = terminationLogArgs(given);
  const end = args.indexOf('--');
  const options = end >= 0 ? args.slice(0, end) : args;
  return options.includes('--python') ? parsePythonArgs(args) : parseRunArgs(args);
}

/** Kubernetes' terminationMessagePath default, which a bare --termination-log writes. */
const DEFAULT_TERMINATION_LOG = '/dev/termination-log';

/**
 * --termination-log takes an optional PATH: as --termination-log=PATH, or as
 * the next word when a later `--` marks where the command starts (else that
 * word could be the command). Bare, it is /dev/termination-log.
 */
function terminationLogArgs(args: string[]): string[] {
  const end = args.indexOf('--');
  const at = args.indexOf('--termination-log');
  if (at < 0 || (end >= 0 && at > end)) return args;
  const next = args[at + 1];
  const takesNext = end > at + 1 && next !== undefined && !next.startsWith('-');
  return [...args.slice(0, at), `--termination-log=${takesNext ? next : DEFAULT_TERMINATION_LOG}`, ...args.slice(at + (takesNext ? 2 : 1))];
}

export function isPythonCommand(command: RunCommand | PythonRunCommand): command is PythonRunCommand {
  return 'source' in command;
}

export function parseFormat(text: string): OutputFormat {
  if (text !== 'shell-results' && text !== 'json' && text !== 'human') throw new UsageError(`--format takes shell-results, json or human, not ${JSON.stringify(text)}.`);
  return text;
}

/** A duration option's value in ms: one line naming the flag when it is not one. */
export function durationOption(flag: string, text: string): number {
  const ms = parseDuration(text);
  if (ms === undefined) throw new UsageError(`${flag} takes a duration such as 500ms, 30s, 2m or 1h, not ${JSON.stringify(text)}.`);
  return ms;
}

export function parseYield(text: string): number {
  const ms = parseDuration(text);
  // 0 (0s, 0ms) is "return at once": the run is started and its snapshot printed.
  if (ms === undefined) throw new UsageError(`--yield takes a duration such as 0s (return at once), 500ms, 30s or 2m, not ${JSON.stringify(text)}.`);
  return ms;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * NAME=VALUE lines of an env file: blank lines and # comments skipped, an
 * `export ` prefix allowed, one pair of matching quotes around the value
 * removed. A line that is none of these is a one-line error naming it.
 */
export function readEnvFile(path: string): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`--env-file ${path}: ${code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'it is a directory' : (code ?? 'unreadable')}.`);
  }
  const env: Record<string, string> = {};
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const pair = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (!pair) throw new UsageError(`--env-file ${path}: line ${i + 1} is not NAME=VALUE.`);
    let value = pair[2]!;
    if (value.length >= 2 && (value[0] === '"' || value[0] === "'") && value.endsWith(value[0]!)) value = value.slice(1, -1);
    env[pair[1]!] = value;
  });
  return env;
}

const unknownFor = (command: string) => (rawName: string) => `Unknown option ${rawName} for ${command} (see warden run --help).`;

/**
 * The options a command run and a Python script both take, applied to the
 * request; returns false for an option that is not one of them.
 */
function sharedOption(
  token: Extract<OptionToken, { kind: 'option' }>,
  request: { memory?: string | number; keepDescendants?: boolean; cwd?: string; outputCapChars?: number },
  env: Record<string, string>,
  out: { format: OutputFormat } & ClientChoices,
): boolean {
  const value = token.value ?? '';
  switch (token.name) {
    case 'json':
      out.format = 'json';
      return true;
    case 'format':
      out.format = parseFormat(value);
      return true;
    case 'yield':
      out.yieldMs = parseYield(value);
      return true;
    case 'embedded':
      out.embedded = true;
      return true;
    case 'termination-log':
      if (value === '') throw new UsageError('--termination-log takes a file path (bare, it is /dev/termination-log).');
      out.terminationLog = value;
      return true;
    case 'owner-pid': {
      const pid = Number(value);
      if (!/^\d{1,10}$/.test(value) || !Number.isSafeInteger(pid) || pid < 2) throw new UsageError(`--owner-pid takes a process id, not ${JSON.stringify(value)}.`);
      out.ownerPid = pid;
      return true;
    }
    case 'detach':
      out.detach = true;
      return true;
    case 'stream-chars': {
      const n = Number(value);
      if (!/^\d+$/.test(value) || n < 200 || n > 200_000) throw new UsageError(`--stream-chars takes a number of characters from 200 to 200000, not ${JSON.stringify(value)}.`);
      out.streamChars = n;
      return true;
    }
    case 'python':
      return true;
    case 'memory':
      // Checked when the run starts (parseMemory), with the same one-line errors as the API.
      request.memory = value;
      return true;
    case 'keep-descendants':
      request.keepDescendants = true;
      return true;
    case 'cwd':
      request.cwd = value;
      return true;
    case 'env': {
      const eq = value.indexOf('=');
      if (eq < 0 && ENV_NAME.test(value)) {
        // NAME alone: the value from this environment, so a secret need not sit in argv (where ps shows it).
        const fromHere = process.env[value];
        if (fromHere === undefined) throw new UsageError(`--env ${value}: ${value} is not set in this environment.`);
        env[value] = fromHere;
        return true;
      }
      if (eq <= 0) throw new UsageError(`--env takes NAME=value or NAME, not ${JSON.stringify(value)}.`);
      env[value.slice(0, eq)] = value.slice(eq + 1);
      return true;
    }
    case 'env-file':
      Object.assign(env, readEnvFile(value));
      return true;
    case 'output-cap': {
      const n = Number(value);
      if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < 2 || n > MAX_OUTPUT_CAP_CHARS) {
        throw new UsageError(`--output-cap takes a number of characters from 2 to ${MAX_OUTPUT_CAP_CHARS} (what one run may keep in memory per stream), not ${JSON.stringify(value)}.`);
      }
      request.outputCapChars = n;
      return true;
    }
    default:
      return false;
  }
}

/** A duration option's ms; `--limit 0` is no limit (null), as timeout(1) and execa read it. */
function limitOption(token: Extract<OptionToken, { kind: 'option' }>): number | null {
  const ms = durationOption(token.rawName, token.value ?? '');
  if (token.name === 'limit' && ms === 0) return null;
  return ms;
}

function clientChoices(out: ClientChoices): ClientChoices {
  if (out.embedded && (out.ownerPid !== undefined || out.detach)) throw new UsageError(`${out.detach ? '--detach' : '--owner-pid'} needs the host, so the run can outlive this command: drop --embedded (or WARDEN_EMBEDDED).`);
  return {
    ...(out.yieldMs !== undefined ? { yieldMs: out.yieldMs } : {}),
    ...(out.embedded ? { embedded: true } : {}),
    ...(out.ownerPid !== undefined ? { ownerPid: out.ownerPid } : {}),
    ...(out.detach ? { detach: true } : {}),
    ...(out.streamChars !== undefined ? { streamChars: out.streamChars } : {}),
    ...(out.terminationLog !== undefined ? { terminationLog: out.terminationLog } : {}),
  };
}

function parsePythonArgs(args: string[]): PythonRunCommand {
  const request: Omit<PythonRunRequest, 'code'> = {};
  const out: { format: OutputFormat } & ClientChoices = { format: 'human' };
  const env: Record<string, string> = {};
  let code: string | undefined;
  const files: string[] = [];
  let afterTerminator = false;
  for (const token of tokensOf(args, ALL, 'warden run --python', unknownFor('warden run --python'))) {
    if (token.kind === 'option-terminator') {
      afterTerminator = true;
      continue;
    }
    if (token.kind === 'positional') {
      files.push(token.value);
      continue;
    }
    if (afterTerminator) continue;
    if (Object.hasOwn(COMMAND_ONLY, token.name)) throw new UsageError(`${token.rawName} is for commands, not with --python.`);
    if (sharedOption(token, request, env, out)) continue;
    const value = token.value ?? '';
    if (token.name === 'limit') request.limitMs = limitOption(token);
    else if (token.name === 'grace') request.graceMs = limitOption(token) ?? 0;
    else if (token.name === 'c') {
      if (code !== undefined) throw new UsageError('-c was given twice.');
      code = value;
    } else if (token.name === 'session') {
      if (!/^[A-Za-z0-9_.-]{1,64}$/.test(value)) throw new UsageError(`--session takes 1 to 64 letters, digits, '_', '.' or '-', not ${JSON.stringify(value)}.`);
      request.session = value;
    } else if (token.name === 'on-busy') {
      if (value !== 'queue' && value !== 'refuse') throw new UsageError(`--on-busy takes queue or refuse, not ${JSON.stringify(value)}.`);
      request.onBusy = value;
    }
  }
  if (code !== undefined && files.length > 0) throw new UsageError('--python takes -c CODE or FILE, not both.');
  if (files.length > 1) throw new UsageError(`--python runs one FILE, not ${files.length} (session scripts take no arguments).`);
  if (code === undefined && files.length === 0) throw new UsageError('No script given: warden run --python [options] (-c CODE | FILE)');
  if (Object.keys(env).length > 0) request.env = env;
  return { request, source: code !== undefined ? { code } : { file: files[0]! }, format: out.format, ...clientChoices(out) };
}

const DURATION_OPTIONS: Record<string, keyof CommandRunRequest> = {
  limit: 'limitMs',
  grace: 'graceMs',
  'terminate-after': 'terminateAfterMs',
  drain: 'drainMs',
  'teardown-budget': 'teardownBudgetMs',
};

export function parseRunArgs(args: string[]): RunCommand {
  const request: CommandRunRequest = { argv: [] };
  const out: { format: OutputFormat } & ClientChoices = { format: 'human' };
  const env: Record<string, string> = {};
  const { options, rest } = splitAtCommand(args, ALL, 'warden run', unknownFor('warden run'));
  for (const token of options) {
    if (token.kind !== 'option') continue;
    if (sharedOption(token, request, env, out)) continue;
    if (Object.hasOwn(DURATION_OPTIONS, token.name)) {
      (request as unknown as Record<string, number | null>)[DURATION_OPTIONS[token.name]!] = limitOption(token);
    } else if (token.name === 'core') {
      request.core = true;
    } else if (token.name === 'shell') {
      request.shell = true;
    } else if (token.name === 'stdin') {
      request.stdin = token.value ?? '';
    } else if (Object.hasOwn(PYTHON_ONLY, token.name)) {
      throw new UsageError(`${token.rawName} is for Python scripts: add --python.`);
    }
  }
  request.argv = rest;
  if (request.argv.length === 0) throw new UsageError('No command given: warden run [options] -- COMMAND [ARGS...]');
  if (request.shell && request.argv.length > 1) {
    // One shell string is what a user means; several words are joined as sh would see them.
    request.argv = [request.argv.join(' ')];
  }
  if (Object.keys(env).length > 0) request.env = env;
  return { request, format: out.format, ...clientChoices(out) };
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
  --env NAME=VALUE        extra environment variable (repeatable); --env NAME takes its value
                          from this environment, so a secret need not be in the command line
  --env-file FILE         NAME=VALUE lines (# comments, export prefix and quotes allowed)
  --stdin TEXT            text given on stdin (default: /dev/null)
  --memory SIZE           memory limit in its own cgroup, e.g. 256M or 1G (refused where no memory cgroup is writable)
  --core                  let a crash dump core: its core file size limit raised to the hard limit,
                          whatever the host's is (given by itself when this shell's own limit is
                          not 0, as after ulimit -c unlimited)
  --output-cap CHARS      characters kept per stream, head and tail (default 2000000, at most 10000000)
  --python                run a Python script (-c CODE or FILE) in a session
  -c CODE                 with --python: the script's source
  --session NAME          with --python: the session (default "default")
  --on-busy queue|refuse  with --python: wait behind a running script (default) or refuse
  --json                  print the result as one JSON object
  --format shell-results  print a block for a model to read: verdict, exit, elapsed, advice and
                          notes first, then each stream cut to its head and tail around a marker
                          naming the command that pages the rest (whole output in the history)
  --stream-chars N        with --format shell-results: characters of each stream shown
                          (default 8000, or WARDEN_MODEL_STREAM_CHARS)
  --yield DURATION        return when it ends or after DURATION, whichever is first (0s: at once);
                          a run still going is left running in the host (exit 75, or 0 with --format
                          shell-results, whose <next> line is the exact command to continue)
  --owner-pid PID         the run belongs to process PID (an agent): when it exits, the host stops
                          the run with a note; the run gets WARDEN_DEFAULT_LIMIT (default 10m;
                          0 or none: no limit) unless --limit is given
  --detach                the run does not belong to this command: it outlives warden run (killed
                          or not), and a signal to warden run does not stop it
  --embedded              supervise in this process instead of the host (also WARDEN_EMBEDDED=1);
                          no --yield then
  --termination-log [PATH] at the end, write the verdict, exit, elapsed, OOM and the last lines of
                          output as JSON within 4,096 bytes to PATH (default /dev/termination-log,
                          Kubernetes' termination message; a PATH word needs the -- before COMMAND)

Durations: 500ms, 30s, 2m, 1h, 1d (a bare number is seconds); --limit 0 is no limit.
The run goes through the state dir's Warden host (the app, warden serve, or a
background host started now when none runs), so it appears live there. Without
--yield it belongs to this command: if warden run dies, by any signal, the host
stops the run with the stop sequence and records why.

Exit status: the command's own; 124 when the limit stopped it; 128+n when signal n
ended it; 126 or 127 when it could not be run or was not found; 75 when --yield
returned first (0 with --format shell-results); 125 for Warden's own errors (bad arguments).`;
