// The crash report that ends a run's output, as the page holds it: read once
// per text (the parser reads the last 256 Ki characters of each stream), for
// an ended run that did not complete.

import { useMemo } from 'react';
import type { RunResult } from '../../../../shared/result';
import { findCrash, type Traceback } from '../../../../shared/crash/traceback';

export type CrashReport = { stream: 'stdout' | 'stderr'; traceback: Traceback };

/**
 * Whether a report at the end of its output is why the run ended: it failed
 * or crashed. Not one that completed, nor one a deadline or a person stopped
 * (its KeyboardInterrupt is the stop's doing, said by the verdict).
 */
export function endedByItsError(run: Pick<RunResult, 'state' | 'verdict'>): boolean {
  return run.state === 'ended' && (run.verdict === 'failed' || run.verdict === 'crashed');
}

/** The report that ends the run's output as the page holds it, when it is why the run ended. */
export function useCrash(run: Pick<RunResult, 'state' | 'verdict'>, texts: { stdout: string; stderr: string }): CrashReport | null {
  const ended = endedByItsError(run);
  return useMemo(() => (ended ? findCrash(texts) : null), [ended, texts.stdout, texts.stderr]);
}
