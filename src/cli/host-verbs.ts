// The CLI's verbs that talk to a host through its API: run, wait, stop, extend and sessions
// over the control socket, so what agents start appears live in the app.
//
// Yield: `--yield D` returns when the run ends or after D, whichever is first.
// A yielded result has state 'running' and the output so far, and exits with
// YIELDED_STATUS; `warden wait ID` continues with only the output not returned
// yet (the host marks what each yielded answer carried).

import type { WardenApi } from '../shared/api';
import { parseDuration } from '../shared/duration';
import type { OutputStream } from '../shared/events';
import { HttpWardenApi, ROUTES, type HttpTransport } from '../shared/http-api';
import { kindOf, WardenError } from '../shared/errors';
import type { RunRequest } from '../shared/request';
import type { RunResult, SessionInfo } from '../shared/result';
import { seconds } from '../shared/format';
import type { CliIo } from './io';
import { parseFormat, parseYield, UsageError, type OutputFormat } from './args';
import { tokensOf, type OptionSpec } from './parse';
import { SignalStop, stopNoteFor } from './signals';
import { HostUnreachableError, NodeTransport, socketPathFor } from '../client/transport';
import { HOST_BUSY } from '../client/wire';

import { cliPager, exitStatusFor, humanSummary, shellResults, type ShellResultsOptions } from './render';
import { envStreamChars, locate, portsText, readyText, type Stream } from '../shared/model-answer';
import { constants } from 'node:os';

/** Exit status of a yielded run (EX_TEMPFAIL): it goes on; `warden wait ID` continues it. */
export const YIELDED_STATUS = 75;


/**
 * The exit status for a result a client got: a yielded one has its own, but
 * not for a model (--format shell-results): its harness would show 75 as a
 * failure, while the block says the run goes on and how to continue it.
 */
export function statusOf(result: RunResult, format: OutputFormat = 'human', ended: (result: RunResult) => number = exitStatusFor): number {
  // Not ready in time (stopped for it, or kept running): 3 (render.ts), whatever the stop did to it.
  if (result.ready === false) return exitStatusFor(result);
  if (result.state === 'ended') return ended(result);
  // A service that is ready answers while it runs, and a wait whose line came: that is their success.
  if (result.ready || result.until?.met) return 0;
  return format === 'shell-results' ? 0 : YIELDED_STATUS;
}

/** How a client prints a model's answer: the --stream-chars and --yield it was given, and where its output starts. */
export type ModelOptions = ShellResultsOptions;

export function renderResult(result: RunResult, format: OutputFormat, model: ModelOptions = {}): string {
  if (format === 'json') return `${JSON.stringify(result, null, 2)}\n`;
  if (format === 'shell-results') return `${shellResults(result, { base: { stdout: 0, stderr: 0 }, ...model })}\n`;
  return '';
}

/**
 * Where a waited answer's output starts in what the history keeps, when it
 * must be cut (the marker names an exact offset): found in the run's kept
 * output. A run's first answer starts at 0.
 */
async function baseOf(api: WardenApi, result: RunResult, first: boolean, chars: number): Promise<Record<Stream, number | null>> {
  if (first) return { stdout: 0, stderr: 0 };
  if (result.stdout.length <= chars && result.stderr.length <= chars) return { stdout: null, stderr: null };
  const kept = await api.get(result.id).catch(() => null);
  return kept ? { stdout: locate(kept.stdout, result.stdout), stderr: locate(kept.stderr, result.stderr) } : { stdout: null, stderr: null };
}

/** What a person sees of a run still live: ready (where it listens), matched (the line), or yielded. */
function liveSummary(result: RunResult): string {
  const ready = readyText(result);
  const matched = result.until?.met === true && result.until.condition !== 'ready';
  if (result.ready === undefined && !matched) return yieldedSummary(result);
  const lines: string[] = [];
  if (ready !== null) lines.push(`warden: ${ready}`);
  if (matched) lines.push(`warden: matched ${result.until!.condition}: ${result.until!.line ?? ''}`);
  const ports = result.ports ?? (result.ready ? result.ready.ports : []);
  if (ports.length > 0) lines.push(`warden: listening on ${portsText(ports)}`);
  const lease = result.lease ? ` (leased until ${seconds(result.lease.endsAtMs)} of its clock; warden extend ${result.id} DURATION renews it)` : '';
  lines.push(`warden: run ${result.id} goes on in the host${lease}; ${cliPager().stop(result.id)} ends it`);
  for (const note of result.notes) lines.push(`warden: note: ${note}`);
  return lines.join('\n');
}

