// Writes live runs to the store in batches, and keeps writing through
// storage trouble without ever holding up the engine.
//
// Per run: the row when it starts (so a crash leaves a trace), its output in
// batches at most `flushIntervalMs` late (one row per stream per batch, not
// one per chunk), its events, and at the end the whole result, whose kept
// output replaces what was stored live. Live output is stored up to a cap
// like the engine's own: the first half of the cap as it comes, then a
// moving tail; rows carry their character offset, so a gap reads back as
// the engine's "characters dropped here" marker.
//
// A failed write (SQLITE_BUSY, a full disk, a read-only or closed database)
// leaves everything pending in memory, bounded, and is retried with backoff
// and reported through onError. Supervision never waits on it: the engine's
// result is the engine's, the store only ever reads it.
//
// | # | what happens                                   | what the writer does                                                 |
// |---|------------------------------------------------|----------------------------------------------------------------------|
// | 1 | a run starts                                   | writes its row at once (state running, no verdict)                   |
// | 2 | output arrives                                 | queued; head text flushed as soon as a batch is full, the tail by timer |
// | 3 | output passes the live cap                     | only a moving tail is kept and stored; older tail rows are deleted   |
// | 4 | a run ends                                     | its pending output is dropped; the end (row, kept output, events) is   |
// |   |                                                | written at the next turn of the event loop, after the run's answer     |
// |   |                                                | (at once with under 256 MiB free); writeEndsNow() writes it first     |
// |   |                                                | for a read of the history that comes before then                      |
// | 4b| a live run's limit is extended                 | a timeline event; the live row and its snapshot get the new limit    |
// | 4c| a live run's telemetry series is handed over   | with the next batch, its points since the open chunk began rewrite   |
// |   |                                                | that chunk (live-telemetry.ts); the end deletes the chunks in the    |
// |   |                                                | transaction that writes the whole series once                        |
// | 5 | a write fails, transient                       | nothing pending is lost; retried after 100 ms, doubling to 10 s      |
// | 6 | a write fails, not transient (a bad value)     | that run's pending writes are given up and reported; others go on    |
// | 7 | pending live output passes maxPendingChars     | it is dropped (the end stores the kept output anyway); reported      |
// | 8 | more than maxPendingEnds ended runs wait       | the oldest is given up and reported                                  |
// | 8b| ended runs waiting hold over maxPendingEndChars | the oldest are cut as in row 9 (a note says why): memory stays bounded |
// | 9 | a write does not fit (SQLITE_FULL)             | the others are still tried; after a WAL checkpoint it is tried again, |
// |   |                                                | then an end with each stream cut to its first and last 16 Ki          |
// |   |                                                | characters, then with no output, with a note; live output that does   |
// |   |                                                | not fit (or would leave under 1 MiB free) is dropped; an end that     |
// |   |                                                | fits in no form waits whole and is retried with backoff               |
//
// A run whose end could not be written at all is listed in status().unrecorded,
// with why, so whoever closes the writer can say exactly what is missing.

import type { OutputStream } from '../../shared/events';
import type { PeakFigures, RunResult } from '../../shared/result';
import type { TelemetryDetail } from '../../shared/telemetry';
import { DEFAULTS } from '../../shared/request';
import type { StoreWriteError } from './errors';
import { droppedMarker } from '../../shared/stream-length';
import { count } from '../../shared/format';
import { dropLiveSeries, writeLiveSeries, type StoredSeries } from './live-telemetry';
import { indexRun, insertEndEvents, insertEvent, replaceOutput, setLiveLimit, setLivePeak, upsertRun } from './rows';
import { errorCode, errorMessage, isTransient, run, transaction, type Database } from './sql';

