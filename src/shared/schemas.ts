// The shapes every input must have where it crosses into the host: HTTP
// bodies and queries, and the Electron IPC arguments. One schema per input,
// shared by both boundaries. They check structure and types; the engine's
// normalizeRequest checks meaning (ranges, the cwd exists, memory text) with
// the same one-line errors for every client.

import { z } from 'zod';
import { PROCESS_SIGNALS, type WaitOptions } from './api';
import { MAX_OUTPUT_CAP_CHARS, RLIMIT_NAMES, type RunRequest } from './request';
import { InputError } from './errors';

const ms = () => z.number({ error: 'must be a number of milliseconds' }).finite().min(0, { error: 'cannot be negative' });
const text = () => z.string({ error: 'must be a string' });
const outputCap = () =>
  z.number({ error: 'must be a number of characters' }).int({ error: 'must be a whole number of characters' }).min(2, { error: 'must be at least 2' }).max(MAX_OUTPUT_CAP_CHARS, { error: `must be at most ${MAX_OUTPUT_CAP_CHARS.toLocaleString('en-US')} (what one run may keep in memory per stream)` });

export const RUN_ID = /^[0-9a-f]{6,32}$/;
/** 1 to 64 of letters, digits, '_', '.' and '-', the first not '.' or '-': never `.`, `..` or something read as an option. */
export const SESSION_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$/;
export const SESSION_NAME_RULE = "a session name is 1 to 64 letters, digits, '_', '.' or '-', starting with a letter, digit or '_'";

export const runIdSchema = z.string({ error: 'a run id is a string of 6 to 32 hex characters' }).regex(RUN_ID, { error: 'a run id is 6 to 32 hex characters' });
export const sessionNameSchema = z
  .string({ error: 'a session name is a string' })
  .regex(SESSION_NAME, { error: SESSION_NAME_RULE });

const envSchema = z.record(z.string(), z.string({ error: 'must be a string' }), { error: 'must be an object of strings' });
/** A resource limit's value: a whole number, or null for unlimited. */
const rlimitValue = z.number({ error: 'must be a whole number or null (unlimited)' }).int({ error: 'must be a whole number or null (unlimited)' }).min(0, { error: 'must be a whole number or null (unlimited)' }).max(Number.MAX_SAFE_INTEGER).nullable();
const rlimitsSchema = z.partialRecord(z.enum(RLIMIT_NAMES, { error: `names one of ${RLIMIT_NAMES.join(', ')}` }), z.tuple([rlimitValue, rlimitValue], { error: 'must be [soft, hard]' }), { error: 'must be an object of [soft, hard] by limit name' });
const memorySchema = z.union([z.string(), z.number().finite()], { error: 'must be bytes or text such as "512Mi" or "2G"' });

const ownerSchema = z.strictObject(
  {
    label: z.string({ error: 'must be a string' }).min(1, { error: 'is at least one character' }).max(120, { error: 'is at most 120 characters' }),
    pid: z.number({ error: 'must be a process id' }).int({ error: 'must be a process id' }).min(1, { error: 'must be a process id' }).optional(),
  },
  { error: (issue) => (issue.code === 'unrecognized_keys' ? `an owner has only label and pid, not ${issue.keys.join(', ')}` : 'an owner is { label, pid? }') },
);

export const commandRunSchema = z.strictObject(
  {
    owner: ownerSchema.optional(),
    argv: z.array(text(), { error: 'must be an array of strings' }).min(1, { error: 'needs at least the command' }),
    shell: z.boolean().optional(),
    cwd: text().optional(),
    env: envSchema.optional(),
    baseEnv: envSchema.optional(),
    stdin: text().optional(),
    limitMs: ms().nullable().optional(),
    graceMs: ms().optional(),
    terminateAfterMs: ms().optional(),
    drainMs: ms().optional(),
    teardownBudgetMs: ms().optional(),
    keepDescendants: z.boolean().optional(),
    core: z.boolean({ error: 'must be true or false' }).optional(),
    memory: memorySchema.optional(),
    outputCapChars: outputCap().optional(),
    okExitCodes: z.array(z.number({ error: 'must be exit codes (whole numbers 1 to 255)' }), { error: 'must be an array of exit codes' }).max(32, { error: 'holds at most 32 exit codes' }).optional(),
    umask: z.number({ error: 'must be a mode from 0 to 0o777' }).int({ error: 'must be a mode from 0 to 0o777' }).min(0, { error: 'must be a mode from 0 to 0o777' }).max(0o777, { error: 'must be a mode from 0 to 0o777' }).optional(),
    rlimits: rlimitsSchema.optional(),
    ready: z
      .strictObject(
        {
          probes: z.array(text(), { error: 'must be a list of probes such as "port" or "log:/ready/"' }),
          timeoutMs: ms().optional(),
          intervalMs: ms().optional(),
          delayMs: ms().optional(),
          status: text().optional(),
          onNotReady: z.enum(['stop', 'keep'], { error: "must be 'stop' or 'keep'" }).optional(),
        },
        { error: (issue) => (issue.code === 'unrecognized_keys' ? `ready has no field ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}` : 'ready is an object: { probes, timeoutMs?, intervalMs?, delayMs?, status?, onNotReady? }') },
      )
      .optional(),
    leaseMs: ms().nullable().optional(),
    stdinPipe: z.boolean().optional(),
  },
  { error: (issue) => (issue.code === 'unrecognized_keys' ? `a run request has no field ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}` : 'a run request is an object') },
);

