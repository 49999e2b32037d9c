// The crash report at the end of a run's output, whatever language printed
// it: every language's scan reads the stream's last 256 Ki characters, the
// report that ends last wins, and it counts only when at most a few lines
// follow it (make's "*** Error 1", go run's "exit status 2", "Node.js v20").
// stderr is read first; stdout when stderr has none (pytest reports there,
// and so does a command run with 2>&1).

import { scanGo } from './go';
import { scanNode } from './node';
import { scanPytest } from './pytest';
import { scanPython } from './python';
import type { CrashFrame, Found, LanguageScan, Traceback } from './report';
import { scanRust } from './rust';
import { tailLines } from './text';

export type { CrashFrame, CrashLanguage, Traceback } from './report';

const SCANS: LanguageScan[] = [scanPython, scanNode, scanRust, scanGo, scanPytest];

/** Lines other than blank ones that may follow a report still "at the end". */
export const MAX_LINES_AFTER = 5;

/** The crash report that ends `text` (one stream), or null. */
export function findTraceback(text: string): Traceback | null {
  if (text === '') return null;
  const { lines, before } = tailLines(text);
  let best: Found | null = null;
  for (const scan of SCANS) {
    const found = scan(lines);
    // Ending on the same line, the one that starts later is the report (a Python message's lines can run into a Node stack).
    if (found && (!best || found.end > best.end || (found.end === best.end && found.start > best.start))) best = found;
  }
  if (!best) return null;
  let after = 0;
  for (let i = best.end + 1; i < lines.length; i++) if (lines[i]!.trim() !== '') after++;
  if (after > MAX_LINES_AFTER) return null;
  const no = (at: number) => before + at + 1;
  const { errorAt, frames: found, ...rest } = best.report;
  const frames: CrashFrame[] = found.map(({ at, sourceAt, ...frame }) => ({ ...frame, reportLine: no(at), ...(sourceAt !== undefined ? { sourceLine: no(sourceAt) } : {}) }));
  let frame: CrashFrame | null = null;
  for (let i = frames.length - 1; i >= 0 && !frame; i--) if (frames[i]!.user) frame = frames[i]!;
  return { ...rest, errorLine: no(errorAt), frame, frames, from: no(best.start), to: no(best.end) };
}

/** The report that ends a run's stderr, else its stdout, with the stream it is in. */
export function findCrash(run: { stdout: string; stderr: string }): { stream: 'stdout' | 'stderr'; traceback: Traceback } | null {
  const err = findTraceback(run.stderr);
  if (err) return { stream: 'stderr', traceback: err };
  const out = findTraceback(run.stdout);
  return out ? { stream: 'stdout', traceback: out } : null;
}