/** What a person sees when a run yields: where it stands and how to go on. */
function yieldedSummary(result: RunResult): string {
  const limit = result.limitMs !== null ? ` of a ${seconds(result.limitMs)} limit` : '';
  return `warden: still ${result.state} after ${seconds(result.elapsedMs)}${limit} [run ${result.id}]; continue with: ${cliPager().next(result.id).replace(' --format shell-results', '')}`;
}

/** Prints a result in the chosen format; a person gets the output then a summary line. */
function printResult(result: RunResult, format: OutputFormat, io: CliIo, options: { outputShown?: boolean; model?: ModelOptions; exitStatus?: (result: RunResult) => number } = {}): number {
  if (format === 'human') {
    if (!options.outputShown) {
      if (result.stdout) io.out(result.stdout);
      if (result.stderr) io.err(result.stderr);
    }
    io.err(`${result.state === 'ended' ? humanSummary(result) : liveSummary(result)}\n`);
  } else {
    io.out(renderResult(result, format, options.model));
  }
  return statusOf(result, format, options.exitStatus);
}

/**
 * The host's errors as the CLI says them: a host's answer keeps its kind and
 * line (src/cli/main.ts reportError); a lost connection says what it means
 * for the runs.
 */
export function clientError(error: unknown): never {
  // A remote's link (src/client/stdio-link.ts): the host there and its runs are not lost, only the way to them.
  if (error instanceof HostUnreachableError && error.code === 'ELINK') throw new WardenError('unavailable', `Cannot reach the remote host: ${error.message.replace(/^Cannot reach the Warden host: /, '')}. Its runs go on there; the same command connects again.`);
  // A busy host (its socket's queue full, or at its descriptor limit) took nothing: it and its runs are there.
  if (error instanceof HostUnreachableError && error.code === HOST_BUSY) throw new WardenError('unavailable', error.message);
  if (error instanceof HostUnreachableError) throw new WardenError('unavailable', `Lost the Warden host (${error.message}); what it recorded is in the history: warden list.`);
  throw error;
}

/**
 * Live output of one run for a person: printed as the events arrive, in
 * order per stream, remembering how much of each stream was printed, so the
 * final catch-up prints exactly the rest.
 */
class LiveOutput {
  readonly printed: Record<OutputStream, number> = { stdout: 0, stderr: 0 };
  private close: (() => void) | null = null;

  constructor(
    private readonly io: CliIo,
    stateDir: string,
    id: string,
    link?: HttpTransport,
  ) {
    const transport = link ?? new NodeTransport({ socketPath: socketPathFor(stateDir) });
    // since=start: the run's events still buffered from its start, so nothing printed before we connected is missed.
    this.close = transport.events(`${ROUTES.events}?run=${id}&since=start`, {
      onEvent: (event) => {
        if (event.type !== 'output') return;
        const at = this.printed[event.stream];
        if (event.offset > at) return; // a gap: the catch-up at the end fills it
        const text = event.text.slice(at - event.offset);
        if (text.length === 0) return;
        (event.stream === 'stdout' ? io.out : io.err)(text);
        this.printed[event.stream] = event.offset + event.text.length;
      },
    });
  }

  /** Stops the stream without printing more (the wait failed). */
  abandon(): void {
    this.close?.();
    this.close = null;
  }

  /** Stops printing; then prints what the final result holds beyond what was printed. */
  finish(result: RunResult, from: Record<OutputStream, number>): void {
    this.close?.();
    this.close = null;
    for (const stream of ['stdout', 'stderr'] as const) {
      // The result's text starts at `from`; skip what the live stream already printed.
      const skip = Math.max(0, this.printed[stream] - from[stream]);
      const truncated = stream === 'stdout' ? result.stdoutTruncated : result.stderrTruncated;
      const text = result[stream];
      const rest = truncated > 0 && skip > 0 ? '' : text.slice(skip);
      if (rest) (stream === 'stdout' ? this.io.out : this.io.err)(rest);
    }
  }
}

