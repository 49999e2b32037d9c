// Engine events to the window in batches: per run, at most one message per
// frame (16 ms), holding every event of that run since the last one, with
// consecutive output chunks of one stream joined. A page showing 50 runs
// printing hundreds of lines a second gets ~50 IPC messages per frame at most,
// not thousands. Order within a run is kept; nothing is dropped. An ended
// run's result goes without its output (resultSummary): the renderer keeps the
// output it streamed, or fetches the run's output in pages when it shows it.

import { appendCoalesced as append } from '../../shared/coalesce';
import type { RunEvent } from '../../shared/events';
import { resultSummary } from '../../shared/result-summary';

export const FRAME_MS = 16;

export interface Batcher {
  push(event: RunEvent): void;
  /** Sends what is pending now and stops. */
  close(): void;
}

export function createBatcher(send: (runId: string, events: RunEvent[]) => void, frameMs = FRAME_MS): Batcher {
  const pending = new Map<string, RunEvent[]>();
  let timer: NodeJS.Timeout | null = null;
  const flush = () => {
    timer = null;
    const batches = [...pending];
    pending.clear();
    for (const [runId, events] of batches) send(runId, events);
  };
  return {
    push(event) {
      let batch = pending.get(event.runId);
      if (!batch) pending.set(event.runId, (batch = []));
      append(batch, event.type === 'ended' ? { ...event, result: resultSummary(event.result) } : event);
      timer ??= setTimeout(flush, frameMs);
    },
    close() {
      if (timer) clearTimeout(timer);
      flush();
    },
  };
}