export interface WriterOptions {
  /** Longest a chunk of output waits before it is written (default 250 ms). */
  flushIntervalMs?: number;
  /** Head output waiting past this many characters is written at the next turn of the event loop (default 1 Mi: fewer, bigger transactions cost less per character). */
  batchChars?: number;
  /** Characters of each stream stored while a run is live, as head and tail (default: the engine's cap). */
  liveCapChars?: number;
  /** Bound on live output waiting in memory while writes fail (default 32 Mi characters). */
  maxPendingChars?: number;
  /** Bound on ended runs waiting in memory while writes fail (default 1,000). */
  maxPendingEnds?: number;
  /** Bound on the output those ended runs hold, in characters (default 64 Mi); past it the oldest are cut (row 8b). */
  maxPendingEndChars?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
  onError?: (error: StoreWriteError) => void;
  /**
   * Bytes free on the history's disk now, or null when unknown. A write that
   * would take more than half of it is treated as not fitting (row 9) before
   * it is tried: in WAL mode a big write that fits takes space a checkpoint
   * cannot give back on a full disk, and then nothing else fits.
   */
  freeBytes?: () => number | null;
  /** Called when writes succeed again after failing. */
  onRecover?: () => void;
  /** Called after each ended run is written; `whole`: with all its kept output (false when it had to be cut to fit). */
  onEndWritten?: (result: RunResult, written: { whole: boolean }) => void;
}

export interface WriterStatus {
  /** Runs with writes waiting. */
  pendingRuns: number;
  /** Characters of live output waiting. */
  pendingChars: number;
  /** Ended runs whose result waits to be written. */
  pendingEnds: number;
  failing: boolean;
  lastError: string | null;
  /** Characters of live output given up (not stored) since the start. */
  droppedChars: number;
  /** Ended runs given up since the start. */
  droppedEnds: number;
  /** Milliseconds spent writing since the start: the store's whole cost on the event loop. */
  writeMs: number;
  /** Ended runs written since the start (with their output cut or not). */
  endsWritten: number;
  /** Ended runs written with their output cut to fit (row 9), the latest last; at most 100 ids. */
  cutEnds: string[];
  cutEndsCount: number;
  /** Ended runs not written: given up, or still waiting (why: the last error). */
  unrecorded: { id: string; why: string }[];
}

/** Characters kept of each stream, head and tail, in a result that did not fit whole; then none. */
const CUT_STEPS = [32 * 1024, 0];
const MAX_LISTED = 100;
/** Free space below which live output is not stored (see checkRoom). */
const LIVE_RESERVE_BYTES = 1024 * 1024;
/** Free space on the history's disk under which an ended run is written at once, in the event that ended it (row 4). */
const DEFER_ENDS_ABOVE_BYTES = 256 * 1024 * 1024;

interface StreamState {
  /** Characters received so far: the offset of the next one. */
  seen: number;
  headCap: number;
  tailCap: number;
  /** Head characters taken (stored, pending, or dropped while pending). */
  headTaken: number;
  pendingHead: string[];
  pendingHeadChars: number;
  pendingHeadOffset: number;
  /** The newest output past the head, ending at `seen`. */
  pendingTail: string[];
  pendingTailChars: number;
  /** Tail rows stored, oldest first. */
  tailRows: { seq: number; chars: number; bytes: number }[];
  nextSeq: number;
}

interface PendingEvent {
  at: number;
  atMs: number | null;
  kind: string;
  detail: Record<string, unknown>;
}

interface RunState {
  id: string;
  /** The latest start snapshot not yet written. */
  start?: RunResult;
  /** The row exists. */
  written: boolean;
  streams: Record<OutputStream, StreamState>;
  events: PendingEvent[];
  /** A limit the live row does not show yet (an extension). */
  limitMs?: number;
  /** A peak so far the live row does not show yet (the sampler's, as it rises). */
  peak?: PeakFigures;
  /** The live telemetry series as handed over last, not stored yet (row 4c). */
  series?: TelemetryDetail;
  /** What of the series its chunks hold. */
  seriesStored?: StoredSeries;
  end?: RunResult;
  /** The end being written is a cut form of it (row 9). */
  cut?: boolean;
}

const MAX_PENDING_EVENTS = 1000;

