// The renderer's state (zustand): every run this page knows, kept current by
// the API's events. Events are applied in batches, once per animation frame,
// so 50 runs printing hundreds of lines a second cost one render per frame.
// Views read slices with selectors: useWarden((s) => s.runs[id]).

import { create } from 'zustand';
import type { WardenApi } from '../../shared/api';
import type { RunEvent } from '../../shared/events';
import type { ProcTreeSnapshot } from '../../shared/proc-tree';
import type { RunResult, SignalSent, StopStep } from '../../shared/result';
import { addMark, type OutputMark } from '../../shared/output-times';
import { addSample, emptySeries, type TelemetrySeries } from '../../shared/telemetry';

/** Whether the host answers: 'online' (or an Electron window, always), 'offline' (gone, reconnecting), 'unauthorised' (the login ended). */
export type Connection = 'online' | 'offline' | 'unauthorised';

/** How far a live run's stop sequence has gone, from its signal-sent events. */
export interface StopProgress {
  step: StopStep;
  /** performance.now() when that step's signal was seen. */
  seenAt: number;
  /** When SIGKILL is due, in ms since the run's start (from the engine's signal-sent event). */
  killAtMs?: number;
}

export interface WardenState {
  api: WardenApi | null;
  /** Every run this page has seen: live ones, those ended while it was open, and any opened from History. */
  runs: Record<string, RunResult>;
  /** Run ids, newest first. */
  order: string[];
  /**
   * Live output, apart from the run's other fields: a chunk of output changes
   * this and nothing else, so views that do not show output (the Runs list)
   * do not re-render for it. Dropped when the run's final result arrives.
   */
  output: Record<string, LiveOutput>;
  /** performance.now() when each run's elapsedMs was last set, so a live bar moves between events. */
  syncedAt: Record<string, number>;
  trees: Record<string, ProcTreeSnapshot>;
  /** When each piece of a run's output came, as this page saw it live (shared/output-times.ts); version bumps on a new mark. */
  marks: Record<string, { list: OutputMark[]; version: number }>;
  /** Each live run's telemetry as this page saw it (shared/telemetry.ts): the Runs sparklines and the live charts. */
  series: Record<string, TelemetrySeries>;
  signals: Record<string, SignalSent[]>;
  stopProgress: Record<string, StopProgress>;
  /** The last error any view reported; shown until dismissed. */
  error: string | null;
  /** Subscribed to a host's events and it can be reached: actions are offered only then. */
  connected: boolean;
  connection: Connection;
  /** performance.now() when the host went away: live clocks stand still at it until it is back. */
  offlineSince: number | null;
  /** The transport says the host went away, came back, or refused this page's login. */
  setConnection(connection: Connection): void;
  /** Reloads the live runs after missed events (a gap, a host that restarted); runs this page saw live and the host no longer lists are fetched whole. */
  resync(): Promise<void>;
  /** Subscribes to the API's events and loads the live runs; returns the disconnect function. */
  connect(api: WardenApi): () => void;
  /** A run fetched whole (live snapshot or from the history) into the store. */
  load(id: string): Promise<RunResult | null>;
  /** Records a result the page got from a call (start, stop, wait, extend). */
  put(result: RunResult): void;
  report(error: unknown): void;
  dismissError(): void;
}

/** A live run's output as the page holds it, and how many lines each stream has had (which never goes down, whatever the page's cap drops). */
export interface LiveOutput {
  stdout: string;
  stderr: string;
  stdoutLines: number;
  stderrLines: number;
  /**
   * Whether each stream's text ends mid-line, read from the chunks as they
   * come: checking the end of the whole text (endsWith) would make V8 flatten
   * the concatenated string, copying all of a run's output for every chunk.
   */
  stdoutOpen?: boolean;
  stderrOpen?: boolean;
}

/** Lines a text holds: its newlines, and one more for an unfinished last line. */
export function lineCount(text: string): number {
  if (text === '') return 0;
  const n = newlinesIn(text);
  return text.endsWith('\n') ? n : n + 1;
}

