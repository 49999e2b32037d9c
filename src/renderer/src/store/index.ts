// The renderer's state (zustand): every run this page knows, kept current by
// the API's events. Events are applied in batches, once per animation frame,
// so 50 runs printing hundreds of lines a second cost one render per frame.
// Views read slices with selectors: useWarden((s) => s.runs[id]).
//
// One store cut into slices by concern (zustand's slices pattern), each in a
// file of its own: runs-slice.ts (the runs list and the history's pages),
// output-slice.ts (a run's output, live or in pages; the merge itself is
// live-output.ts, pure), telemetry-slice.ts, connection-slice.ts (the API and
// its events, events.ts), hosts-slice.ts.

import { create } from 'zustand';
import type { RunResult } from '../../../shared/result';
import { createConnectionSlice } from './connection-slice';
import { createHostsSlice } from './hosts-slice';
import { createOutputSlice } from './output-slice';
import { createRunsSlice } from './runs-slice';
import type { Store, WardenState } from './state';
import { createTelemetrySlice } from './telemetry-slice';

export { liveElapsed } from './clock';
export { LIVE_OUTPUT_CAP, type LiveOutput } from './live-output';
export { fromSummary, linkedStream, withServiceEvent } from './run-fields';
export { ENDED_PAGE_SIZE, LINKED_CONTEXT_LINES, messageOf, PAGES_AT_ONCE, type Connection, type LoadOptions, type StopProgress, type WardenState } from './state';

export const useWarden = create<WardenState>()((set, get) => {
  const store: Store = { set, get, queue: [], scheduled: false, held: new Map(), refetches: new Map(), paging: new Map(), lastReconcile: 0, opened: Promise.resolve() };
  return {
    ...createRunsSlice(store),
    ...createOutputSlice(store),
    ...createTelemetrySlice(store),
    ...createConnectionSlice(store),
    ...createHostsSlice(store),
  };
});

/** A run's output as the page knows it now: what streamed in while live, else what its pages brought so far, else the run's own. */
export function useRunOutput(run: Pick<RunResult, 'id' | 'stdout' | 'stderr'>): { stdout: string; stderr: string; stdoutLines?: number; stderrLines?: number } {
  const live = useWarden((s) => s.output[run.id]);
  const paged = useWarden((s) => s.pages[run.id]);
  return live ?? paged ?? run;
}