export interface RemoteRun {
  api: HttpWardenApi;
  stateDir: string;
  /** The transport under `api` when it is not the state dir's socket (a remote's link): live output streams over it. */
  link?: HttpTransport;
  /** Called with the answer before it is printed (--termination-log); a person's has only the output not streamed. */
  onResult?: (result: RunResult) => Promise<void> | void;
  request: RunRequest;
  format: OutputFormat;
  /** An ended run's exit status under --exit-codes (src/cli/exit-codes.ts); default the standard one. */
  exitStatus?: (result: RunResult) => number;
  yieldMs?: number;
  /** --owner-pid: the process the run belongs to (the host stops the run when it is gone). */
  ownerPid?: { pid: number; startTime: string; label: string };
  /** --detach: the run does not belong to this command. */
  detach?: boolean;
  streamChars?: number;
  /**
   * With --yield and --owner-pid (the hook's line): this command owns the run until its first yield (a SIGKILL
   * to it, as a harness ends a hooked command, ends the run), then hands it over (POST /runs/ID/release) to the owner pid.
   * The version of this Warden: an older host, without the release, is left the run as before.
   */
  ownUntilYield?: { version: string };
}

/**
 * `warden run` through a host. Ctrl-C stops the run (a second kills it); a
 * yield leaves it running. Without a yield (or --detach) the run is owned by
 * this process's connection: if this process dies, the host stops the run.
 * With --owner-pid it is owned by that process too. With --detach a signal
 * makes this command leave and the run go on.
 */
export async function runRemote(options: RemoteRun, io: CliIo): Promise<number> {
  const { api, format } = options;
  // Caught before the run starts: a signal during the start stops the run as soon as it has an id.
  const signals = new SignalStop(io);
  let started: RunResult;
  // A service (--ready) answers once ready and goes on: it is not this connection's (but for a hook's line, until it answers).
  const service = 'argv' in options.request && options.request.ready !== undefined;
  // Whether this host writes its history, and whether it can take the run over at the yield.
  let info = options.ownUntilYield ? await api.host().catch(() => null) : null;
  const untilYield = options.ownUntilYield !== undefined && !options.detach && api instanceof HttpWardenApi && info?.version === options.ownUntilYield.version;
  try {
    started = await api.start(options.request, {
      ...((options.yieldMs === undefined && !options.detach && !service) || untilYield ? { owner: 'connection' as const } : {}),
      ...(options.ownerPid ? { ownerPid: options.ownerPid } : {}),
    });
  } catch (error) {
    signals.dispose();
    clientError(error);
  }
  // Asked once it answers (a first request may have started it).
  info ??= await api.host().catch(() => null);
  if (info && !info.history) io.err(`warden: the history is not being written: the host (pid ${info.pid}) has none (${info.historyOff ?? 'no reason given'}); this run happens but is not recorded.\n`);
  const status = await follow(api, started.id, {
    stateDir: options.stateDir,
    ...(options.link ? { link: options.link } : {}),
    ...(options.onResult ? { onResult: options.onResult } : {}),
    format,
    ...(options.exitStatus ? { exitStatus: options.exitStatus } : {}),
    yieldMs: options.yieldMs,
    all: false,
    io,
    ended: started.state === 'ended',
    signals,
    first: true,
    ...(options.detach ? { detach: true } : {}),
    ...(options.streamChars !== undefined ? { streamChars: options.streamChars } : {}),
    ...(service ? { until: 'ready' } : {}),
  });
  // Yielded (or ended: then the host has nothing to hand over): the run is no longer this connection's.
  if (untilYield) await (api as HttpWardenApi).release(started.id).catch(() => undefined);
  return status;
}

interface FollowOptions {
  stateDir: string;
  link?: HttpTransport;
  onResult?: (result: RunResult) => Promise<void> | void;
  format: OutputFormat;
  exitStatus?: (result: RunResult) => number;
  yieldMs: number | undefined;
  all: boolean;
  io: CliIo;
  ended?: boolean;
  signals?: SignalStop;
  /** This is the run's first answer (its output starts at 0). */
  first?: boolean;
  /** A signal leaves the run going (--detach). */
  detach?: boolean;
  streamChars?: number;
  /** Answer when this is met too (wait --until, or 'ready' for warden run --ready); --since start for a log pattern. */
  until?: string;
  since?: 'now' | 'start';
}

