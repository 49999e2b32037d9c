// `warden ports [ID]` and `warden send ID TEXT`: a live service's listening
// ports, and input to a run started with --stdin-pipe, through the host.

import { CLI_ERROR_EXIT } from '../shared/errors';
import type { HttpWardenApi } from '../shared/http-api';
import type { ListeningPort, RunResult } from '../shared/result';
import type { CliIo } from './io';
import { forTerminal } from './history';
import { portText } from '../shared/model-answer';
import { tokensOf, UsageError, type OptionSpec } from './parse';
import { clientError } from './host-verbs';

export const PORTS_HELP = `Usage: warden ports [ID] [--json]

The TCP ports live runs listen on (their processes' sockets, from
/proc/net/tcp and tcp6), with the process holding each and, for a port that
answers HTTP, its URL. With ID, that run's only; an ended run says what it
listened on when it was ready. --json: { "RUN_ID": [{ port, address, pid, http }] }.`;

export const SEND_HELP = `Usage: warden send ID TEXT... [--no-newline] [--eof] [--json]
       warden send ID --eof

Writes TEXT (the words joined by spaces, then a newline unless --no-newline)
to the stdin of a live run started with --stdin-pipe (MCP stdinPipe: true):
to answer a prompt, warden wait ID --until 'log:/\\?/' first, then
warden send ID y. --eof then closes its stdin (the process reads end of
file). What was sent is on the run's timeline. A run without a stdin pipe,
an ended one, or one whose stdin was closed is refused in one line (exit ${CLI_ERROR_EXIT}).`;

const RUN_ID = /^[0-9a-f]{6,32}$/;

function words(args: string[], command: string, switches: string[]): { words: string[]; set: Set<string>; json: boolean } {
  const spec: Record<string, OptionSpec> = { json: { type: 'boolean' } };
  for (const name of switches) spec[name] = { type: 'boolean' };
  const out = { words: [] as string[], set: new Set<string>(), json: false };
  let terminated = false;
  for (const token of tokensOf(args, spec, command)) {
    if (token.kind === 'option-terminator') terminated = true;
    else if (token.kind === 'positional') out.words.push(token.value);
    else if (!terminated && token.name === 'json') out.json = true;
    else if (!terminated) out.set.add(`--${token.name}`);
  }
  return out;
}

function runId(word: string | undefined, command: string, usage: string): string {
  if (word === undefined) throw new UsageError(`warden ${command} needs a run id: ${usage}`);
  if (!RUN_ID.test(word)) throw new UsageError(`${JSON.stringify(word)} is not a run id (6 to 32 hex characters; see warden list).`);
  return word;
}

function portRow(id: string, port: ListeningPort): string {
  const url = port.http ? portText(port) : '';
  return `${id}  ${String(port.port).padEnd(6)} ${port.address.padEnd(16)} ${String(port.pid ?? '-').padEnd(8)} ${url}`.trimEnd();
}

export async function portsCommand(args: string[], io: CliIo, host: () => Promise<HttpWardenApi>): Promise<number> {
  const f = words(args, 'ports', []);
  if (f.words.length > 1) throw new UsageError('warden ports takes at most one run id.');
  const id = f.words.length === 1 ? runId(f.words[0], 'ports', 'warden ports [ID]') : undefined;
  const api = await host();
  let byRun: Record<string, ListeningPort[]>;
  let ended: RunResult | null = null;
  try {
    byRun = await api.ports();
    if (id !== undefined && !Object.hasOwn(byRun, id)) ended = await api.get(id, { output: 'none' });
  } catch (error) {
    clientError(error);
  }
  if (id !== undefined && !Object.hasOwn(byRun, id)) {
    if (!ended) throw new UsageError(`No run with id ${JSON.stringify(id)} (see warden list).`);
    const was = ended.ready ? ended.ready.ports : [];
    if (f.json) {
      io.out(`${JSON.stringify({ [id]: [] }, null, 2)}\n`);
      return 0;
    }
    io.out(`Run ${id} is ${ended.state === 'ended' ? `not live (${ended.verdict ?? 'ended'})` : ended.state}${was.length > 0 ? `; it listened on ${was.map((p) => p.port).join(', ')} when it was ready` : ''}.\n`);
    return 0;
  }
  const shown = id !== undefined ? { [id]: byRun[id]! } : Object.fromEntries(Object.entries(byRun).filter(([, ports]) => ports.length > 0));
  if (f.json) {
    io.out(`${JSON.stringify(shown, null, 2)}\n`);
    return 0;
  }
  const rows = Object.entries(shown).flatMap(([run, ports]) => ports.map((p) => portRow(run, p)));
  if (rows.length === 0) {
    io.out(id !== undefined ? `Run ${id} listens on no TCP port now.\n` : 'No live run listens on a TCP port.\n');
    return 0;
  }
  io.out(`${'RUN'.padEnd(id?.length ?? 12)}  PORT   ADDRESS          PID      URL\n`);
  for (const row of rows) io.out(`${forTerminal(row, true)}\n`);
  return 0;
}

export async function sendCommand(args: string[], io: CliIo, host: () => Promise<HttpWardenApi>): Promise<number> {
  const f = words(args, 'send', ['no-newline', 'eof']);
  const id = runId(f.words[0], 'send', 'warden send ID TEXT');
  const text = f.words.slice(1).join(' ');
  const eof = f.set.has('--eof');
  if (f.words.length < 2 && !eof) throw new UsageError('warden send needs the text to send (warden send ID TEXT), or --eof to close its stdin.');
  if (f.words.length < 2 && f.set.has('--no-newline')) throw new UsageError('--no-newline goes with TEXT.');
  const payload = f.words.length < 2 ? '' : f.set.has('--no-newline') ? text : `${text}\n`;
  const api = await host();
  let result: RunResult;
  try {
    result = await api.input(id, { ...(payload !== '' ? { text: payload } : {}), ...(eof ? { eof: true } : {}) });
  } catch (error) {
    clientError(error);
  }
  if (f.json) io.out(`${JSON.stringify(result, null, 2)}\n`);
  else io.err(`warden: sent ${payload.length} character${payload.length === 1 ? '' : 's'}${eof ? ' and the end of input' : ''} to run ${id} (${result.state})\n`);
  return 0;
}
