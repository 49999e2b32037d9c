// A run's result sized for a model, in the two forms models are shown: the
// <shell_results> text block (Gemini CLI shows MCP text; a shell hook's
// `warden run --format shell-results` prints it) and the compact JSON of
// MCP structuredContent (Claude Code and Codex show that and drop the text).
// Both put first what decides the next step (verdict, exit code or signal,
// elapsed against the limit, advice, notes, the call that continues a live
// run), then each stream cut to its head and tail with an exact marker: how
// many characters were cut, and the call that pages them. The whole output
// stays in the history. Used by `warden mcp` and by the CLI alike; only the
// calls named differ (a tool call, or an absolute command line).

import type { ListeningPort, RunResult } from './result';
import { crashPhrase, placeOf } from './crash/phrase';
import { findCrash } from './crash/traceback';
import { InputError } from './errors';
import { count, seconds } from './format';
import { linkHost } from './link-host';
import { failingProbes, readyLine } from './ready-text';

export type Stream = 'stdout' | 'stderr';

/** Characters of each stream an answer shows when not told (WARDEN_MODEL_STREAM_CHARS overrides). */
export const DEFAULT_STREAM_CHARS = 8000;
/** The fewest characters of a stream worth showing (below it a cut shows nothing useful). */
export const MIN_STREAM_CHARS = 200;
/** The most a caller may ask for per stream. */
export const MAX_STREAM_CHARS = 200_000;
/** Of a cut stream's characters shown, the share from its start; the rest is its end, where errors are. */
const HEAD_SHARE = 0.25;
/** A cut moves up to this far to fall on a line break. */
const SNAP_CHARS = 200;

/** How the answer names the calls a model makes next. */
export interface Pager {
  /** The exact call that returns `stream` of run `id` from `offset` (of the output the history keeps). */
  page(id: string, stream: Stream, offset: number): string;
  /** The exact call that continues a run not ended yet; `until`: the call that waits until that ("ready"). */
  next(id: string, until?: string): string;
  /** What "stop it" is called: the stop tool, or a command. */
  stop(id: string): string;
  /** The call that waits for a line of a live run's output matching a pattern (the pattern left for the reader). */
  waitFor(id: string): string;
  /** The call that sends input to a run's stdin pipe. */
  send(id: string): string;
}

export interface ModelAnswerOptions {
  streamChars: number;
  pager: Pager;
  /**
   * Where this answer's text of each stream starts in the output the history
   * keeps (0 for an answer carrying the whole output); null when not known
   * (the marker then names the call without an offset).
   */
  base?: Partial<Record<Stream, number | null>>;
}

export interface CutStream {
  /** What the answer shows: the stream, or its head, a marker and its tail. */
  text: string;
  /** Characters left out of `text` (0 when whole). */
  cut: number;
  /** Characters of the stream this answer carried before the cut. */
  chars: number;
}

/** The `WARDEN_MODEL_STREAM_CHARS` setting: a whole number of characters, else undefined (one line on a bad value). */
export function streamCharsFrom(text: string | undefined, what: string): number | undefined {
  const digits = text?.trim() ?? '';
  if (digits === '') return undefined;
  const n = Number(digits);
  if (!/^\d+$/.test(digits) || n < MIN_STREAM_CHARS || n > MAX_STREAM_CHARS) {
    throw new StreamCharsError(`${what} takes a number of characters from ${MIN_STREAM_CHARS} to ${MAX_STREAM_CHARS}, not ${JSON.stringify(text)}.`);
  }
  return n;
}

export class StreamCharsError extends InputError {
  override name = 'StreamCharsError';
}

/** The per-stream size from the environment (the caller's process.env: src/shared has no process), or the default. */
export function envStreamChars(env: Readonly<Record<string, string | undefined>>): number {
  return streamCharsFrom(env.WARDEN_MODEL_STREAM_CHARS, 'WARDEN_MODEL_STREAM_CHARS') ?? DEFAULT_STREAM_CHARS;
}