async function follow(api: WardenApi, id: string, options: FollowOptions): Promise<number> {
  const { io, format } = options;
  const live = format === 'human' && !options.ended ? new LiveOutput(io, options.stateDir, id, options.link) : null;
  const signals = options.signals ?? new SignalStop(io);
  let leave: (signal: NodeJS.Signals) => void = () => undefined;
  const left = new Promise<NodeJS.Signals>((resolve) => (leave = resolve));
  signals.attach((signal, nth) => {
    if (options.detach) {
      if (nth === 1) io.err(`\nwarden: ${signal}: leaving; run ${id} goes on (--detach): ${cliPager().stop(id)} ends it\n`);
      leave(signal);
      return;
    }
    if (nth === 1) io.err(`\nwarden: ${signal}: stopping run ${id} (again to kill it now)\n`);
    const note = stopNoteFor(signal);
    void api.stop(id, { force: nth > 1, ...(note ? { note } : {}) }).catch(() => undefined);
  });
  const asLeft = (signal: NodeJS.Signals) => 128 + (constants.signals[signal as keyof typeof constants.signals] ?? 0);
  const model: ModelOptions = {
    ...(options.yieldMs !== undefined ? { yieldMs: options.yieldMs } : {}),
    ...(options.streamChars !== undefined ? { streamChars: options.streamChars } : {}),
  };
  const until = options.until !== undefined ? { until: options.until, ...(options.since !== undefined ? { since: options.since } : {}) } : {};
  try {
    let result: RunResult;
    try {
      if (live) {
        // A person: output streamed live, then what the stream had not shown yet.
        let from = { ...live.printed };
        const waited = relinking(options, () => {
          from = { ...live.printed };
          return api.wait(id, { ...(options.yieldMs !== undefined ? { timeoutMs: options.yieldMs } : {}), output: options.all ? 'all' : { stdout: from.stdout, stderr: from.stderr }, ...until });
        });
        const got = await Promise.race([waited, left]);
        if (typeof got === 'string') return asLeft(got);
        result = got;
        live.finish(result, from);
        await options.onResult?.(result);
        return signals.exitStatus(printResult(result, format, io, { outputShown: true, ...(options.exitStatus ? { exitStatus: options.exitStatus } : {}) }));
      }
      const got = await Promise.race([relinking(options, () => api.wait(id, { ...(options.yieldMs !== undefined ? { timeoutMs: options.yieldMs } : {}), output: options.all ? 'all' : 'unseen', ...until })), left]);
      if (typeof got === 'string') return asLeft(got);
      result = got;
    } catch (error) {
      // Ended before this host's memory of it: the stored result is the answer.
      if (!(api instanceof HttpWardenApi)) clientError(error);
      result = await storedEnd(api, id, error);
    }
    await options.onResult?.(result);
    if (format === 'shell-results') {
      const chars = options.streamChars ?? envStreamChars(process.env);
      model.base = await baseOf(api, result, options.first === true || options.all, chars);
    }
    return signals.exitStatus(printResult(result, format, io, { model, ...(options.exitStatus ? { exitStatus: options.exitStatus } : {}) }));
  } finally {
    live?.abandon();
    signals.dispose();
  }
}

/** Tries of a wait whose remote link dropped, and the pause before each (a new ssh session is opened each time). */
const RELINK_PAUSES_MS = [250, 1000, 2000, 4000];

/**
 * A wait over a remote's link, opened again when the link dropped (the ssh
 * session died, the network blinked): the run lives in the remote host and
 * goes on meanwhile, so waiting again finds it. Over this machine's socket a
 * lost host is final.
 */
async function relinking<T>(options: { link?: HttpTransport; io: CliIo }, wait: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await wait();
    } catch (error) {
      const pause = RELINK_PAUSES_MS[attempt];
      if (!options.link || !(error instanceof HostUnreachableError) || pause === undefined) throw error;
      options.io.err(`warden: the link to the remote host dropped (${error.message}); connecting again\n`);
      await new Promise((r) => setTimeout(r, pause));
    }
  }
}

function parseIdCommand(args: string[], name: string, valueFlags: string[], switches: string[]) {
  const spec: Record<string, OptionSpec> = { json: { type: 'boolean' }, format: { type: 'string' } };
  for (const flag of valueFlags) spec[flag] = { type: 'string' };
  for (const flag of switches) spec[flag] = { type: 'boolean' };
  const values = new Map<string, string>();
  const set = new Set<string>();
  const words: string[] = [];
  let format: OutputFormat = 'human';
  for (const token of tokensOf(args, spec, name)) {
    if (token.kind === 'positional') words.push(token.value);
    else if (token.kind !== 'option') continue;
    else if (token.name === 'json') format = 'json';
    else if (token.name === 'format') format = parseFormat(token.value ?? '');
    else if (valueFlags.includes(token.name)) values.set(`--${token.name}`, token.value ?? '');
    else set.add(`--${token.name}`);
  }
  return { values, set, words, format };
}

