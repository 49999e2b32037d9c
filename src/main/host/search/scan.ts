// The scan of one stretch of one stream's kept text for a pattern, line by
// line, as `rg -n -C` reads a file: which lines match (one match per line),
// their 1-based numbers, the offset of each match in the kept text, and the
// lines around it.
//
// It runs in a worker thread (worker.ts), which may be terminated when a
// pattern backtracks without end, so `searchScanner` is written to run from
// its own source text: it refers to nothing outside itself (no import, no
// module-level name), and everything it needs is declared inside it.
//
// What it searches is the text as a reader sees it: escape sequences
// (colours, cursor moves) and a CR before a line break are taken out first,
// with a map back to the kept text's offsets, so `FAILED` matches a coloured
// F-A-I-L-E-D and `ok$` matches a CRLF line. Line breaks are never taken
// out, so line numbers are the kept text's.

/**
 * What one scan is asked. Offsets are characters of the stream's kept text;
 * `region` is text.slice(base, base + region.length) and holds the lines
 * scanned, [scanFrom, scanTo), and up to `context` lines on each side of
 * them, so a match next to where one call stopped has the context a single
 * call would have given it.
 */
export interface ScanJob {
  region: string;
  base: number;
  /** Where matching starts and stops: line starts (scanTo may be the text's end). */
  scanFrom: number;
  scanTo: number;
  /** The 1-based number of the line that starts at `scanFrom`. */
  fromLine: number;
  pattern: string;
  literal: boolean;
  ignoreCase: boolean;
  context: number;
  maxMatches: number;
  /** Stop (answering where) once this long has passed; checked between stretches of text. */
  budgetMs: number;
  /** The drop marker's place in the kept text ([start, end), start being the line break before it): never a match. */
  gap: { start: number; end: number } | null;
  /** Whether the answer needs the number of the line that starts at scanTo (to continue from there). */
  wantEndLine: boolean;
}

export interface ScanMatch {
  line: number;
  offset: number;
  text: string;
  before: string[];
  after: string[];
}

export interface ScanResult {
  matches: ScanMatch[];
  /** Where the scan stopped early (a line start of the kept text, and that line's number); null when it reached the region's end. */
  stoppedAt: { offset: number; line: number } | null;
  stoppedBy: 'matches' | 'time' | null;
  /** The number of the line that starts at the region's end (when asked for, and the scan reached it), else null. */
  endLine: number | null;
}

