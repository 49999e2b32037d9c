// The tools of `warden mcp`: run, wait, stop, extend, list, show, sessions.
// Each parses its arguments (one-line errors), calls the host's API and
// answers with a text block for the model and, for runs, the result contract
// as structuredContent.

import { resolve } from 'node:path';
import type { z } from 'zod';
import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { HistoryQuery } from '../shared/api';
import { parseDuration } from '../shared/duration';
import type { RunSummary } from '../shared/history';
import type { RunRequest } from '../shared/request';
import type { RunResult } from '../shared/result';
import { kindOf, WardenError } from '../shared/errors';
import { InputError } from '../shared/schemas';
import { seconds } from '../shared/format';
import { isPythonCommand, parseAnyRunArgs, UsageError } from '../cli/args';
import { asThisProcess } from '../client/as-this-process';
import { LOCAL_HOST_NAME } from '../client/remotes';
import type { HostLink } from './host-link';
import { budgetFor, DEFAULT_MAX_CHARS, listText, pageAnswerParts, runAnswerParts, sessionsText, type StreamPage } from './render';
import { locate, type Stream } from '../shared/model-answer';
import { searchText } from '../cli/search-text';
import type { SearchQuery } from '../shared/search';
import {
  extendInput,
  inputInput,
  listInput,
  listResultSchema,
  parseToolArgs,
  runInput,
  runResultSchema,
  searchInput,
  searchResultSchema,
  sessionsInput,
  sessionsResultSchema,
  showInput,
  showResultSchema,
  stopInput,
  waitInput,
} from './schemas';

