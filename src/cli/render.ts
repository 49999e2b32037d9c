// A finished run for its reader: a model (shell-results), a program (JSON) or
// a person (a short summary). Also the exit status of `warden run`.

import { join } from 'node:path';
import type { RunResult } from '../shared/result';
import { CLI_ERROR_EXIT } from '../shared/errors';
import { seconds } from '../shared/format';
import { signalNumber } from '../main/supervisor/signals';
import { packageRoot } from '../client/package-root';
import { answerText, envStreamChars, modelAnswer, portsText, readyText, type Pager, type Stream } from '../shared/model-answer';

/** A run whose readiness probes did not pass by the ready timeout. */
export const NOT_READY_STATUS = 3;

/** docs/architecture.md: the run's code; 124 timed out; 128+n signal; 126/127 cannot run / not found; 125 ours. */
export function exitStatusFor(result: RunResult): number {
  // Not ready in time (stopped for it, or kept running): 3, whatever the stop did to it.
  if (result.ready === false) return NOT_READY_STATUS;
  if (result.verdict === 'timed-out') return 124;
  if (result.signal !== null) return 128 + (signalNumber(result.signal) ?? 0);
  if (result.exitCode !== null) return result.exitCode;
  // Neither a code nor a signal (a run Warden lost, one that never started): Warden's own.
  return CLI_ERROR_EXIT;
}

/** A word for a POSIX shell: double-quoted when it holds nothing special there, else single-quoted. */
export function shellQuote(word: string): string {
  if (!/["$`\\!]/.test(word)) return `"${word}"`;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The command line that runs this warden: the Node running it and the package's bin/warden.mjs, by absolute paths. */
export function wardenCommand(): string {
  const root = packageRoot();
  const bin = root ? join(root, 'bin', 'warden.mjs') : process.argv[1] ?? 'warden';
  return `${shellQuote(process.execPath)} ${shellQuote(bin)}`;
}

/** "30s", "1500ms": a yield as --yield takes it. */
export function durationWord(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

/**
 * The commands a CLI answer names, absolute (nothing needs to be on PATH):
 * show to page a stream, wait with the same --format, --yield and
 * --stream-chars to continue a yielded run, stop to end it.
 */
export function cliPager(options: { yieldMs?: number; streamChars?: number } = {}): Pager {
  const cmd = wardenCommand();
  const chars = options.streamChars !== undefined ? ` --stream-chars ${options.streamChars}` : '';
  return {
    page: (id: string, stream: Stream, offset: number) => `${cmd} show ${id} --stream ${stream} --offset ${offset}`,
    next: (id: string, until?: string) => `${cmd} wait ${id}${until !== undefined ? ` --until ${until}` : ''} --format shell-results${options.yieldMs !== undefined ? ` --yield ${durationWord(options.yieldMs)}` : ''}${chars}`,
    stop: (id: string) => `${cmd} stop ${id}`,
    waitFor: (id: string) => `${cmd} wait ${id} --until 'log:/PATTERN/' --format shell-results`,
    send: (id: string) => `${cmd} send ${id} 'TEXT'`,
  };
}

export interface ShellResultsOptions {
  /** --stream-chars, when given (else WARDEN_MODEL_STREAM_CHARS or 8000). */
  streamChars?: number;
  /** The --yield the answer's <next> command keeps. */
  yieldMs?: number;
  base?: Partial<Record<Stream, number | null>>;
}

/**
 * A result as a model reads it (src/shared/model-answer.ts): what decides the
 * next step first, each stream cut around a marker naming the command that
 * pages the rest. `base`: where this answer's output starts in what the
 * history keeps (0: the whole output; null: not known).
 */
export function shellResults(result: RunResult, options: ShellResultsOptions = {}): string {
  return answerText(
    modelAnswer(result, {
      streamChars: options.streamChars ?? envStreamChars(process.env),
      pager: cliPager({ ...(options.yieldMs !== undefined ? { yieldMs: options.yieldMs } : {}), ...(options.streamChars !== undefined ? { streamChars: options.streamChars } : {}) }),
      ...(options.base ? { base: options.base } : {}),
    }),
  );
}

export function humanSummary(result: RunResult): string {
  const how = result.signal !== null ? `signal ${result.signal}` : result.exitCode !== null ? `exit ${result.exitCode}` : 'no exit status';
  const limit = result.limitMs !== null ? ` (limit ${seconds(result.limitMs)})` : '';
  const lines = [`warden: ${result.verdict ?? result.state}, ${how}, after ${seconds(result.elapsedMs)}${limit} [run ${result.id}]`];
  const ready = readyText(result);
  if (ready !== null) lines.unshift(`warden: ${ready}`);
  if (result.ports && result.ports.length > 0) lines.push(`warden: listening on ${portsText(result.ports)}`);
  if (result.advice !== null) lines.push(`warden: advice: ${result.advice}`);
  for (const note of result.notes) lines.push(`warden: note: ${note}`);
  return lines.join('\n');
}