function runIdWord(words: string[], name: string, usage: string): string {
  if (words.length === 0) throw new UsageError(`warden ${name} needs a run id: ${usage}`);
  const id = words[0]!;
  if (!/^[0-9a-f]{6,32}$/.test(id)) throw new UsageError(`${JSON.stringify(id)} is not a run id (6 to 32 hex characters; see warden list).`);
  return id;
}

export const WAIT_HELP = `Usage: warden wait ID [--until ready|log:/REGEX/[flags] [--since start]] [--yield DURATION] [--all-output]
                   [--json | --format shell-results [--stream-chars N]]

Waits for a run to end and prints its result. With --yield, returns after
DURATION if it is still running (state running, exit status ${YIELDED_STATUS}, or 0 with
--format shell-results, whose <next> line is the command to go on); wait again to go on.
Output an earlier yielded answer already returned is not repeated; --all-output
prints all of it.

--until also returns, with the run still going, when a line of its output
matches log:/REGEX/ (ANSI colours removed; only output printed after this call,
or all of it with --since start), or when a service started with --ready is
ready (or its ready timeout passed). The answer carries the line that matched
and exits 0: after an edit, warden wait ID --until 'log:/Compiled|error TS/'.

Exit status as warden run's; 0 when --until was met.`;

export async function waitCommand(args: string[], io: CliIo, host: () => Promise<HttpWardenApi>, stateDir: string, link?: HttpTransport): Promise<number> {
  const { values, set, words, format } = parseIdCommand(args, 'wait', ['yield', 'stream-chars', 'until', 'since'], ['all-output']);
  const id = runIdWord(words, 'wait', 'warden wait ID');
  if (words.length > 1) throw new UsageError('warden wait takes one run id.');
  const yieldMs = values.has('--yield') ? parseYield(values.get('--yield')!) : undefined;
  const charsText = values.get('--stream-chars');
  const streamChars = charsText === undefined ? undefined : Number(charsText);
  if (charsText !== undefined && (!/^\d+$/.test(charsText) || streamChars! < 200 || streamChars! > 200_000)) throw new UsageError(`--stream-chars takes a number of characters from 200 to 200000, not ${JSON.stringify(charsText)}.`);
  const until = values.get('--until');
  const since = values.get('--since');
  if (until !== undefined && until !== 'ready' && !until.startsWith('log:')) throw new UsageError(`--until takes ready or log:/REGEX/[flags], not ${JSON.stringify(until)}.`);
  if (since !== undefined && since !== 'start' && since !== 'now') throw new UsageError(`--since takes start (all the output so far) or now (the default), not ${JSON.stringify(since)}.`);
  if (since !== undefined && (until === undefined || until === 'ready')) throw new UsageError('--since goes with --until log:/REGEX/.');
  const api = await host();
  return follow(api, id, {
    stateDir,
    ...(link ? { link } : {}),
    format,
    yieldMs,
    all: set.has('--all-output'),
    io,
    ...(streamChars !== undefined ? { streamChars } : {}),
    ...(until !== undefined ? { until } : {}),
    ...(since !== undefined ? { since: since as 'now' | 'start' } : {}),
  });
}

export const STOP_HELP = `Usage: warden stop ID [--force] [--json | --format shell-results]
       warden stop --owner PID|agent [--force] [--why TEXT] [--json | --quiet]

Stops a live run with the stop sequence (SIGINT, SIGTERM, then SIGKILL at the
grace; --force: SIGKILL now) and prints its final result.

With --owner: every live run that process PID owns, or a process under it
(agent: the agent this command runs under, the nearest parent that is not a
shell; its hook's runs and its warden mcp's), stopped together, a line each on
stderr (--json: their results, without output, on stdout; --quiet: nothing);
--why says why in each run's notes. The plugins' SessionEnd hooks run
warden stop --owner agent --quiet --why 'its agent session ended'.`;

