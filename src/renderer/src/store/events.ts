// The API's events applied to the store, a frame's worth at once (connect
// queues them): runs started, ended, stopped and extended, services' states,
// process trees and telemetry, and output chunks merged by offset
// (live-output.ts); a chunk past the end held is a gap, fetched, never skipped.

import { addMark } from '../../../shared/output-times';
import { addSample, emptySeries } from '../../../shared/telemetry';
import type { SignalSent } from '../../../shared/result';
import { appendAt, baseOf, exactOutput } from './live-output';
import { refetch } from './output-slice';
import { withServiceEvent } from './run-fields';
import type { Store, WardenState } from './state';

/** The events queued since the last frame, applied in one update: each field a frame changes is copied once. */
export function flush(store: Store): void {
  const { set, held } = store;
  store.scheduled = false;
  const events = store.queue;
  store.queue = [];
  if (events.length === 0) return;
  const now = performance.now();
  let endedNow = 0;
  set((state) => {
    // Copy-on-write per field: a frame of output events changes `output` only, so
    // views that select runs, order or trees are not re-rendered for it.
    const changed: Partial<WardenState> = {};
    const draft = <K extends 'runs' | 'syncedAt' | 'output' | 'marks' | 'trees' | 'series' | 'signals' | 'stopProgress' | 'partial'>(key: K): WardenState[K] => {
      if (!(key in changed)) (changed as Record<string, unknown>)[key] = { ...state[key] };
      return changed[key] as WardenState[K];
    };
    const runOf = (id: string) => (changed.runs ?? state.runs)[id];
    let order = state.order;
    for (const event of events) {
      const id = event.runId;
      switch (event.type) {
        case 'started': {
          const known = runOf(id);
          if (!known) order = [id, ...order.filter((o) => o !== id)];
          const partial = (changed.partial ?? state.partial)[id] === true;
          draft('runs')[id] = known && !partial ? { ...event.snapshot, stdout: known.stdout, stderr: known.stderr } : event.snapshot;
          if (partial) delete draft('partial')[id];
          // Its first snapshot is where its stream starts: the chunks that follow are merged onto it.
          if (!(changed.output ?? state.output)[id] && !held.has(id)) draft('output')[id] = baseOf(event.snapshot);
          draft('syncedAt')[id] = now;
          break;
        }
        case 'output': {
          const waiting = held.get(id);
          if (waiting) {
            waiting.push(event);
            break;
          }
          const current = (changed.output ?? state.output)[id];
          // No snapshot held: nothing shows this run's output (a view that does loads it first).
          if (!current) break;
          const next = appendAt(current, event.stream, event.offset, event.text);
          if (next === 'gap') {
            held.set(id, [event]);
            refetch(store, id);
            break;
          }
          if (next !== current) draft('output')[id] = next;
          if (event.atMs !== undefined) {
            const known = (changed.marks ?? state.marks)[id];
            const list = known?.list ?? [];
            if (addMark(list, event.stream, event.offset, event.atMs)) draft('marks')[id] = { list, version: (known?.version ?? 0) + 1 };
          }
          break;
        }
        case 'tree': {
          draft('trees')[id] = event.snapshot;
          const run = runOf(id);
          const at = Date.parse(event.snapshot.sampledAt) - Date.parse(run?.startedAt ?? '');
          if (run && Number.isFinite(at)) {
            const series = draft('series');
            const s = event.snapshot;
            series[id] = addSample(series[id] ?? emptySeries(), [Math.max(0, at), s.cpuPercent, s.rssBytes, s.processes]);
          }
          break;
        }
        case 'signal-sent': {
          const signals = draft('signals');
          signals[id] = [...(signals[id] ?? []), { signal: event.signal, atMs: event.atMs } as SignalSent];
          // Teardown signals and those a person sent to one process are no step of the stop sequence.
          const step = event.step === 'teardown' || event.step === 'user' ? undefined : event.step;
          if (step) draft('stopProgress')[id] = { step, seenAt: now, ...(event.killAtMs !== undefined ? { killAtMs: event.killAtMs } : {}) };
          const run = runOf(id);
          if (run && run.state === 'running' && step) draft('runs')[id] = { ...run, state: 'stopping' };
          break;
        }
        case 'limit-extended': {
          const run = runOf(id);
          if (run) draft('runs')[id] = { ...run, limitMs: event.limitMs };
          break;
        }
        // A service's live state: ready or not, its ports, its lease, its input pipe closed.
        case 'ready':
        case 'ports':
        case 'lease-renewed':
        case 'main-exited':
        case 'input': {
          const run = runOf(id);
          if (run && run.state !== 'ended') draft('runs')[id] = withServiceEvent(run, event);
          break;
        }
        case 'ended': {
          const before = runOf(id);
          if (!before) order = [id, ...order];
          if (before?.state !== 'ended') endedNow++;
          draft('syncedAt')[id] = now;
          const live = (changed.output ?? state.output)[id];
          const partial = (changed.partial ?? state.partial)[id] === true;
          if (event.result.outputChars === undefined) {
            // A whole result carries its output.
            draft('runs')[id] = event.result;
            if (partial) delete draft('partial')[id];
          } else {
            // A summary: the output streamed here is kept when it is the whole of it (chunks waiting for a snapshot mean it is not).
            const exact = held.has(id) || partial ? null : exactOutput(live, event.result);
            if (exact) {
              const { outputChars: _omitted, ...fields } = event.result;
              draft('runs')[id] = { ...fields, ...exact };
            } else {
              // Without output, as a listing holds a run: a view that shows it fetches the output in pages (load).
              draft('runs')[id] = event.result;
              if (!partial) draft('partial')[id] = true;
            }
          }
          if (live) delete draft('output')[id];
          held.delete(id);
          break;
        }
      }
    }
    if (order !== state.order) changed.order = order;
    if (endedNow > 0 && state.ended.total !== null) changed.ended = { ...state.ended, total: state.ended.total + endedNow };
    return changed;
  });
}
