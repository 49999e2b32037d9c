// One stream's output as lines, derived incrementally: a chunk appended to the
// stream scans only from the start of the last (unfinished) line, so a frame
// of live output costs the size of the chunk, not of the 2,000,000 characters
// before it. Each line keeps the SGR style it starts in (colours carry across
// newlines), and a lazily filled cache of its plain, lower-cased text for
// search.

import { parseAnsi, plainText, PLAIN, styleAfter, type Span, type Style } from './ansi';

export interface LineIndex {
  /** The stream's text this index describes. */
  readonly text: string;
  /** Offset of each line's first character. */
  readonly starts: number[];
  /** The style in effect at each line's start. */
  readonly styles: Style[];
  /** Plain lower-cased text per line, filled by search as needed. */
  readonly folded: (string | undefined)[];
  /** Lines: a final newline ends the last line rather than starting an empty one. */
  readonly count: number;
  /** The longest line's length in characters (escapes included). */
  readonly maxLength: number;
  /** Bumped on every change, for memo keys. */
  readonly version: number;
  /** The first line whose content differs from the previous index (for cache invalidation). */
  readonly changedFrom: number;
}

export const EMPTY_INDEX: LineIndex = Object.freeze({ text: '', starts: [], styles: [], folded: [], count: 0, maxLength: 0, version: 0, changedFrom: 0 });

/**
 * The index of `text`, reusing `prev` when `text` extends `prev.text`.
 * The arrays of `prev` are extended in place, so only the newest index stays valid.
 */
export function indexLines(prev: LineIndex, text: string): LineIndex {
  if (text === prev.text) return prev;
  // slice + === compares memory at once; startsWith walks characters.
  const appended = prev.count > 0 && text.length > prev.text.length && text.slice(0, prev.text.length) === prev.text;
  let starts: number[];
  let styles: Style[];
  let folded: (string | undefined)[];
  let from: number;
  let style: Style;
  let maxLength: number;
  let changedFrom: number;
  if (appended) {
    starts = prev.starts as number[];
    styles = prev.styles as Style[];
    folded = prev.folded as (string | undefined)[];
    maxLength = prev.maxLength;
    const lastEndsLine = prev.text.endsWith('\n');
    if (lastEndsLine) {
      from = prev.text.length;
      const lastStart = starts[starts.length - 1]!;
      style = styleAfter(prev.text.slice(lastStart, prev.text.length - 1), styles[styles.length - 1]!);
      changedFrom = prev.count;
    } else {
      // The last line was unfinished: scan it again with what follows.
      from = starts.pop()!;
      style = styles.pop()!;
      changedFrom = starts.length;
    }
    if (folded.length > starts.length) folded.length = starts.length;
  } else {
    starts = [];
    styles = [];
    folded = [];
    from = 0;
    style = PLAIN;
    maxLength = 0;
    changedFrom = 0;
  }
  // The next escape at or after `from`, found once and moved past only when passed: one scan in all.
  let esc = text.indexOf('\x1b', from);
  while (from < text.length) {
    const nl = text.indexOf('\n', from);
    const end = nl === -1 ? text.length : nl;
    // Warden's cut marker, and what follows it, start plain: the styles the dropped middle set are not known.
    if (text.startsWith('[warden: ', from) && isDropMarker(text.slice(from, end))) style = PLAIN;
    starts.push(from);
    styles.push(style);
    if (end - from > maxLength) maxLength = end - from;
    if (nl === -1) break;
    // Only a line with an escape can change the style the next one starts in.
    if (esc !== -1 && esc < end) {
      style = styleAfter(text.slice(from, end), style);
      esc = text.indexOf('\x1b', end);
    }
    from = nl + 1;
  }
  return { text, starts, styles, folded, count: starts.length, maxLength, version: prev.version + 1, changedFrom };
}

/** Line `i` as written (escapes kept; its newline and a trailing carriage return removed). */
export function rawLine(index: LineIndex, i: number): string {
  const start = index.starts[i];
  if (start === undefined) return '';
  const next = index.starts[i + 1];
  let end = next !== undefined ? next - 1 : index.text.endsWith('\n') ? index.text.length - 1 : index.text.length;
  if (end > start && index.text.charCodeAt(end - 1) === 13) end -= 1;
  return index.text.slice(start, end);
}

/** Line `i` as styled spans. */
export function lineSpans(index: LineIndex, i: number): Span[] {
  return parseAnsi(rawLine(index, i), index.styles[i] ?? PLAIN).spans;
}

/** Line `i`'s plain text, lower-cased (cached). */
export function foldedLine(index: LineIndex, i: number): string {
  const cached = index.folded[i];
  if (cached !== undefined) return cached;
  const value = plainText(rawLine(index, i)).toLowerCase();
  (index.folded as (string | undefined)[])[i] = value;
  return value;
}