/** The scanner's functions; see the file's head for why they are made inside one function. */
export function searchScanner() {
  /** Longest line shown whole; a longer one is cut around the match. */
  const LINE_CHARS = 500;
  /** Longest context line shown whole. */
  const CONTEXT_CHARS = 300;
  /** Text searched between two looks at the clock. */
  const STRETCH = 256 * 1024;
  // CSI (ESC [ ... final), OSC (ESC ] ... BEL or ESC \), a charset choice (ESC ( B), any other two-character
  // escape; and a CR right before a line break.
  // eslint-disable-next-line no-control-regex -- escape sequences are what it matches
  const HIDDEN = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)|\x1b[()#%][0-~]|\x1b[@-_]|\r(?=\n)/g;

  /** The pattern as a RegExp (global, multiline, Unicode; i when asked); a literal is escaped. Throws SyntaxError for a bad one. */
  function compile(pattern: string, literal: boolean, ignoreCase: boolean): RegExp {
    const source = literal ? pattern.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&') : pattern;
    return new RegExp(source, ignoreCase ? 'gimu' : 'gmu');
  }

  /**
   * The text as read: escape sequences and CRs before line breaks taken out,
   * and the map back (`raw(i)`: the offset in `text` of the visible
   * character i, or of the end when i is the length).
   */
  function visible(text: string): { text: string; raw: (i: number) => number } {
    // Two single-character looks cost less than one for "\r\n" (about 5 GB/s each).
    if (text.indexOf('\x1b') < 0 && text.indexOf('\r') < 0) return { text, raw: (i) => i };
    const cutAt: number[] = [];
    const removed: number[] = [];
    let total = 0;
    HIDDEN.lastIndex = 0;
    const shown = text.replace(HIDDEN, (seq: string, at: number) => {
      cutAt.push(at - total);
      total += seq.length;
      removed.push(total);
      return '';
    });
    return {
      text: shown,
      raw: (i) => {
        // The last cut at or before i: everything taken out before the visible character i.
        let lo = 0;
        let hi = cutAt.length - 1;
        let found = -1;
        while (lo <= hi) {
          const mid = (lo + hi) >> 1;
          if (cutAt[mid]! <= i) {
            found = mid;
            lo = mid + 1;
          } else hi = mid - 1;
        }
        return i + (found < 0 ? 0 : removed[found]!);
      },
    };
  }

  /** Line breaks in text[from, to). */
  function countLines(text: string, from: number, to: number): number {
    let n = 0;
    for (let at = text.indexOf('\n', from); at >= 0 && at < to; at = text.indexOf('\n', at + 1)) n++;
    return n;
  }

  function lineEndAt(text: string, at: number): number {
    const end = text.indexOf('\n', at);
    return end < 0 ? text.length : end;
  }

  function shorten(line: string, max: number): string {
    return line.length <= max ? line : `${line.slice(0, max)}…`;
  }

  /** A matching line, cut around the match when it is very long. */
  function matchLine(text: string, start: number, end: number, at: number, length: number): string {
    if (end - start <= LINE_CHARS) return text.slice(start, end);
    const from = Math.max(start, at - 200);
    const to = Math.min(end, Math.max(at + length, from + LINE_CHARS));
    return `${from > start ? '…' : ''}${text.slice(from, to)}${to < end ? '…' : ''}`;
  }

  function linesBefore(text: string, lineStart: number, n: number): string[] {
    const lines: string[] = [];
    let end = lineStart - 1;
    while (lines.length < n && end >= 0) {
      const start = end === 0 ? 0 : text.lastIndexOf('\n', end - 1) + 1;
      lines.unshift(shorten(text.slice(start, end), CONTEXT_CHARS));
      end = start - 1;
    }
    return lines;
  }

  function linesAfter(text: string, lineEnd: number, n: number): string[] {
    const lines: string[] = [];
    let start = lineEnd + 1;
    while (lines.length < n && start < text.length) {
      const end = lineEndAt(text, start);
      lines.push(shorten(text.slice(start, end), CONTEXT_CHARS));
      start = end + 1;
    }
    return lines;
  }

  function scan(job: ScanJob): ScanResult {
    const began = performance.now();
    const from = job.scanFrom - job.base;
    const to = job.scanTo - job.base;
    // Each part made visible on its own: they meet at line starts, which no escape sequence crosses.
    const parts = [job.region.slice(0, from), job.region.slice(from, to), job.region.slice(to)].map(visible);
    const text = parts[0]!.text + parts[1]!.text + parts[2]!.text;
    const scanStart = parts[0]!.text.length;
    const scanEnd = scanStart + parts[1]!.text.length;
    /** The kept text's offset of the visible character i. */
    const raw = (i: number) => job.base + (i < scanStart ? parts[0]!.raw(i) : i < scanEnd ? from + parts[1]!.raw(i - scanStart) : to + parts[2]!.raw(i - scanEnd));
    const re = compile(job.pattern, job.literal, job.ignoreCase);
    const needle = job.literal && !job.ignoreCase ? job.pattern : null;
    const matches: ScanMatch[] = [];
    const gap = job.gap;
    // `line` is the number of the line that starts at `counted`.
    let line = job.fromLine;
    let counted = scanStart;
    const lineOf = (start: number) => {
      line += countLines(text, counted, start);
      counted = start;
      return line;
    };
    const done = (stoppedAt: ScanResult['stoppedAt'], stoppedBy: ScanResult['stoppedBy']): ScanResult => ({
      matches,
      stoppedAt,
      stoppedBy,
      endLine: stoppedAt === null && job.wantEndLine ? lineOf(scanEnd) : null,
    });
    let next = -1; // the literal's next place, found once for many stretches
    let p = scanStart;
    while (p < scanEnd) {
      // The first stretch is always scanned: a search stopped by time still moves on.
      if (p > scanStart && performance.now() - began > job.budgetMs) return done({ offset: raw(p), line: lineOf(p) }, 'time');
      let stretchEnd = Math.min(scanEnd, p + STRETCH);
      if (stretchEnd < scanEnd) stretchEnd = Math.min(scanEnd, lineEndAt(text, stretchEnd - 1) + 1);
      const stretch = needle === null ? text.slice(p, stretchEnd) : '';
      let q = p;
      while (q < stretchEnd) {
        let at: number;
        let length: number;
        if (needle !== null) {
          if (next < q) next = text.indexOf(needle, q);
          if (next < 0) next = text.length;
          if (next >= stretchEnd) break;
          at = next;
          length = needle.length;
        } else {
          re.lastIndex = q - p;
          const found = re.exec(stretch);
          if (found === null) break;
          at = p + found.index;
          length = found[0].length;
        }
        const lineStart = at === 0 ? 0 : text.lastIndexOf('\n', at - 1) + 1;
        const lineEnd = lineEndAt(text, at);
        if (needle === null && at + length > lineEnd) {
          // The match runs past the line's end (\s or [^x] took a line break): the line is tried alone.
          re.lastIndex = 0;
          const alone = re.exec(text.slice(lineStart, lineEnd));
          if (alone === null) {
            q = lineEnd + 1;
            continue;
          }
          at = lineStart + alone.index;
          length = alone[0].length;
        }
        const offset = raw(at);
        if (gap !== null && offset > gap.start && offset < gap.end) {
          // Warden's drop marker is not the output's.
          q = lineEnd + 1;
          continue;
        }
        matches.push({
          line: lineOf(lineStart),
          offset,
          text: matchLine(text, lineStart, lineEnd, at, length),
          before: linesBefore(text, lineStart, job.context),
          after: linesAfter(text, lineEnd, job.context),
        });
        q = lineEnd + 1;
        if (matches.length >= job.maxMatches) return q >= scanEnd ? done(null, null) : done({ offset: raw(q), line: lineOf(q) }, 'matches');
      }
      p = stretchEnd;
    }
    return done(null, null);
  }

  return { compile, visible, countLines, scan };
}
