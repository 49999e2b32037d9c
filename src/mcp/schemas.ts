// What the MCP tools take and give back, as zod schemas: the input schemas
// are validated here (one-line messages, see parseToolArgs) and published as
// JSON Schema in tools/list; the output schemas describe structuredContent.
//
// Output schemas are deliberately permissive (strings, not enums; extra keys
// allowed): the SDK's client validates structuredContent against them and
// fails the whole call on a mismatch, so a field added to the result contract
// later must never break a client.

import { z } from 'zod';
import { InputError, RUN_ID, SESSION_NAME } from '../shared/schemas';

const VERDICTS = ['completed', 'failed', 'timed-out', 'stopped', 'killed', 'crashed', 'signaled', 'lost', 'spawn-failed'] as const;

// ---------------------------------------------------------------- outputs

/**
 * A run as a model gets it (src/shared/model-answer.ts answerJson): what decides
 * the next step first, each stream cut to its head and tail with a marker
 * naming the show call for the rest. `warden run --json` and `warden show
 * --json` print the whole result contract (docs/architecture.md, "The result contract").
 */
export const runResultSchema = z
  .looseObject({
    id: z.string().describe('The run id: pass it to wait, stop, extend and show.'),
    state: z.string().describe("'queued', 'running', 'stopping' or 'ended'; not 'ended' means the run goes on: call wait (see next)."),
    verdict: z.string().describe(`How it ended (${VERDICTS.join(', ')}), or its state while live.`),
    exitCode: z.number().nullable(),
    signal: z.string().nullable(),
    elapsed: z.string().describe('Time it ran, against its limit.'),
    crash: z
      .looseObject({ error: z.string(), at: z.string().nullable(), function: z.string().optional(), stream: z.string() })
      .optional()
      .describe('When it did not complete and a traceback or panic ends its output: the error, and the innermost place in its own files (file:line) to look at first.'),
    advice: z.string().nullable().describe('What to do next.'),
    notes: z.array(z.string()),
    next: z.string().optional().describe('While the run goes on: the exact call that continues it.'),
    stdout: z.string().describe('Its stdout (for a wait: since the last answer), cut to head and tail around a [warden: ... cut here ...] marker naming the show call that pages the rest.'),
    stderr: z.string().describe('Its stderr, cut the same way.'),
    stdoutCut: z.number().describe('Characters of stdout left out of this answer (show pages them; the history keeps them).'),
    stderrCut: z.number(),
    stdoutChars: z.number().describe('Characters of stdout this answer stood for before the cut.'),
    stderrChars: z.number(),
    kind: z.string(),
    cwd: z.string(),
    startedAt: z.string(),
    elapsedMs: z.number(),
    limitMs: z.number().nullable(),
  })
  .describe("A run as a model reads it: verdict, exit, elapsed, advice and notes, then its output cut to size (show pages the rest).");

const streamPage = z.looseObject({
  from: z.number().describe('Offset of the first character returned.'),
  to: z.number().describe('Offset after the last character returned.'),
  total: z.number().describe('Characters of the stream kept.'),
});

/**
 * show: a page of the run's output, saying first that it is one (page), then
 * the run's own verdict, advice and notes (of the whole run), then only the
 * streams asked for.
 */
export const showResultSchema = runResultSchema
  .omit({ stdout: true, stderr: true, stdoutCut: true, stderrCut: true, stdoutChars: true, stderrChars: true })
  .extend({
    page: z
      .looseObject({
        stream: z.string().describe('"stdout", "stderr" or "both": the streams this page holds.'),
        stdout: streamPage.optional(),
        stderr: streamPage.optional(),
        next: z.array(z.string()).optional().describe('The exact show call for the next page of each stream with more (absent at the end).'),
      })
      .describe('This answer is a page of the output, not all of it: which characters of which stream it holds.'),
    stdout: z.string().optional().describe("This page's characters of stdout (absent when only stderr was asked for)."),
    stderr: z.string().optional().describe("This page's characters of stderr (absent when only stdout was asked for)."),
  })
  .describe("A page of a run's output with the run's own verdict, advice and notes.");

