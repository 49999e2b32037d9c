// `warden run` arguments to a run request. util.parseArgs splits the words
// (src/cli/parse.ts); every value is checked here, and every mistake is one
// line for the user, raised as a UsageError (exit status 125).

import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parseDuration } from '../shared/duration';
import { CLI_ERROR_EXIT } from '../shared/errors';
import { MAX_OUTPUT_CAP_CHARS, type CommandRunRequest, type PythonRunRequest } from '../shared/request';
import { splitAtCommand, tokensOf, UsageError, type OptionSpec, type OptionToken } from './parse';
import { parseExitCodes, parseOomExitCode, type ExitCodeContract } from './exit-codes';

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
  /** --exit-codes: how the run's end becomes the exit status (src/cli/exit-codes.ts); absent: by the environment. */
  exitCodes?: ExitCodeContract;
  /** --oom-exit-code: a confirmed OOM kill's status under the k8s contract. */
  oomExitCode?: number;
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
  'exit-codes': { type: 'string' },
  'oom-exit-code': { type: 'string' },
};
const COMMAND_ONLY: Record<string, OptionSpec> = {
  shell: { type: 'boolean' },
  'ok-exit': { type: 'string' },
  core: { type: 'boolean' },
  stdin: { type: 'string' },
  'stdin-pipe': { type: 'boolean' },
  ready: { type: 'string' },
  'ready-timeout': { type: 'string' },
  'ready-interval': { type: 'string' },
  'ready-delay': { type: 'string' },
  'ready-status': { type: 'string' },
  'on-not-ready': { type: 'string' },
  lease: { type: 'string' },
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

/**
 * What a `warden run` command line that parseAnyRunArgs refused still says:
 * where its termination message goes and the exit-code choices that read,
 * so the refusal is written there too. Its options only (before the command
 * or `--`), split as parseAnyRunArgs splits them; never throws.
 */
export function refusedRunChoices(given: string[]): { terminationLog?: string; exitCodes?: ExitCodeContract; oomExitCode?: number } {
  const found: { terminationLog?: string; exitCodes?: ExitCodeContract; oomExitCode?: number } = {};
  try {
    const args = terminationLogArgs(given);
    const end = args.indexOf('--');
    const python = (end >= 0 ? args.slice(0, end) : args).includes('--python');
    const { tokens } = parseArgs({ args, options: ALL, strict: false, allowPositionals: true, tokens: true });
    for (const token of tokens) {
      // A command's words are its own; a Python FILE may come before more options.
      if (token.kind === 'option-terminator' || (token.kind === 'positional' && !python)) break;
      if (token.kind !== 'option' || token.value === undefined) continue;
      try {
        if (token.name === 'termination-log' && token.value !== '') found.terminationLog = token.value;
        else if (token.name === 'exit-codes') found.exitCodes = parseExitCodes(token.value);
        else if (token.name === 'oom-exit-code') found.oomExitCode = parseOomExitCode(token.value);
      } catch {
        // Not one that reads: the message goes without it.
      }
    }
  } catch {
    // Words parseArgs itself cannot split: nothing is known.
  }
  return found;
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

/** The most an --env-file may hold: far past any real one, and a bound on what /dev/zero would feed. */
export const MAX_ENV_FILE_BYTES = 1024 * 1024;

/**
 * A regular file's text, at most `maxBytes` of it: anything else (a FIFO, a
 * device such as /dev/zero, a directory) is refused in one line before a
 * byte is read, and a file past the bound (or one that grows past it while
 * read) too, so the CLI never blocks or fills memory on what a path names.
 */
export function readSmallFile(path: string, flag: string, maxBytes: number): string {
  let fd: number;
  try {
    // O_NONBLOCK: opening a FIFO with no writer must not wait for one.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`${flag} ${path}: ${code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (code ?? 'unreadable')}.`);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) {
      const what = stat.isDirectory() ? 'a directory' : stat.isFIFO() ? 'a FIFO (a pipe)' : stat.isCharacterDevice() || stat.isBlockDevice() ? 'a device' : stat.isSocket() ? 'a socket' : 'not a file';
      throw new UsageError(`${flag} ${path}: it is ${what}; give a regular file.`);
    }
    const tooBig = () => new UsageError(`${flag} ${path}: it is larger than ${maxBytes} bytes; an env file holds NAME=VALUE lines.`);
    if (stat.size > maxBytes) throw tooBig();
    const buffer = Buffer.alloc(maxBytes + 1);
    let length = 0;
    for (let n; length < buffer.length && (n = readSync(fd, buffer, length, buffer.length - length, null)) > 0; ) length += n;
    if (length > maxBytes) throw tooBig();
    return buffer.subarray(0, length).toString('utf8');
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`${flag} ${path}: ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}.`);
  } finally {
    closeSync(fd);
  }
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * NAME=VALUE lines of an env file: blank lines and # comments skipped, an
 * `export ` prefix allowed, one pair of matching quotes around the value
 * removed. A line that is none of these is a one-line error naming it.
 */
export function readEnvFile(path: string): Record<string, string> {
  const text = readSmallFile(path, '--env-file', MAX_ENV_FILE_BYTES);
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
    case 'exit-codes':
      out.exitCodes = parseExitCodes(value);
      return true;
    case 'oom-exit-code':
      out.oomExitCode = parseOomExitCode(value);
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
    ...(out.exitCodes !== undefined ? { exitCodes: out.exitCodes } : {}),
    ...(out.oomExitCode !== undefined ? { oomExitCode: out.oomExitCode } : {}),
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

/** An --ok-exit value: exit codes 1 to 255, one or a comma list ("1" or "1,2"). */
export function okExitCodes(text: string): number[] {
  const words = text.split(',').map((w) => w.trim());
  return words.map((word) => {
    const n = Number(word);
    if (word === '0') throw new UsageError('--ok-exit lists exit codes besides 0, which always means success.');
    if (!/^\d{1,3}$/.test(word) || n < 1 || n > 255) throw new UsageError(`--ok-exit takes exit codes from 1 to 255 (repeat it, or give 1,2), not ${JSON.stringify(text)}.`);
    return n;
  });
}

/** The readiness options of warden run, each checked; the probes themselves are checked by the engine (one line each). */
const READY_OPTIONS = new Set(['ready', 'ready-timeout', 'ready-interval', 'ready-delay', 'ready-status', 'on-not-ready']);

function readyOption(token: Extract<OptionToken, { kind: 'option' }>, ready: Partial<NonNullable<CommandRunRequest['ready']>> & { probes: string[] }): void {
  const value = token.value ?? '';
  switch (token.name) {
    case 'ready':
      if (value === '') throw new UsageError('--ready takes a probe: port, tcp:[HOST:]PORT, http://..., log:/REGEX/, exec:CMD or file:PATH.');
      ready.probes.push(value);
      return;
    case 'ready-timeout':
      ready.timeoutMs = durationOption(token.rawName, value);
      if (ready.timeoutMs === 0) throw new UsageError('--ready-timeout must be more than 0 (the default is 120s).');
      return;
    case 'ready-interval':
      ready.intervalMs = durationOption(token.rawName, value);
      return;
    case 'ready-delay':
      ready.delayMs = durationOption(token.rawName, value);
      return;
    case 'ready-status':
      ready.status = value;
      return;
    case 'on-not-ready':
      if (value !== 'stop' && value !== 'keep') throw new UsageError(`--on-not-ready takes stop or keep, not ${JSON.stringify(value)}.`);
      ready.onNotReady = value;
      return;
  }
}

export function parseRunArgs(args: string[]): RunCommand {
  const request: CommandRunRequest = { argv: [] };
  const out: { format: OutputFormat } & ClientChoices = { format: 'human' };
  const env: Record<string, string> = {};
  const ready: Partial<NonNullable<CommandRunRequest['ready']>> & { probes: string[] } = { probes: [] };
  let readyFlag: string | undefined;
  const { options, rest } = splitAtCommand(args, ALL, 'warden run', unknownFor('warden run'));
  for (const token of options) {
    if (token.kind !== 'option') continue;
    if (sharedOption(token, request, env, out)) continue;
    if (READY_OPTIONS.has(token.name)) {
      readyOption(token, ready);
      if (token.name !== 'ready') readyFlag ??= token.rawName;
    } else if (token.name === 'lease') {
      const ms = durationOption(token.rawName, token.value ?? '');
      request.leaseMs = ms === 0 ? null : ms;
    } else if (token.name === 'stdin-pipe') {
      request.stdinPipe = true;
    } else if (Object.hasOwn(DURATION_OPTIONS, token.name)) {
      (request as unknown as Record<string, number | null>)[DURATION_OPTIONS[token.name]!] = limitOption(token);
    } else if (token.name === 'core') {
      request.core = true;
    } else if (token.name === 'shell') {
      request.shell = true;
    } else if (token.name === 'stdin') {
      request.stdin = token.value ?? '';
    } else if (token.name === 'ok-exit') {
      request.okExitCodes = [...new Set([...(request.okExitCodes ?? []), ...okExitCodes(token.value ?? '')])];
    } else if (Object.hasOwn(PYTHON_ONLY, token.name)) {
      throw new UsageError(`${token.rawName} is for Python scripts: add --python.`);
    }
  }
  request.argv = rest;
  if (request.argv.length === 0) throw new UsageError('No command given: warden run [options] -- COMMAND [ARGS...]');
  if (ready.probes.length > 0) request.ready = ready;
  else if (readyFlag !== undefined) throw new UsageError(`${readyFlag} goes with --ready PROBE (e.g. --ready port).`);
  if (request.stdinPipe && request.stdin !== undefined) throw new UsageError('--stdin (text given at once) and --stdin-pipe (input sent later with warden send) exclude each other.');
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
  --ok-exit CODE          an exit code besides 0 that means success, such as grep's 1 (no match) or
                          diff's 1 (they differ): verdict completed with a note; repeatable, or 1,2.
                          warden run still exits with the command's own status
  --cwd DIR               working directory
  --env NAME=VALUE        extra environment variable (repeatable); --env NAME takes its value
                          from this environment, so a secret need not be in the command line
  --env-file FILE         NAME=VALUE lines (# comments, export prefix and quotes allowed)
  --stdin TEXT            text given on stdin (default: /dev/null)
  --stdin-pipe            keep a pipe on stdin open: answer prompts with warden send ID TEXT
  --ready PROBE           a service: answer as soon as it is ready, with the run still going
                          (exit 0; repeatable, all must pass): port (its processes listen on
                          a TCP port; port:N on N), tcp:[HOST:]PORT (a connect succeeds),
                          http://URL (GET answers 200-399), log:/REGEX/[imsu] (a line of
                          its output matches; a numeric first group is recorded as a port),
                          exec:CMD (sh -c CMD exits 0, 5s per try), file:PATH (exists, size
                          unchanged for 750ms)
  --ready-timeout DUR     give up after this long from the start (default 120s): exit 3, and
                          the run is stopped (output kept) unless --on-not-ready keep
  --ready-interval DUR    between tries of the polled probes (default 250ms)
  --ready-delay DUR       before the first try (default 0)
  --ready-status A-B      HTTP statuses an http probe takes (default 200-399; e.g. 200-499)
  --on-not-ready stop|keep  at the ready timeout: stop the run (default) or leave it running
  --lease DURATION        the run is stopped when its lease runs out unless renewed with
                          warden extend ID DURATION (default 2h with --ready, none without;
                          0: none). With --ready, WARDEN_DEFAULT_LIMIT does not apply
  --memory SIZE           memory limit in its own cgroup: 512M, 2G, 1.5Gi (powers of 1024, with or
                          without i), or bytes (refused where no memory cgroup is writable)
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
                          Kubernetes' termination message; a PATH word needs the -- before COMMAND);
                          a run refused before it starts, command line included, leaves why (exit ${CLI_ERROR_EXIT})
  --exit-codes CONTRACT   standard or k8s: how the end becomes the exit status (see below; default
                          k8s inside a Kubernetes pod, where KUBERNETES_SERVICE_HOST is set)
  --oom-exit-code N       with k8s: the status of a confirmed OOM kill (default 137; a code of its
                          own, such as 75, lets a Job's podFailurePolicy tell it from other kills)

Durations: 500ms, 30s, 2m, 1h, 1d (a bare number is seconds); --limit 0 is no limit.
The run goes through the state dir's Warden host (the app, warden serve, or a
background host started now when none runs), so it appears live there. Without
--yield it belongs to this command: if warden run dies, by any signal, the host
stops the run with the stop sequence and records why; with --yield and
--owner-pid (a hook's line) until it yields, then it is the owner's. The command starts with
this process's umask and resource limits (ulimit), not the host's.

With --ready, warden run answers as soon as the run is ready (its ready line and
ports first), or when the ready timeout passes, or when it ends; a ready run goes
on in the host (it is not this command's: Ctrl-C before it is ready stops it), and
ends at its lease, with its --owner-pid, or with warden stop ID. Its ports: warden
ports ID; a line of its output after an edit: warden wait ID --until log:/REGEX/.

Exit status (standard): the command's own; 0 when --ready found it ready; 3 when it
was not ready by --ready-timeout; 124 when the limit stopped it; 128+n when signal n
ended it; 126 or 127 when it could not be run or was not found; 75 when --yield
returned first (0 with --format shell-results); ${CLI_ERROR_EXIT} for Warden's own errors (bad arguments).
With --exit-codes k8s: completed 0; failed the command's own; timed out 124; Warden's own
error ${CLI_ERROR_EXIT} (a lost host too); a confirmed OOM kill --oom-exit-code (137); another signal n
128+n; stopped on request (a signal to warden, warden stop) 143; 126 or 127 as above.`;
