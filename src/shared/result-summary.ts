// An ended run's result without its output: what a view that lists runs, or a
// page that is not showing the run, needs of it. stdout and stderr are left
// empty and outputChars says how long each stream has been, so a view knows
// there is output to fetch (in pages) when it opens the run.

import type { RunResult } from './result';
import { streamLength } from './stream-length';

export function resultSummary(result: RunResult): RunResult {
  if (result.outputChars !== undefined) return result;
  return {
    ...result,
    stdout: '',
    stderr: '',
    outputChars: { stdout: streamLength(result.stdout, result.stdoutTruncated), stderr: streamLength(result.stderr, result.stderrTruncated) },
  };
}
