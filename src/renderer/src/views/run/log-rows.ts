// The rows of the output view: one stream's lines, or both streams merged in
// the order they arrived (shared/output-times.ts), each row with the time its
// line came. Pure: built from the two streams' line indexes and the marks.

import { MARK_SPACING_MS, markAt, mergeLines, splitMarks, streamOffset, type OutputMark, type StreamTimes } from '../../../../shared/output-times';
import type { LineIndex, Match } from './lines';
import { lastAtOrBefore } from '../../../../shared/sorted';

export type LogMode = 'all' | 'stdout' | 'stderr';

export interface Cut {
  at: number;
  length: number;
  dropped: number;
}

const ENGINE_CUT = /\n\[warden: ([\d,]+) characters dropped here\]\n/;
const LIVE_CUT = /\n\[warden: ([\d,]+) characters not shown while live\]\n/;

/** Where a kept text leaves characters out (the engine's marker, or the page's while live), or null. */
export function cutOf(text: string): Cut | null {
  const m = ENGINE_CUT.exec(text) ?? LIVE_CUT.exec(text);
  return m ? { at: m.index, length: m[0].length, dropped: Number(m[1]!.replace(/,/g, '')) } : null;
}

export interface LogRows {
  count: number;
  /** The stream of a row: 0 stdout, 1 stderr. */
  stream(row: number): 0 | 1;
  /** Its line in that stream's index. */
  line(row: number): number;
  /** When the row's line came, in ms since the run's start, or null when not known. */
  atMs(row: number): number | null;
  /** The row a stream's line is on, or -1 when this view does not show that stream. */
  rowOf(stream: 0 | 1, line: number): number;
  /**
   * Whether the order between this row and the one before it (of the other
   * stream) is approximate: both came within one mark's spacing, where two
   * pipes' reads cannot tell which was written first.
   */
  approximate(row: number): boolean;
}

function lineMark(index: LineIndex, line: number, cut: Cut | null, times: StreamTimes): number {
  return markAt(times, streamOffset(index.starts[line] ?? 0, cut));
}

/**
 * The rows of a view. `complete`: whether each stream's text is all here (an
 * ended run's output still coming in pages is not): merged, a row shows only
 * once no line still to come of the other stream can go before it, so the
 * rows shown, and their numbers, are those the whole output will have.
 */
export function buildRows(mode: LogMode, indexes: [LineIndex, LineIndex], cuts: [Cut | null, Cut | null], marks: OutputMark[] | null, complete: [boolean, boolean] = [true, true]): LogRows {
  const times = splitMarks(marks ?? []);
  const atOf = (s: 0 | 1, line: number): number | null => {
    if (!marks) return null;
    const k = lineMark(indexes[s], line, cuts[s], times[s]);
    return k < 0 ? null : times[s].times[k]!;
  };
  if (mode !== 'all') {
    const s: 0 | 1 = mode === 'stdout' ? 0 : 1;
    return { count: indexes[s].count, stream: () => s, line: (row) => row, atMs: (row) => atOf(s, row), rowOf: (stream, line) => (stream === s ? line : -1), approximate: () => false };
  }
  const seqOf = (s: 0 | 1, line: number) => {
    const k = lineMark(indexes[s], line, cuts[s], times[s]);
    return k < 0 ? -1 : times[s].seqs[k]!;
  };
  const merged = mergeLines([indexes[0].count, indexes[1].count], seqOf);
  const count = settledRows(merged, [indexes[0].count, indexes[1].count], seqOf, complete);
  const inverse: [Int32Array, Int32Array] = [new Int32Array(indexes[0].count), new Int32Array(indexes[1].count)];
  for (let row = 0; row < merged.streams.length; row++) inverse[merged.streams[row] as 0 | 1][merged.lines[row]!] = row;
  return {
    count,
    stream: (row) => merged.streams[row] as 0 | 1,
    line: (row) => merged.lines[row]!,
    atMs: (row) => atOf(merged.streams[row] as 0 | 1, merged.lines[row]!),
    rowOf: (stream, line) => {
      const row = inverse[stream][line] ?? -1;
      return row < count ? row : -1;
    },
    approximate: (row) => {
      if (row < 1 || row >= merged.streams.length || merged.streams[row] === merged.streams[row - 1]) return false;
      const at = atOf(merged.streams[row] as 0 | 1, merged.lines[row]!);
      const before = atOf(merged.streams[row - 1] as 0 | 1, merged.lines[row - 1]!);
      return at !== null && before !== null && Math.abs(at - before) < MARK_SPACING_MS;
    },
  };
}