function newStream(cap: number): StreamState {
  const headCap = Math.ceil(cap / 2);
  return {
    seen: 0,
    headCap,
    tailCap: cap - headCap,
    headTaken: 0,
    pendingHead: [],
    pendingHeadChars: 0,
    pendingHeadOffset: 0,
    pendingTail: [],
    pendingTailChars: 0,
    tailRows: [],
    nextSeq: 0,
  };
}

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff;

function isFull(error: unknown): boolean {
  return errorCode(error).startsWith('SQLITE_FULL');
}

/**
 * The result with each stream cut to its first and last `keepChars / 2`
 * characters (a pair of surrogates is never split), the cut counted in the
 * dropped characters and marked as the engine marks its own, and a note;
 * the result itself when nothing is longer than that.
 */
export function cutToFit(result: RunResult, keepChars: number, why = 'the disk is full'): RunResult {
  const half = Math.floor(keepChars / 2);
  const cut = (text: string, dropped: number) => {
    if (text.length <= keepChars + 64) return null;
    const total = dropped > 0 ? text.length - droppedMarker(dropped).length + dropped : text.length;
    let head = text.slice(0, half);
    let tail = half > 0 ? text.slice(text.length - half) : '';
    if (head.length > 0 && isHigh(head.charCodeAt(head.length - 1))) head = head.slice(0, -1);
    if (tail.length > 0 && isLow(tail.charCodeAt(0))) tail = tail.slice(1);
    const gone = total - head.length - tail.length;
    return { text: head + droppedMarker(gone) + tail, dropped: gone, left: text.length - head.length - tail.length };
  };
  const stdout = cut(result.stdout, result.stdoutTruncated);
  const stderr = cut(result.stderr, result.stderrTruncated);
  if (!stdout && !stderr) return result;
  const left = (stdout?.left ?? 0) + (stderr?.left ?? 0);
  const kept = keepChars > 0 ? `only the first and last ${count(half)} characters of each stream were stored` : 'its output was not stored';
  return {
    ...result,
    ...(stdout ? { stdout: stdout.text, stdoutTruncated: stdout.dropped } : {}),
    ...(stderr ? { stderr: stderr.text, stderrTruncated: stderr.dropped } : {}),
    notes: [...result.notes.filter((n) => !n.startsWith(CUT_NOTE)), `${CUT_NOTE} (${why}): ${kept}, ${count(left)} characters of kept output fewer. The host returned the whole result when it ended.`],
  };
}

const CUT_NOTE = "Warden's history had no room for this run's whole output";

export class RunWriter {
  private readonly runs = new Map<string, RunState>();
  private readonly flushIntervalMs: number;
  private readonly batchChars: number;
  private readonly liveCap: number;
  private readonly maxPendingChars: number;
  private readonly maxPendingEnds: number;
  private readonly maxPendingEndChars: number;
  private readonly retryBaseMs: number;
  private readonly retryMaxMs: number;
  private pendingChars = 0;
  private pendingEnds = 0;
  private timer: NodeJS.Timeout | undefined;
  private soon: NodeJS.Immediate | undefined;
  private attempt = 0;
  private retryAt = 0;
  private lastError: string | null = null;
  private droppedChars = 0;
  private droppedEnds = 0;
  private writeMs = 0;
  private endsWritten = 0;
  private readonly cutEnds: string[] = [];
  private cutEndsCount = 0;
  private readonly givenUp: { id: string; why: string }[] = [];
  private closed = false;

  constructor(
    private readonly db: () => Database,
    private readonly hostId: string,
    private readonly options: WriterOptions = {},
  ) {
    this.flushIntervalMs = options.flushIntervalMs ?? 250;
    this.batchChars = options.batchChars ?? 1024 * 1024;
    this.liveCap = Math.max(2, options.liveCapChars ?? DEFAULTS.outputCapChars);
    this.maxPendingChars = options.maxPendingChars ?? 32 * 1024 * 1024;
    this.maxPendingEnds = options.maxPendingEnds ?? 1000;
    this.maxPendingEndChars = options.maxPendingEndChars ?? 64 * 1024 * 1024;
    this.retryBaseMs = options.retryBaseMs ?? 100;
    this.retryMaxMs = options.retryMaxMs ?? 10_000;
  }

