// Records a Supervisor's runs into the store: subscribe to its events and
// hand each to the writer (writer.ts batches, retries and bounds them).
// Nothing here can throw into the engine's emit: a listener that threw would
// break the run that emitted.

import { statfsSync } from 'node:fs';
import { dirname } from 'node:path';
import type { RunEvent } from '../../shared/events';
import type { PeakFigures } from '../../shared/result';
import { addMark, OUTPUT_TIMES_EVENT, type OutputMark } from '../../shared/output-times';
import { addSample, emptySeries, TELEMETRY_EVENT, type TelemetryDetail, type TelemetrySeries } from '../../shared/telemetry';
import type { StoreWriteError } from './errors';
import { RETENTION_DEFAULTS, type PruneReport, type RetentionLimits } from './retention';
import type { HistoryStore } from './store';
import { RunWriter, type WriterOptions, type WriterStatus } from './writer';

/** The changes of a run's listening ports its timeline keeps. */
const MAX_PORT_EVENTS = 50;

/** What the recorder needs of a Supervisor. */
export interface RunSource {
  readonly hostId: string;
  subscribe(listener: (event: RunEvent) => void): () => void;
}

export interface RecorderOptions extends WriterOptions {
  /**
   * Prune after every `everyEnds` runs written (default: every 500, with the
   * default limits); false: never (call store.prune yourself).
   */
  retention?: (RetentionLimits & { everyEnds?: number }) | false;
  /** Called after an automatic prune that removed something. */
  onPrune?: (report: PruneReport) => void;
  /**
   * How often a live run's telemetry is written to the history (default
   * 2 s; at once when its peak rises), so a run its host loses keeps it.
   */
  liveTelemetryEveryMs?: number;
}

export interface Recorder {
  /** Writes what is pending now; true when nothing is left waiting. */
  flush(): boolean;
  status(): WriterStatus;
  /** Stops recording; tries the pending writes for up to `timeoutMs` (default 2 s) and returns what is left. */
  close(timeoutMs?: number): Promise<WriterStatus>;
  /** A live run's telemetry so far (from its first sample), or null when it has none (ended, unknown, not sampled yet). */
  liveTelemetry(runId: string): TelemetryDetail | null;
}

/** Bytes an unprivileged writer may still use on the file system of `dir`; null when it cannot be asked. */
function freeBytesAt(dir: string): number | null {
  try {
    const { bavail, bsize } = statfsSync(dir);
    return bavail * bsize;
  } catch {
    return null;
  }
}

