// The shape of the renderer's store: every field and action the views use,
// by concern. Each slice (runs-slice.ts, output-slice.ts, connection-slice.ts,
// hosts-slice.ts, telemetry-slice.ts) builds its part; index.ts joins them.

import type { StoreApi } from 'zustand';
import type { WardenApi } from '../../../shared/api';
import type { RunEvent } from '../../../shared/events';
import { FIRST_ENDED_PAGE } from '../../../shared/http-api';
import type { HostStatus } from '../../../shared/hosts';
import type { ProcTreeSnapshot } from '../../../shared/proc-tree';
import type { RunResult, SignalSent, StopStep } from '../../../shared/result';
import type { OutputMark } from '../../../shared/output-times';
import type { TelemetryDetail, TelemetrySeries } from '../../../shared/telemetry';
import type { PagedOutput } from '../output-pages';
import type { LiveOutput } from './live-output';

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

/** What a view that opens a run needs first: a link to a line far down its output fetches the page holding it with the first ones. */
export interface LoadOptions {
  /** 'all': the merged view's line, the stream's own when one stream alone has output. */
  line?: { stream: 'all' | 'stdout' | 'stderr'; line: number };
}

/** Lines before a linked line the page that brings it starts at: the view shows it with what led there. */
export const LINKED_CONTEXT_LINES = 200;
/** Pages asked at once while the rest of an ended run's output comes (they join in order as they come). */
export const PAGES_AT_ONCE = 4;
/** Ended runs asked of the history per page (the Runs view's first page and each "Show more"). */
export const ENDED_PAGE_SIZE = FIRST_ENDED_PAGE.limit;

/** The runs this page knows: their fields, their order, and the history's ended ones as the Runs view pages through them. */
export interface RunsSlice {
  /** Every run this page has seen: live ones, those ended while it was open, and any opened from History. */
  runs: Record<string, RunResult>;
  /** Run ids, newest first. */
  order: string[];
  /**
   * Runs held without their output (from a listing or a page of the history):
   * a view that shows output fetches the run whole first (load).
   */
  partial: Record<string, true>;
  /**
   * The ended runs the history holds, as the Runs view pages through them:
   * how many there are (null: not known, no history), the cursor of the next
   * page (null: none), and whether a page is on its way.
   */
  ended: { total: number | null; cursor: string | null; loading: boolean };
  /** performance.now() when each run's elapsedMs was last set, so a live bar moves between events. */
  syncedAt: Record<string, number>;
  /** Reloads the live runs after missed events (a gap, a host that restarted); runs this page saw live and the host no longer lists are fetched whole. */
  resync(): Promise<void>;
  /** The next page of ended runs from the history (Runs' "Show more"); resolves once it is in. */
  loadMoreEnded(): Promise<void>;
}

/** A run's output: live (merged from the stream), or an ended run's in pages. */
export interface OutputSlice {
  /**
   * Live output, apart from the run's other fields: a chunk of output changes
   * this and nothing else, so views that do not show output (the Runs list)
   * do not re-render for it. Dropped when the run's final result arrives.
   */
  output: Record<string, LiveOutput>;
  /**
   * Ended runs whose output is coming in pages (output-pages.ts): what is
   * held so far. Dropped once both streams are whole, when the run is held
   * whole with it.
   */
  pages: Record<string, PagedOutput>;
  /**
   * A run fetched into the store: an ended one (or one not known yet) without
   * its output, which then comes in pages (resolves once the first page of
   * each stream is in); a live one whole, its live output merged with the
   * stream by offset.
   */
  load(id: string, options?: LoadOptions): Promise<RunResult | null>;
  /** Records a result the page got from a call (start, stop, wait, extend). */
  put(result: RunResult): void;
}

/** What a live run's events said besides its output: its process tree, telemetry, output times and stop signals. */
export interface TelemetrySlice {
  trees: Record<string, ProcTreeSnapshot>;
  /** When each piece of a run's output came, as this page saw it live (shared/output-times.ts); version bumps on a new mark. */
  marks: Record<string, { list: OutputMark[]; version: number }>;
  /** Each live run's telemetry as this page saw it (shared/telemetry.ts): the Runs sparklines and the live charts. */
  series: Record<string, TelemetrySeries>;
  signals: Record<string, SignalSent[]>;
  stopProgress: Record<string, StopProgress>;
  /** A live run's series as the host has it (from its first sample), joined before what the page sampled. */
  seedSeries(id: string, host: TelemetryDetail): void;
}

/** The API this page talks to, whether it can be reached, and the last error a view reported. */
export interface ConnectionSlice {
  api: WardenApi | null;
  /** The last error any view reported; shown until dismissed. */
  error: string | null;
  /** Subscribed to a host's events and it can be reached: actions are offered only then. */
  connected: boolean;
  connection: Connection;
  /** performance.now() when the host went away: live clocks stand still at it until it is back. */
  offlineSince: number | null;
  /** The transport says the host went away, came back, or refused this page's login. */
  setConnection(connection: Connection): void;
  /** Subscribes to the API's events and loads the live runs; returns the disconnect function. */
  connect(api: WardenApi): () => void;
  report(error: unknown): void;
  dismissError(): void;
}

/** This host and its remotes. */
export interface HostsSlice {
  /**
   * This host and each configured remote with its connection state, as the
   * host last said (components/HostBar.tsx asks); empty until it first did,
   * or when the API relays no remotes.
   */
  hosts: HostStatus[];
  /** The hosts' states as the host said them now: a remote that came back has its runs fetched again. */
  setHosts(hosts: HostStatus[]): void;
}

export type WardenState = RunsSlice & OutputSlice & TelemetrySlice & ConnectionSlice & HostsSlice;

export type OutputEvent = Extract<RunEvent, { type: 'output' }>;

/**
 * What the slices share besides the state: the store's own set and get, and
 * the bookkeeping no view reads (events waiting for a frame, chunks waiting
 * for a snapshot), which would re-render views for nothing if it were state.
 */
export interface Store {
  set: StoreApi<WardenState>['setState'];
  get: () => WardenState;
  /** Events waiting for the next frame (flush), and whether one is asked for. */
  queue: RunEvent[];
  scheduled: boolean;
  /**
   * Output chunks of runs whose snapshot is on its way (load): merged onto it
   * by offset when it comes. A run with no snapshot held and none asked for
   * keeps nothing: a view that shows its output loads it first, and holds
   * from the moment it asks.
   */
  held: Map<string, OutputEvent[]>;
  /** Snapshots fetched again in a row for a run whose stream still had a gap past them. */
  refetches: Map<string, number>;
  /** Ended runs whose pages are being fetched: a second load of one joins the first. */
  paging: Map<string, Promise<RunResult | null>>;
  /** Date.now() when live remote runs were last fetched again (setHosts). */
  lastReconcile: number;
  /** Resolves once the event stream is open: a snapshot taken after it meets the stream with nothing missing between. */
  opened: Promise<void>;
}

/** A slice of the state, built on the shared store. */
export type Slice<T> = (store: Store) => T;

/** `fn` at the next frame (a timer where there are no frames, as in unit tests). */
export function schedule(fn: () => void): void {
  if (typeof requestAnimationFrame === 'function') requestAnimationFrame(fn);
  else setTimeout(fn, 16);
}

export function withoutKey<T>(record: Record<string, T>, key: string): Record<string, T> {
  const copy = { ...record };
  delete copy[key];
  return copy;
}

/** Text of an error for a person: the API's one-line message. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