  started(snapshot: RunResult): void {
    if (this.closed) return;
    const state = this.state(snapshot.id);
    if (state.end) return;
    state.start = snapshot;
    const queued = snapshot.state === 'queued';
    this.queueEvent(state, { at: Date.now(), atMs: queued ? null : 0, kind: queued ? 'queued' : 'started', detail: {} });
    this.flushNow();
  }

  output(runId: string, stream: OutputStream, text: string): void {
    const state = this.runs.get(runId);
    // Output of a run whose start was not seen is not stored live: its end stores the kept output.
    if (this.closed || !state || state.end || text.length === 0) return;
    const s = state.streams[stream];
    let rest = text;
    if (s.headTaken < s.headCap) {
      let take = Math.min(rest.length, s.headCap - s.headTaken);
      // Never split a surrogate pair between head and tail.
      if (take < rest.length && take > 0 && isHigh(rest.charCodeAt(take - 1))) take--;
      if (take > 0) {
        if (s.pendingHeadChars === 0) s.pendingHeadOffset = s.seen;
        s.pendingHead.push(rest.slice(0, take));
        s.pendingHeadChars += take;
        s.headTaken += take;
        this.pendingChars += take;
        rest = rest.slice(take);
      }
      if (take === 0 && s.headTaken < s.headCap) s.headTaken = s.headCap; // a lone pair at the edge: head is full
    }
    s.seen += text.length;
    if (rest.length > 0) {
      s.pendingTail.push(rest);
      s.pendingTailChars += rest.length;
      this.pendingChars += rest.length;
      // Whole chunks first, like the engine: amortised O(1) per chunk.
      while (s.pendingTail.length > 1 && s.pendingTailChars - s.pendingTail[0]!.length >= s.tailCap) {
        const dropped = s.pendingTail.shift()!.length;
        s.pendingTailChars -= dropped;
        this.pendingChars -= dropped;
      }
    }
    if (this.pendingChars > this.maxPendingChars) this.dropPendingOutput();
    if (s.pendingHeadChars >= this.batchChars) this.flushSoon();
    else this.armTimer();
  }

  event(runId: string, atMs: number | null, kind: string, detail: Record<string, unknown>): void {
    const state = this.runs.get(runId);
    if (this.closed || !state) return;
    this.queueEvent(state, { at: Date.now(), atMs, kind, detail });
    this.flushSoon();
  }

  /** A live run's deadline moved: an entry in its timeline, and its live row shows the new limit. */
  limitExtended(runId: string, atMs: number, limitMs: number, byMs: number): void {
    const state = this.runs.get(runId);
    if (this.closed || !state || state.end) return;
    state.limitMs = limitMs;
    this.queueEvent(state, { at: Date.now(), atMs, kind: 'limit-extended', detail: { limitMs, byMs } });
    this.flushSoon();
  }

  /**
   * A live run's peak so far, for its row: the list shows it, and a run its
   * host loses is recovered from the row with it (its memory figure kept).
   */
  livePeak(runId: string, peak: PeakFigures): void {
    const state = this.runs.get(runId);
    if (this.closed || !state || state.end) return;
    state.peak = peak;
    // With the next batch, not a transaction of its own: a run's writes stay at
    // most one batch per flushIntervalMs however often its peak rises.
    this.armTimer();
  }

  /**
   * A live run's telemetry so far (row 4c), for a run its host loses: the
   * points since the last write are stored, not the whole series again.
   * Handed over with livePeak, both are written in one transaction.
   */
  liveSeries(runId: string, series: TelemetryDetail): void {
    const state = this.runs.get(runId);
    if (this.closed || !state || state.end) return;
    state.series = series;
    // With the next batch (at most flushIntervalMs late), in the same transaction as the peak that rose with it.
    this.armTimer();
  }