export const pythonRunSchema = z.strictObject(
  {
    owner: ownerSchema.optional(),
    code: text(),
    session: sessionNameSchema.optional(),
    onBusy: z.enum(['queue', 'refuse'], { error: "must be 'queue' or 'refuse'" }).optional(),
    limitMs: ms().nullable().optional(),
    graceMs: ms().optional(),
    cwd: text().optional(),
    env: envSchema.optional(),
    baseEnv: envSchema.optional(),
    keepDescendants: z.boolean().optional(),
    memory: memorySchema.optional(),
    outputCapChars: outputCap().optional(),
  },
  { error: (issue) => (issue.code === 'unrecognized_keys' ? `a Python run request has no field ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}` : 'a Python run request is an object') },
);

/** A command (argv) or a Python script (code): which one is decided by the fields, so the error speaks of the right one. */
export function parseRunRequest(value: unknown): RunRequest {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new InputError('A run request is a JSON object with argv (a command) or code (a Python script).');
  if ('code' in value && 'argv' in value) throw new InputError('A run request has argv (a command) or code (a Python script), not both.');
  return ('code' in value ? parse(pythonRunSchema, value) : parse(commandRunSchema, value)) as RunRequest;
}

export const stopSchema = z.strictObject(
  {
    force: z.boolean({ error: 'must be true or false' }).optional(),
    // Why the client stops it, kept in the result's notes: one line of text.
    note: z.string({ error: 'must be a string' }).max(500, { error: 'is at most 500 characters' }).regex(/^[^\p{Cc}]*$/u, { error: 'must be one line without control characters' }).optional(),
  },
  { error: 'stop options are an object' },
);

export const extendSchema = z.strictObject(
  { byMs: z.number({ error: 'must be a number of milliseconds' }).finite().positive({ error: 'must be more than 0' }).max(366 * 24 * 3_600_000, { error: 'is at most a year' }) },
  { error: 'extend takes { byMs }' },
);

export const inputSchema = z.strictObject(
  {
    // The HTTP body's own bound (1 MiB) is the text's.
    text: z.string({ error: 'must be a string' }).optional(),
    eof: z.boolean({ error: 'must be true or false' }).optional(),
  },
  { error: 'input takes { text?, eof? }' },
);

export const signalSchema = z.strictObject(
  {
    pid: z.number({ error: 'must be a process id' }).int({ error: 'must be a whole number' }).positive({ error: 'must be a positive process id' }).max(4_194_304, { error: 'is beyond the largest process id (4194304)' }),
    signal: z.enum(PROCESS_SIGNALS, { error: 'must be "TERM" or "KILL"' }),
  },
  { error: 'signal takes { pid, signal }' },
);

const offsetSchema = z.number().int().min(0);
export const waitSchema = z.strictObject(
  {
    timeoutMs: ms().max(2_147_483_647, { error: 'is at most 2147483647' }).optional(),
    output: z.union([z.enum(['all', 'unseen']), z.strictObject({ stdout: offsetSchema, stderr: offsetSchema })], { error: "must be 'all', 'unseen' or { stdout, stderr } offsets" }).optional(),
    until: text().max(4096, { error: 'is at most 4096 characters' }).optional(),
    since: z.enum(['now', 'start'], { error: "must be 'now' or 'start'" }).optional(),
  },
  { error: 'wait options are an object' },
);

const VERDICTS = ['completed', 'failed', 'timed-out', 'stopped', 'killed', 'crashed', 'signaled', 'lost', 'spawn-failed'] as const;
const VERDICT = z.enum(VERDICTS, { error: `must be one of ${VERDICTS.join(', ')}` });
const timeBound = z.union([z.number({ error: 'must be ms since the epoch or ISO 8601' }).finite(), z.string().refine((s) => Number.isFinite(Date.parse(s)), { error: 'must be ms since the epoch or ISO 8601' })]);