/** A line of output for a model: control characters but tab written as \xNN (a CR or an escape would garble the text). */
function escapeForModel(text: string): string {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  return text.replace(/[\x00-\x08\x0b-\x1f\x7f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** How long run and wait block when not told: well inside a client's usual 60 s tool-call limit. */
export const DEFAULT_YIELD_MS = 30_000;
/** The longest yield: MCP clients commonly end a tool call at 60 s. */
export const MAX_YIELD_MS = 50_000;
const DEFAULT_LIST_LIMIT = 20;
const PROGRESS_EVERY_MS = 1000;

/** What one MCP session (one agent) holds across its calls. */
export interface McpSession {
  /** The client's name from initialize (clientInfo.name): "claude-code", "codex-mcp-client", "gemini-cli-mcp-client". */
  clientName(): string | undefined;
  /** The process runs are owned by (this warden mcp): the host stops them when it is gone. Null: not owned. */
  owner(): { pid: number; startTime: string; label: string } | null;
  /** Characters of each stream an answer shows unless a call says otherwise. */
  streamChars: number;
  /** The limit of a run given none ("10m"); null: none. */
  defaultLimit: string | null;
  /** Per live run, where the next answer's output starts in what the history keeps (null: not known). */
  returned: Map<string, Record<Stream, number | null>>;
  /** The host this server serves is another machine's (warden --remote NAME mcp): runs get no local cwd, environment or owner. */
  remote?: string;
  /** The configured remotes, for run's `host` and list's `allHosts` (null: none can be reached from here). */
  hosts?: HostLinks;
  /** Which remote each run started with `host` (or listed with allHosts) lives in: wait, stop, extend and show go there. */
  runHosts?: Map<string, string>;
}

/** Links to the configured remotes' hosts by name, made at first use and kept. */
export interface HostLinks {
  names(): string[];
  link(name: string): HostLink;
}

export function newSession(options: Partial<McpSession> = {}): McpSession {
  return { clientName: () => undefined, owner: () => null, streamChars: 8000, defaultLimit: null, returned: new Map(), ...options };
}

export interface ToolContext {
  link: HostLink;
  session: McpSession;
  /** Sends notifications/progress for this call; null when the client sent no progressToken. */
  progress: ((progress: number, message: string, total?: number) => void) | null;
  /** Aborted when the client cancels the call: progress stops (the run goes on). */
  signal?: AbortSignal;
}

export interface ToolDef {
  name: string;
  title: string;
  description: string;
  input: z.ZodType;
  output: z.ZodType;
  annotations: ToolAnnotations;
  handle(args: unknown, context: ToolContext): Promise<CallToolResult>;
}

/** Claude Code saves a result longer than this to a file and shows a preview; ours fit (see render.ts budgetFor). */
export const MAX_RESULT_SIZE_CHARS = 100_000;

/**
 * A run answer for the model, both forms cut to size. `base`: where this
 * answer's output starts in what the history keeps (0 for a run's first
 * answer); when not known and the output must be cut, it is found from the
 * run's kept output, so the marker's show call is exact.
 */
async function runAnswer(result: RunResult, context: ToolContext, options: { base?: Record<Stream, number | null>; lead?: string; streamChars?: number; extra?: string[] } = {}): Promise<CallToolResult> {
  const { session } = context;
  const streamChars = options.streamChars ?? session.streamChars;
  let base: Record<Stream, number | null> = options.base ?? session.returned.get(result.id) ?? { stdout: null, stderr: null };
  if ((base.stdout === null && result.stdout.length > streamChars) || (base.stderr === null && result.stderr.length > streamChars)) {
    const kept = await context.link.call((api) => api.get(result.id)).catch(() => null);
    if (kept) base = { stdout: base.stdout ?? locate(kept.stdout, result.stdout), stderr: base.stderr ?? locate(kept.stderr, result.stderr) };
  }
  const { text, json } = runAnswerParts(result, { streamChars, base, budget: options.streamChars !== undefined ? null : budgetFor(session.clientName()), ...(options.extra ? { extra: options.extra } : {}) });
  if (result.state === 'ended') session.returned.delete(result.id);
  else {
    const after = (stream: Stream) => {
      const at = base[stream];
      const dropped = stream === 'stdout' ? result.stdoutTruncated : result.stderrTruncated;
      return at === null || dropped > 0 ? null : at + result[stream].length;
    };
    session.returned.set(result.id, { stdout: after('stdout'), stderr: after('stderr') });
  }
  return {
    content: [{ type: 'text', text: options.lead ? `${escapeLead(options.lead)}\n${text}` : text }],
    structuredContent: options.lead ? { message: options.lead, ...json } : json,
    _meta: { 'anthropic/maxResultSizeChars': MAX_RESULT_SIZE_CHARS },
  };
}

function escapeLead(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;');
}

function parseYieldArg(text: string | undefined): number {
  if (text === undefined) return DEFAULT_YIELD_MS;
  const ms = parseDuration(text);
  if (ms === undefined || ms <= 0) throw new InputError(`yield takes a duration such as 500ms, 30s or 50s, not ${JSON.stringify(text)}.`);
  if (ms > MAX_YIELD_MS) {
    throw new InputError(`yield is at most 50s (a client ends a tool call at about 60 s), not ${JSON.stringify(text)}: the run goes on after a yield, so call wait again for more.`);
  }
  return ms;
}

/** The CLI's messages name flags (--limit); the tool's arguments have the same names without the dashes. */
function asToolMessage(message: string): string {
  return message
    .replace(/(^|[\s(])--ready-(timeout|interval|delay|status)\b/g, '$1ready.$2')
    .replace(/(^|[\s(])--on-not-ready\b/g, '$1onNotReady')
    .replace(/(^|[\s(])--stdin-pipe\b/g, '$1stdinPipe')
    .replace(/(^|[\s(])--(limit|grace|memory|cwd|env|stdin|session|lease)\b/g, '$1$2')
    .replace(/(^|[\s(])--ok-exit\b/g, '$1okExit');
}

/**
 * A run request from the tool's arguments, through the CLI's own parser
 * (`warden run` words), so bad values get the CLI's one-line messages.
 * The working directory is the agent's (this server's), or relative to it.
 */
export function runRequestFrom(args: z.infer<typeof runInput>, baseDir: string = process.cwd()): RunRequest {
  const given = (['argv', 'shell', 'python'] as const).filter((key) => args[key] !== undefined);
  if (given.length === 0) {
    throw new InputError("run needs one of argv (a command and its arguments), shell (a command line for /bin/sh -c) or python (a script's source).");
  }
  if (given.length > 1) throw new InputError(`run takes exactly one of argv, shell or python, not ${given.join(' and ')}.`);
  if (args.session !== undefined && args.python === undefined) throw new InputError('session goes with python: the session a script runs in.');
  if (args.stdin !== undefined && args.python !== undefined) throw new InputError('stdin is for commands (argv or shell), not python scripts.');
  if (args.okExit !== undefined && args.python !== undefined) throw new InputError('okExit is for commands (argv or shell), not python scripts.');
  if (args.shell !== undefined && args.shell.trim() === '') throw new InputError('shell is empty: give the command line to run.');
  const words: string[] = [];
  if (args.python !== undefined) words.push('--python');
  if (args.limit !== undefined) words.push('--limit', args.limit);
  if (args.grace !== undefined) words.push('--grace', args.grace);
  if (args.memory !== undefined) words.push('--memory', args.memory);
  // The agent's directory, not the host's: a background host runs in the state dir.
  words.push('--cwd', resolve(baseDir, args.cwd ?? '.'));
  for (const [name, value] of Object.entries(args.env ?? {})) {
    if (name === '' || name.includes('=') || name.includes('\0')) throw new InputError(`env: a variable name cannot be empty or hold "=", not ${JSON.stringify(name)}.`);
    words.push('--env', `${name}=${value}`);
  }
  if (args.stdin !== undefined) words.push('--stdin', args.stdin);
  for (const code of args.okExit === undefined ? [] : [args.okExit].flat()) {
    if (code === 0) throw new InputError('okExit lists exit codes besides 0, which always means success.');
    if (!Number.isInteger(code) || code < 1 || code > 255) throw new InputError(`okExit takes exit codes from 1 to 255 (one, or a list), not ${JSON.stringify(code)}.`);
    words.push('--ok-exit', String(code));
  }
  if ((args.ready !== undefined || args.lease !== undefined || args.stdinPipe !== undefined || args.onNotReady !== undefined) && args.python !== undefined) {
    throw new InputError('ready, lease, onNotReady and stdinPipe are for commands (argv or shell), not python scripts.');
  }
  if (args.onNotReady !== undefined && args.ready === undefined) throw new InputError('onNotReady goes with ready: what to do when its timeout passes first.');
  if (args.ready !== undefined) {
    const probes = typeof args.ready.probes === 'string' ? [args.ready.probes] : args.ready.probes;
    for (const probe of probes) words.push('--ready', probe);
    if (args.ready.timeout !== undefined) words.push('--ready-timeout', args.ready.timeout);
    if (args.ready.interval !== undefined) words.push('--ready-interval', args.ready.interval);
    if (args.ready.delay !== undefined) words.push('--ready-delay', args.ready.delay);
    if (args.ready.status !== undefined) words.push('--ready-status', args.ready.status);
  }
  if (args.onNotReady !== undefined) words.push('--on-not-ready', args.onNotReady);
  if (args.lease !== undefined) words.push('--lease', args.lease);
  if (args.stdinPipe === true) words.push('--stdin-pipe');
  if (args.python !== undefined) {
    words.push('-c', args.python);
    if (args.session !== undefined) words.push('--session', args.session);
  } else if (args.shell !== undefined) {
    words.push('--shell', '--', args.shell);
  } else {
    words.push('--', ...args.argv!);
  }
  try {
    const command = parseAnyRunArgs(words);
    if (!isPythonCommand(command)) return command.request;
    return { ...command.request, code: args.python! };
  } catch (error) {
    if (error instanceof UsageError) throw new InputError(asToolMessage(error.message));
    throw error;
  }
}

/**
 * `timeout`, as models trained on shell tools send it: a number of
 * milliseconds (Claude Code's Bash and Codex's shell take it so), or a
 * duration string; taken as the limit.
 */
export function timeoutAsLimit(raw: unknown): unknown {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw) || !Object.hasOwn(raw, 'timeout')) return raw;
  const { timeout, ...rest } = raw as Record<string, unknown>;
  if (rest.limit !== undefined) throw new InputError('Give limit or timeout, not both: limit takes a duration ("30s", "10m"); timeout is the same in milliseconds.');
  if (typeof timeout === 'number' && Number.isFinite(timeout) && timeout >= 0) return { ...rest, limit: `${Math.round(timeout)}ms` };
  if (typeof timeout === 'string' && /^\d+$/.test(timeout.trim())) return { ...rest, limit: `${timeout.trim()}ms` };
  if (typeof timeout === 'string' && parseDuration(timeout) !== undefined) return { ...rest, limit: timeout };
  throw new InputError(`timeout takes milliseconds (120000 is 2 minutes), not ${JSON.stringify(timeout)}; or give limit a duration such as "30s" or "10m".`);
}

/** ANSI escape sequences (colours, cursor moves), left out of a progress message. */
const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;?]*[A-Za-z]`, 'g');

/** The last non-blank line of some output, cut for a progress message. */
function lastLine(text: string): string | null {
  const lines = text.split(/\r?\n|\r/).map((line) => line.replace(ANSI, '').replace(/[\p{Cc}]/gu, '').trim());
  const line = lines.reverse().find((l) => l !== '');
  if (line === undefined) return null;
  return line.length > 100 ? `${line.slice(0, 97)}...` : line;
}

/**
 * While a call blocks on a run: a progress notification every second (when
 * the client asked for them), saying how long and what the run printed last.
 * `startElapsedMs`: the run's elapsed time when the call began, when known.
 */
function followProgress(context: ToolContext, id: string, known: { startElapsedMs?: number; limitMs?: number | null }): () => void {
  const send = context.progress;
  if (!send) return () => undefined;
  const began = performance.now();
  let limitMs = known.limitMs ?? null;
  let last: string | null = null;
  let stopping: string | null = null;
  const unwatch = context.link.watch(id, (event) => {
    if (event.type === 'output') last = lastLine(event.text) ?? last;
    else if (event.type === 'limit-extended') limitMs = event.limitMs;
    else if (event.type === 'signal-sent' && event.step !== 'teardown' && event.step !== 'user') stopping = `stopping (${event.signal} sent)`;
  });
  const timer = setInterval(() => {
    const waited = performance.now() - began;
    const elapsed = known.startElapsedMs !== undefined ? known.startElapsedMs + waited : undefined;
    const when = elapsed !== undefined ? `${seconds(Math.round(elapsed / 1000) * 1000)}${limitMs !== null ? ` of a ${seconds(limitMs)} limit` : ''}` : `waited ${seconds(Math.round(waited / 1000) * 1000)}`;
    const message = `run ${id} ${stopping ?? 'running'}, ${when}${last !== null ? `; last output: ${last}` : ''}`;
    const progress = Math.floor((elapsed ?? waited) / 100) / 10;
    try {
      send(progress, message, elapsed !== undefined && limitMs !== null ? limitMs / 1000 : undefined);
    } catch {
      // A notification that cannot be sent changes nothing for the run.
    }
  }, PROGRESS_EVERY_MS);
  const end = () => {
    clearInterval(timer);
    unwatch();
    context.signal?.removeEventListener('abort', end);
  };
  context.signal?.addEventListener('abort', end);
  return end;
}

async function waitWithProgress(context: ToolContext, id: string, timeoutMs: number, known: { startElapsedMs?: number; limitMs?: number | null } = {}, until: { until?: string; since?: 'now' | 'start' } = {}): Promise<RunResult> {
  const stop = followProgress(context, id, known);
  try {
    return await context.link.call(async (api) => {
      try {
        return await api.wait(id, { timeoutMs, output: 'unseen', ...until });
      } catch (error) {
        // A run the host no longer holds (an earlier host's, or long ended): its stored result.
        if (kindOf(error) !== 'not-found') throw error;
        const stored = await api.get(id);
        if (!stored) throw error;
        return stored;
      }
    });
  } finally {
    stop();
  }
}

const RUN_DESCRIPTION = `Run a command or a Python script under Warden's supervision and return how it ended: exit code or signal, a verdict that says why (completed, failed, timed-out, stopped, killed, crashed, signaled, spawn-failed), its stdout and stderr, and advice for the next step.

Use it instead of a plain shell for anything that may hang, run long, or use a lot of memory: give a limit ("30s", "10m") and at the limit Warden interrupts it (SIGINT, then SIGTERM, then SIGKILL after the grace) and still returns all the output so far, and it ends every process the run left behind.

Give exactly one of: argv (a command and its arguments, run directly, no shell), shell (one command line run through /bin/sh -c, for pipes and redirections), or python (a script's source, run in a persistent interpreter session whose variables stay for the next script).

Give a limit; with none, the run gets Warden's default for agents (10m unless WARDEN_DEFAULT_LIMIT says otherwise). A run still live when you (the agent) exit is stopped, unless started with detach: true.

For a server or watcher that never ends (npm run dev, vite, next dev, wrangler dev, a database, tsc --watch), give ready instead of relying on a yield: {"shell": "npm run dev", "ready": {"probes": ["port"]}} answers as soon as it listens (or its log line matches, or its health URL answers), with the run still going, the ready line and its ports first; then use it (fetch its pages with another run of curl), wait with until "log:/.../" after an edit, and stop it when done. It is leased (2h, extend renews) and ends when you exit. A process that asks questions: stdinPipe: true, then the input tool.

The call returns when the run ends or after yield (default 30s, at most 50s), whichever is first. If it is still going, the answer has state "running", the output so far, and next (the <next> line): the exact wait call that returns the rest; the run keeps running meanwhile. Long output comes cut to its head and tail around a [warden: N characters of stdout cut here ...] marker naming the show call that returns what was cut; the history keeps all of it.`;

const WAIT_DESCRIPTION = `Wait for a run that is still going (a run or an earlier wait answered state "running" with a <next> line) and return its result: the output it printed since the last answer, and, once it ended, its verdict, exit code and advice.

Returns when the run ends or after yield (default 30s, at most 50s); if it still runs, call wait again, or stop it. Also works on an ended run (returns its final result). Long output is cut as run cuts it, with a marker naming the show call for the rest.

With until, it also returns while the run goes on: until "ready" when a server started with ready is ready; until "log:/REGEX/" when a line of its output printed after this call matches. After you edit a file a dev server or watcher rebuilds, wait with until "log:/Compiled|built in|error/" to see the rebuild's result; before answering a prompt, until "log:/\\?/" (then the input tool).`;

const INPUT_DESCRIPTION = `Send text to the stdin of a live run started with stdinPipe: true (run refuses input otherwise): to answer the question it asks ("Continue? [y/N]", an interactive installer or migration). Give text exactly as typed, ending with "\\n" ({"id": "...", "text": "y\\n"}); eof: true closes its stdin afterwards. Wait first with until "log:/\\?/" to see the question; wait again for what it does with the answer. What you send is kept in the run's history.`;

const STOP_DESCRIPTION = `Stop a live run with Warden's stop sequence (SIGINT, then SIGTERM, then SIGKILL after its grace) and return its final result: verdict "stopped", the output not returned yet, and what teardown ended. force: true sends SIGKILL at once. Use it when a run is stuck or no longer needed.`;

const EXTEND_DESCRIPTION = `Move a live run's deadline later by a duration ("30s", "5m"), when it needs longer than its limit and is making progress. A run without a limit gets one of its elapsed time plus the duration. A service started with ready has its lease renewed instead (it ends that much later), so it keeps running while you use it. Refused once the stop sequence has begun. Returns the run's snapshot with the new limitMs; its output comes from wait.`;

const LIST_DESCRIPTION = `List live and recent runs from Warden's history, newest first: id, when it started, verdict (or state while live), elapsed time against its limit, and the command. Filter by live, verdict, since ("1h"), or search text. Use it to find a run's id (for show, wait or stop) or to see what ran and how it ended. allHosts: true lists this machine's runs and every configured remote host's, each with its host. structuredContent.runs holds the runs without their output.`;

/**
 * list with allHosts: this machine's host and every remote's, asked at once,
 * newest first with each run's host; a host that cannot be reached is named.
 * Each remote run's host is remembered, so wait, stop, extend and show on its
 * id go there.
 */
async function listAllHosts(context: ToolContext, query: HistoryQuery): Promise<CallToolResult> {
  const names = context.session.hosts?.names() ?? [];
  const asked = await Promise.all(
    [{ name: LOCAL_HOST_NAME, link: context.link }, ...names.map((name) => ({ name, link: context.session.hosts!.link(name) }))].map(async ({ name, link }) => {
      try {
        const page = await link.call((api) => api.history(query));
        return { name, runs: page.runs, more: page.nextCursor !== null };
      } catch (error) {
        return { name, runs: [] as RunSummary[], more: false, error: error instanceof Error ? error.message : String(error) };
      }
    }),
  );
  const runs = asked
    .flatMap((h) => h.runs.map((run) => ({ ...run, host: h.name })))
    .sort((a, b) => b.startedAt.localeCompare(a.startedAt))
    .slice(0, query.limit ?? DEFAULT_LIST_LIMIT);
  for (const run of runs) if (run.host !== LOCAL_HOST_NAME) context.session.runHosts?.set(run.id, run.host);
  const more = asked.some((h) => h.more);
  const parts = asked.map((h) => `host ${h.name}:${h.error !== undefined ? ` unreachable (${h.error})` : `\n${listText(runs.filter((r) => r.host === h.name), false)}`}`);
  if (more) parts.push('(more runs match: narrow with since, verdict or search, or raise limit)');
  const unreachable = asked.filter((h) => h.error !== undefined).map((h) => ({ host: h.name, error: h.error! }));
  return { content: [{ type: 'text', text: parts.join('\n\n') }], structuredContent: { runs, more, ...(unreachable.length > 0 ? { unreachable } : {}) } };
}

const SHOW_DESCRIPTION = `Show one run, live or ended, with its output paged: up to maxChars characters (default 8000) of each stream asked for (stream: "stdout", "stderr" or "both") from offset (default 0); the call a [warden: ... cut here ...] marker names returns the characters that were cut. The answer says first that it is a page (<page>, and page in the JSON): which characters of which stream it holds and the exact show call for each next page. Then the run's own verdict, exit code, advice and notes, then the streams asked for (a stream not asked for is left out). Use it to read a long output in parts, or a past run's result from list; search finds lines in it. It does not wait and marks no output as seen.`;

const SEARCH_DESCRIPTION = `Search a run's output (id), or the newest runs' (no id; live ones too), for lines matching a pattern: a JavaScript regular expression (u flag), or the text itself with literal: true; ignoreCase, stream ("stdout", "stderr", "both"), context lines (default 2). Use it instead of paging with show to find the first Traceback, an error code or a test name in a long output.

Answers like rg -n -C: matching lines as LINE:OFFSET:TEXT (show with that offset starts there) and the lines around them as LINE-TEXT. Colours and CRs are not in the way. Lines are those of the output Warden kept; where a very long output was cut in its middle, the answer names the gap, since nothing there can be found. One call stops at maxMatches (default 20), or after 50,000,000 characters or 2 s, and names the exact search {"cursor": ...} call that goes on; for one live run, that call continues in what it prints next. A pattern too slow for the text (nested repeats) is stopped and says so.`;

const SESSIONS_DESCRIPTION = `List the Python interpreter sessions of the Warden host (used by run with python): name, state (idle, busy, starting, dead), interpreter pid and Python version, scripts run and queued, and the run id of the script running now.`;

export const TOOLS: ToolDef[] = [
  {
    name: 'run',
    title: 'Run a command or Python script under supervision',
    description: RUN_DESCRIPTION,
    input: runInput,
    output: runResultSchema,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    async handle(raw, context) {
      const args = parseToolArgs(runInput, timeoutAsLimit(raw));
      // A service is bounded by its lease, not by the default limit (a dev server outlives 10 minutes).
      const withLimit = args.limit === undefined && args.ready === undefined && context.session.defaultLimit !== null ? { ...args, limit: context.session.defaultLimit } : args;
      // Another machine's host: this process's directory, environment and pid mean nothing there.
      const remote = (args.host !== undefined && args.host !== LOCAL_HOST_NAME) || context.session.remote !== undefined;
      if (remote && args.cwd !== undefined && !args.cwd.startsWith('/')) throw new InputError(`cwd on a remote host is a directory there: give an absolute path, not ${JSON.stringify(args.cwd)}.`);
      const request = remote ? runRequestFrom(withLimit) : asThisProcess(runRequestFrom(withLimit));
      const yieldMs = parseYieldArg(args.yield);
      const owner = args.detach === true || remote ? null : context.session.owner();
      const started = await context.link.call((api) => api.start(request, owner ? { ownerPid: owner } : {}));
      if (args.host !== undefined && args.host !== LOCAL_HOST_NAME) context.session.runHosts?.set(started.id, args.host);
      let result: RunResult;
      try {
        result = await waitWithProgress(context, started.id, yieldMs, { startElapsedMs: started.elapsedMs, limitMs: started.limitMs }, args.ready !== undefined ? { until: 'ready' } : {});
      } catch (error) {
        // It started: say which run, so the caller can find it again.
        const why = error instanceof Error ? error.message : String(error);
        throw new WardenError(kindOf(error), `Run ${started.id} started, but waiting on it failed: ${why}`);
      }
      // Said in the answer's notes (both forms) while the runs are this server's own (host-link.ts notice).
      if (context.link.notice) result = { ...result, notes: [...result.notes, context.link.notice] };
      return runAnswer(result, context, { base: { stdout: 0, stderr: 0 }, ...(args.streamChars !== undefined ? { streamChars: args.streamChars } : {}) });
    },
  },
  {
    name: 'wait',
    title: 'Wait for a run',
    description: WAIT_DESCRIPTION,
    input: waitInput,
    output: runResultSchema,
    annotations: { readOnlyHint: true, openWorldHint: false },
    async handle(raw, context) {
      const args = parseToolArgs(waitInput, raw);
      const yieldMs = parseYieldArg(args.yield);
      const until = { ...(args.until !== undefined ? { until: args.until } : {}), ...(args.since !== undefined ? { since: args.since } : {}) };
      return runAnswer(await waitWithProgress(context, args.id, yieldMs, {}, until), context, args.streamChars !== undefined ? { streamChars: args.streamChars } : {});
    },
  },
  {
    name: 'stop',
    title: 'Stop a run',
    description: STOP_DESCRIPTION,
    input: stopInput,
    output: runResultSchema,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    async handle(raw, context) {
      const args = parseToolArgs(stopInput, raw);
      const snapshot = await context.link.call(async (api) => {
        try {
          return await api.stop(args.id, { force: args.force === true });
        } catch (error) {
          // Not live in the host: a stored run that ended is answered as it ended.
          if (kindOf(error) !== 'not-found') throw error;
          const stored = await api.get(args.id);
          if (stored?.state !== 'ended') throw error;
          return stored;
        }
      });
      if (snapshot.state === 'ended' && snapshot.stop?.reason !== 'user') {
        return runAnswer(snapshot, context, { base: { stdout: 0, stderr: 0 }, lead: `Run ${snapshot.id} had already ended (${snapshot.verdict ?? 'ended'}); nothing was stopped.` });
      }
      // The stop sequence takes up to the grace; a very long grace yields like wait does.
      if (snapshot.state === 'ended') return runAnswer(snapshot, context, { base: { stdout: 0, stderr: 0 } });
      return runAnswer(await waitWithProgress(context, args.id, MAX_YIELD_MS, { startElapsedMs: snapshot.elapsedMs, limitMs: snapshot.limitMs }), context);
    },
  },
  {
    name: 'extend',
    title: "Extend a run's time limit",
    description: EXTEND_DESCRIPTION,
    input: extendInput,
    output: runResultSchema,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    async handle(raw, context) {
      const args = parseToolArgs(extendInput, raw);
      const byMs = parseDuration(args.by);
      if (byMs === undefined || byMs <= 0) throw new InputError(`by takes a duration such as 30s or 5m, not ${JSON.stringify(args.by)}.`);
      const result = await context.link.call((api) => api.extend(args.id, byMs));
      const limit = result.limitMs !== null ? `a ${seconds(result.limitMs)} limit` : 'no limit';
      // A service's extend renews its lease: say that, not that it has no limit.
      const lead = result.lease ? `Run ${result.id}'s lease now ends at ${seconds(result.lease.endsAtMs)} of its clock${result.limitMs !== null ? `, and it has ${limit}` : ''} (${seconds(result.elapsedMs)} elapsed).` : `Run ${result.id} now has ${limit} (${seconds(result.elapsedMs)} elapsed).`;
      return runAnswer(result, context, { base: { stdout: 0, stderr: 0 }, lead });
    },
  },
  {
    name: 'input',
    title: "Send input to a run's stdin",
    description: INPUT_DESCRIPTION,
    input: inputInput,
    output: runResultSchema,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    async handle(raw, context) {
      const args = parseToolArgs(inputInput, raw);
      if ((args.text ?? '') === '' && args.eof !== true) throw new InputError('input needs text to send (end it with "\\n" to answer a prompt), or eof: true to close its stdin.');
      const sent = await context.link.call((api) => api.input(args.id, { ...(args.text !== undefined ? { text: args.text } : {}), ...(args.eof === true ? { eof: true } : {}) }));
      const chars = args.text?.length ?? 0;
      return runAnswer(sent, context, { lead: `Sent ${chars} character${chars === 1 ? '' : 's'}${args.eof === true ? ' and the end of input' : ''} to run ${sent.id}; its answer comes with wait (until "log:/.../" waits for the next line you expect).` });
    },
  },
  {
    name: 'list',
    title: 'List runs',
    description: LIST_DESCRIPTION,
    input: listInput,
    output: listResultSchema,
    annotations: { readOnlyHint: true, openWorldHint: false },
    async handle(raw, context) {
      const args = parseToolArgs(listInput, raw);
      let since: number | undefined;
      if (args.since !== undefined) {
        const ms = parseDuration(args.since);
        if (ms === undefined) throw new InputError(`since takes a duration such as 30m, 1h or 24h, not ${JSON.stringify(args.since)}.`);
        since = Date.now() - ms;
      }
      const query: HistoryQuery = {
        ...(args.live !== undefined ? { state: args.live ? 'live' : 'ended' } : {}),
        ...(args.verdict !== undefined ? { verdict: args.verdict } : {}),
        ...(since !== undefined ? { since } : {}),
        ...(args.search !== undefined ? { text: args.search } : {}),
        limit: args.limit ?? DEFAULT_LIST_LIMIT,
      };
      if (args.allHosts === true) return listAllHosts(context, query);
      const { runs, more } = await context.link.call(async (api) => {
        const page = await api.history(query);
        let runs: RunSummary[] = page.runs;
        if (runs.some((run) => run.state !== 'ended')) {
          // The history holds a live run as it started: the host's snapshot has its elapsed time and limit now.
          const live = new Map((await api.list()).map((run) => [run.id, run] as const));
          runs = runs.map((run) => {
            const now = live.get(run.id);
            if (!now) return run;
            return {
              ...run,
              state: now.state,
              elapsedMs: now.elapsedMs,
              limitMs: now.limitMs,
              ...(now.verdict !== undefined ? { verdict: now.verdict, exitCode: now.exitCode, signal: now.signal } : {}),
              ...(now.ready !== undefined ? { ready: now.ready } : {}),
              ...(now.ports ? { ports: now.ports } : {}),
            };
          });
        }
        return { runs, more: page.nextCursor !== null };
      });
      return { content: [{ type: 'text', text: listText(runs, more) }], structuredContent: { runs, more } };
    },
  },
  {
    name: 'show',
    title: 'Show a run and its output',
    description: SHOW_DESCRIPTION,
    input: showInput,
    output: showResultSchema,
    annotations: { readOnlyHint: true, openWorldHint: false },
    async handle(raw, context) {
      const args = parseToolArgs(showInput, raw);
      const result = await context.link.call((api) => api.get(args.id));
      if (!result) throw new WardenError('not-found', `No run with id ${JSON.stringify(args.id)} (the list tool shows the runs there are).`);
      const stream = args.stream ?? 'both';
      const offset = args.offset ?? 0;
      const maxChars = args.maxChars ?? DEFAULT_MAX_CHARS;
      const pages: Partial<Record<Stream, StreamPage>> = {};
      for (const s of ['stdout', 'stderr'] as const) {
        if (stream !== 'both' && stream !== s) continue;
        const all = result[s];
        const from = Math.min(offset, all.length);
        pages[s] = { from, to: Math.min(from + maxChars, all.length), total: all.length };
      }
      const { text, json } = pageAnswerParts(result, pages, maxChars);
      return {
        content: [{ type: 'text', text }],
        structuredContent: json,
        _meta: { 'anthropic/maxResultSizeChars': MAX_RESULT_SIZE_CHARS },
      };
    },
  },
  {
    name: 'search',
    title: "Search runs' output",
    description: SEARCH_DESCRIPTION,
    input: searchInput,
    output: searchResultSchema,
    annotations: { readOnlyHint: true, openWorldHint: false },
    async handle(raw, context) {
      const args = parseToolArgs(searchInput, raw);
      const { since, ...rest } = args;
      let sinceMs: number | undefined;
      if (since !== undefined) {
        const ms = parseDuration(since);
        if (ms === undefined) throw new InputError(`since takes a duration such as 30m, 1h or 24h, not ${JSON.stringify(since)}.`);
        sinceMs = Date.now() - ms;
      }
      const query: SearchQuery = { ...rest, ...(sinceMs !== undefined ? { since: sinceMs } : {}) };
      const answer = await context.link.call((api) => api.search(query));
      const more = args.maxMatches !== undefined ? `, "maxMatches": ${args.maxMatches}` : '';
      const next = (cursor: string) => `search {"cursor": "${cursor}"${more}}`;
      return {
        content: [{ type: 'text', text: searchText(answer, { escape: escapeForModel, next }) }],
        structuredContent: { ...answer, ...(answer.cursor !== null ? { next: next(answer.cursor) } : {}) },
        _meta: { 'anthropic/maxResultSizeChars': MAX_RESULT_SIZE_CHARS },
      };
    },
  },
  {
    name: 'sessions',
    title: 'List Python sessions',
    description: SESSIONS_DESCRIPTION,
    input: sessionsInput,
    output: sessionsResultSchema,
    annotations: { readOnlyHint: true, openWorldHint: false },
    async handle(raw, context) {
      parseToolArgs(sessionsInput, raw);
      const sessions = await context.link.call((api) => api.sessions());
      return { content: [{ type: 'text', text: sessionsText(sessions) }], structuredContent: { sessions } };
    },
  },
];
