// When each piece of a run's output arrived: marks of (stream, offset in the
// stream, ms since the run's start), in arrival order. With them a view
// merges stdout and stderr as they came and times each line. Bounded: a mark
// is taken when the stream changes or 100 ms after the last one of the same
// stream (2,000 ms once a run has 20,000 marks), so a chatty run costs a
// bounded list, and a line's time is exact to the mark's spacing.
//
// The history stores a run's marks as its 'output-times' event; the page keeps
// the live ones from the output events. No Node or DOM imports.

import type { OutputStream } from './events';
import { lastAtOrBefore } from './sorted';

/** [stream (0 stdout, 1 stderr), offset in that stream's characters, ms since the run started] */
export type OutputMark = [stream: 0 | 1, offset: number, atMs: number];

export const OUTPUT_TIMES_EVENT = 'output-times';
export const MARK_SPACING_MS = 100;
export const MARKS_BEFORE_SPARSE = 20_000;
export const SPARSE_SPACING_MS = 2000;

export function streamIndex(stream: OutputStream): 0 | 1 {
  return stream === 'stdout' ? 0 : 1;
}

/** The marks with one more piece of output; the same array (appended to) when a mark was taken, or untouched. */
export function addMark(marks: OutputMark[], stream: OutputStream, offset: number, atMs: number): boolean {
  const s = streamIndex(stream);
  const last = marks[marks.length - 1];
  if (last && last[0] === s) {
    const spacing = marks.length >= MARKS_BEFORE_SPARSE ? SPARSE_SPACING_MS : MARK_SPACING_MS;
    if (atMs - last[2] < spacing || offset <= last[1]) return false;
  }
  marks.push([s, offset, atMs]);
  return true;
}

/** A stored event's marks, or null when its detail is not a list of marks. */
export function readMarks(detail: unknown): OutputMark[] | null {
  const marks = (detail as { marks?: unknown } | null)?.marks;
  if (!Array.isArray(marks)) return null;
  const ok = marks.every((m) => Array.isArray(m) && m.length === 3 && (m[0] === 0 || m[0] === 1) && typeof m[1] === 'number' && typeof m[2] === 'number');
  return ok ? (marks as OutputMark[]) : null;
}

/** The stored lines each stream had in all ([stdout, stderr]), or null. */
export function readLineTotals(detail: unknown): [number, number] | null {
  const lines = (detail as { lines?: unknown } | null)?.lines;
  return Array.isArray(lines) && lines.length === 2 && lines.every((n) => Number.isInteger(n) && n >= 0) ? [lines[0] as number, lines[1] as number] : null;
}

export interface StreamTimes {
  /** Offsets of this stream's marks, ascending. */
  offsets: number[];
  /** Their times. */
  times: number[];
  /** Their positions in the arrival order of all marks. */
  seqs: number[];
}

/** Each stream's marks apart, for lookups. */
export function splitMarks(marks: OutputMark[]): [StreamTimes, StreamTimes] {
  const out: [StreamTimes, StreamTimes] = [
    { offsets: [], times: [], seqs: [] },
    { offsets: [], times: [], seqs: [] },
  ];
  marks.forEach(([s, offset, atMs], seq) => {
    out[s].offsets.push(offset);
    out[s].times.push(atMs);
    out[s].seqs.push(seq);
  });
  return out;
}

/** The mark a character of the stream came with: the last at or before its offset (index into StreamTimes), or -1. */
export function markAt(times: StreamTimes, offset: number): number {
  return lastAtOrBefore(times.offsets, offset);
}

/**
 * Where a character of the kept text is in the stream: the kept text leaves
 * out `dropped` characters at one marker (the engine's "[warden: N characters
 * dropped here]", or the page's own while live), so positions after it are
 * further on in the stream.
 */
export function streamOffset(position: number, cut: { at: number; length: number; dropped: number } | null): number {
  if (!cut || position < cut.at) return position;
  if (position < cut.at + cut.length) return cut.at;
  return position - cut.length + cut.dropped;
}

/**
 * Merges two streams' lines in the order they arrived: each line is ordered by
 * the arrival sequence of the mark its first character came with, then by its
 * own order within its stream. `seqOf(stream, line)` gives that sequence (-1:
 * before any mark). Returns the rows as (stream, line) pairs.
 */
export function mergeLines(counts: [number, number], seqOf: (stream: 0 | 1, line: number) => number): { streams: Uint8Array; lines: Int32Array } {
  const total = counts[0] + counts[1];
  const streams = new Uint8Array(total);
  const lines = new Int32Array(total);
  let a = 0;
  let b = 0;
  for (let row = 0; row < total; row++) {
    const takeOut = b >= counts[1] || (a < counts[0] && seqOf(0, a) <= seqOf(1, b));
    if (takeOut) {
      streams[row] = 0;
      lines[row] = a++;
    } else {
      streams[row] = 1;
      lines[row] = b++;
    }
  }
  return { streams, lines };
}