/**
 * `text` cut to at most about `max` characters: its head and tail, each cut
 * moved to a line break when one is near, and between them a marker naming
 * the characters cut and the call that pages them. `base`: where `text`
 * starts in the stream the history keeps (null: not known).
 */
export function cutStream(text: string, max: number, marker: (from: number | null, cut: number) => string, base: number | null = 0): CutStream {
  if (text.length <= max) return { text, cut: 0, chars: text.length };
  let headEnd = Math.floor(max * HEAD_SHARE);
  let tailStart = text.length - (max - headEnd);
  const newline = text.lastIndexOf('\n', headEnd - 1);
  if (newline >= 0 && headEnd - (newline + 1) <= SNAP_CHARS) headEnd = newline + 1;
  const tailBreak = text.indexOf('\n', tailStart);
  if (tailBreak >= 0 && tailBreak + 1 - tailStart <= SNAP_CHARS && tailBreak + 1 < text.length) tailStart = tailBreak + 1;
  // A surrogate pair is never split: a half is not a character.
  if (isLowSurrogate(text.charCodeAt(headEnd))) headEnd -= 1;
  if (isLowSurrogate(text.charCodeAt(tailStart))) tailStart += 1;
  const cut = tailStart - headEnd;
  const from = base === null ? null : base + headEnd;
  const head = text.slice(0, headEnd);
  const sep = head === '' || head.endsWith('\n') ? '' : '\n';
  return { text: `${head}${sep}${marker(from, cut)}\n${text.slice(tailStart)}`, cut, chars: text.length };
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** The marker a cut stream carries in place of what was cut. */
export function cutMarker(pager: Pager, id: string, stream: Stream, from: number | null, cut: number, total: number | null): string {
  const where = from === null ? '' : ` (characters ${count(from)} to ${count(from + cut)}${total !== null ? ` of ${count(total)}` : ''})`;
  const call = from === null ? `${pager.page(id, stream, 0)} pages the whole ${stream} from its start` : `read them with ${pager.page(id, stream, from)}`;
  return `[warden: ${count(cut)} characters of ${stream} cut here${where}; ${call}]`;
}

/** Advice that fits what was seen: nothing about stderr when the run printed none. */
export function fitAdvice(advice: string | null, stderrSeen: boolean, stdoutSeen: boolean): string | null {
  if (advice === null || stderrSeen) return advice;
  const where = stdoutSeen ? 'the end of stdout may say why' : 'it printed nothing on stdout either, so its exit code is all it said';
  return advice
    .replace(/^Read stderr for the error the command reported\.$/, `It wrote nothing on stderr; ${where}.`)
    .replace(/^Exit code 2 often means a usage error: check the arguments, then read stderr\.$/, `Exit code 2 often means a usage error: check the arguments (nothing was written on stderr; ${where}).`)
    .replace(/^Read stderr for why it exited with (\d+); /, (_m, code: string) => `It exited with ${code} and wrote nothing on stderr (${where}); `)
    .replace(/\bread stderr\b/g, 'check its output');
}

/** "12 s of a 10 min limit", "3.5 s (no limit)". */
export function elapsedText(result: Pick<RunResult, 'elapsedMs' | 'limitMs'>): string {
  return `${seconds(result.elapsedMs)}${result.limitMs !== null ? ` of a ${seconds(result.limitMs)} limit` : ' (no limit)'}`;
}

/** Where a listening port is reached: a URL when it answers HTTP, else the address and port. */
export function portText(port: ListeningPort): string {
  return port.http ? `http://${linkHost(port.address)}:${port.port}/` : `${port.address.includes(':') ? `[${port.address}]` : port.address}:${port.port}`;
}

/** Ports as a model reads them: "5173 (http://localhost:5173/), 24678 (127.0.0.1:24678)". */
export function portsText(ports: readonly ListeningPort[]): string {
  return ports.map((p) => `${p.port} (${portText(p)})`).join(', ');
}

/**
 * A run with readiness probes in one line, first in every answer: ready
 * (when, its ports, the line that said so), not ready in time (the probes
 * that did not pass), still waiting, or ended before it was ready. Null for
 * a run without probes.
 */
export function readyText(result: RunResult): string | null {
  if (result.ready) return `${readyLine(result.ready)}${result.ready.line !== undefined ? `; it printed: ${result.ready.line}` : ''}`;
  if (result.ready === false) return `not ready in time: ${result.probes ? failingProbes(result.probes) : 'its probes did not pass'}`;
  if (!result.probes) return null;
  const waiting = failingProbes(result.probes);
  if (result.state === 'ended') return `never ready: it ended first (${waiting})`;
  return `not ready yet after ${seconds(result.elapsedMs)}: ${waiting}`;
}

/** The advice for a run not ended yet: call wait (or stop). */
function liveAdvice(result: RunResult, pager: Pager): string {
  if (result.ready && result.state === 'running') {
    const lease = result.lease ? `, leased until ${seconds(result.lease.endsAtMs)} of its clock (extend renews the lease)` : '';
    const input = result.stdinPipe === 'open' ? `, ${pager.send(result.id)} answers it on stdin` : '';
    return `It is ready and keeps running in Warden${lease}: use it now. ${pager.waitFor(result.id)} waits for a line of its output (after an edit, "Compiled" or an error)${input}, and ${pager.stop(result.id)} ends it; it also ends when you (the agent) exit.`;
  }
  if (result.probes && result.ready === undefined && result.state === 'running') {
    return `It is not ready yet and keeps starting in Warden. Call ${pager.next(result.id, 'ready')} to wait until it is (or ${pager.stop(result.id)} to end it).`;
  }
  const where =
    result.state === 'queued'
      ? `It is queued${result.queuePosition !== undefined ? ` (position ${result.queuePosition} in session ${result.session ?? 'default'})` : ''}`
      : result.state === 'stopping'
        ? 'It is being stopped'
        : 'It is still running';
  return `${where}, and keeps going in Warden. Call ${pager.next(result.id)} for more output and how it ends (or ${pager.stop(result.id)} to end it).`;
}

/** A result as a model should read it: what decides the next step first, each stream cut to size. */
export interface ModelAnswer {
  id: string;
  state: RunResult['state'];
  verdict: string;
  exitCode: number | null;
  signal: string | null;
  elapsed: string;
  advice: string | null;
  notes: string[];
  next: string | null;
  /** The crash report that ends an ended run's output, in one line and by its parts (null: none). */
  crash: ModelCrash | null;
  /** A run with readiness probes: ready, not ready, waiting (readyText). */
  ready: string | null;
  /** What it listens on now (while live), else what it listened on when ready. */
  ports: readonly ListeningPort[];
  stdout: CutStream;
  stderr: CutStream;
  result: RunResult;
}

/** Where a run that did not complete died, read from the report at the end of its output (src/shared/crash). */
export interface ModelCrash {
  /** "raised KeyError: 'database_url' at crash_keyerror.py:5 (in load)" */
  text: string;
  error: string;
  /** The innermost place in its own files ("crash_keyerror.py:5", relative to the run's directory), null when none. */
  at: string | null;
  function?: string;
  stream: 'stdout' | 'stderr';
}

/** The crash an ended run that did not complete printed as it died, or null. */
export function modelCrash(result: RunResult): ModelCrash | null {
  if (result.state !== 'ended' || result.verdict === 'completed') return null;
  const found = findCrash(result);
  if (!found) return null;
  const tb = found.traceback;
  const fn = tb.frame?.fn !== undefined && tb.frame.fn !== '<module>' ? tb.frame.fn : undefined;
  return {
    text: `${crashPhrase(tb, result.cwd)}${fn !== undefined ? ` (in ${fn})` : ''}`,
    error: tb.error,
    at: tb.frame ? placeOf(tb.frame, result.cwd) : null,
    ...(fn !== undefined ? { function: fn } : {}),
    stream: found.stream,
  };
}

export function modelAnswer(result: RunResult, options: ModelAnswerOptions): ModelAnswer {
  const { pager, streamChars } = options;
  const cut = (stream: Stream): CutStream => {
    const base = options.base?.[stream] === undefined ? 0 : options.base[stream]!;
    // The stream's total in the history is known when this answer carries all of it.
    const total = base === 0 ? result[stream].length : null;
    return cutStream(result[stream], streamChars, (from, n) => cutMarker(pager, result.id, stream, from, n, total), base);
  };
  const stdout = cut('stdout');
  const stderr = cut('stderr');
  const ended = result.state === 'ended';
  // Seen by an earlier answer, or not known: only this answer's streams being empty and starting at 0 says the run printed nothing.
  const seen = (stream: Stream) => result[stream].length > 0 || (options.base?.[stream] ?? 0) !== 0;
  const advice = ended ? fitAdvice(result.advice, seen('stderr'), seen('stdout')) : (result.advice ?? liveAdvice(result, pager));
  const notes = [...result.notes];
  for (const stream of ['stdout', 'stderr'] as const) {
    const dropped = stream === 'stdout' ? result.stdoutTruncated : result.stderrTruncated;
    if (dropped > 0) notes.push(`Warden kept the head and tail of ${stream}: ${count(dropped)} characters in its middle were not kept.`);
  }
  return {
    id: result.id,
    state: result.state,
    verdict: result.verdict ?? result.state,
    exitCode: result.exitCode,
    signal: result.signal,
    elapsed: elapsedText(result),
    advice,
    notes,
    next: ended ? null : pager.next(result.id, result.probes && result.ready === undefined ? 'ready' : undefined),
    crash: modelCrash(result),
    ready: readyText(result),
    ports: result.ports ?? (result.ready ? result.ready.ports : []),
    stdout,
    stderr,
    result,
  };
}

/**
 * Text for a shell_results block: only `&` and `<` are escaped (all a reader
 * needs to find the tags), and every control character XML cannot carry
 * (C0 but tab, newline and carriage return, and DEL) is written as \xNN.
 */
export function escapeText(text: string): string {
  return text
    .replace(/[&<]/g, (c) => (c === '&' ? '&amp;' : '&lt;'))
    // eslint-disable-next-line no-control-regex -- matching control characters is the point
    .replace(/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/**
 * The answer as a <shell_results> block; `extra` lines go before the
 * streams, `lead` lines first of all (a page says it is one before anything
 * else), and only the `streams` named are written (a page of one stream
 * leaves the other out rather than show it empty).
 */
export function answerText(answer: ModelAnswer, extra: string[] = [], options: { lead?: string[]; streams?: readonly Stream[] } = {}): string {
  const lines = ['<shell_results>', ...(options.lead ?? [])];
  const streams = options.streams ?? ['stdout', 'stderr'];
  const tag = (name: string, text: string) => lines.push(`<${name}>${escapeText(text)}</${name}>`);
  // A service's answer says first whether it is ready and where it listens.
  if (answer.ready !== null) tag('ready', answer.ready);
  if (answer.ports.length > 0) tag('ports', portsText(answer.ports));
  tag('verdict', answer.verdict);
  if (answer.exitCode !== null) tag('exit_code', String(answer.exitCode));
  if (answer.signal !== null) tag('signal', answer.signal);
  tag('elapsed', answer.elapsed);
  if (answer.crash !== null) tag('crash', answer.crash.text);
  if (answer.advice !== null) tag('advice', answer.advice);
  for (const note of answer.notes) tag('note', note);
  if (answer.next !== null) tag('next', answer.next);
  lines.push(...extra);
  for (const stream of streams) tag(stream, answer[stream].text);
  lines.push('</shell_results>');
  return lines.join('\n');
}

/**
 * The answer as structuredContent: the same order, the streams cut, their cut
 * counts and totals, and the run's record without what a model does not need
 * (argv and code it sent, the full process lists of teardown).
 */
export function answerJson(answer: ModelAnswer): Record<string, unknown> {
  const r = answer.result;
  return {
    id: answer.id,
    ...(answer.ready !== null ? { ready: answer.ready } : {}),
    ...(answer.ports.length > 0 ? { ports: answer.ports.map((p) => ({ port: p.port, address: p.address, ...(p.http ? { url: portText(p) } : {}) })) } : {}),
    state: answer.state,
    verdict: answer.verdict,
    exitCode: answer.exitCode,
    signal: answer.signal,
    elapsed: answer.elapsed,
    ...(answer.crash !== null ? { crash: { error: answer.crash.error, at: answer.crash.at, ...(answer.crash.function !== undefined ? { function: answer.crash.function } : {}), stream: answer.crash.stream } } : {}),
    advice: answer.advice,
    notes: answer.notes,
    ...(answer.next !== null ? { next: answer.next } : {}),
    stdout: answer.stdout.text,
    stderr: answer.stderr.text,
    stdoutCut: answer.stdout.cut,
    stderrCut: answer.stderr.cut,
    stdoutChars: answer.stdout.chars,
    stderrChars: answer.stderr.chars,
    kind: r.kind,
    ...(r.session !== undefined ? { session: r.session } : {}),
    cwd: r.cwd,
    startedAt: r.startedAt,
    ...(r.endedAt !== undefined ? { endedAt: r.endedAt } : {}),
    elapsedMs: r.elapsedMs,
    limitMs: r.limitMs,
    ...(r.queuePosition !== undefined ? { queuePosition: r.queuePosition } : {}),
    ...(r.stop ? { stop: { reason: r.stop.reason, endedBy: r.stop.endedBy, signals: r.stop.signals.map((s) => s.signal) } } : {}),
    ...(r.oom ? { oom: r.oom } : {}),
    ...(r.peak ? { peak: r.peak } : {}),
    ...(r.teardown ? { teardown: { killed: r.teardown.killed.length, survivors: r.teardown.survivors.length, complete: r.teardown.complete } } : {}),
    ...(r.lease ? { lease: r.lease } : {}),
    ...(r.stdinPipe ? { stdinPipe: r.stdinPipe } : {}),
    ...(r.mainExit ? { mainExit: r.mainExit } : {}),
    ...(r.until ? { until: r.until } : {}),
    stdoutTruncated: r.stdoutTruncated,
    stderrTruncated: r.stderrTruncated,
  };
}

/**
 * An answer within `budget` characters of JSON: when the streams at
 * `streamChars` make it longer (JSON escapes count), they are cut shorter
 * until it fits. For a client whose own cut is near (Codex's ~12,000).
 */
export function modelAnswerWithin(result: RunResult, options: ModelAnswerOptions, budget: number | null): ModelAnswer {
  let answer = modelAnswer(result, options);
  if (budget === null) return answer;
  let chars = options.streamChars;
  for (let i = 0; i < 6; i++) {
    const size = JSON.stringify(answerJson(answer)).length;
    if (size <= budget || chars <= MIN_STREAM_CHARS) break;
    chars = Math.max(MIN_STREAM_CHARS, Math.floor((chars * budget * 0.9) / size));
    answer = modelAnswer(result, { ...options, streamChars: chars });
  }
  return answer;
}

/** Where `text` (the part of a stream an answer carries) starts in `kept` (all the history keeps); null when not found once. */
export function locate(kept: string, text: string): number | null {
  // An empty text ends every stream: it starts at the end.
  if (kept.endsWith(text)) return kept.length - text.length;
  const at = kept.lastIndexOf(text);
  if (at < 0) return null;
  return kept.indexOf(text) === at ? at : null;
}