const runSummary = z.looseObject({
  id: z.string(),
  kind: z.string(),
  state: z.string(),
  verdict: z.string().optional(),
  command: z.string().nullable().optional(),
  startedAt: z.string(),
  elapsedMs: z.number(),
  limitMs: z.number().nullable(),
});

export const listResultSchema = z.looseObject({
  runs: z.array(runSummary).describe('Newest first; as `warden list --json` gives them (no output).'),
  more: z.boolean().describe('Whether more runs match than were returned.'),
});

const searchMatch = z.looseObject({
  run: z.string(),
  stream: z.string(),
  line: z.number().describe('1-based line in the kept output.'),
  offset: z.number().describe('Offset of the match in the stream: show with this offset starts there.'),
  text: z.string(),
  before: z.array(z.string()),
  after: z.array(z.string()),
});

export const searchResultSchema = z
  .looseObject({
    matches: z.array(searchMatch),
    gaps: z.array(z.looseObject({ run: z.string(), stream: z.string(), line: z.number(), offset: z.number(), droppedChars: z.number() })).describe("Where a stream's output was not kept (the cap keeps head and tail): nothing there could be found."),
    runs: z.array(z.looseObject({ id: z.string(), state: z.string() })).describe('The runs searched.'),
    more: z.boolean().describe('The search stopped before the end (maxMatches, or the bound of one call): next continues it.'),
    cursor: z.string().nullable(),
    next: z.string().optional().describe('The exact search call that continues (also, for one live run, in what it prints next).'),
  })
  .describe("Lines of runs' output that match, with their line numbers, offsets and context.");

export const sessionsResultSchema = z.looseObject({
  sessions: z.array(z.looseObject({ name: z.string(), state: z.string(), pid: z.number().nullable() })),
});

// ---------------------------------------------------------------- inputs

const duration = (what: string) => z.string({ error: 'must be a duration string such as "500ms", "30s", "2m" or "1h"' }).describe(what);
const runId = z
  .string({ error: 'must be a run id (a string)' })
  .regex(RUN_ID, { error: 'must be a run id: 6 to 32 hex characters, as run or list return it' })
  .describe('The run id, as run, list or an earlier answer gave it.');
const yieldArg = duration(
  'Return after this long if the run is still going (default "30s", at most "50s"); the run keeps running and wait continues it. Durations: "500ms", "30s", "2m".',
).optional();

/** Arguments harnesses add to every call on their own (Gemini CLI: wait_for_previous): accepted and ignored. */
export const IGNORED_ARGUMENTS = ['wait_for_previous'] as const;

const strict = <T extends z.core.$ZodLooseShape>(tool: string, shape: T, also: string[] = []) =>
  z.strictObject(shape, {
    error: (issue) => {
      if (issue.code !== 'unrecognized_keys') return `${tool} takes an object of arguments`;
      const names = [...Object.keys(shape), ...also];
      const takes = names.length === 0 ? `${tool} takes no arguments` : `it takes ${names.join(', ')}`;
      return `${tool} takes no argument ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}: ${takes}`;
    },
  });

const streamChars = z
  .number({ error: 'must be a number of characters' })
  .int({ error: 'must be a whole number' })
  .min(200, { error: 'must be 200 to 200000' })
  .max(200_000, { error: 'must be 200 to 200000' })
  .optional()
  .describe('Characters of each stream the answer shows, head and tail (default 8000, WARDEN_MODEL_STREAM_CHARS); a marker names the show call for what is cut.');

