// How a live run's output is held in the page: a snapshot of the run (its
// kept text, perhaps cut by the engine) is the base, and the stream's chunks
// are merged onto it by offset. Offsets count every character the run printed
// to that stream, dropped ones included, so a snapshot taken after a chunk was
// sent already holds it (the chunk is skipped), and a chunk that starts past
// the end held means something between is missing (a gap, fetched, never
// skipped). Pure: the store (store/output-slice.ts) does the fetching.

import type { OutputStream } from '../../../shared/events';
import type { RunResult } from '../../../shared/result';
import { streamLength } from '../../../shared/stream-length';

/** A live run's output as the page holds it, and how many lines each stream has had (which never goes down, whatever the page's cap drops). */
export interface LiveOutput {
  stdout: string;
  stderr: string;
  stdoutLines: number;
  stderrLines: number;
  /**
   * Whether each stream's text ends mid-line, read from the chunks as they
   * come: checking the end of the whole text (endsWith) would make V8 flatten
   * the concatenated string, copying all of a run's output for every chunk.
   */
  stdoutOpen?: boolean;
  stderrOpen?: boolean;
  /** Where each stream's text ends in the run's output, in characters (dropped ones counted): the offset the next chunk must start at. */
  stdoutEnd: number;
  stderrEnd: number;
}

/** A piece of one stream at its offset in the run's output (an output event's own fields). */
export interface Chunk {
  stream: OutputStream;
  offset: number;
  text: string;
}

/** What a snapshot holds of the output: its kept text and what the engine cut of each stream. */
export type Snapshot = Pick<RunResult, 'stdout' | 'stderr' | 'stdoutTruncated' | 'stderrTruncated'>;

/** Where a stream's text ends in the run's output: the offset its next chunk starts at. */
export function endOf(output: LiveOutput, stream: OutputStream): number {
  return stream === 'stdout' ? output.stdoutEnd : output.stderrEnd;
}

/** A live run's output as a snapshot holds it: the base the stream's chunks are merged onto. */
export function baseOf(run: Snapshot): LiveOutput {
  return {
    stdout: run.stdout,
    stderr: run.stderr,
    stdoutLines: lineCount(run.stdout),
    stderrLines: lineCount(run.stderr),
    stdoutEnd: streamLength(run.stdout, run.stdoutTruncated ?? 0),
    stderrEnd: streamLength(run.stderr, run.stderrTruncated ?? 0),
  };
}

/**
 * The base a fresh snapshot's chunks go onto: what the page holds when it has
 * as much of both streams already (the snapshot was taken before chunks the
 * page merged), else the snapshot's own.
 */
export function snapshotBase(current: LiveOutput | undefined, run: Snapshot): LiveOutput {
  const fresh = baseOf(run);
  return current && current.stdoutEnd >= fresh.stdoutEnd && current.stderrEnd >= fresh.stderrEnd ? current : fresh;
}

/**
 * A chunk of a stream at `offset` merged onto what the page holds: the part
 * it already has is skipped (a snapshot taken after the chunk was sent holds
 * it), the rest appended. 'gap': the chunk starts past the end held, so
 * something between is missing and must be fetched, never skipped.
 * Unchanged (the same object) when the chunk brings nothing new.
 */
export function appendAt(current: LiveOutput, stream: OutputStream, offset: number, text: string): LiveOutput | 'gap' {
  const end = endOf(current, stream);
  if (offset > end) return 'gap';
  const fresh = text.slice(end - offset);
  if (fresh === '') return current;
  const before = current[stream];
  // Lines the stream has had, counted by the chunk: the page's cap may drop some of them, never from this count.
  const key = stream === 'stdout' ? 'stdoutLines' : 'stderrLines';
  const openKey = stream === 'stdout' ? 'stdoutOpen' : 'stderrOpen';
  const endKey = stream === 'stdout' ? 'stdoutEnd' : 'stderrEnd';
  const wasOpen = current[openKey] ?? (before !== '' && !before.endsWith('\n'));
  const isOpen = !fresh.endsWith('\n');
  const lines = current[key] - (wasOpen ? 1 : 0) + newlinesIn(fresh) + (isOpen ? 1 : 0);
  return { ...current, [stream]: capLive(before + fresh), [key]: lines, [openKey]: isOpen, [endKey]: end + fresh.length };
}

/**
 * Chunks merged onto `start` in order: the output after the last one that
 * could be merged, and the index of the first that starts past the end held
 * (-1: none). The chunks from `gapAt` on wait for what is missing.
 */
export function mergeChunks(start: LiveOutput, chunks: readonly Chunk[]): { output: LiveOutput; gapAt: number } {
  let output = start;
  for (let i = 0; i < chunks.length; i++) {
    const chunk = chunks[i]!;
    const merged = appendAt(output, chunk.stream, chunk.offset, chunk.text);
    if (merged === 'gap') return { output, gapAt: i };
    output = merged;
  }
  return { output, gapAt: -1 };
}

/**
 * An ended run sent as a summary (no output, outputChars): its output as the
 * page holds it when that is exactly the run's whole output, else null (then
 * it is fetched in pages when a view shows it). Exact: the engine kept every
 * character (nothing truncated), the page streamed to the same end, and the
 * page cut nothing (its text is as long as its end); a run that printed
 * nothing is exact with nothing held.
 */
export function exactOutput(live: LiveOutput | undefined, result: RunResult): { stdout: string; stderr: string } | null {
  const chars = result.outputChars;
  if (!chars || result.stdoutTruncated > 0 || result.stderrTruncated > 0) return null;
  if (!live) return chars.stdout === 0 && chars.stderr === 0 ? { stdout: '', stderr: '' } : null;
  const whole = (text: string, end: number, total: number) => end === total && text.length === end;
  return whole(live.stdout, live.stdoutEnd, chars.stdout) && whole(live.stderr, live.stderrEnd, chars.stderr) ? { stdout: live.stdout, stderr: live.stderr } : null;
}

/** Lines a text holds: its newlines, and one more for an unfinished last line. */
export function lineCount(text: string): number {
  if (text === '') return 0;
  const n = newlinesIn(text);
  return text.endsWith('\n') ? n : n + 1;
}

function newlinesIn(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/**
 * Live output kept per stream in the page: past this, the oldest part of the
 * middle is dropped (the head stays, as the engine keeps it) with a marker, so
 * a run printing without end cannot grow the page without bound. The ended
 * result, with the engine's own head and tail, replaces it.
 */
export const LIVE_OUTPUT_CAP = 4_000_000;
export const LIVE_HEAD = 1_000_000;
const LIVE_MARKER = /^\n\[warden: ([\d,]+) characters not shown while live\]\n/;

export function capLive(text: string, cap = LIVE_OUTPUT_CAP, head = LIVE_HEAD): string {
  if (text.length <= cap) return text;
  const rest = text.slice(head);
  const previous = LIVE_MARKER.exec(rest);
  const already = previous ? Number(previous[1]!.replace(/,/g, '')) : 0;
  const body = previous ? rest.slice(previous[0].length) : rest;
  // Down to half the room: the next trim is far off, so views that split appended text incrementally rarely start over.
  const keep = Math.floor((cap - head) / 2);
  const dropped = already + Math.max(0, body.length - keep);
  return `${text.slice(0, head)}\n[warden: ${dropped.toLocaleString('en-US')} characters not shown while live]\n${body.slice(body.length - keep)}`;
}
