// The `warden` command line, bundled by scripts/build-cli.mjs. Commands go
// through the state dir's host (src/client/autostart.ts starts one in the
// background when none runs), so every run appears live in the app and the
// history; --embedded (or WARDEN_EMBEDDED=1) supervises in this process.
// Only what a command needs is loaded: the engine, SQLite and zod are in lazy
// chunks that a call through a running host never imports. Never a stack
// trace for the user: bad input is one line and 125.

import { closeSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { join } from 'node:path';
import type { RunRequest } from '../shared/request';
import type { RunResult } from '../shared/result';
import { defaultLimitFrom, isPythonCommand, parseAnyRunArgs, refusedRunChoices, UsageError, type PythonRunCommand } from './args';
import type { HistorySource } from './history';
import { parseDuration } from '../shared/duration';
import { processName, processStartTime } from '../main/host/owner-pids';
import { agentLabel } from './agent-label';
import { connectToHost, HostUnreachableError } from '../client/transport';
import { embeddedFromEnv, hostApi } from '../client/autostart';
import { packageRoot } from '../client/package-root';
import { asThisProcess } from '../client/as-this-process';
import type { RemoteLink } from '../client/remotes';
import { clientError, extendCommand, runRemote, sessionsCommand, statusOf, stopCommand, waitCommand, YIELDED_STATUS } from './host-verbs';
import { resolveStateDir, unwritableReason } from '../client/state-dir';
import type { HttpWardenApi } from '../shared/http-api';
import type { CliIo } from './io';
import { HANDLED_SIGNALS } from './signals';
import { CLI_ERROR_EXIT, cliExitOf, errorText, kindOf } from '../shared/errors';
import { CONTRACT_NAMES, exitCodeChoice, exitStatusUnder, type ExitCodeChoice } from './exit-codes';

export const HELP = `Usage: warden <command> [options]

Commands:
  run [options] -- COMMAND [ARGS...]   run a command under supervision (see warden run --help)
  run --python [options] (-c CODE | FILE)
                                       run a Python script in an interpreter session
  wait ID [--yield D] [--all-output]   wait for a run's end (or D) and print its result;
       [--until ready|log:/RE/]        or until a service is ready, or a line of its output matches
  stop ID [--force]                    stop a live run with the stop sequence; print its result
  stop --owner PID|agent [--force]     stop every live run of a process and of those under it
  extend ID DURATION                   move a live run's deadline later (a service's: renew its lease)
  ports [ID] [--json]                  the TCP ports live runs listen on, with URLs for HTTP ones
  send ID TEXT [--no-newline] [--eof]  input to a run started with --stdin-pipe (answer its prompt)
  list [--live] [--verdict V] [--since 1h] [--search TEXT] [--json]
                                       past and live runs from the history
  show ID [--json]                     one run, live or from the history, whole
  search [ID] PATTERN [-F] [-i] [-C N] lines of runs' kept output that match, as rg -n -C prints them
  events [--ended] [--owner PID|agent] [--format line|json]
                                       the host's events as lines, for monitors and scripts
  sessions [--json]                    the host's Python sessions
  serve [--port PORT] [--open]         run a host: the engine, history, control socket and web UI
  app [--web]                          the desktop app where one is installed, else the web UI
  mcp                                  an MCP server over stdio for agents (see warden mcp --help)
  setup claude-code|codex|gemini [--scope user|project] [--shell] [--dry-run] [--remove]
                                       register warden mcp (and the shell hook) with an agent
  hook claude-code|codex|gemini        a harness's pre-tool hook: its shell tool through warden run
  history prune [--max-runs N] [--max-bytes SIZE]
                                       delete the oldest runs beyond the limits
  remote add|list|remove               other machines' hosts, over ssh, kubectl or any command (see warden remote --help)
  dial-stdio                           stdin and stdout to this state dir's host: a remote's bridge
  k8s job|sandbox|verdict              Kubernetes: a Job or a Sandbox under Warden, a pod's verdict into the history

Commands go through the state dir's host (the app, warden serve, or one started
in the background when none runs, which exits after 10 minutes with no live
run and no client: WARDEN_HOST_IDLE), so runs appear live there. --embedded or
WARDEN_EMBEDDED=1 supervises in this process instead. The history is a SQLite
file in $WARDEN_STATE_DIR (default ~/.local/state/warden), shared by all.
warden --remote NAME COMMAND (or WARDEN_REMOTE=NAME) sends run, wait, stop,
extend, list, show, sessions or mcp to a remote's host (warden remote --help);
list --all-hosts lists every host's runs.

Exit status: a run's own (see warden run --help); ${YIELDED_STATUS} when --yield returned
before the run ended (it goes on: warden wait ID; 0 with --format shell-results);
${CLI_ERROR_EXIT} for Warden's own errors. Inside a Kubernetes pod (or with --exit-codes k8s)
each verdict has a code of its own for a Job to act on (see warden run --help).

Options:
  --help      show this help
  --version   print the version`;

export type { CliIo };

/** The most of a Python script read from a file or stdin: far past any script, and a bound on what /dev/zero or `yes |` would feed. */
const MAX_SCRIPT_BYTES = 8 * 1024 * 1024;

const tooLong = (what: string) => new UsageError(`The script ${what} is larger than ${MAX_SCRIPT_BYTES / 1024 / 1024} MiB; nothing was run.`);

async function readProcessStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of process.stdin) {
    chunks.push(chunk as Buffer);
    length += (chunk as Buffer).length;
    if (length > MAX_SCRIPT_BYTES) {
      process.stdin.destroy();
      throw tooLong('on stdin');
    }
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** A script file's text, at most MAX_SCRIPT_BYTES: a regular file, or a pipe (`<(...)`); a device is read no further than the bound. */
function readScriptFile(path: string): string {
  const fd = openSync(path, 'r');
  try {
    if (fstatSync(fd).isDirectory()) throw Object.assign(new Error('a directory'), { code: 'EISDIR' });
    const buffer = Buffer.alloc(MAX_SCRIPT_BYTES + 1);
    let length = 0;
    for (let n; length < buffer.length && (n = readSync(fd, buffer, length, buffer.length - length, null)) > 0; ) length += n;
    if (length > MAX_SCRIPT_BYTES) throw tooLong(path);
    return buffer.subarray(0, length).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** The script's source: -c CODE, FILE, or stdin for '-'. A file that cannot be read is a usage error (125). */
async function pythonCode(command: PythonRunCommand, io: CliIo): Promise<string> {
  const { source } = command;
  if ('code' in source) return source.code;
  if (source.file === '-') return (io.readStdin ?? readProcessStdin)();
  try {
    return readScriptFile(source.file);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : code === 'EACCES' ? 'permission denied' : (code ?? 'unreadable');
    throw new UsageError(`Cannot read the script ${source.file}: ${why}.`);
  }
}

/**
 * Signals, and SIGPIPE as what it means here: no listener is installed for
 * the signal itself (Node ignores it, and a listener would also fire on every
 * EPIPE of the process's own sockets, such as a connection the host closed);
 * a write to stdout or stderr whose reader went away (`warden run ... | head`)
 * is reported as SIGPIPE instead, once.
 */
const pipeHandlers = new Set<(signal: NodeJS.Signals) => void>();
let pipeClosed = false;
function onOutputError(error: NodeJS.ErrnoException): void {
  if (error.code !== 'EPIPE' || pipeClosed) return;
  pipeClosed = true;
  for (const handler of [...pipeHandlers]) handler('SIGPIPE');
}
process.stdout.on('error', onOutputError);
process.stderr.on('error', onOutputError);

const processIo: CliIo = {
  out: (text) => void (pipeClosed ? undefined : process.stdout.write(text)),
  err: (text) => void (pipeClosed ? undefined : process.stderr.write(text)),
  onSignal: (handler, signals = HANDLED_SIGNALS) => {
    const caught = signals.filter((s) => s !== 'SIGPIPE');
    for (const s of caught) process.on(s, handler);
    if (signals.includes('SIGPIPE')) pipeHandlers.add(handler);
    return () => {
      caught.forEach((s) => process.off(s, handler));
      pipeHandlers.delete(handler);
    };
  },
};

function version(): string {
  try {
    const root = packageRoot();
    const pkg = JSON.parse(readFileSync(join(root ?? '.', 'package.json'), 'utf8')) as { version: string };
    return pkg.version;
  } catch {
    return 'unknown';
  }
}

/** A command added from above the CLI: src/warden.ts adds `mcp`, which imports the CLI's parsing. */
export type OuterCommand = (args: string[], io: CliIo) => Promise<number>;

/** Runs the CLI and returns its exit status. */
export async function main(allArgs: string[], io: CliIo = processIo, outer: Record<string, OuterCommand> = {}): Promise<number> {
  try {
    const { remoteName, args } = remoteOption(allArgs);
    const [command, ...rest] = args;
    if (command === undefined || command === '--help' || command === '-h' || (command === 'help' && rest.length === 0)) {
      io.out(`${HELP}\n`);
      // No command at all is a usage mistake (the help is printed); asking for help is not.
      return command === undefined ? cliExitOf('bad-input') : 0;
    }
    if (command === '--version' || command === '-V') {
      io.out(`warden ${version()}\n`);
      return 0;
    }
    // The help texts (every command's, and the modules they come from) load only for a call that asks for help.
    const asksHelp = command === 'help' || args.some((arg) => arg === '--help' || arg === '-h');
    const help = asksHelp ? (await import('./help')).helpFor(command === 'help' ? [...rest, '--help'] : args) : undefined;
    if (help !== undefined) {
      io.out(`${help}\n`);
      return 0;
    }
    if (command === 'help') {
      // `warden help mcp`: a command added from above answers its own --help.
      if (rest[0] !== undefined && Object.hasOwn(outer, rest[0])) return await outer[rest[0]]!(['--help'], io);
      throw new UsageError(`No command ${JSON.stringify(rest[0])} (see warden --help).`);
    }
    // In run, after its words are read: a remote that cannot be had is refused with its termination message.
    if (command === 'run') return await run(rest, io, () => remoteFor(command, remoteName));
    const remote = await remoteFor(command, remoteName);
    if (remote && Object.hasOwn(outer, command)) process.env.WARDEN_REMOTE = remote.name; // `mcp` reaches it the same way
    if (command === 'dial-stdio') return await (await import('./dial-stdio')).dialStdio(rest, io);
    if (command === 'remote') return await (await import('./remote-command')).remoteCommand(rest, io);
    if (command === 'k8s') return await (await import('./k8s/command')).k8sCommand(rest, io);
    if (command === 'serve') return await (await import('./serve')).serve(rest, io, version());
    if (command === 'app') return await (await import('./app')).appCommand(rest, io, packageRoot(), async (web) => (await import('./serve')).serve(web, io, version()));
    const outerCommand = Object.hasOwn(outer, command) ? outer[command] : undefined;
    if (outerCommand) return await outerCommand(rest, io);
    if (command === 'setup') return await (await import('./setup/index')).setupCommand(rest, io);
    if (command === 'hook') return await (await import('./hook/main')).hookMain(rest);
    const stateDir = resolveStateDir();
    if (command === 'list' || command === 'show') {
      // A running host answers (its live runs included); with none, the store is read directly.
      const source = async (live = false): Promise<HistorySource> => {
        const host = remote ? remote.api : live ? await hostFor(stateDir, io) : await connectToHost(stateDir);
        if (host) return { page: (q) => host.history(q), get: (id) => host.get(id) };
        return (await import('./store-access')).storeSource;
      };
      if (command === 'list' && rest.includes('--all-hosts') && remote) throw new UsageError('--all-hosts lists every host already: drop --remote (or WARDEN_REMOTE).');
      if (command === 'list' && rest.includes('--all-hosts')) return await (await import('./all-hosts')).listAllHosts(rest, io, stateDir, source);
      const { list, show } = await import('./history');
      return command === 'list' ? await list(rest, io.out, source) : await show(rest, io.out, () => source(), io.err, io.outIsTTY ?? process.stdout.isTTY === true);
    }
    const host = async () => remote?.api ?? hostFor(stateDir, io);
    if (command === 'wait') return await waitCommand(rest, io, host, stateDir, remote?.transport);
    if (command === 'search') return await (await import('./search')).searchCommand(rest, io, host);
    if (command === 'events') return await (await import('./events')).eventsCommand(rest, io, host, stateDir, remote?.transport);
    // --owner: a process's runs (stop-owned.ts, which reads /proc through the hook's agent finder: loaded only then).
    if (command === 'stop' && rest.some((arg) => arg === '--owner' || arg.startsWith('--owner='))) return await (await import('./stop-owned')).stopOwned(rest, io, host);
    if (command === 'stop') return await stopCommand(rest, io, host);
    if (command === 'extend') return await extendCommand(rest, io, host);
    if (command === 'ports') return await (await import('./services')).portsCommand(rest, io, host);
    if (command === 'send') return await (await import('./services')).sendCommand(rest, io, host);
    if (command === 'sessions') return await sessionsCommand(rest, io, remote ? remote.api : await connectToHost(stateDir));
    if (command === 'history') {
      if (rest[0] !== 'prune') throw new UsageError(`warden history takes a subcommand: prune (see warden history --help).`);
      return await (await import('./store-access')).prune(rest.slice(1), io.out);
    }
    throw new UsageError(`Unknown command ${JSON.stringify(command)} (see warden --help).`);
  } catch (error) {
    return reportError(error, io);
  }
}

/**
 * Warden's own error as one line and its exit status, by its kind
 * (src/shared/errors.ts): a WardenError says its message; anything else is
 * an internal error.
 */
export function reportError(error: unknown, io: Pick<CliIo, 'err'>): number {
  let said = error;
  // A host or a remote's link gone mid-command (list, show): the same one line as run and wait give.
  if (error instanceof HostUnreachableError) {
    try {
      clientError(error);
    } catch (reworded) {
      said = reworded;
    }
  }
  io.err(`warden: ${errorText(said, 'internal error: ')}\n`);
  return cliExitOf(kindOf(said));
}

/** The state dir's host: the running one, or one started in the background now. */
async function hostFor(stateDir: string, io: CliIo): Promise<HttpWardenApi> {
  if (embeddedFromEnv()) {
    const running = await connectToHost(stateDir);
    if (running) return running;
    throw new UsageError('No Warden host is running, and WARDEN_EMBEDDED starts none: no run is live here (ended runs: warden show ID).');
  }
  // Said on a terminal only: where a model reads stderr (a hook, an agent's shell), host.log has it.
  return hostApi(stateDir, { onStart: (log) => (io.errIsTTY ?? process.stderr.isTTY === true) && io.err(`warden: starting a background Warden host for ${stateDir} (log: ${log})\n`) });
}

/** The commands `--remote NAME` (or WARDEN_REMOTE) sends to another machine's host. */
const REMOTE_COMMANDS = new Set(['run', 'wait', 'stop', 'extend', 'ports', 'send', 'list', 'show', 'search', 'events', 'sessions', 'mcp']);

/** A leading `--remote NAME` (or --remote=NAME), taken off the words. */
function remoteOption(args: string[]): { remoteName: string | undefined; args: string[] } {
  const [first, second] = args;
  if (first === '--remote') {
    if (second === undefined || second.startsWith('-')) throw new UsageError('--remote needs a remote\'s name: warden --remote NAME COMMAND (see warden remote list).');
    return { remoteName: second, args: args.slice(2) };
  }
  if (first?.startsWith('--remote=')) return { remoteName: first.slice('--remote='.length), args: args.slice(1) };
  return { remoteName: undefined, args };
}

/** The remote a command goes to: --remote NAME, else WARDEN_REMOTE for the commands that take one; null for this machine's host. */
async function remoteFor(command: string | undefined, explicit: string | undefined): Promise<RemoteLink | null> {
  const fromEnv = process.env.WARDEN_REMOTE;
  const name = explicit ?? (command !== undefined && REMOTE_COMMANDS.has(command) && fromEnv ? fromEnv : undefined);
  if (name === undefined) return null;
  if (command === undefined || !REMOTE_COMMANDS.has(command)) throw new UsageError(`--remote goes with ${[...REMOTE_COMMANDS].join(', ')}${command === undefined ? '' : `, not ${command}`}.`);
  // Loaded only here: spawning ssh is for remotes alone.
  return (await import('../client/remotes')).remoteLink(resolveStateDir(), name);
}

async function run(args: string[], io: CliIo, remoteOf: () => Promise<RemoteLink | null>): Promise<number> {
  let command: ReturnType<typeof parseAnyRunArgs> | undefined;
  let contract: string | undefined;
  try {
    command = parseAnyRunArgs(args);
    const exitCodes = exitCodeChoice(command);
    contract = CONTRACT_NAMES[exitCodes.contract];
    return await runParsed(command, io, await remoteOf(), exitCodes);
  } catch (error) {
    // A run that never started still leaves its termination message: why, and the status Warden exits with;
    // for a refused command line, at the path its words give.
    const refused = command === undefined ? refusedRunChoices(args) : undefined;
    const path = command !== undefined ? command.terminationLog : refused!.terminationLog;
    if (path !== undefined) {
      if (refused) contract = refusedContract(refused);
      const { writeTerminationError } = await import('./termination-log');
      writeTerminationError(path, errorText(error, 'internal error: '), cliExitOf(kindOf(error)), io.err, contract);
    }
    throw error;
  }
}

/** The contract a refused command line's choices name, when they agree (else the message goes without one). */
function refusedContract(choices: ReturnType<typeof refusedRunChoices>): string | undefined {
  try {
    return CONTRACT_NAMES[exitCodeChoice(choices).contract];
  } catch {
    return undefined;
  }
}

async function runParsed(command: ReturnType<typeof parseAnyRunArgs>, io: CliIo, remote: RemoteLink | null, exitCodes: ExitCodeChoice): Promise<number> {
  const { format, yieldMs } = command;
  const exitStatus = (result: RunResult) => exitStatusUnder(exitCodes, result);
  const embedded = command.embedded === true || embeddedFromEnv();
  if (embedded && yieldMs !== undefined) throw new UsageError('--yield needs the host, so the run can go on after this command returns: drop --embedded (or WARDEN_EMBEDDED).');
  if (embedded && (command.ownerPid !== undefined || command.detach)) throw new UsageError(`${command.detach ? '--detach' : '--owner-pid'} needs the host, so the run can outlive this command: drop --embedded (or WARDEN_EMBEDDED).`);
  const service = !isPythonCommand(command) && command.request.ready !== undefined;
  if (embedded && service) throw new UsageError('--ready needs the host, so the service goes on after warden run answers that it is ready: drop --embedded (or WARDEN_EMBEDDED).');
  let request: RunRequest = isPythonCommand(command) ? { ...command.request, code: await pythonCode(command, io) } : command.request;
  let ownerPid: { pid: number; startTime: string; label: string } | undefined;
  if (command.ownerPid !== undefined) {
    const startTime = processStartTime(command.ownerPid);
    if (startTime === null) throw new UsageError(`--owner-pid ${command.ownerPid}: no such process is running.`);
    const name = agentLabel(command.ownerPid);
    ownerPid = { pid: command.ownerPid, startTime, label: name ?? `process ${command.ownerPid}` };
    // An agent's run is never unbounded by accident: WARDEN_DEFAULT_LIMIT (10m) unless --limit says otherwise;
    // a service (--ready) is bounded by its lease instead, as a dev server must outlive 10 minutes.
    if (request.limitMs === undefined && !('ready' in request && request.ready !== undefined)) {
      const limit = defaultLimitFrom();
      if (limit !== null) request = { ...request, limitMs: parseDuration(limit)! };
    }
  }
  const stateDir = resolveStateDir();
  const terminationLog = command.terminationLog === undefined ? null : await terminationLogWriter(command.terminationLog, io, exitCodes);
  if (remote) {
    if (embedded) throw new UsageError('--embedded supervises on this machine: drop it (or WARDEN_EMBEDDED) to run on a remote.');
    if (ownerPid) throw new UsageError('--owner-pid names a process on this machine, which the remote host cannot watch: a remote run belongs to this command, or to nobody with --yield or --detach.');
    if (request.cwd !== undefined && !request.cwd.startsWith('/')) throw new UsageError(`A remote run's --cwd is a directory there: give an absolute path, not ${JSON.stringify(request.cwd)}.`);
    // Not asThisProcess: this machine's directory and environment are not the remote's.
    return runRemote({ api: remote.api, link: remote.transport, stateDir, request, format, exitStatus, ...(terminationLog ? { onResult: terminationLog(remote.api) } : {}), ...(yieldMs !== undefined ? { yieldMs } : {}), ...(command.detach ? { detach: true } : {}), ...(command.streamChars !== undefined ? { streamChars: command.streamChars } : {}) }, io);
  }
  if (!embedded) {
    // A state dir nobody can write holds no host's socket: unless one already runs there, the run still happens, here, unrecorded.
    const why = unwritableReason(stateDir);
    const api = why === null ? await hostFor(stateDir, io) : await connectToHost(stateDir);
    if (api) {
      return runRemote(
        {
          api,
          stateDir,
          request: withOwner(withOwnCoreLimit(asThisProcess(request)), ownerPid === undefined),
          format,
          exitStatus,
          ...(terminationLog ? { onResult: terminationLog(api) } : {}),
          ...(yieldMs !== undefined ? { yieldMs } : {}),
          ...(ownerPid ? { ownerPid } : {}),
          ...(command.detach ? { detach: true } : {}),
          ...(command.streamChars !== undefined ? { streamChars: command.streamChars } : {}),
          // The hook's line (--yield with --owner-pid): owned by this command until its first yield, then by the agent.
          ...(yieldMs !== undefined && ownerPid && !command.detach ? { ownUntilYield: { version: version() } } : {}),
        },
        io,
      );
    }
    if (ownerPid || command.detach) throw new UsageError(`${command.detach ? '--detach' : '--owner-pid'} needs a Warden host, and none can run for ${stateDir}: it is not writable (${why}). Set WARDEN_STATE_DIR to a writable directory.`);
    if (yieldMs !== undefined) throw new UsageError(`--yield needs a Warden host, and none can run for ${stateDir}: it is not writable (${why}). Set WARDEN_STATE_DIR to a writable directory.`);
    if (service) throw new UsageError(`--ready needs a Warden host, and none can run for ${stateDir}: it is not writable (${why}). Set WARDEN_STATE_DIR to a writable directory.`);
    io.err(`warden: the history is not being written: the state dir ${stateDir} is not writable (${why}), so no Warden host can run for it; this run is supervised here instead. Set WARDEN_STATE_DIR to a writable directory to keep a history.\n`);
    return (await import('./embedded')).runEmbedded(request, format, io, { history: false, exitStatus, ...(terminationLog ? { onResult: terminationLog(null) } : {}) });
  }
  return (await import('./embedded')).runEmbedded(request, format, io, { exitStatus, ...(terminationLog ? { onResult: terminationLog(null) } : {}) });
}

/**
 * --termination-log: the writer of a run's end, given the host it ran in (null: in this
 * process). A person's answer holds only the output not yet streamed, so an ended run's
 * whole result is asked of the host for the last lines.
 */
async function terminationLogWriter(path: string, io: CliIo, exitCodes: ExitCodeChoice): Promise<(api: HttpWardenApi | null) => (result: RunResult) => Promise<void>> {
  const { writeTerminationLog } = await import('./termination-log');
  return (api) => async (result) => {
    const whole = api && result.state === 'ended' ? ((await api.get(result.id).catch(() => null)) ?? result) : result;
    writeTerminationLog(path, whole, statusOf(result, 'human', (ended) => exitStatusUnder(exitCodes, ended)), io.err, CONTRACT_NAMES[exitCodes.contract]);
  };
}

/**
 * A command sent to the host as this shell would run it: with core dumps
 * allowed when this process's own soft core limit allows them (ulimit -c
 * unlimited), since the host's own limit is not the one the user set.
 */
export function withOwnCoreLimit(request: RunRequest, limits: string | null = readOwnLimits()): RunRequest {
  if ('code' in request || request.core !== undefined || limits === null) return request;
  const soft = /^Max core file size\s+(\S+)/m.exec(limits)?.[1];
  return soft !== undefined && soft !== '0' ? { ...request, core: true } : request;
}

function readOwnLimits(): string | null {
  try {
    return readFileSync('/proc/self/limits', 'utf8');
  } catch {
    return null;
  }
}

/**
 * Who started a run from a terminal: the shell (or the program) that ran
 * warden run, by its pid and name, so a list groups a terminal's runs
 * together. A run owned with --owner-pid is named by its owner (the host
 * does that from the query).
 */
export function withOwner(request: RunRequest, fromTerminal: boolean, parent: number = process.ppid, nameOf: (pid: number) => string | null = processName): RunRequest {
  if (!fromTerminal || request.owner !== undefined || parent < 2) return request;
  return { ...request, owner: { label: nameOf(parent) ?? `process ${parent}`, pid: parent } };
}