export const runInput = strict('run', {
  argv: z
    .array(z.string({ error: 'must be an array of strings' }), { error: 'must be an array of strings' })
    .min(1, { error: 'needs at least the command, e.g. ["ls", "-la"]' })
    .optional()
    .describe('The command and its arguments, run directly (no shell): ["pytest", "-x", "tests/"]. Give exactly one of argv, shell or python.'),
  shell: z
    .string({ error: 'must be a string' })
    .optional()
    .describe('One shell command line, run through /bin/sh -c, for pipes, redirections, && and globs: "grep -r TODO src | wc -l".'),
  python: z
    .string({ error: "must be a string: the script's source" })
    .optional()
    .describe("A Python script's source, run in a persistent interpreter session: variables and imports stay for the next script of the same session. Top-level await works."),
  session: z
    .string({ error: 'must be a string' })
    .regex(SESSION_NAME, { error: "must be 1 to 64 letters, digits, '_', '.' or '-'" })
    .optional()
    .describe('With python: the interpreter session to run in (default "default"). A busy session queues the script.'),
  cwd: z.string({ error: 'must be a string' }).optional().describe('Working directory (default: the directory the agent started warden mcp in, usually the project; a relative path is taken from there).'),
  env: z
    .record(z.string(), z.string({ error: 'must be a string' }), { error: 'must be an object of strings' })
    .optional()
    .describe('Extra environment variables: {"NAME": "value"}. With python, used when the session\'s interpreter starts.'),
  stdin: z.string({ error: 'must be a string' }).optional().describe('Text given to the command on stdin (default: none, /dev/null). Commands only.'),
  okExit: z
    .union([z.number({ error: 'must be an exit code or a list of them' }), z.array(z.number({ error: 'must be exit codes (1 to 255)' }))], { error: 'must be an exit code or a list of them' })
    .optional()
    .describe('Exit codes besides 0 that mean success for this command, e.g. 1 for grep (no match) or diff (files differ): the verdict is then completed, with a note. Commands only.'),
  limit: duration(
    'Time limit: at the limit the run is interrupted (SIGINT), then SIGTERM, then killed at the grace; output so far is kept. E.g. "30s", "10m"; "0" for none. Default: WARDEN_DEFAULT_LIMIT, else "10m". (A shell tool\'s timeout, a number of milliseconds, is taken as the limit too.)',
  ).optional(),
  grace: duration('From the limit (or a stop) to SIGKILL (default "5s"; "10s" for python).').optional(),
  memory: z.string({ error: 'must be text such as "512Mi" or "2G"' }).optional().describe('Memory limit in its own cgroup: "512M", "2G", "1.5Gi" (powers of 1024, with or without i), or bytes (refused where no memory cgroup is writable).'),
  yield: yieldArg,
  detach: z
    .boolean({ error: 'must be true or false' })
    .optional()
    .describe('true: the run outlives this agent session (by default Warden stops the runs an agent left live when it exits).'),
  streamChars,
  ready: z
    .strictObject(
      {
        probes: z
          .union([z.string({ error: 'must be a probe' }), z.array(z.string({ error: 'must be a probe' }), { error: 'must be a list of probes' })], { error: 'must be a probe or a list of probes' })
          .describe('What "ready" means, all of them (as in wait-on): "port" (its processes listen on a TCP port; "port:5173" on that one), "tcp:5173" or "tcp:HOST:PORT" (a connect succeeds), "http://localhost:5173/health" (a GET answers 200-399), "log:/Local:.*:(\\d+)/" (a line of its output matches; a numeric first group is recorded as a port), "exec:CMD" (CMD exits 0), "file:PATH" (exists, size stable).'),
        timeout: duration('Give up after this long from the start (default "120s"): the run is then stopped unless onNotReady is "keep".').optional(),
        interval: duration('Between tries of the polled probes (default "250ms").').optional(),
        delay: duration('Before the first try (default "0s").').optional(),
        status: z.string({ error: 'must be a range such as "200-499"' }).optional().describe('HTTP statuses an http probe takes (default "200-399").'),
      },
      {
        error: (issue) => (issue.code === 'unrecognized_keys' ? `ready takes probes, timeout, interval, delay and status, not ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}` : 'ready takes an object: {"probes": ["port"], "timeout": "60s"}'),
      },
    )
    .optional()
    .describe('For a server or watcher that never ends (npm run dev, vite, next dev, a database, tsc --watch): the call answers as soon as it is ready, with the run still going, its ports and the line that said so; the run then lives on (leased, 2h by default) until you stop it or exit. Without ready, a server would only yield as "running".'),
  onNotReady: z.enum(['stop', 'keep'], { error: 'must be "stop" or "keep"' }).optional().describe('With ready, when its timeout passes first: "stop" the run (default; its output is kept) or "keep" it running.'),
  lease: duration('With ready: the run is stopped when its lease runs out (default "2h"; "0" for none); extend renews it. Replaces the default limit.').optional(),
  stdinPipe: z.boolean({ error: 'must be true or false' }).optional().describe('true: keep its stdin open so you can answer its prompts with the input tool (default: no stdin). Commands only; not with stdin.'),
  host: z
    .string({ error: 'must be a string' })
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$/, { error: "must be a remote host's name (warden remote list) or \"local\"" })
    .optional()
    .describe('Run it on a configured remote host (its name from `warden remote list`) instead of this machine: the run lives in that host and its history; wait, stop, extend and show with its id go there. cwd is then a directory there (absolute).'),
}, ['timeout (milliseconds, taken as limit)']);

