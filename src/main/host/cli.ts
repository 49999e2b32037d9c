// The `warden` command line. For now every command runs embedded in this
// process (a later issue adds the shared host). Never a stack trace for the
// user: bad input is one line and status 125.

import { readFileSync } from 'node:fs';
import { WardenInputError } from '../supervisor/options';
import { Supervisor } from '../supervisor/registry';
import type { RunResult } from '../../shared/result';
import type { RunRequest } from '../../shared/request';
import { isPythonCommand, parseAnyRunArgs, RUN_HELP, UsageError, type OutputFormat, type PythonRunCommand } from './cli-args';
import { list, LIST_HELP, prune, PRUNE_HELP, recordHistory, show, SHOW_HELP } from './history-cli';
import { exitStatusFor, humanSummary, shellResults } from './render-result';

export const HELP = `Usage: warden <command> [options]

Commands:
  run [options] -- COMMAND [ARGS...]   run a command under supervision (see warden run --help)
  run --python [options] (-c CODE | FILE)
                                       run a Python script in an interpreter session
  list [--verdict V] [--since 1h] [--search TEXT] [--json]
                                       past and live runs from the history
  show ID [--json]                     one run from the history, whole
  history prune [--max-runs N] [--max-bytes SIZE]
                                       delete the oldest runs beyond the limits

The history is a SQLite file in $WARDEN_STATE_DIR (default ~/.local/state/warden).

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
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
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
    if (command === 'list') return help ? (io.out(`${LIST_HELP}\n`), 0) : list(rest, io.out);
    if (command === 'show') return help ? (io.out(`${SHOW_HELP}\n`), 0) : show(rest, io.out);
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

async function run(args: string[], io: CliIo): Promise<number> {
  const command = parseAnyRunArgs(args);
  const { format } = command;
  const request: RunRequest = isPythonCommand(command) ? { ...command.request, code: await pythonCode(command, io) } : command.request;
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
