// The `warden` command line. With a host running for the state dir (warden
// serve, or the app), run / wait / stop / extend / list / show / sessions go
// through its control socket, so the runs appear live there; with none, runs
// are supervised embedded in this process and still recorded in the shared
// history. Never a stack trace for the user: bad input is one line and 125.

import { readFileSync } from 'node:fs';
import { WardenInputError } from '../main/supervisor/options';
import { Supervisor } from '../main/supervisor/registry';
import type { RunResult } from '../shared/result';
import type { RunRequest } from '../shared/request';
import { isPythonCommand, parseAnyRunArgs, RUN_HELP, UsageError, type OutputFormat, type PythonRunCommand } from './args';
import { list, LIST_HELP, prune, PRUNE_HELP, recordHistory, show, SHOW_HELP, storeSource, type HistorySource } from './history';
import { exitStatusFor, humanSummary, shellResults } from './render';
import { connectToHost } from '../client/transport';
import { EXTEND_HELP, extendCommand, parseYield, runRemote, SESSIONS_HELP, sessionsCommand, STOP_HELP, stopCommand, WAIT_HELP, waitCommand, YIELDED_STATUS } from './remote';
import { serve, SERVE_HELP } from './serve';
import { resolveStateDir } from '../main/store/state-dir';
import type { HttpWardenApi } from '../shared/http-api';

export const HELP = `Usage: warden <command> [options]

Commands:
  run [options] -- COMMAND [ARGS...]   run a command under supervision (see warden run --help)
  run --python [options] (-c CODE | FILE)
                                       run a Python script in an interpreter session
  wait ID [--yield D] [--all-output]   wait for a run's end (or D) and print its result
  stop ID [--force]                    stop a live run with the stop sequence; print its result
  extend ID DURATION                   move a live run's deadline later
  list [--verdict V] [--since 1h] [--search TEXT] [--json]
                                       past and live runs from the history
  show ID [--json]                     one run, live or from the history, whole
  sessions [--json]                    the host's Python sessions
  serve [--port PORT] [--open]         run a host: the engine, history, control socket and web UI
  history prune [--max-runs N] [--max-bytes SIZE]
                                       delete the oldest runs beyond the limits

With a host running (warden serve, or the app), commands go through its control
socket and runs appear live there; without one, warden run supervises in this
process. The history is a SQLite file in $WARDEN_STATE_DIR (default
~/.local/state/warden), shared by all of them.

Exit status: a run's own (see warden run --help); ${YIELDED_STATUS} when --yield returned
before the run ended (it goes on: warden wait ID); 125 for Warden's own errors.

Options:
  --help      show this help
  --version   print the version`;

export interface CliIo {
  out: (text: string) => void;
  err: (text: string) => void;
  /** Registers what to do on SIGINT / SIGTERM; returns the unregister function. */
  onSignal: (handler: (signal: NodeJS.Signals) => void) => () => void;
  /** All of stdin, for `warden run --python -` (default: this process's stdin). */
  readStdin?: () => Promise<string>;
}

async function readProcessStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** The script's source: -c CODE, FILE, or stdin for '-'. A file that cannot be read is a usage error (125). */
async function pythonCode(command: PythonRunCommand, io: CliIo): Promise<string> {
  const { source } = command;
  if ('code' in source) return source.code;
  if (source.file === '-') return (io.readStdin ?? readProcessStdin)();
  try {
    return readFileSync(source.file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : code === 'EACCES' ? 'permission denied' : (code ?? 'unreadable');
    throw new UsageError(`Cannot read the script ${source.file}: ${why}.`);
  }
}

const processIo: CliIo = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
  onSignal: (handler) => {
    const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
    for (const s of signals) process.on(s, handler);
    return () => signals.forEach((s) => process.off(s, handler));
  },
};

function version(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    return pkg.version;
  } catch {
    return 'unknown';
  }
}