export const waitInput = strict('wait', {
  id: runId,
  yield: yieldArg,
  streamChars,
  until: z
    .string({ error: 'must be "ready" or a log pattern' })
    .max(4096, { error: 'is at most 4096 characters' })
    .optional()
    .describe('Also return, with the run still going, when this happens: "ready" (a run started with ready is ready, or its ready timeout passed), or "log:/REGEX/[flags]" (a line of its output printed after this call matches, ANSI colours removed): after an edit, "log:/Compiled|error TS\\d+/". The answer carries the line in until.'),
  since: z.enum(['now', 'start'], { error: 'must be "now" or "start"' }).optional().describe('With until log:/.../: "start" also looks at the output printed before this call (default "now").'),
});

export const inputInput = strict('input', {
  id: runId,
  text: z.string({ error: 'must be a string' }).max(1_000_000, { error: 'is at most 1000000 characters' }).optional().describe('Written to the run\'s stdin as given: end it with "\\n" to answer a prompt ("y\\n").'),
  eof: z.boolean({ error: 'must be true or false' }).optional().describe('true: close its stdin after the text (the process reads end of file).'),
});

export const stopInput = strict('stop', {
  id: runId,
  force: z.boolean({ error: 'must be true or false' }).optional().describe('SIGKILL at once instead of the stop sequence (default false).'),
});

export const extendInput = strict('extend', {
  id: runId,
  by: duration('How much later the deadline moves, e.g. "30s" or "5m".'),
});

export const listInput = strict('list', {
  live: z.boolean({ error: 'must be true or false' }).optional().describe('true: only runs still going; false: only ended ones; absent: both.'),
  verdict: z
    .union([z.enum(VERDICTS), z.array(z.enum(VERDICTS))], { error: `must be one or more of ${VERDICTS.join(', ')}` })
    .optional()
    .describe('Only runs that ended so: one verdict or a list of them.'),
  since: duration('Only runs started within this long, e.g. "1h" or "30m".').optional(),
  search: z.string({ error: 'must be a string' }).max(1000, { error: 'is at most 1000 characters' }).optional().describe('Words that must all appear in the command, the script, or the end of its output.'),
  limit: z
    .number({ error: 'must be a number' })
    .int({ error: 'must be a whole number' })
    .min(1, { error: 'must be 1 to 1000' })
    .max(1000, { error: 'must be 1 to 1000' })
    .optional()
    .describe('At most this many runs (default 20).'),
  allHosts: z.boolean({ error: 'must be true or false' }).optional().describe("true: this machine's runs and every configured remote host's, each with its host's name."),
});

