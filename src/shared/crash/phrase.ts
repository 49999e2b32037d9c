// A crash report in words, the same wherever it is said (the Summary's
// heading, the engine's advice, the answer a model reads): "raised KeyError:
// 'database_url' at crash_keyerror.py:4".

import type { CrashFrame, Traceback } from './report';
import { shortPath } from './text';

/** An error message past this is cut (a heading is one line). */
export const ERROR_CHARS = 160;

function clip(text: string): string {
  return text.length <= ERROR_CHARS ? text : `${text.slice(0, ERROR_CHARS - 1)}…`;
}

/** "crash_keyerror.py:4", relative to the run's directory when the file is in it. */
export function placeOf(frame: Pick<CrashFrame, 'file' | 'line'>, cwd?: string): string {
  return `${shortPath(frame.file, cwd)}:${frame.line}`;
}

/** What happened, without where: "raised KeyError: 'x'", "panicked with \"index out of bounds\"", "test_missing failed with KeyError: 'x'". */
export function whatHappened(tb: Pick<Traceback, 'how' | 'error' | 'language' | 'test'>): string {
  const error = clip(tb.error);
  switch (tb.how) {
    case 'raised':
      return `raised ${error}`;
    case 'threw':
      return `threw ${error}`;
    case 'panicked':
      return `panicked with "${error}"`;
    case 'fatal':
      return tb.language === 'python' ? `crashed (${error})` : `failed with "${error}"`;
    case 'failed':
      return `${tb.test ?? 'a test'} failed with ${error}`;
  }
}

/** The heading's phrase: what happened and where ("raised KeyError: 'x' at app.py:4"), and the other tests that failed. */
export function crashPhrase(tb: Traceback, cwd?: string): string {
  const where = tb.frame ? ` at ${placeOf(tb.frame, cwd)}` : '';
  const more = tb.moreFailed ? `, and ${tb.moreFailed} more test${tb.moreFailed === 1 ? '' : 's'} failed` : '';
  return `${whatHappened(tb)}${where}${more}`;
}
