// `warden run --termination-log [PATH]`: how the run ended, for Kubernetes.
// A container's termination message is the file /dev/termination-log (the
// pod's terminationMessagePath) and Kubernetes keeps at most 4,096 bytes of
// it; `kubectl get pod -o jsonpath='{..terminated.message}'`, the Job's pod
// status and the app read it. One compact JSON object: the verdict, the
// exit status Warden exits with, the command's own code or signal, the
// elapsed time, whether the kernel confirmed an OOM kill, and as many of
// the last lines of stderr and stdout as fit (whole lines, the newest kept).

import { closeSync, constants, fstatSync, ftruncateSync, lstatSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { RunResult } from '../shared/result';

/** Kubernetes' own default terminationMessagePath. */
export const DEFAULT_TERMINATION_LOG = '/dev/termination-log';
/** Kubernetes keeps at most this many bytes of a termination message. */
export const TERMINATION_LOG_BYTES = 4096;

export interface TerminationMessage {
  id: string;
  verdict: string | null;
  state: string;
  /** The status `warden run` exits with (124 timed out, 128+n a signal, the command's code). */
  exit: number;
  /** The contract `exit` follows (src/cli/exit-codes.ts): "standard/v1" or "k8s/v1". */
  exitCodes?: string;
  kind?: string;
  /** The command's words, the first ones that fit in ARGV_BYTES ("…" last when cut). */
  argv?: string[];
  startedAt?: string;
  exitCode: number | null;
  signal: string | null;
  elapsedMs: number;
  limitMs: number | null;
  /** true: the kernel's OOM killer ended it in its memory limit; false: it had a limit and was not; null: no limit was watched. */
  oom: boolean | null;
  advice?: string;
  stderr: string;
  stdout: string;
}

const bytes = (message: TerminationMessage) => Buffer.byteLength(JSON.stringify(message));

/** What the command's words may take of the message, so the output keeps most of it. */
export const ARGV_BYTES = 512;

/** The first words of `argv` whose JSON fits in `budget` bytes, "…" last when any were left out. */
export function argvWithin(argv: readonly string[], budget = ARGV_BYTES): string[] {
  if (Buffer.byteLength(JSON.stringify(argv)) <= budget) return [...argv];
  const kept: string[] = [];
  for (const word of argv) {
    if (Buffer.byteLength(JSON.stringify([...kept, word, '…'])) > budget) break;
    kept.push(word);
  }
  return [...kept, '…'];
}

/** Bytes `text` takes inside a JSON string. */
const jsonBytes = (text: string) => Buffer.byteLength(JSON.stringify(text)) - 2;

/**
 * The newest whole lines of `text` that take at most `budget` bytes in JSON
 * (a last line longer than that keeps its end).
 */
function lastLines(text: string, budget: number): string {
  if (jsonBytes(text) <= budget) return text;
  let start = text.length;
  let used = 0;
  while (start > 0) {
    const from = start >= 2 ? text.lastIndexOf('\n', start - 2) + 1 : 0; // the line ending at start (its newline included)
    const cost = jsonBytes(text.slice(from, start));
    if (used + cost > budget) break;
    used += cost;
    start = from;
  }
  if (start < text.length) return text.slice(start);
  // Not one whole line fits: the end of the last one, cut where a character as a reader sees it starts (a
  // grapheme: never half a surrogate pair, nor an accent without its letter), looked for in the line's last
  // SEGMENT_WINDOW code units, far more than any room here takes.
  const from = Math.max(text.lastIndexOf('\n', text.length - 2) + 1, text.length - SEGMENT_WINDOW);
  const starts = Array.from(graphemes.segment(text.slice(from)), (g) => from + g.index);
  let cut = text.length;
  used = 0;
  for (let i = starts.length - 1; i >= 0; i--) {
    const cost = jsonBytes(text.slice(starts[i], cut));
    if (used + cost > budget) break;
    used += cost;
    cut = starts[i]!;
  }
  return text.slice(cut);
}

/** Characters as a reader sees them (grapheme clusters, a Segmenter's default: Unicode's own rules as the ICU in Node has them). */
const graphemes = new Intl.Segmenter();
/** How much of a long line's end the cut segments. */
const SEGMENT_WINDOW = 64 * 1024;

/** The first whole characters (graphemes) of `text` within `max` code units. */
function firstChars(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = 0;
  for (const g of graphemes.segment(text.slice(0, max + 1))) {
    if (g.index + g.segment.length > max) break;
    end = g.index + g.segment.length;
  }
  return text.slice(0, end);
}

/** The message for `result`, at most `limit` bytes as JSON. */
export function terminationMessage(result: RunResult, exit: number, limit = TERMINATION_LOG_BYTES, exitCodes?: string): TerminationMessage {
  const message: TerminationMessage = {
    id: result.id,
    verdict: result.verdict ?? null,
    state: result.state,
    exit,
    ...(exitCodes !== undefined ? { exitCodes } : {}),
    kind: result.kind,
    ...(result.argv ? { argv: argvWithin(result.argv) } : {}),
    startedAt: result.startedAt,
    exitCode: result.exitCode,
    signal: result.signal,
    elapsedMs: result.elapsedMs,
    limitMs: result.limitMs,
    oom: result.oom ? result.oom.confirmed : null,
    ...(result.advice !== null ? { advice: firstChars(result.advice, 400) } : {}),
    stderr: '',
    stdout: '',
  };
  // The output gets what is left: stderr (where a failure says why) up to half, stdout the rest, then stderr any left over.
  if (bytes(message) > limit) delete message.advice;
  const room = limit - bytes(message);
  message.stderr = lastLines(result.stderr, Math.max(Math.floor(room / 2), room - jsonBytes(result.stdout)));
  message.stdout = lastLines(result.stdout, room - jsonBytes(message.stderr));
  message.stderr = lastLines(result.stderr, room - jsonBytes(message.stdout));
  return message;
}

/** What a run that never started leaves: why (Warden's one line) and the status Warden exits with (125). */
export interface TerminationError {
  verdict: null;
  state: 'not-started';
  exit: number;
  exitCodes?: string;
  error: string;
}

/** Why the termination log was not written: one line's end, after "cannot write the termination log PATH: ". */
class NotWritten extends Error {}

/**
 * Writes `text` as the whole of the file at `path`, as a process running
 * with more privilege than whoever made the path must (as sudo and
 * systemd write a file a user names): never through a symbolic link at the
 * name (O_NOFOLLOW: a link planted in a sticky /tmp would aim root's write
 * at any file), never blocking on a FIFO (O_NONBLOCK: a FIFO with no reader
 * is ENXIO, one with a reader is refused by fstat), only into a regular
 * file (a device is /dev/termination-log's alone, Kubernetes' own), and,
 * as the kernel's protected_regular does, never into a file another user
 * left in a sticky world-writable directory. Nothing is truncated before
 * those checks.
 */
export function writeWholeFile(path: string, text: string): void {
  let fd: number;
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK, 0o600);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw new NotWritten('it is a symbolic link, which Warden never writes through');
    if (code === 'ENXIO') throw new NotWritten('it is a FIFO or socket, not a file');
    throw new NotWritten(code ?? String(error));
  }
  try {
    const stat = fstatSync(fd);
    const device = path === DEFAULT_TERMINATION_LOG && stat.isCharacterDevice();
    if (!stat.isFile() && !device) throw new NotWritten(stat.isFIFO() ? 'it is a FIFO, not a file' : 'it is not a regular file');
    const me = typeof process.getuid === 'function' ? process.getuid() : null;
    if (me !== null && stat.isFile() && stat.uid !== me) {
      const parent = lstatSync(dirname(path));
      if ((parent.mode & 0o1002) === 0o1002 && stat.uid !== parent.uid) throw new NotWritten(`it belongs to uid ${stat.uid} and sits in the sticky directory ${dirname(path)} that every user may write, so it may have been planted`);
    }
    if (stat.isFile()) ftruncateSync(fd, 0);
    const bytes = Buffer.from(text);
    for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, bytes.length - at);
  } finally {
    closeSync(fd);
  }
}

function write(path: string, text: string, err: (text: string) => void): void {
  try {
    writeWholeFile(path, text);
  } catch (error) {
    const why = error instanceof NotWritten ? error.message : ((error as NodeJS.ErrnoException).code ?? String(error));
    err(`warden: cannot write the termination log ${path}: ${why}\n`);
  }
}

/** Writes why the run never started to `path`, cut to fit Kubernetes' limit; a failure is one line on stderr. */
export function writeTerminationError(path: string, error: string, exit: number, err: (text: string) => void, exitCodes?: string): void {
  const message: TerminationError = { verdict: null, state: 'not-started', exit, ...(exitCodes !== undefined ? { exitCodes } : {}), error: firstChars(error, 900) }; // 4 bytes a character at most: within 4,096
  write(path, JSON.stringify(message), err);
}

/** Writes the message to `path`; a failure is one line on stderr and does not change the exit status. */
export function writeTerminationLog(path: string, result: RunResult, exit: number, err: (text: string) => void, exitCodes?: string): void {
  write(path, JSON.stringify(terminationMessage(result, exit, TERMINATION_LOG_BYTES, exitCodes)), err);
}
