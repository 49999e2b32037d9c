// A run's output as the log view draws it. A live run's chunks reach the
// store once per animation frame; drawn that often, 25 lines a second cost 25
// layouts a second and most of a core. The view takes them at most once per
// FOLLOW_MS instead (the newest text then, nothing dropped), so following a
// log costs a few layouts a second. Anything else (the run's end, a page of an
// ended run's output) is taken at once.

import { useEffect, useRef, useState } from 'react';
import type { RunResult } from '../../../../shared/result';
import type { OutputMark } from '../../../../shared/output-times';
import type { PagedOutput } from '../../output-pages';
import { useWarden, type WardenState } from '../../store';

/** At most this often a live run's log is drawn again while lines arrive: about 3 times a second. */
export const FOLLOW_MS = 300;

export interface ShownOutput {
  texts: { stdout: string; stderr: string; stdoutLines?: number; stderrLines?: number };
  /** An ended run's output still coming in pages. */
  paged: PagedOutput | undefined;
  /** When each piece of a live run's output came, as this page saw it. */
  marks: { list: OutputMark[]; version: number } | undefined;
}

function pick(state: WardenState, run: Pick<RunResult, 'id' | 'stdout' | 'stderr'>): ShownOutput {
  const live = state.output[run.id];
  const paged = state.pages[run.id];
  const held = state.runs[run.id] ?? run;
  return { texts: live ?? paged ?? held, paged, marks: state.marks[run.id] };
}

/**
 * What changed for this run: 'now' (its result, its pages: drawn at once),
 * 'later' (its live output or its times: drawn with the next update), or null.
 */
export function changeOf(state: Pick<WardenState, 'output' | 'pages' | 'runs' | 'marks'>, before: Pick<WardenState, 'output' | 'pages' | 'runs' | 'marks'>, id: string): 'now' | 'later' | null {
  if (state.runs[id] !== before.runs[id] || state.pages[id] !== before.pages[id]) return 'now';
  // Its live output dropped (the run ended): its whole output is now the run's own.
  if (state.output[id] === undefined && before.output[id] !== undefined) return 'now';
  if (state.output[id] !== before.output[id] || state.marks[id] !== before.marks[id]) return 'later';
  return null;
}

/** The delay before the next draw: none when the last was `intervalMs` ago or more, else what is left of it. */
export function drawDelay(lastDrawAt: number, now: number, intervalMs: number): number {
  return Math.max(0, lastDrawAt + intervalMs - now);
}

export function useShownOutput(run: Pick<RunResult, 'id' | 'stdout' | 'stderr'>, intervalMs = FOLLOW_MS): ShownOutput {
  const [shown, setShown] = useState(() => pick(useWarden.getState(), run));
  const runRef = useRef(run);
  runRef.current = run;
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let lastDrawAt = performance.now();
    const draw = () => {
      timer = undefined;
      lastDrawAt = performance.now();
      setShown(pick(useWarden.getState(), runRef.current));
    };
    // Another run opened in the same view, or the run itself changed since the first render.
    draw();
    const unsubscribe = useWarden.subscribe((state, before) => {
      const change = changeOf(state, before, runRef.current.id);
      if (change === null) return;
      if (change === 'now') {
        clearTimeout(timer);
        draw();
        return;
      }
      if (timer !== undefined) return;
      const wait = drawDelay(lastDrawAt, performance.now(), intervalMs);
      if (wait === 0) draw();
      else timer = setTimeout(draw, wait);
    });
    return () => {
      unsubscribe();
      clearTimeout(timer);
    };
  }, [run.id, intervalMs]);
  return shown;
}