  ended(result: RunResult): void {
    if (this.closed) return;
    const state = this.state(result.id);
    // The kept output replaces whatever live output still waits; the whole series comes as an event.
    for (const s of Object.values(state.streams)) this.clearPending(s);
    state.series = undefined;
    if (!state.end) this.pendingEnds++;
    state.end = result;
    state.start = undefined;
    while (this.pendingEnds > this.maxPendingEnds) this.dropOldestEnd();
    this.boundPendingEndChars();
    // Not inside the event that ended the run: its answer goes first (the write of 2 MB of
    // indexed output takes tens of ms). Near a full disk, at once as each run ends: there
    // the order and spacing of writes (and the checkpoints between them) decide what fits.
    const free = this.options.freeBytes?.() ?? null;
    if (free !== null && free < DEFER_ENDS_ABOVE_BYTES) this.flushNow();
    else this.flushSoon();
  }

  /** Writes the ended runs waiting for their turn now (unless backing off): a read of the history sees every run that has ended. */
  writeEndsNow(): void {
    if (this.pendingEnds > 0) this.flushNow();
  }

  status(): WriterStatus {
    return {
      pendingRuns: [...this.runs.values()].filter((s) => this.dirty(s)).length,
      pendingChars: this.pendingChars,
      pendingEnds: this.pendingEnds,
      failing: this.attempt > 0,
      lastError: this.lastError,
      droppedChars: this.droppedChars,
      droppedEnds: this.droppedEnds,
      writeMs: this.writeMs,
      endsWritten: this.endsWritten,
      cutEnds: [...this.cutEnds],
      cutEndsCount: this.cutEndsCount,
      unrecorded: [...this.givenUp, ...[...this.runs.values()].filter((r) => r.end).map((r) => ({ id: r.id, why: this.lastError ?? 'it was still waiting to be written' }))],
    };
  }

  /** Writes everything pending now, retry or not; true when nothing is left pending. */
  flush(): boolean {
    this.clearTimers();
    this.retryAt = 0;
    this.writeAll();
    return this.status().pendingRuns === 0;
  }

