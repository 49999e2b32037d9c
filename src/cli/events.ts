// `warden events`: the host's events as lines, for monitors and scripts (a
// Claude Code plugin's monitor turns each line into a notification to its
// model). One line per event: a sentence (--format line) or the event as
// JSON (--format json); --ended keeps runs' ends only, --owner the runs of
// one process and those under it (`agent`: the agent this command runs
// under). Output and process-tree events are left out of lines, and of JSON
// unless --output. Runs until stopped (a signal, or its reader gone).

import type { RunEvent } from '../shared/events';
import type { HttpWardenApi, HttpTransport } from '../shared/http-api';
import { ROUTES } from '../shared/http-api';
import type { RunOwner, RunResult } from '../shared/result';
import { count, seconds } from '../shared/format';
import { NodeTransport, socketPathFor } from '../client/transport';
import type { CliIo } from './io';
import { OwnerFilter, ownerPidFrom } from './owners';
import { tokensOf, UsageError, type OptionSpec } from './parse';
import { forTerminal } from './history';

export { EVENTS_HELP } from './events-help';

const SPEC: Record<string, OptionSpec> = {
  ended: { type: 'boolean' },
  yielded: { type: 'boolean' },
  owner: { type: 'string' },
  format: { type: 'string' },
  output: { type: 'boolean' },
};

export interface EventsOptions {
  ended: boolean;
  /** Only the ends of runs an answer had left going (a yield): ends an agent may not have seen. */
  yielded: boolean;
  owner: number | null;
  format: 'line' | 'json';
  output: boolean;
}

export function parseEventsArgs(args: string[]): EventsOptions {
  const options: EventsOptions = { ended: false, yielded: false, owner: null, format: 'line', output: false };
  for (const token of tokensOf(args, SPEC, 'events')) {
    if (token.kind === 'positional') throw new UsageError(`warden events takes no words (${JSON.stringify(token.value)}); see warden events --help.`);
    if (token.kind !== 'option') continue;
    if (token.name === 'ended') options.ended = true;
    else if (token.name === 'yielded') options.yielded = options.ended = true;
    else if (token.name === 'output') options.output = true;
    else if (token.name === 'owner') options.owner = ownerPidFrom(token.value ?? '');
    else if (token.name === 'format') {
      if (token.value !== 'line' && token.value !== 'json') throw new UsageError(`--format takes line or json, not ${JSON.stringify(token.value)}.`);
      options.format = token.value;
    }
  }
  if (options.output && options.format !== 'json') throw new UsageError('--output goes with --format json: output does not fit a line per event.');
  if (options.output && options.ended) throw new UsageError(`--output and ${options.yielded ? '--yielded' : '--ended'} exclude each other: ${options.yielded ? '--yielded' : '--ended'} prints ends only.`);
  return options;
}

/** The event types asked of the host (?types=): nothing the command would drop crosses the socket. */
export function typesFor(options: EventsOptions): string[] {
  if (options.ended) return ['ended'];
  return options.output ? ['started', 'output', 'signal-sent', 'limit-extended', 'ended'] : ['started', 'signal-sent', 'limit-extended', 'ended'];
}

/** A run's command in a few words: argv as one line, or a script's first line. */
export function commandOf(run: Pick<RunResult, 'argv' | 'code' | 'session'>): string {
  const text = run.argv ? run.argv.join(' ') : `python${run.session ? `[${run.session}]` : ''}: ${(run.code ?? '').split('\n').find((l) => l.trim() !== '')?.trim() ?? ''}`;
  const line = forTerminal(text, true);
  return line.length > 120 ? `${line.slice(0, 119)}…` : line;
}

function ownerWords(owner: RunOwner | undefined): string {
  return owner ? ` (owner ${forTerminal(owner.label, true)}, pid ${owner.pid})` : '';
}

