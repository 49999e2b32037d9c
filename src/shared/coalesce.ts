// Joining a run's events for transport in batches: an output chunk that
// continues the previous one of the same run and stream exactly (by offset)
// becomes part of it. Order is kept and nothing is dropped.

import type { RunEvent } from './events';

export function appendCoalesced(batch: RunEvent[], event: RunEvent): void {
  const last = batch[batch.length - 1];
  if (
    event.type === 'output' &&
    last?.type === 'output' &&
    last.runId === event.runId &&
    last.stream === event.stream &&
    last.offset + last.text.length === event.offset
  ) {
    batch[batch.length - 1] = { ...last, text: last.text + event.text };
    return;
  }
  batch.push(event);
}