  /** Stops taking events; pending writes are tried until `timeoutMs` passes. Returns what could not be written. */
  async close(timeoutMs = 2000): Promise<WriterStatus> {
    this.closed = true;
    const deadline = Date.now() + timeoutMs;
    while (!this.flush() && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(100, Math.max(1, deadline - Date.now()))));
    }
    this.clearTimers();
    return this.status();
  }

  private state(id: string): RunState {
    let state = this.runs.get(id);
    if (!state) {
      state = { id, written: false, streams: { stdout: newStream(this.liveCap), stderr: newStream(this.liveCap) }, events: [] };
      this.runs.set(id, state);
    }
    return state;
  }

  private queueEvent(state: RunState, event: PendingEvent): void {
    if (state.events.length >= MAX_PENDING_EVENTS) state.events.shift();
    state.events.push(event);
  }

  private dirty(state: RunState): boolean {
    return (
      state.start !== undefined ||
      state.end !== undefined ||
      state.events.length > 0 ||
      state.limitMs !== undefined ||
      state.peak !== undefined ||
      state.series !== undefined ||
      state.streams.stdout.pendingHeadChars + state.streams.stdout.pendingTailChars + state.streams.stderr.pendingHeadChars + state.streams.stderr.pendingTailChars > 0
    );
  }

  private clearPending(s: StreamState): void {
    this.pendingChars -= s.pendingHeadChars + s.pendingTailChars;
    s.pendingHead = [];
    s.pendingHeadChars = 0;
    s.pendingTail = [];
    s.pendingTailChars = 0;
  }

  private dropPendingOutput(): void {
    const before = this.pendingChars;
    for (const state of this.runs.values()) for (const s of Object.values(state.streams)) this.clearPending(s);
    this.droppedChars += before;
    this.report(new Error('too much output waiting'), null, `${before} characters of live output waiting to be stored were dropped; each run's kept output is still stored when it ends.`);
  }

  /** Row 8b: the results waiting to be written hold at most maxPendingEndChars of output; the oldest are cut first. */
  private boundPendingEndChars(): void {
    const ends = [...this.runs.values()].filter((state) => state.end);
    let chars = ends.reduce((sum, state) => sum + state.end!.stdout.length + state.end!.stderr.length, 0);
    for (const state of ends) {
      if (chars <= this.maxPendingEndChars) return;
      if (state.cut) continue;
      const before = state.end!.stdout.length + state.end!.stderr.length;
      const cut = cutToFit(state.end!, CUT_STEPS[0]!, `the history could not be written while more than ${count(this.maxPendingEndChars)} characters of results waited`);
      if (cut === state.end) continue;
      state.end = cut;
      state.cut = true;
      chars -= before - (cut.stdout.length + cut.stderr.length);
    }
  }

  private dropOldestEnd(): void {
    for (const [id, state] of this.runs) {
      if (!state.end) continue;
      this.runs.delete(id);
      this.pendingEnds--;
      this.droppedEnds++;
      this.remember(this.givenUp, { id, why: `more than ${this.maxPendingEnds} results were waiting` });
      this.report(new Error('too many results waiting'), null, `The result of run ${id} was not stored: more than ${this.maxPendingEnds} results were waiting.`);
      return;
    }
  }

  private flushNow(): void {
    // While backing off, the retry timer writes; a write now would only fail again.
    if (Date.now() < this.retryAt) return;
    this.clearTimers();
    this.writeAll();
  }

  private flushSoon(): void {
    if (this.soon || Date.now() < this.retryAt) return;
    this.soon = setImmediate(() => {
      this.soon = undefined;
      this.flushNow();
    });
  }

  private armTimer(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flushNow();
    }, Math.max(this.flushIntervalMs, this.retryAt - Date.now()));
    this.timer.unref();
  }

  private clearTimers(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.soon) clearImmediate(this.soon);
    this.timer = undefined;
    this.soon = undefined;
  }

  /** One transaction per run, so one run's bad value cannot hold up the others. */
  private writeAll(): void {
    const started = performance.now();
    try {
      this.writeDirty();
    } finally {
      this.writeMs += performance.now() - started;
    }
  }

  private writeDirty(): void {
    let wrote = false;
    let full: unknown = null;
    for (const state of [...this.runs.values()]) {
      if (!this.dirty(state)) continue;
      try {
        this.writeRun(state);
        wrote = true;
      } catch (error) {
        if (isFull(error)) {
          // Row 9: this one does not fit; after a checkpoint it may, else a smaller form of it; the others are still tried.
          this.reclaim();
          if (this.tryWrite(state) || this.writeSmaller(state, error)) wrote = true;
          else full = error;
          continue;
        }
        if (isTransient(error)) {
          this.backOff(error);
          return;
        }
        this.giveUp(state, error);
      }
    }
    if (full !== null) {
      this.backOff(full);
      return;
    }
    if (this.attempt > 0 && wrote) {
      this.attempt = 0;
      this.retryAt = 0;
      this.lastError = null;
      this.options.onRecover?.();
    }
  }

  /** Row 9: writes what fits of a run that did not fit: an end cut step by step, a live run without its pending output. True once written. */
  private writeSmaller(state: RunState, error: unknown): boolean {
    if (!state.end) {
      for (const s of Object.values(state.streams)) this.clearPending(s);
      return this.tryWrite(state);
    }
    // Each smaller form is tried once now; when none fits, the whole result waits for room.
    const whole = state.end;
    const wasCut = state.cut;
    for (const keepChars of CUT_STEPS) {
      const cut = cutToFit(whole, keepChars);
      if (cut === whole) continue;
      this.reclaim();
      state.end = cut;
      state.cut = true;
      if (this.tryWrite(state)) {
        this.report(error, null, `The result of run ${whole.id} was stored with its output cut to fit the disk (${keepChars > 0 ? `the first and last ${count(keepChars / 2)} characters of each stream` : 'no output'}); the whole result was returned when it ended.`);
        return true;
      }
    }
    state.end = whole;
    state.cut = wasCut;
    return false;
  }

  private tryWrite(state: RunState): boolean {
    try {
      this.writeRun(state);
      return true;
    } catch {
      return false;
    }
  }

  /** Keeps the latest MAX_LISTED entries of a list a person reads. */
  private remember<T>(list: T[], item: T): void {
    list.push(item);
    if (list.length > MAX_LISTED) list.shift();
  }

  /**
   * Row 9 before the write: live output (which the end replaces anyway) is
   * not stored while less than LIVE_RESERVE_BYTES would be left, so that the
   * ends, which matter more, still find room.
   */
  private checkRoom(state: RunState): void {
    if (state.end) return;
    let chars = 0;
    for (const s of Object.values(state.streams)) chars += s.pendingHeadChars + s.pendingTailChars;
    if (chars === 0) return;
    const free = this.options.freeBytes?.() ?? null;
    if (free !== null && free - chars < LIVE_RESERVE_BYTES) {
      throw Object.assign(new Error(`database or disk is full (${free} bytes free: live output is kept for the end)`), { code: 'SQLITE_FULL' });
    }
  }

  /**
   * Gives the WAL's space back to the disk: every small transaction adds
   * pages to the WAL until a checkpoint, and on a full disk that space is
   * what the next write needs. Fails harmlessly when even that cannot be done.
   */
  private reclaim(): void {
    try {
      this.db().exec('PRAGMA wal_checkpoint(TRUNCATE)');
    } catch {
      // Busy or no room to grow the database file: the writes that follow say so.
    }
  }

  private writeRun(state: RunState): void {
    if (!state.end && !state.start && !state.written) {
      // Its start could not be written and was given up: nothing to attach live writes to; its end stores it whole.
      for (const s of Object.values(state.streams)) this.clearPending(s);
      state.events = [];
      state.limitMs = undefined;
      state.series = undefined;
      return;
    }
    this.checkRoom(state);
    const db = this.db();
    const plan: (() => void)[] = [];
    transaction(db, () => {
      const end = state.end;
      const snapshot = end ?? state.start;
      const n = snapshot ? upsertRun(db, this.hostId, snapshot, null) : undefined;
      for (const e of state.events) insertEvent(db, state.id, e.at, e.atMs, e.kind, e.detail);
      if (end) {
        const bytes = replaceOutput(db, end.id, end.stdout, end.stderr);
        run(db, 'UPDATE runs SET output_bytes = ? WHERE id = ?', bytes, end.id);
        indexRun(db, n!, end, end.stdout, end.stderr);
        insertEndEvents(db, end);
        // Its whole series is among the events just written: the chunks would be every sample again.
        if (state.seriesStored !== undefined) dropLiveSeries(db, end.id);
      } else {
        if (state.start && !state.written) indexRun(db, n!, state.start, '', '');
        if (state.limitMs !== undefined) setLiveLimit(db, state.id, state.limitMs);
        if (state.peak !== undefined) setLivePeak(db, state.id, state.peak);
        if (state.series !== undefined) {
          const stored = writeLiveSeries(db, state.id, state.series, state.seriesStored, Date.now());
          plan.push(() => (state.seriesStored = stored));
        }
        let bytes = 0;
        for (const stream of ['stdout', 'stderr'] as const) bytes += this.writeOutput(db, state.id, stream, state.streams[stream], plan);
        if (bytes !== 0) run(db, 'UPDATE runs SET output_bytes = max(0, output_bytes + ?) WHERE id = ?', bytes, state.id);
      }
    });
    // Committed: now the memory may forget what was written.
    for (const apply of plan) apply();
    state.events = [];
    state.limitMs = undefined;
    state.peak = undefined;
    state.series = undefined;
    state.written = state.written || state.start !== undefined || state.end !== undefined;
    state.start = undefined;
    if (state.end) {
      const result = state.end;
      this.runs.delete(state.id);
      this.pendingEnds--;
      this.endsWritten++;
      const whole = state.cut !== true;
      if (!whole) {
        this.cutEndsCount++;
        this.remember(this.cutEnds, state.id);
      }
      this.options.onEndWritten?.(result, { whole });
    }
  }

  /** Writes one stream's pending output; returns the change in stored bytes. Memory changes go in `plan`. */
  private writeOutput(db: Database, runId: string, stream: OutputStream, s: StreamState, plan: (() => void)[]): number {
    let bytes = 0;
    let seq = s.nextSeq;
    if (s.pendingHeadChars > 0) {
      const value = s.pendingHead.join('');
      const blob = Buffer.from(value, 'utf8');
      run(db, 'INSERT INTO run_output (run_id, stream, seq, offset, chars, text) VALUES (?, ?, ?, ?, ?, ?)', runId, stream, seq++, s.pendingHeadOffset, value.length, blob);
      bytes += blob.length;
    }
    let tailRows = s.tailRows;
    if (s.pendingTailChars > 0) {
      let value = s.pendingTail.join('');
      let offset = s.seen - value.length;
      if (value.length > s.tailCap) {
        let cut = value.length - s.tailCap;
        if (isLow(value.charCodeAt(cut))) cut++;
        value = value.slice(cut);
        offset += cut;
      }
      const blob = Buffer.from(value, 'utf8');
      run(db, 'INSERT INTO run_output (run_id, stream, seq, offset, chars, text) VALUES (?, ?, ?, ?, ?, ?)', runId, stream, seq, offset, value.length, blob);
      bytes += blob.length;
      tailRows = [...tailRows, { seq: seq++, chars: value.length, bytes: blob.length }];
      // Keep the fewest newest rows that still hold a whole tail.
      let total = tailRows.reduce((sum, row) => sum + row.chars, 0);
      let drop = 0;
      while (tailRows.length - drop > 1 && total - tailRows[drop]!.chars >= s.tailCap) total -= tailRows[drop++]!.chars;
      if (drop > 0) {
        run(db, 'DELETE FROM run_output WHERE run_id = ? AND stream = ? AND seq BETWEEN ? AND ?', runId, stream, tailRows[0]!.seq, tailRows[drop - 1]!.seq);
        for (let i = 0; i < drop; i++) bytes -= tailRows[i]!.bytes;
        tailRows = tailRows.slice(drop);
      }
    }
    if (seq === s.nextSeq) return 0;
    const written = s.pendingHeadChars + s.pendingTailChars;
    plan.push(() => {
      s.nextSeq = seq;
      s.tailRows = tailRows;
      s.pendingHead = [];
      s.pendingHeadChars = 0;
      s.pendingTail = [];
      s.pendingTailChars = 0;
      this.pendingChars -= written;
    });
    return bytes;
  }

  private backOff(error: unknown): void {
    this.attempt++;
    const delay = Math.min(this.retryMaxMs, this.retryBaseMs * 2 ** Math.min(20, this.attempt - 1));
    this.retryAt = Date.now() + delay;
    this.clearTimers();
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.retryAt = 0;
      this.flushNow();
    }, delay);
    this.timer.unref();
    this.report(error, delay);
  }

  private giveUp(state: RunState, error: unknown): void {
    for (const s of Object.values(state.streams)) this.clearPending(s);
    state.events = [];
    state.limitMs = undefined;
    state.peak = undefined;
    state.series = undefined;
    state.start = undefined;
    if (state.end) {
      this.runs.delete(state.id);
      this.pendingEnds--;
      this.droppedEnds++;
      this.remember(this.givenUp, { id: state.id, why: errorMessage(error) });
    }
    this.report(error, null, `The writes waiting for run ${state.id} were given up: ${errorMessage(error)}`);
  }

  private report(error: unknown, retryInMs: number | null, dropped?: string): void {
    const code = errorCode(error);
    this.lastError = errorMessage(error);
    const pendingRuns = this.status().pendingRuns;
    const message = dropped
      ? `Warden's history: ${dropped}`
      : `Warden could not write its history (${code}: ${this.lastError}); ${pendingRuns} run(s) wait in memory and the write is retried in ${retryInMs} ms. Supervision goes on.`;
    try {
      this.options.onError?.({ message, code, attempt: this.attempt, retryInMs, pendingRuns, ...(dropped ? { dropped } : {}), cause: error });
    } catch {
      // A failing reporter must not stop the writer.
    }
  }
}