const DROP_MARKER = /^\[warden: [\d,.\s]+ characters? dropped here\]$/;

/** Warden's marker where the output cap dropped characters: "[warden: 940 characters dropped here]". */
export function isDropMarker(plain: string): boolean {
  return plain.startsWith('[warden: ') && DROP_MARKER.test(plain);
}

export interface Match {
  line: number;
  /** Offsets in the line's plain text. */
  start: number;
  end: number;
}

export interface SearchResult {
  matches: Match[];
  /** True when more matches exist than `limit` kept. */
  capped: boolean;
}

export interface SearchOptions {
  /** Match case exactly (default: ignore case). */
  caseSensitive?: boolean;
  /** `query` is a regular expression (JavaScript syntax). */
  regex?: boolean;
}

/**
 * Occurrences of `query` in the plain text of every line, in order, at most
 * `limit`: ignoring case unless asked, as a regular expression when asked (a
 * pattern that does not compile gives no matches and its error).
 */
export function findMatches(index: LineIndex, query: string, limit = 10_000, options: SearchOptions = {}): SearchResult & { error?: string } {
  const matches: Match[] = [];
  if (query === '') return { matches, capped: false };
  if (options.regex) {
    let pattern: RegExp;
    try {
      pattern = new RegExp(query, options.caseSensitive ? 'g' : 'gi');
    } catch (error) {
      return { matches, capped: false, error: error instanceof Error ? error.message : String(error) };
    }
    for (let line = 0; line < index.count; line++) {
      const text = plainText(rawLine(index, line));
      pattern.lastIndex = 0;
      for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) {
        if (m[0].length === 0) {
          // An empty match marks nothing; step past it.
          pattern.lastIndex += 1;
          continue;
        }
        if (matches.length === limit) return { matches, capped: true };
        matches.push({ line, start: m.index, end: m.index + m[0].length });
      }
    }
    return { matches, capped: false };
  }
  const needle = options.caseSensitive ? query : query.toLowerCase();
  for (let line = 0; line < index.count; line++) {
    const text = options.caseSensitive ? plainText(rawLine(index, line)) : foldedLine(index, line);
    for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) {
      if (matches.length === limit) return { matches, capped: true };
      matches.push({ line, start: at, end: at + needle.length });
    }
  }
  return { matches, capped: false };
}

/** Index of the first match at or after line `line` (wrapping to 0), or -1 when there are none. */
export function matchNear(matches: Match[], line: number): number {
  if (matches.length === 0) return -1;
  let lo = 0;
  let hi = matches.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (matches[mid]!.line < line) lo = mid + 1;
    else hi = mid;
  }
  return lo < matches.length ? lo : 0;
}

/** 0: not a match; 1: a match; 2: the current match. */
export type Mark = 0 | 1 | 2;

export interface MarkedSpan extends Span {
  mark: Mark;
}

/**
 * Splits `spans` where the `ranges` (offsets in the spans' joined text) begin
 * and end, marking the pieces inside a range.
 */
export function markSpans(spans: Span[], ranges: { start: number; end: number; mark: Mark }[]): MarkedSpan[] {
  if (ranges.length === 0) return spans.map((s) => ({ ...s, mark: 0 }));
  const out: MarkedSpan[] = [];
  let offset = 0;
  let r = 0;
  for (const span of spans) {
    const spanEnd = offset + span.text.length;
    let at = offset;
    while (at < spanEnd) {
      while (r < ranges.length && ranges[r]!.end <= at) r++;
      const range = ranges[r];
      if (!range || range.start >= spanEnd) {
        out.push({ text: span.text.slice(at - offset), style: span.style, mark: 0 });
        at = spanEnd;
      } else if (range.start > at) {
        out.push({ text: span.text.slice(at - offset, range.start - offset), style: span.style, mark: 0 });
        at = range.start;
      } else {
        const to = Math.min(range.end, spanEnd);
        out.push({ text: span.text.slice(at - offset, to - offset), style: span.style, mark: range.mark });
        at = to;
      }
    }
    offset = spanEnd;
  }
  return out;
}

/** The first `max` characters of spans, and how many were left out. */
export function clipSpans<T extends Span>(spans: T[], max: number): { spans: T[]; omitted: number } {
  let total = 0;
  for (const s of spans) total += s.text.length;
  if (total <= max) return { spans, omitted: 0 };
  const out: T[] = [];
  let left = max;
  for (const s of spans) {
    if (left <= 0) break;
    if (s.text.length <= left) out.push(s);
    else out.push({ ...s, text: s.text.slice(0, left) });
    left -= s.text.length;
  }
  return { spans: out, omitted: total - max };
}