export async function stopCommand(args: string[], io: CliIo, host: () => Promise<HttpWardenApi>): Promise<number> {
  const { set, words, format } = parseIdCommand(args, 'stop', [], ['force']);
  const id = runIdWord(words, 'stop', 'warden stop ID');
  if (words.length > 1) throw new UsageError('warden stop takes one run id.');
  const api = await host();
  let result: RunResult;
  try {
    const snapshot = await api.stop(id, { force: set.has('--force') });
    result = snapshot.state === 'ended' ? snapshot : await api.wait(id);
  } catch (error) {
    const stored = await storedEnd(api, id, error);
    throw new UsageError(`Run ${id} already ended (${stored.verdict}); nothing to stop.`);
  }
  return printResult(result, format, io);
}

export const EXTEND_HELP = `Usage: warden extend ID DURATION [--json]

Moves a live run's deadline DURATION later (e.g. 30s, 5m); a run without a
limit gets one of its elapsed time plus DURATION. A run with a lease (a
service: --ready, or --lease) has its lease renewed instead: it then ends
DURATION after its current end (or after now, when that is past), and a limit
it also has moves as well. Refused once the stop sequence has begun. The
change is recorded on the run's timeline.`;

export async function extendCommand(args: string[], io: CliIo, host: () => Promise<HttpWardenApi>): Promise<number> {
  const { words, format } = parseIdCommand(args, 'extend', [], []);
  const id = runIdWord(words, 'extend', 'warden extend ID DURATION');
  if (words.length !== 2) throw new UsageError('warden extend takes a run id and a duration: warden extend ID 30s');
  const byMs = parseDuration(words[1]!);
  if (byMs === undefined || byMs <= 0) throw new UsageError(`warden extend takes a duration such as 30s or 5m, not ${JSON.stringify(words[1])}.`);
  const api = await host();
  let result: RunResult;
  try {
    result = await api.extend(id, byMs);
  } catch (error) {
    const stored = await storedEnd(api, id, error);
    throw new UsageError(`Run ${id} already ended (${stored.verdict}); there is no deadline to move.`);
  }
  if (format === 'json') io.out(`${JSON.stringify(result, null, 2)}\n`);
  else if (result.lease) io.err(`warden: run ${id}'s lease now ends at ${seconds(result.lease.endsAtMs)}${result.limitMs !== null ? `, its limit is ${seconds(result.limitMs)}` : ''} (${seconds(result.elapsedMs)} elapsed)\n`);
  else io.err(`warden: run ${id} now has a ${seconds(result.limitMs ?? 0)} limit (${seconds(result.elapsedMs)} elapsed)\n`);
  return 0;
}

export const SESSIONS_HELP = `Usage: warden sessions [--json]

The Python interpreter sessions of the running host: name, state, pid, scripts run, memory.`;

export async function sessionsCommand(args: string[], io: CliIo, api: HttpWardenApi | null): Promise<number> {
  const { words, format } = parseIdCommand(args, 'sessions', [], []);
  if (words.length > 0) throw new UsageError('warden sessions takes no words (see warden sessions --help).');
  if (!api) {
    io.err('warden: no Warden host is running: sessions live in a host (warden serve, or the app). An embedded warden run --python has a session of its own.\n');
    if (format === 'json') io.out('[]\n');
    return 0;
  }
  let sessions: SessionInfo[];
  try {
    sessions = await api.sessions();
  } catch (error) {
    clientError(error);
  }
  if (format === 'json') {
    io.out(`${JSON.stringify(sessions, null, 2)}\n`);
    return 0;
  }
  if (sessions.length === 0) {
    io.out('No sessions yet. Start one with: warden run --python --session NAME -c "print(1)"\n');
    return 0;
  }
  for (const s of sessions) {
    const now = s.running ? `  running ${s.running}` : '';
    const queue = s.queued > 0 ? `, ${s.queued} queued` : '';
    io.out(`${s.name.padEnd(20)} ${s.state.padEnd(9)} pid ${String(s.pid ?? '-').padEnd(8)} ${String(s.scriptsRun).padStart(5)} script(s) run${queue}${now}\n`);
  }
  return 0;
}

/**
 * A run the host does not hold in memory (404): its stored end from the
 * history, through the host. Anything else is the host's error, as the CLI's.
 */
async function storedEnd(api: HttpWardenApi, id: string, error: unknown): Promise<RunResult> {
  if (kindOf(error) !== 'not-found') clientError(error);
  const stored = await api.get(id).catch(() => null);
  if (!stored) throw new WardenError('not-found', `No run with id ${JSON.stringify(id)} (see warden list).`);
  if (stored.state !== 'ended') throw new UsageError(`Run ${id} is not live: it was left ${stored.state} by a Warden host that went away (the next host start records it as lost).`);
  return stored;
}