export const showInput = strict('show', {
  id: runId,
  stream: z.enum(['stdout', 'stderr', 'both'], { error: 'must be "stdout", "stderr" or "both"' }).optional().describe('Which output to return (default "both").'),
  offset: z
    .number({ error: 'must be a number' })
    .int({ error: 'must be a whole number' })
    .min(0, { error: 'cannot be negative' })
    .optional()
    .describe('Characters to skip at the start of each stream returned (default 0): the next offset a previous answer named.'),
  maxChars: z
    .number({ error: 'must be a number' })
    .int({ error: 'must be a whole number' })
    .min(1, { error: 'must be at least 1' })
    .max(50_000, { error: 'is at most 50000' })
    .optional()
    .describe('At most this many characters of each stream (default 8000).'),
});

export const sessionsInput = strict('sessions', {});

export const searchInput = strict('search', {
  id: runId.optional().describe("The run whose output to search. Without it: the newest runs (live ones too), narrowed by since and verdict."),
  pattern: z
    .string({ error: 'must be a string' })
    .max(1000, { error: 'is at most 1000 characters' })
    .optional()
    .describe('A JavaScript regular expression (u flag), matched against one line at a time: "Traceback|Error:", "FAILED .*test_\\w+". With literal: true, the text itself.'),
  literal: z.boolean({ error: 'must be true or false' }).optional().describe('true: pattern is plain text, not a regular expression.'),
  ignoreCase: z.boolean({ error: 'must be true or false' }).optional().describe('true: upper and lower case alike.'),
  stream: z.enum(['stdout', 'stderr', 'both'], { error: 'must be "stdout", "stderr" or "both"' }).optional().describe('Which output to search (default "both").'),
  context: z.number({ error: 'must be a number of lines' }).int({ error: 'must be a whole number' }).min(0, { error: 'must be 0 to 20' }).max(20, { error: 'must be 0 to 20' }).optional().describe('Lines before and after each match (default 2, at most 20).'),
  maxMatches: z.number({ error: 'must be a number' }).int({ error: 'must be a whole number' }).min(1, { error: 'must be 1 to 200' }).max(200, { error: 'must be 1 to 200' }).optional().describe('Matching lines per answer (default 20, at most 200); the cursor gives the rest.'),
  cursor: z.string({ error: 'must be a string' }).max(16384, { error: 'is not one a search answered' }).optional().describe("Continue where an answer stopped: pass its cursor alone (it holds the pattern and the runs), with maxMatches at most."),
  since: duration('Without id: only runs started within this long, e.g. "1h".').optional(),
  verdict: z
    .union([z.enum(VERDICTS), z.array(z.enum(VERDICTS))], { error: `must be one or more of ${VERDICTS.join(', ')}` })
    .optional()
    .describe('Without id: only runs that ended so, e.g. "failed".'),
  maxRuns: z.number({ error: 'must be a number' }).int({ error: 'must be a whole number' }).min(1, { error: 'must be 1 to 50' }).max(50, { error: 'must be 1 to 50' }).optional().describe('Without id: the newest runs to search (default 20, at most 50).'),
});

/** Parses tool arguments or throws InputError with the first problem as one line: "limit: must be a duration string ...". */
export function parseToolArgs<T>(schema: z.ZodType<T>, value: unknown): T {
  let args = value ?? {};
  if (typeof args === 'object' && args !== null && !Array.isArray(args) && IGNORED_ARGUMENTS.some((name) => Object.hasOwn(args as object, name))) {
    args = Object.fromEntries(Object.entries(args).filter(([name]) => !(IGNORED_ARGUMENTS as readonly string[]).includes(name)));
  }
  const result = schema.safeParse(args);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const where = issue.path.length > 0 ? `${issue.path.map(String).join('.')}: ` : '';
  let message = issue.message.replace(/\s+/g, ' ').trim();
  if (!message.endsWith('.')) message += '.';
  throw new InputError(where ? `${where}${message}` : message.charAt(0).toUpperCase() + message.slice(1));
}

/** A zod schema as the JSON Schema tools/list publishes (draft-07, as the SDK's own conversion and its AJV validator use). */
export function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): { type: 'object'; [key: string]: unknown } {
  const json = z.toJSONSchema(schema, { target: 'draft-7', io, unrepresentable: 'any' }) as Record<string, unknown>;
  return { ...json, type: 'object' };
}