export const historyQuerySchema = z.strictObject(
  {
    verdict: z.union([VERDICT, z.array(VERDICT)], { error: `must be one or more of ${VERDICTS.join(', ')}` }).optional(),
    oom: z.union([z.boolean(), z.literal('true').transform(() => true), z.literal('false').transform(() => false)], { error: 'must be true or false' }).optional(),
    state: z.enum(['live', 'ended'], { error: "must be 'live' or 'ended'" }).optional(),
    kind: z.enum(['command', 'python'], { error: "must be 'command' or 'python'" }).optional(),
    session: sessionNameSchema.optional(),
    since: timeBound.optional(),
    until: timeBound.optional(),
    exitCode: z.number({ error: 'must be a whole number' }).int({ error: 'must be a whole number' }).optional(),
    text: z.string().max(1000, { error: 'is at most 1000 characters' }).optional(),
    limit: z.number().int().min(1).max(1000, { error: 'must be 1 to 1000' }).optional(),
    cursor: z.string().max(512).nullable().optional(),
    sort: z.enum(['started', 'elapsed', 'peak'], { error: "must be 'started', 'elapsed' or 'peak'" }).optional(),
    order: z.enum(['asc', 'desc'], { error: "must be 'asc' or 'desc'" }).optional(),
    // A query string says true as the word.
    counts: z.union([z.boolean(), z.literal('true').transform(() => true), z.literal('false').transform(() => false)], { error: 'must be true or false' }).optional(),
  },
  { error: (issue) => (issue.code === 'unrecognized_keys' ? `a history query has no field ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}` : 'a history query is an object') },
);

const queryFlag = z.union([z.boolean(), z.literal('true').transform(() => true), z.literal('false').transform(() => false), z.literal('1').transform(() => true), z.literal('0').transform(() => false)], { error: 'must be true or false' });
const queryWhole = (what: string) => z.number({ error: `must be a whole number (${what})` }).int({ error: `must be a whole number (${what})` });

/** GET /search's query (src/shared/search.ts SearchQuery); the host checks ranges and the pattern with one-line errors. */
export const searchQuerySchema = z.strictObject(
  {
    id: runIdSchema.optional(),
    pattern: z.string().max(1000, { error: 'is at most 1000 characters' }).optional(),
    literal: queryFlag.optional(),
    ignoreCase: queryFlag.optional(),
    stream: z.enum(['stdout', 'stderr', 'both'], { error: "must be 'stdout', 'stderr' or 'both'" }).optional(),
    context: queryWhole('lines').optional(),
    maxMatches: queryWhole('matches').optional(),
    cursor: z.string().max(16384, { error: 'is not one a search answered' }).optional(),
    since: timeBound.optional(),
    verdict: z.union([VERDICT, z.array(VERDICT)], { error: `must be one or more of ${VERDICTS.join(', ')}` }).optional(),
    maxRuns: queryWhole('runs').optional(),
  },
  { error: (issue) => (issue.code === 'unrecognized_keys' ? `a search has no field ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}` : 'a search query is an object') },
);

export { InputError };

/** Parses or throws InputError with the first problem as one line: "limitMs: limitMs cannot be negative." */
export function parse<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const where = issue.path.length > 0 ? `${issue.path.map(String).join('.')}: ` : '';
  let message = issue.message.replace(/\s+/g, ' ');
  if (!message.endsWith('.')) message += '.';
  throw new InputError(where ? `${where}${message}` : message.charAt(0).toUpperCase() + message.slice(1));
}

export function parseWaitOptions(value: unknown): WaitOptions {
  return parse(waitSchema, value ?? {}) as WaitOptions;
}

/**
 * The bounds a run's request is held to (supervisor/options.ts and
 * deadline.ts): a step of the stop sequence is one timer (setTimeout's
 * ceiling), a limit at most ten years. Settings are checked with the same
 * bounds when saved, so no saved default makes every New-run form fail.
 */
export const MAX_STEP_MS = 2 ** 31 - 1;
export const MAX_RUN_LIMIT_MS = 10 * 365 * 24 * 3_600_000;
const boundedMs = (min: number, max: number) =>
  z
    .number({ error: 'must be a number of milliseconds' })
    .finite({ error: 'must be a number of milliseconds' })
    .min(min, { error: `must be from ${min} to ${max} ms, as a run's is` })
    .max(max, { error: `must be from ${min} to ${max} ms, as a run's is` });

export const settingsSchema = z.strictObject(
  {
    defaultLimitMs: boundedMs(1, MAX_RUN_LIMIT_MS).nullable(),
    graceMs: boundedMs(0, MAX_STEP_MS),
    memory: z.string({ error: 'must be text such as "512Mi" or "2G", or null' }).max(32).nullable(),
    drainMs: boundedMs(0, MAX_STEP_MS),
    teardownBudgetMs: boundedMs(1, MAX_STEP_MS),
    retention: z.strictObject(
      {
        maxRuns: z.number({ error: 'must be a whole number' }).int({ error: 'must be a whole number' }).min(1, { error: 'must be at least 1' }),
        maxBytes: z.number({ error: 'must be a number of bytes' }).int({ error: 'must be a whole number of bytes' }).min(1024 * 1024, { error: 'must be at least 1 MiB' }),
      },
      { error: 'retention is { maxRuns, maxBytes }' },
    ),
  },
  { error: (issue) => (issue.code === 'unrecognized_keys' ? `settings have no field ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}` : 'settings are an object') },
);