/** Runs the CLI and returns its exit status. */
export async function main(args: string[], io: CliIo = processIo): Promise<number> {
  try {
    const [command, ...rest] = args;
    if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
      io.out(`${HELP}\n`);
      return command === undefined ? 125 : 0;
    }
    if (command === '--version' || command === '-V') {
      io.out(`warden ${version()}\n`);
      return 0;
    }
    if (command === 'run') {
      if (rest[0] === '--help' || rest[0] === '-h') {
        io.out(`${RUN_HELP}\n`);
        return 0;
      }
      return await run(rest, io);
    }
    const help = rest[0] === '--help' || rest[0] === '-h';
    const helps: Record<string, string> = { list: LIST_HELP, show: SHOW_HELP, wait: WAIT_HELP, stop: STOP_HELP, extend: EXTEND_HELP, sessions: SESSIONS_HELP, serve: SERVE_HELP };
    if (help && command in helps) {
      io.out(`${helps[command]}\n`);
      return 0;
    }
    if (command === 'serve') return await serve(rest, io, version());
    if (['list', 'show', 'wait', 'stop', 'extend', 'sessions'].includes(command)) {
      const stateDir = resolveStateDir();
      const host = await connectToHost(stateDir);
      const source: HistorySource = host ? { page: (q) => host.history(q), get: (id) => host.get(id) } : storeSource;
      const readStored = (id: string) => storeSource.get(id);
      if (command === 'list') return await list(rest, io.out, source);
      if (command === 'show') return await show(rest, io.out, source);
      if (command === 'wait') return await waitCommand(rest, io, host, stateDir, readStored);
      if (command === 'stop') return await stopCommand(rest, io, host, readStored);
      if (command === 'extend') return await extendCommand(rest, io, host);
      return await sessionsCommand(rest, io, host);
    }
    if (command === 'history') {
      if (rest[0] !== 'prune') throw new UsageError('warden history takes: prune (see warden --help).');
      return rest[1] === '--help' || rest[1] === '-h' ? (io.out(`${PRUNE_HELP}\n`), 0) : prune(rest.slice(1), io.out);
    }
    throw new UsageError(`Unknown command ${JSON.stringify(command)} (see warden --help).`);
  } catch (error) {
    if (error instanceof UsageError || error instanceof WardenInputError) {
      io.err(`warden: ${error.message}\n`);
      return 125;
    }
    io.err(`warden: internal error: ${error instanceof Error ? error.message : String(error)}\n`);
    return 125;
  }
}

/** `--yield D` taken out of the options (before `--`): it is the client's, not the run's. */
function takeYield(args: string[]): { args: string[]; yieldMs: number | undefined } {
  const end = args.indexOf('--');
  const options = end >= 0 ? args.slice(0, end) : args;
  const rest = end >= 0 ? args.slice(end) : [];
  const kept: string[] = [];
  let yieldMs: number | undefined;
  for (let i = 0; i < options.length; i++) {
    const arg = options[i]!;
    if (arg === '--yield' || arg.startsWith('--yield=')) {
      const text = arg === '--yield' ? options[++i] : arg.slice('--yield='.length);
      if (text === undefined) throw new UsageError('--yield needs a value.');
      yieldMs = parseYield(text);
    } else {
      kept.push(arg);
    }
  }
  return { args: [...kept, ...rest], yieldMs };
}

async function run(args: string[], io: CliIo): Promise<number> {
  const taken = takeYield(args);
  const command = parseAnyRunArgs(taken.args);
  const { format } = command;
  const request: RunRequest = isPythonCommand(command) ? { ...command.request, code: await pythonCode(command, io) } : command.request;
  const stateDir = resolveStateDir();
  const host: HttpWardenApi | null = await connectToHost(stateDir);
  if (host) return runRemote({ api: host, stateDir, request, format, ...(taken.yieldMs !== undefined ? { yieldMs: taken.yieldMs } : {}) }, io);
  if (taken.yieldMs !== undefined) {
    throw new UsageError('--yield needs a Warden host, so the run can go on after this command returns: start one with warden serve (or the app), then run again.');
  }
  const supervisor = new Supervisor();
  // Recorded in the shared history, so `warden list` and the app see it.
  const history = await recordHistory(supervisor, (line) => io.err(`${line}\n`));
  let snapshot: RunResult;
  try {
    snapshot = supervisor.start(request);
  } catch (error) {
    await history?.close();
    throw error;
  }
  const id = snapshot.id;
  const unsubscribe = format === 'human'
    ? supervisor.subscribe((event) => {
        if (event.type === 'output' && event.runId === id) (event.stream === 'stdout' ? io.out : io.err)(event.text);
      })
    : () => undefined;
  // First Ctrl-C runs the stop sequence; a second one kills at once.
  let interrupts = 0;
  const unregister = io.onSignal((signal) => {
    interrupts += 1;
    if (interrupts === 1) io.err(`\nwarden: ${signal}: stopping the run (again to kill it now)\n`);
    supervisor.stop(id, { reason: signal === 'SIGINT' ? 'user' : 'shutdown', force: interrupts > 1 });
  });
  try {
    const result = await supervisor.wait(id);
    if (format === 'human') io.err(`${humanSummary(result)}\n`);
    else io.out(render(result, format));
    return exitStatusFor(result);
  } finally {
    unregister();
    unsubscribe();
    // Closes a Python session's interpreter, so nothing outlives the command.
    await supervisor.shutdown();
    await history?.close();
  }
}

function render(result: RunResult, format: OutputFormat): string {
  if (format === 'json') return `${JSON.stringify(result, null, 2)}\n`;
  if (format === 'shell-results') return `${shellResults(result)}\n`;
  return '';
}
