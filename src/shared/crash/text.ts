// Text helpers of the crash parsers: escapes out, the tail of a long stream
// with its line numbers, and a report's file as the reader knows it.

// eslint-disable-next-line no-control-regex -- SGR and other CSI sequences are what is removed
const ESCAPES = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)/g;

/** The text without terminal escapes (Python 3.13 and pytest colour their reports on a terminal). */
export function stripEscapes(text: string): string {
  return text.includes('\x1b') ? text.replace(ESCAPES, '') : text;
}

/** Characters of a stream's end the parsers read: a report is at the end, and a 2,000,000-character stream costs no more than this. */
export const TAIL_CHARS = 262_144;

/**
 * The last `maxChars` of `text` as lines (from a line's start, a final newline
 * ending the last line), and how many lines came before them.
 */
export function tailLines(text: string, maxChars = TAIL_CHARS): { lines: string[]; before: number } {
  let start = 0;
  if (text.length > maxChars) {
    start = text.length - maxChars;
    // From a line's start: the one the cut falls in is left out.
    if (text.charCodeAt(start - 1) !== 10) {
      const nl = text.indexOf('\n', start);
      start = nl < 0 ? text.length : nl + 1;
    }
  }
  let before = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < start; i = text.indexOf('\n', i + 1)) before++;
  const body = text.slice(start);
  if (body === '') return { lines: [], before };
  const lines = body.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return { lines: lines.map((line) => stripEscapes(line.endsWith('\r') ? line.slice(0, -1) : line)), before };
}

/** A file as the reader knows it: file:// dropped, and relative to the run's directory when it is inside it. */
export function shortPath(file: string, cwd?: string): string {
  const path = file.startsWith('file://') ? decodeURIComponentSafe(file.slice('file://'.length)) : file;
  if (cwd) {
    const dir = cwd.endsWith('/') ? cwd : `${cwd}/`;
    if (path.startsWith(dir) && path.length > dir.length) return path.slice(dir.length);
  }
  return path.startsWith('./') ? path.slice(2) : path;
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