function newlinesIn(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/** Text of an error for a person: the API's one-line message. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}


/**
 * Live output kept per stream in the page: past this, the oldest part of the
 * middle is dropped (the head stays, as the engine keeps it) with a marker, so
 * a run printing without end cannot grow the page without bound. The ended
 * result, with the engine's own head and tail, replaces it.
 */
export const LIVE_OUTPUT_CAP = 4_000_000;
const LIVE_HEAD = 1_000_000;
const LIVE_MARKER = /^\n\[warden: ([\d,]+) characters not shown while live\]\n/;

export function capLive(text: string, cap = LIVE_OUTPUT_CAP, head = LIVE_HEAD): string {
  if (text.length <= cap) return text;
  const rest = text.slice(head);
  const previous = LIVE_MARKER.exec(rest);
  const already = previous ? Number(previous[1]!.replace(/,/g, '')) : 0;
  const body = previous ? rest.slice(previous[0].length) : rest;
  // Down to half the room: the next trim is far off, so views that split appended text incrementally rarely start over.
  const keep = Math.floor((cap - head) / 2);
  const dropped = already + Math.max(0, body.length - keep);
  return `${text.slice(0, head)}\n[warden: ${dropped.toLocaleString('en-US')} characters not shown while live]\n${body.slice(body.length - keep)}`;
}

/** performance.now() when the host went away, while it is away: liveElapsed stops there. */
let frozenAt: number | null = null;

export const useWarden = create<WardenState>()((set, get) => {
  let queue: RunEvent[] = [];

  /** The host's live and recent runs into the store; the ids it listed, or null when it could not be asked. */
  const loadList = async (api: WardenApi): Promise<Set<string> | null> => {
    let list: RunResult[];
    try {
      list = await api.list();
    } catch (error) {
      get().report(error);
      return null;
    }
    const now = performance.now();
    set((state) => {
      const runs = { ...state.runs };
      const syncedAt = { ...state.syncedAt };
      for (const run of list) {
        runs[run.id] = run;
        syncedAt[run.id] = now;
      }
      const known = new Set(state.order);
      const fresh = [...list].sort((a, b) => b.startedAt.localeCompare(a.startedAt)).map((r) => r.id).filter((id) => !known.has(id));
      return { runs, syncedAt, order: [...fresh, ...state.order].sort((a, b) => (runs[b]?.startedAt ?? '').localeCompare(runs[a]?.startedAt ?? '')) };
    });
    return new Set(list.map((r) => r.id));
  };
  let scheduled = false;

  const schedule = (fn: () => void) => {
    if (typeof requestAnimationFrame === 'function') requestAnimationFrame(fn);
    else setTimeout(fn, 16);
  };

  const flush = () => {
    scheduled = false;
    const events = queue;
    queue = [];
    if (events.length === 0) return;
    const now = performance.now();
    set((state) => {
      // Copy-on-write per field: a frame of output events changes `output` only, so
      // views that select runs, order or trees are not re-rendered for it.
      const changed: Partial<WardenState> = {};
      const draft = <K extends 'runs' | 'syncedAt' | 'output' | 'marks' | 'trees' | 'series' | 'signals' | 'stopProgress'>(key: K): WardenState[K] => {
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
            draft('runs')[id] = { ...event.snapshot, stdout: known?.stdout ?? event.snapshot.stdout, stderr: known?.stderr ?? event.snapshot.stderr };
            draft('syncedAt')[id] = now;
            break;
          }
          case 'output': {
            const run = runOf(id);
            if (!run) break;
            const output = draft('output');
            const current = output[id] ?? { stdout: run.stdout, stderr: run.stderr, stdoutLines: lineCount(run.stdout), stderrLines: lineCount(run.stderr) };
            const before = current[event.stream];
            const joined = before + event.text;
            // Lines the stream has had, counted by the chunk: the page's cap may drop some of them, never from this count.
            const key = event.stream === 'stdout' ? 'stdoutLines' : 'stderrLines';
            const openKey = event.stream === 'stdout' ? 'stdoutOpen' : 'stderrOpen';
            const wasOpen = current[openKey] ?? (before !== '' && !before.endsWith('\n'));
            const isOpen = event.text === '' ? wasOpen : !event.text.endsWith('\n');
            const lines = current[key] - (wasOpen ? 1 : 0) + newlinesIn(event.text) + (isOpen ? 1 : 0);
            output[id] = { ...current, [event.stream]: capLive(joined), [key]: lines, [openKey]: isOpen };
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
          case 'ended': {
            if (!runOf(id)) order = [id, ...order];
            draft('runs')[id] = event.result;
            draft('syncedAt')[id] = now;
            if ((changed.output ?? state.output)[id]) delete draft('output')[id];
            break;
          }
        }
      }
      if (order !== state.order) changed.order = order;
      return changed;
    });
  };

  return {
    api: null,
    runs: {},
    order: [],
    output: {},
    syncedAt: {},
    trees: {},
    marks: {},
    series: {},
    signals: {},
    stopProgress: {},
    error: null,
    connected: false,
    connection: 'online',
    offlineSince: null,

    connect(api) {
      set({ api, connected: true });
      const unsubscribe = api.subscribe((event) => {
        queue.push(event);
        if (!scheduled) {
          scheduled = true;
          schedule(flush);
        }
      });
      void loadList(api);
      return () => {
        unsubscribe();
        set({ connected: false });
      };
    },

    setConnection(connection) {
      const state = get();
      if (state.connection === connection) return;
      const offline = connection !== 'online';
      frozenAt = offline ? (state.offlineSince ?? performance.now()) : null;
      set({ connection, connected: !offline && state.api !== null, offlineSince: offline ? frozenAt : null });
      // Back: what happened meanwhile comes from the replayed events; the clocks restart from fresh snapshots.
      if (!offline && state.connection !== 'online') void get().resync();
    },

    async resync() {
      const api = get().api;
      if (!api) return;
      const listed = await loadList(api);
      if (!listed) return;
      const stale = Object.values(get().runs).filter((run) => run.state !== 'ended' && !listed.has(run.id));
      // Live here, unknown to the host now (it restarted): their stored result says how they ended (lost).
      await Promise.all(stale.map((run) => get().load(run.id)));
    },

    async load(id) {
      const api = get().api;
      if (!api) return null;
      try {
        const run = await api.get(id);
        if (run) get().put(run);
        return run;
      } catch (error) {
        get().report(error);
        return null;
      }
    },

    put(result) {
      set((state) => ({
        runs: { ...state.runs, [result.id]: result },
        // A final result carries the whole output; a live snapshot's output is older than what streamed in.
        ...(result.state === 'ended' && state.output[result.id] ? { output: withoutKey(state.output, result.id) } : {}),
        syncedAt: { ...state.syncedAt, [result.id]: performance.now() },
        order: state.order.includes(result.id) ? state.order : [result.id, ...state.order],
      }));
    },

    report(error) {
      set({ error: messageOf(error) });
    },

    dismissError() {
      set({ error: null });
    },
  };
});

function withoutKey<T>(record: Record<string, T>, key: string): Record<string, T> {
  const copy = { ...record };
  delete copy[key];
  return copy;
}

/** A run's output as the page knows it now: what streamed in while live, else the run's own. */
export function useRunOutput(run: Pick<RunResult, 'id' | 'stdout' | 'stderr'>): { stdout: string; stderr: string; stdoutLines?: number; stderrLines?: number } {
  const live = useWarden((s) => s.output[run.id]);
  return live ?? run;
}

/** A live run's elapsed time now: its last known elapsedMs plus the time since. */
export function liveElapsed(run: RunResult, syncedAt: number | undefined, now = performance.now(), frozen: number | null = frozenAt): number {
  if (run.state === 'ended' || syncedAt === undefined) return run.elapsedMs;
  // While the host is away nothing is known of the run: its clock stands still
  // at the moment the page lost it, whatever `now` is (a clock's timer reading
  // from before that moment would make the frozen figure step once more).
  const at = frozen === null ? now : frozen;
  return run.elapsedMs + Math.max(0, at - syncedAt);
}
