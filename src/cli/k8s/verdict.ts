// `warden k8s verdict NS/POD [FILE]`: a pod's termination message (what
// `warden run --termination-log` wrote, as `kubectl get pod -o
// jsonpath='{..terminated.message}'` prints it) read back into a run of this
// machine's history, of host `k8s:NS/POD`, so `warden list`, `warden show`
// and the app show it beside the others. The message comes from a pod, where
// anything may have written that file: it is held to the shape Warden writes
// (zod), every field checked, before it becomes a run.

import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { RunResult, Verdict } from '../../shared/result';
import { RUN_ID } from '../../shared/schemas';
import { UsageError } from '../parse';
import { podRefText, type PodRef } from './names';

/** More than any message (4,096 bytes) and kubectl's line around it: a bound on what is read. */
export const MAX_INPUT_BYTES = 64 * 1024;

const VERDICTS = ['completed', 'failed', 'timed-out', 'stopped', 'killed', 'crashed', 'signaled', 'lost', 'spawn-failed'] as const satisfies readonly Verdict[];
const status = () => z.number().int().min(0).max(255);
const shortText = (max: number) => z.string().max(max);

const endedSchema = z.object({
  id: z.string().regex(RUN_ID),
  verdict: z.enum(VERDICTS),
  state: z.literal('ended'),
  exit: status(),
  exitCodes: shortText(32).optional(),
  kind: z.enum(['command', 'python']).optional(),
  argv: z.array(shortText(4096)).max(1000).optional(),
  startedAt: z.iso.datetime().optional(),
  exitCode: z.number().int().min(-255).max(255).nullable(),
  signal: z.string().regex(/^SIG[A-Z0-9+-]{1,12}$/).nullable(),
  elapsedMs: z.number().finite().min(0).max(1e12),
  limitMs: z.number().finite().min(0).max(1e12).nullable(),
  oom: z.boolean().nullable(),
  advice: shortText(4096).optional(),
  stderr: shortText(MAX_INPUT_BYTES),
  stdout: shortText(MAX_INPUT_BYTES),
});

const notStartedSchema = z.object({
  verdict: z.null(),
  state: z.literal('not-started'),
  exit: status(),
  exitCodes: shortText(32).optional(),
  error: shortText(4096),
});

export type EndedMessage = z.infer<typeof endedSchema>;
export type NotStartedMessage = z.infer<typeof notStartedSchema>;

/** The host a pod's runs are recorded under. */
export function podHost(ref: PodRef): string {
  return `k8s:${podRefText(ref)}`;
}

/** Why the text is not a message Warden wrote, as the one line a user reads. */
function notWardens(why: string): UsageError {
  return new UsageError(
    `This is not a termination message warden run wrote (${why}). With terminationMessagePolicy: FallbackToLogsOnError, Kubernetes puts the log's last lines there when the container left none: it was killed before Warden could write (at its own memory limit, say) or warden never ran.`,
  );
}

/** The message in `text`: one JSON object, of either shape Warden writes. */
export function parseMessage(text: string): EndedMessage | NotStartedMessage {
  const trimmed = text.trim();
  if (trimmed === '') throw new UsageError('The termination message is empty: the container has not ended, or wrote none (see kubectl describe pod).');
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    // `{..terminated.message}` over several containers (or restarts) prints each, separated by spaces.
    if (trimmed.startsWith('{') && /}\s+\{/.test(trimmed)) {
      throw new UsageError("The text holds more than one termination message (several containers or restarts): name the container, e.g. kubectl get pod POD -o jsonpath='{.status.containerStatuses[?(@.name==\"task\")].state.terminated.message}'.");
    }
    throw notWardens('it is not JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw notWardens('it is not a JSON object');
  const state = (value as { state?: unknown }).state;
  if (state === 'not-started') {
    const parsed = notStartedSchema.safeParse(value);
    if (!parsed.success) throw notWardens(firstIssue(parsed.error));
    return parsed.data;
  }
  if (state !== 'ended' && typeof state === 'string' && (value as { id?: unknown }).id !== undefined) {
    throw new UsageError(`The message is of a run that had not ended (state ${JSON.stringify(state.slice(0, 20))}): warden run returned before its end (--yield?), so there is no verdict to record.`);
  }
  const parsed = endedSchema.safeParse(value);
  if (!parsed.success) throw notWardens(firstIssue(parsed.error));
  return parsed.data;
}

function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'its fields are not what Warden writes';
  const where = issue.path.length > 0 ? issue.path.join('.') : 'the object';
  return `${where}: ${issue.message}`.slice(0, 200);
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The run the message describes. Its id is the pod's run's id; a run that
 * never started has none, so it gets one made from the pod and the message
 * (reading the same message twice finds the same run).
 */
export function runFromMessage(message: EndedMessage | NotStartedMessage, ref: PodRef, raw: string, nowMs: number): RunResult {
  const where = `pod ${podRefText(ref)}`;
  const contract = message.exitCodes !== undefined ? `, ${message.exitCodes}` : '';
  if (message.state === 'not-started') {
    const id = createHash('sha256').update(`${podRefText(ref)}\0${raw.trim()}`).digest('hex').slice(0, 12);
    return {
      id, kind: 'command', cwd: '', state: 'ended', verdict: 'spawn-failed', exitCode: null, signal: null,
      startedAt: iso(nowMs), endedAt: iso(nowMs), elapsedMs: 0, limitMs: null,
      advice: message.error,
      notes: [`Warden in ${where} refused the run before it started (exit status ${message.exit}${contract}). Read from its termination message by warden k8s verdict.`],
      stdout: '', stderr: '', stdoutTruncated: 0, stderrTruncated: 0,
    };
  }
  const startedMs = message.startedAt !== undefined ? Date.parse(message.startedAt) : nowMs - message.elapsedMs;
  const kind = message.kind ?? 'command';
  return {
    id: message.id,
    kind,
    ...(kind === 'command' && message.argv ? { argv: message.argv } : {}),
    cwd: '',
    state: 'ended',
    verdict: message.verdict,
    exitCode: message.exitCode,
    signal: message.signal,
    startedAt: iso(startedMs),
    endedAt: iso(startedMs + message.elapsedMs),
    elapsedMs: message.elapsedMs,
    limitMs: message.limitMs,
    ...(message.oom !== null ? { oom: { confirmed: message.oom } } : {}),
    advice: message.advice ?? null,
    notes: [
      `Ran in ${where}; warden there exited ${message.exit}${contract}. Read from its termination message by warden k8s verdict: the output here is the newest lines that message kept (the whole is in that pod's history).`,
    ],
    stdout: message.stdout,
    stderr: message.stderr,
    stdoutTruncated: 0,
    stderrTruncated: 0,
  };
}
