// Python's reports: a traceback (most recent call last) ending in the
// exception's line, a SyntaxError's location without one, an exception group
// (its top level, whose lines carry a "  | " margin), and faulthandler's
// report of a fatal error (most recent call first, the current thread's stack
// first). The last report in the lines is the one returned.

import type { Found, FoundFrame, LanguageScan } from './report';

const HEAD = /^Traceback \(most recent call last\):$/;
const GROUP_HEAD = /^ {2}\+ Exception Group Traceback \(most recent call last\):$/;
const FRAME = /^ {2}File "(.+)", line (\d+)(?:, in (.+))?$/;
/** A SyntaxError in the file Python was given names its line without a function, and without a head. */
const SYNTAX_FRAME = /^ {2}File "(.+)", line (\d+)$/;
/** faulthandler writes "line N in f", without the comma. */
const FAULT_FRAME = /^ {2}File "(.+)", line (\d+) in (.+)$/;
const FATAL = /^Fatal Python error: (.+)$/;
const THREAD = /^(Current thread|Thread) 0x[0-9a-f]+ \(most recent call first\):$|^Stack \(most recent call first\):$/;
/** An exception's line: its (dotted) class name, then its message after ": ". */
const EXCEPTION = /^[A-Za-z_][\w.]*(?::(?: .*)?)?$/;
const GROUP_MARGIN = '  | ';
/** Lines of an exception's message after its first. */
const MAX_MESSAGE_LINES = 20;
/** A line another program logged after the traceback: a time, a level, make's or npm's. */
const LOG_LINE = /^(?:\d{4}-\d\d-\d\d|\[?\d\d:\d\d:\d\d|(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL)\b|make(?:\[\d+\])?: |npm (?:ERR!|error))/;

/** Files of Python's own library and of installed packages; pseudo-files such as <string> or <script> are the user's code. */
export function isPythonUserFile(file: string): boolean {
  if (file.startsWith('<frozen ')) return false;
  return !/\/lib\/(?:pypy|python)\d[^/]*\/|[/\\](?:site|dist)-packages[/\\]|^<frozen |\/lib-dynload\//.test(file);
}

function frameAt(lines: readonly string[], i: number, m: RegExpExecArray, margin: string): FoundFrame {
  const next = lines[i + 1];
  const source = next !== undefined && next.startsWith(margin) && /^ {4}\S/.test(next.slice(margin.length)) && !/^\s*[~^]+\s*$/.test(next) ? i + 1 : undefined;
  const file = m[1]!;
  return { file, line: Number(m[2]), ...(m[3] !== undefined ? { fn: m[3] } : {}), at: i, ...(source !== undefined ? { sourceAt: source } : {}), user: isPythonUserFile(file) };
}

/** A traceback whose frames start at `from` (a head's next line, or a SyntaxError's first frame); `margin`: the group's "  | ". */
function traceback(lines: readonly string[], start: number, from: number, margin: string): Found | null {
  const frames: FoundFrame[] = [];
  for (let j = from; j < lines.length; j++) {
    const raw = lines[j]!;
    if (!raw.startsWith(margin)) return null;
    const line = raw.slice(margin.length);
    const m = FRAME.exec(line);
    if (m) {
      frames.push(frameAt(lines, j, m, margin));
      continue;
    }
    // A frame's source, its carets, "[Previous line repeated 996 more times]".
    if (line.startsWith(' ')) continue;
    if (!EXCEPTION.test(line) || frames.length === 0) return null;
    let end = j;
    if (margin !== '') {
      // The group's sub-exceptions follow, each in a deeper margin, to its closing rule.
      while (end + 1 < lines.length && /^ {2,}[|+]/.test(lines[end + 1]!)) end++;
    } else {
      // A message of several lines (a validation error's list) goes on to a blank line, the next report or another program's log line.
      while (end + 1 < lines.length && end - j < MAX_MESSAGE_LINES && lines[end + 1] !== '' && !startsReport(lines[end + 1]!) && !LOG_LINE.test(lines[end + 1]!)) end++;
    }
    return { report: { language: 'python', how: 'raised', error: line, errorAt: j, frames }, start, end };
  }
  return null;
}

/** faulthandler's report: the first stack listed is the current thread's, innermost first. */
function fatal(lines: readonly string[], start: number, error: string): Found {
  const frames: FoundFrame[] = [];
  let end = start;
  let inCurrent = false;
  let taken = false;
  for (let j = start + 1; j < lines.length; j++) {
    const line = lines[j]!;
    const thread = THREAD.exec(line);
    if (thread) {
      inCurrent = !taken && thread[1] !== 'Thread';
      end = j;
      continue;
    }
    const m = FAULT_FRAME.exec(line);
    if (m) {
      end = j;
      if (inCurrent) frames.unshift(frameAt(lines, j, m, ''));
      continue;
    }
    if (line === '' || line.startsWith('Python runtime state') || line.startsWith('Extension modules:') || line.startsWith('  <no Python frame>')) {
      if (frames.length > 0) taken = true;
      if (line !== '') end = j;
      continue;
    }
    break;
  }
  return { report: { language: 'python', how: 'fatal', error: `Fatal Python error: ${error}`, errorAt: start, frames }, start, end };
}

function startsReport(line: string): boolean {
  return HEAD.test(line) || GROUP_HEAD.test(line) || FATAL.test(line);
}

export const scanPython: LanguageScan = (lines) => {
  let last: Found | null = null;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    let found: Found | null = null;
    if (HEAD.test(line)) found = traceback(lines, i, i + 1, '');
    else if (GROUP_HEAD.test(line)) found = traceback(lines, i, i + 1, GROUP_MARGIN);
    else if (SYNTAX_FRAME.test(line) && (i === 0 || !lines[i - 1]!.startsWith(' '))) found = traceback(lines, i, i, ''); // a SyntaxError's location, no head
    else {
      const m = FATAL.exec(line);
      if (m) found = fatal(lines, i, m[1]!);
    }
    if (found) {
      last = found;
      i = found.end;
    }
  }
  return last;
};