export function attachRecorder(store: HistoryStore, source: RunSource, options: RecorderOptions = {}): Recorder {
  store.registerHost(source.hostId);
  const retention = options.retention === false ? null : { ...RETENTION_DEFAULTS, everyEnds: 500, ...options.retention };
  let endsSincePrune = 0;
  let pruneScheduled = false;
  const reportError = (error: StoreWriteError) => {
    // Damage seen while writing: the next open checks the file whole and moves it aside if it must.
    store.noteDamage(error.cause);
    options.onError?.(error);
  };

  const writer = new RunWriter(() => store.db, source.hostId, {
    freeBytes: () => freeBytesAt(dirname(store.path)),
    ...options,
    onError: reportError,
    onEndWritten: (result, written) => {
      options.onEndWritten?.(result, written);
      if (!retention || ++endsSincePrune < retention.everyEnds || pruneScheduled) return;
      pruneScheduled = true;
      // After the event that ended the run has been handled: pruning may take milliseconds.
      setImmediate(() => {
        pruneScheduled = false;
        endsSincePrune = 0;
        if (store.isClosed) return;
        try {
          const report = store.prune(retention);
          if (report.removedRuns > 0) options.onPrune?.(report);
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          reportError({ message: `Warden could not prune its history (${message}); it tries again after the next ${retention.everyEnds} runs.`, code: 'PRUNE', attempt: 1, retryInMs: null, pendingRuns: 0, cause: error });
        }
      });
    },
  });

  // An ended run is written after its answer (writer row 4): a read before then writes it first.
  store.setBeforeRead(() => writer.writeEndsNow());

  // Each live run's telemetry, from the sampler's tree events; stored as one event when it ends (shared/telemetry.ts),
  // and in chunks while it lives (live-telemetry.ts): `handedAtMs` is when the series was last handed to the writer.
  const telemetry = new Map<string, { startedAtMs: number; series: TelemetrySeries; storedPeak?: PeakFigures; handed?: TelemetrySeries; handedAtMs: number }>();
  const liveEveryMs = options.liveTelemetryEveryMs ?? 2000;
  // And when each piece of its output came (shared/output-times.ts), for a log of both streams in order, timed.
  const outputTimes = new Map<string, OutputMark[]>();
  // And how many lines each stream had in all, for numbering the lines after a cut as they were.
  const lineTotals = new Map<string, { newlines: [number, number]; open: [boolean, boolean] }>();

  // How many changes of its ports each live run's timeline has had.
  const portChanges = new Map<string, number>();

  const unsubscribe = source.subscribe((event) => {
    try {
      switch (event.type) {
        case 'started':
          writer.started(event.snapshot);
          if (event.snapshot.state !== 'queued' || !telemetry.has(event.runId)) telemetry.set(event.runId, { startedAtMs: Date.parse(event.snapshot.startedAt), series: emptySeries(), handedAtMs: 0 });
          break;
        case 'tree': {
          const t = telemetry.get(event.runId);
          const at = Date.parse(event.snapshot.sampledAt);
          if (t && Number.isFinite(at) && Number.isFinite(t.startedAtMs)) {
            const snap = event.snapshot;
            t.series = addSample(t.series, [Math.max(0, at - t.startedAtMs), Math.round(snap.cpuPercent * 10) / 10, snap.rssBytes, snap.processes]);
            // The row's peak so far, written when it rises (not per sample): a lost run keeps it.
            const peak = snap.peak;
            const rose = peak !== undefined && (t.storedPeak === undefined || peak.rssBytes > t.storedPeak.rssBytes || peak.processes > t.storedPeak.processes);
            if (rose) {
              t.storedPeak = { rssBytes: Math.max(peak.rssBytes, t.storedPeak?.rssBytes ?? 0), processes: Math.max(peak.processes, t.storedPeak?.processes ?? 0), ...(peak.source ? { source: peak.source } : {}) };
              writer.livePeak(event.runId, t.storedPeak);
            }
            // And its series: with the peak (one transaction, so the stored series reaches the stored peak), else every few seconds.
            if (t.series !== t.handed && (rose || at - t.handedAtMs >= liveEveryMs)) {
              t.handed = t.series;
              t.handedAtMs = at;
              writer.liveSeries(event.runId, { stepMs: t.series.stepMs, points: t.series.points });
            }
          }
          break;
        }
        case 'output': {
          writer.output(event.runId, event.stream, event.text);
          const t = telemetry.get(event.runId);
          if (t) {
            let marks = outputTimes.get(event.runId);
            if (!marks) outputTimes.set(event.runId, (marks = []));
            addMark(marks, event.stream, event.offset, event.atMs ?? Math.max(0, Date.now() - t.startedAtMs));
            let lines = lineTotals.get(event.runId);
            if (!lines) lineTotals.set(event.runId, (lines = { newlines: [0, 0], open: [false, false] }));
            const s = event.stream === 'stdout' ? 0 : 1;
            for (let i = event.text.indexOf('\n'); i !== -1; i = event.text.indexOf('\n', i + 1)) lines.newlines[s]++;
            lines.open[s] = !event.text.endsWith('\n');
          }
          break;
        }
        case 'signal-sent':
          writer.event(event.runId, event.atMs, 'signal-sent', { signal: event.signal, step: event.step });
          break;
        case 'limit-extended':
          writer.limitExtended(event.runId, event.atMs, event.limitMs, event.byMs);
          break;
        // A service's life on its timeline: ready or not, its ports, what was sent to it, its lease, its main process's exit.
        case 'ready':
          writer.event(event.runId, event.atMs, 'ready', event.ready === false ? { ready: false } : { ready: true, afterMs: event.ready.afterMs, ports: event.ready.ports.map((p) => p.port), ...(event.ready.line !== undefined ? { line: event.ready.line } : {}) });
          break;
        case 'ports': {
          // A test suite opening a server a second would fill the timeline: its first changes are kept.
          const seen = portChanges.get(event.runId) ?? 0;
          portChanges.set(event.runId, seen + 1);
          if (seen < MAX_PORT_EVENTS) writer.event(event.runId, event.atMs, 'ports', { ports: event.ports.map((p) => ({ port: p.port, address: p.address, ...(p.http !== undefined ? { http: p.http } : {}) })) });
          else if (seen === MAX_PORT_EVENTS) writer.event(event.runId, event.atMs, 'ports', { ports: [], more: 'its ports kept changing; later changes are not kept' });
          break;
        }
        case 'input':
          writer.event(event.runId, event.atMs, 'input', { text: event.text, chars: event.chars, eof: event.eof });
          break;
        case 'lease-renewed':
          writer.event(event.runId, event.atMs, 'lease-renewed', { endsAtMs: event.endsAtMs, byMs: event.byMs });
          break;
        case 'main-exited':
          writer.event(event.runId, event.mainExit.atMs, 'main-exited', { exitCode: event.mainExit.exitCode, signal: event.mainExit.signal });
          break;
        case 'ended': {
          portChanges.delete(event.runId);
          const t = telemetry.get(event.runId);
          telemetry.delete(event.runId);
          const marks = outputTimes.get(event.runId);
          outputTimes.delete(event.runId);
          const totals = lineTotals.get(event.runId);
          lineTotals.delete(event.runId);
          const lines = totals ? totals.newlines.map((n, s) => n + (totals.open[s] ? 1 : 0)) : [0, 0];
          if (marks && marks.length > 0) writer.event(event.runId, null, OUTPUT_TIMES_EVENT, { marks, lines });
          if (t && t.series.points.length > 0) {
            const detail: TelemetryDetail = { stepMs: t.series.stepMs, points: t.series.points };
            writer.event(event.runId, null, TELEMETRY_EVENT, detail as unknown as Record<string, unknown>);
          }
          writer.ended(event.result);
          break;
        }
      }
    } catch (error) {
      // A bug in the recorder must not break the run that emitted the event.
      reportError({ message: `Warden's history recorder failed on a ${event.type} event: ${error instanceof Error ? error.message : String(error)}`, code: 'UNKNOWN', attempt: 1, retryInMs: null, pendingRuns: writer.status().pendingRuns, cause: error });
    }
  });

  return {
    liveTelemetry: (runId) => {
      const t = telemetry.get(runId);
      return t && t.series.points.length > 0 ? { stepMs: t.series.stepMs, points: t.series.points.slice() } : null;
    },
    flush: () => writer.flush(),
    status: () => writer.status(),
    close: async (timeoutMs?: number) => {
      unsubscribe();
      const left = await writer.close(timeoutMs);
      store.setBeforeRead(null);
      return left;
    },
  };
}