/** The sentence for an event, or null for one that has none (output, process trees). */
export function eventLine(event: RunEvent): string | null {
  switch (event.type) {
    case 'started': {
      const run = event.snapshot;
      if (run.state === 'ended') return null; // a spawn that failed: its end follows
      const queued = run.state === 'queued' ? `, queued${run.queuePosition !== undefined ? ` (position ${run.queuePosition})` : ''}` : '';
      const limit = run.limitMs !== null ? `, limit ${seconds(run.limitMs)}` : '';
      return `run ${event.runId} started${queued}${limit}: ${commandOf(run)}${ownerWords(run.owner)}`;
    }
    case 'signal-sent':
      return `run ${event.runId}: ${forTerminal(event.signal, true)} sent (${event.step === 'teardown' ? 'teardown of what it left' : event.step === 'user' ? 'from the Process tree' : `${event.step} step of its stop`}) at ${seconds(event.atMs)}`;
    case 'limit-extended':
      return `run ${event.runId}: limit extended by ${seconds(event.byMs)}, to ${seconds(event.limitMs)}`;
    case 'ended': {
      const run = event.result;
      const how = run.signal !== null ? `, ${run.signal}` : run.exitCode !== null ? `, exit ${run.exitCode}` : '';
      const limit = run.limitMs !== null ? ` of a ${seconds(run.limitMs)} limit` : '';
      const chars = run.outputChars ?? { stdout: run.stdout.length, stderr: run.stderr.length };
      const output = `${count(chars.stdout)} characters of stdout, ${count(chars.stderr)} of stderr`;
      const advice = run.advice ? ` ${forTerminal(run.advice, true)}` : '';
      return `run ${event.runId} ended: ${run.verdict ?? 'ended'}${how} after ${seconds(run.elapsedMs)}${limit}: ${commandOf(run)}${ownerWords(run.owner)}.${advice} (${output}; read it with warden show ${event.runId}, or MCP show, search and wait {"id": "${event.runId}"})`;
    }
    default:
      return null;
  }
}

/** The owner an event names, when it carries its run's record. */
function ownerIn(event: RunEvent): { known: true; owner: RunOwner | undefined } | { known: false } {
  if (event.type === 'started') return { known: true, owner: event.snapshot.owner };
  if (event.type === 'ended') return { known: true, owner: event.result.owner };
  return { known: false };
}

export async function eventsCommand(args: string[], io: CliIo, host: () => Promise<HttpWardenApi>, stateDir: string, link?: HttpTransport): Promise<number> {
  const options = parseEventsArgs(args);
  const api = await host();
  const filter = options.owner !== null ? new OwnerFilter(options.owner) : null;
  // Per run, whether it passes --owner (events without the run's record are looked up once).
  const passes = new Map<string, Promise<boolean>>();
  const owned = (event: RunEvent): Promise<boolean> => {
    if (!filter) return Promise.resolve(true);
    const named = ownerIn(event);
    if (named.known) {
      const yes = filter.owns(named.owner);
      passes.set(event.runId, Promise.resolve(yes));
      return Promise.resolve(yes);
    }
    let known = passes.get(event.runId);
    if (!known) {
      known = api.get(event.runId, { output: 'none' }).then((run) => filter.owns(run?.owner), () => false);
      passes.set(event.runId, known);
    }
    return known;
  };
  // Lines leave in the order events came, whatever a look-up costs.
  let queue: Promise<void> = Promise.resolve();
  const print = (event: RunEvent) => {
    queue = queue.then(async () => {
      if (options.yielded && !(event.type === 'ended' && event.yielded === true)) return;
      if (!(await owned(event))) return;
      if (event.type === 'ended') passes.delete(event.runId);
      if (options.format === 'json') io.out(`${JSON.stringify(event)}\n`);
      else {
        const line = eventLine(event);
        if (line !== null) io.out(`${line}\n`);
      }
    });
  };
  const transport = link ?? new NodeTransport({ socketPath: socketPathFor(stateDir) });
  return new Promise<number>((resolve) => {
    const close = transport.events(`${ROUTES.events}?types=${typesFor(options).join(',')}&ended=summary`, {
      onEvent: print,
      onGap: () => {
        if (options.format === 'json') io.out(`${JSON.stringify({ type: 'gap' })}\n`);
      },
    });
    const stop = io.onSignal(() => {
      stop();
      close();
      resolve(0);
    });
  });
}