/**
 * How many of the merged rows are settled while a stream is not all here:
 * the lines still to come of a stream come no earlier than its last line
 * held (their sequence is at least its), and the merge takes stdout first
 * on a tie. So a stderr row stands before them when its sequence is lower,
 * a stdout row when it is not higher. Rows up to the first that does not.
 */
function settledRows(merged: { streams: Uint8Array; lines: Int32Array }, counts: [number, number], seqOf: (s: 0 | 1, line: number) => number, complete: [boolean, boolean]): number {
  if (complete[0] && complete[1]) return merged.streams.length;
  // No line held yet: what comes may carry any sequence (the lowest is -1, not timed).
  const floor = (s: 0 | 1) => (counts[s] > 0 ? seqOf(s, counts[s] - 1) : -1);
  const outFloor = complete[0] ? Infinity : floor(0);
  const errFloor = complete[1] ? Infinity : floor(1);
  for (let row = 0; row < merged.streams.length; row++) {
    const s = merged.streams[row] as 0 | 1;
    const seq = seqOf(s, merged.lines[row]!);
    if (s === 1 ? !(seq < outFloor) : !(seq <= errFloor)) return row;
  }
  return merged.streams.length;
}

/** Whether the kept text's head ends on a newline before its cut (the marker then follows an empty line of its own). */
export function blankBeforeCut(text: string, cut: Cut | null): boolean {
  return cut !== null && (cut.at === 0 || text.charCodeAt(cut.at - 1) === 10);
}

/** The line of a kept text that holds its cut's marker, or -1. */
export function markerLineOf(index: LineIndex, cut: Cut | null): number {
  if (!cut) return -1;
  // The marker's text starts after its leading newline.
  return lastAtOrBefore(index.starts, cut.at + 1, index.count);
}

/**
 * A line's number in its stream, honest after a cut: the lines after the
 * marker are numbered from the stream's end when its total is known (the
 * lines dropped counted), else not numbered (null), as the marker itself.
 */
export function streamLineNumber(line: number, keptLines: number, markerLine: number, total: number | null, blankBefore = false): number | null {
  // The head ended on a newline: the marker's own newline makes an empty line that was never in the stream.
  if (blankBefore && line === markerLine - 1) return null;
  if (markerLine < 0 || line < markerLine) return line + 1;
  if (line === markerLine || total === null) return null;
  return total - (keptLines - 1 - line);
}

/** Search matches of both streams as matches on rows, in row order. */
export function rowMatches(rows: LogRows, perStream: [Match[], Match[]]): Match[] {
  const out: Match[] = [];
  for (const s of [0, 1] as const) {
    for (const m of perStream[s]) {
      const row = rows.rowOf(s, m.line);
      if (row >= 0) out.push({ line: row, start: m.start, end: m.end });
    }
  }
  return out.sort((a, b) => a.line - b.line || a.start - b.start);
}

/** The text a download gives: the rows' lines as written, one per line. */
export function rowsText(rows: LogRows, raw: (stream: 0 | 1, line: number) => string): string {
  const parts: string[] = [];
  for (let row = 0; row < rows.count; row++) parts.push(raw(rows.stream(row), rows.line(row)));
  return parts.length > 0 ? `${parts.join('\n')}\n` : '';
}
