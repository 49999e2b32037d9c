// The one API every client uses: the renderer through the preload (IPC) or
// over HTTP + SSE in web mode, the CLI over the control socket or in process,
// agents over the control socket or loopback TCP, and tests. The engine
// implements it once (src/main/supervisor/api.ts); the HTTP client
// (src/shared/http-api.ts) implements it over any transport.

import type { RunEvent } from './events';
import type { EventRecord, ListQuery, RunPage } from './history';
import type { RunRequest } from './request';
import type { ListeningPort, RunOwner, RunResult, SessionInfo } from './result';
import type { HostStatus } from './hosts';
import type { Settings } from './settings';
import type { SearchAnswer, SearchQuery } from './search';

/** Characters of each stream, counted from the start of the run's output (nothing dropped by the cap is uncounted). */
export interface OutputOffsets {
  stdout: number;
  stderr: number;
}

export interface ListOptions {
  /** 'none': the runs without their output (stdout and stderr empty, their lengths in `outputChars`). */
  output?: 'all' | 'none';
  /** 'all': the runs of every connected remote host too, each named `ID@HOST` with `host` set (the app's lists). */
  hosts?: 'all';
}

export interface GetOptions {
  /** 'none': the run without its output (stdout and stderr empty, their lengths in `outputChars`), for a view that fetches the output in pages. */
  output?: 'all' | 'none';
}

/** One range of one stream of a run's output, as its result keeps it (offsets in characters of the kept text). */
export interface OutputRange {
  stream: 'stdout' | 'stderr';
  /** Default 0. */
  offset?: number;
  /**
   * The page starts at the start of this line of the stream's kept text
   * (1-based), in place of an offset: a link to line 150,000 fetches the page
   * that holds it first. Past the last line: an empty page at the end.
   */
  line?: number;
  /** Characters at most, 1 to OUTPUT_PAGE_MAX_CHARS (http-api.ts); default OUTPUT_PAGE_DEFAULT_CHARS. */
  limit?: number;
}

/**
 * GET /runs/ID/output: characters [offset, next) of one stream of the run as
 * its result holds it (the same text and offsets as `warden show --stream
 * --offset --max-chars`; a stream the cap cut keeps its drop marker), and how
 * long that text is now (`total`; a live run's grows). An offset past the end
 * answers an empty page at the end.
 */
export interface OutputPage {
  id: string;
  stream: 'stdout' | 'stderr';
  offset: number;
  text: string;
  next: number;
  total: number;
  state: RunResult['state'];
  /** The line (1-based) of the kept text the page's first character is on; absent from a host that does not say. */
  firstLine?: number;
  /** How many lines the stream's kept text has (a final newline ends the last); absent from a host that does not say. */
  lines?: number;
}

export interface SubscribeOptions {
  /** The subscription is in place: snapshots taken from now on meet the events at their offsets. */
  onOpen?: () => void;
}

export interface WaitOptions {
  /** Return the running snapshot when this passes before the run ends (a yield). */
  timeoutMs?: number;
  /**
   * Which output the result carries: 'all' (default); 'unseen': only what no
   * earlier yielded 'unseen' answer of this run returned, so a yielded run
   * continued by another client repeats nothing; or explicit offsets to start
   * each stream from. A yielded (still running) answer marks what it returned;
   * the final answer marks nothing, so every waiter gets the same end.
   */
  output?: 'all' | 'unseen' | OutputOffsets;
  /**
   * Return when this is met (or the run ends, or timeoutMs passes): 'ready'
   * (its readiness probes all passed, or its ready timeout passed), or a line
   * of output matching `log:/REGEX/[flags]`. The answer's `until` says
   * whether it was met and the line that matched.
   */
  until?: string;
  /** With a log `until`: 'now' (default) looks at output that comes after the call; 'start' at all of it. */
  since?: 'now' | 'start';
}

/** Input for a live run's stdin pipe: text, and/or the end of input. */
export interface InputOptions {
  text?: string;
  /** Close its stdin after the text (the process reads end of file). */
  eof?: boolean;
}

/** History queries as they travel: times as ms since the epoch or ISO 8601. */
export type HistoryQuery = Omit<ListQuery, 'since' | 'until'> & {
  since?: number | string;
  until?: number | string;
  /** Whose history: absent or 'local', this host's; a remote's name, that remote's; '*', every connected host's merged (src/shared/hosts.ts). */
  host?: string;
};

/** Where a run starts: absent, this host; a configured remote's name, on that remote. */
export interface StartOn {
  host?: string;
  /**
   * The process it belongs to, recorded in its result's `owner`: the host sets
   * it from the start's ownerPid (an HTTP client names its owner with
   * StartOptions.ownerPid, which the host checks; this field is not sent).
   */
  ownedBy?: RunOwner;
}

export interface HostInfo {
  hostId: string;
  pid: number;
  version: string;
  stateDir: string;
  /** ISO 8601. */
  startedAt: string;
  /** Whether new runs are taken (false while the host shuts down). */
  accepting: boolean;
  /** Whether a history store is attached. */
  history: boolean;
  /** Why no history is written (one line), when none is. */
  historyOff?: string | null;
  /** What happened to the history's file while this host ran (salvaged, recreated, re-recorded; and a damaged file moved aside at its start), oldest first, at most 20: one line each, for clients to show. */
  historyNotices?: { at: string; line: string }[];
  /** The loopback TCP port when the host listens on one (token in <stateDir>/run/token), else null. */
  port: number | null;
  /** A host that exits by itself after this long with no live run and no client (a background host a command started); absent or null: it stays. */
  idleExitMs?: number | null;
  /**
   * Why this host's runs would outlive it if it were killed now (no sentinel
   * runs: turned off, could not start, or kept dying), one line; null or
   * absent: they are covered.
   */
  uncovered?: string | null;
  /** The sentinel running now (null while none is) and how many times one died and was replaced. */
  sentinel?: { pid: number | null; restarts: number } | null;
  /** File descriptors: open now, the soft RLIMIT_NOFILE, and the reserve below which new runs are refused (503); null where unknown. */
  descriptors?: { open: number; limit: number; reserve: number } | null;
}

/** The signals a person may send to one process of a run (Process tree, "Send signal"). */
export const PROCESS_SIGNALS = ['TERM', 'KILL'] as const;
export type ProcessSignal = (typeof PROCESS_SIGNALS)[number];

export interface WardenApi {
  /**
   * Starts a command run (argv) or a Python script in a session (code); resolves
   * with its first snapshot: 'running', 'queued' behind a busy session's script,
   * or 'ended' when it could not start. A busy session refuses (rejects) when the
   * request says onBusy: 'refuse'.
   */
  start(request: RunRequest, on?: StartOn): Promise<RunResult>;
  /** Runs the stop sequence now; `force` sends SIGKILL at once; `note` (one line) says why, in the result's notes. Resolves with the current snapshot. */
  stop(id: string, options?: { force?: boolean; note?: string }): Promise<RunResult>;
  /** The final result, or the running snapshot when `timeoutMs` passes first. */
  wait(id: string, options?: WaitOptions): Promise<RunResult>;
  /**
   * Moves a live run's deadline `byMs` later (a run with no limit gets one of
   * its elapsed time plus `byMs`). Refused once the stop sequence has begun.
   * Resolves with the snapshot carrying the new limitMs.
   */
  extend(id: string, byMs: number): Promise<RunResult>;
  /**
   * Writes text to a live run's stdin pipe (a run started with stdinPipe),
   * and/or closes it (eof). Refused for a run without one, an ended run, or
   * a closed pipe. Recorded on the run's timeline. Resolves with the snapshot.
   */
  input(id: string, input: InputOptions): Promise<RunResult>;
  /**
   * Sends SIGTERM or SIGKILL to one process of a live run: `pid` must be in
   * the run's process tree as the sampler sees it now (a fresh sample), so
   * no other run's process, nor one outside Warden, is ever signalled. The
   * signal is recorded on the run's timeline. Resolves with the snapshot.
   */
  signal(id: string, pid: number, signal: ProcessSignal): Promise<RunResult>;
  /** A live run's snapshot, else its stored result from the history, else null. `output: 'none'`: without its output (outputChars says how long it is). */
  get(id: string, options?: GetOptions): Promise<RunResult | null>;
  /**
   * One page of one stream of a run's output (GET /runs/ID/output): what a
   * view of a large run fetches instead of the run whole. Absent where the
   * API has no such call (the engine in a CLI process): the host's code
   * then slices what get answers (src/main/host/output-page.ts).
   */
  output?(id: string, range: OutputRange): Promise<OutputPage>;
  /**
   * Searches runs' kept output for a pattern (GET /search): one run, or the
   * newest runs the history names; bounded per call, continued by a cursor
   * (src/main/host/search/). Absent where the API has no host behind it.
   */
  search?(query: SearchQuery): Promise<SearchAnswer>;
  /**
   * The runs this host holds in memory: live ones and the most recently ended.
   * `output: 'none'`: a listing, each run with empty stdout and stderr and
   * `outputChars` saying how long they are (a list view needs no output; the
   * detail fetches it with get).
   */
  list(options?: ListOptions): Promise<RunResult[]>;
  /**
   * Every live run's listening TCP ports by run id (GET /ports; `warden
   * ports`). Absent where the API has no such call (the app's IPC: the
   * runs' snapshots carry their ports).
   */
  ports?(): Promise<Record<string, ListeningPort[]>>;
  /** A page of past and live runs from the history, newest first. */
  history(query?: HistoryQuery): Promise<RunPage>;
  /** One run's recorded timeline (start, signals, limit changes, end). */
  timeline(id: string): Promise<EventRecord[]>;
  /**
   * Live events of every run; returns the unsubscribe function. `onOpen`:
   * called once the subscription is in place (every event from then on
   * reaches the listener), so a client can take a snapshot after it and merge
   * the two by offset. A transport without that notion calls it at once.
   */
  subscribe(listener: (event: RunEvent) => void, options?: SubscribeOptions): () => void;
  /** Every Python session. */
  sessions(): Promise<SessionInfo[]>;
  /** Kills the session's interpreter (a running script ends with it); the next script starts a fresh one. */
  restartSession(name: string): Promise<SessionInfo>;
  /** Stops its scripts (queued and running), closes its interpreter and forgets the session. */
  closeSession(name: string): Promise<SessionInfo>;
  /** Who answers: the host's id, pid, version and state dir. */
  host(): Promise<HostInfo>;
  /**
   * This host and each configured remote with its connection state (the
   * app's host bar). Absent where the API is one host's alone (the engine
   * in a CLI process).
   */
  hosts?(): Promise<HostStatus[]>;
  /** The stored settings (defaults of the New run form, retention). */
  settings(): Promise<Settings>;
  /** Stores the settings whole; resolves with what was stored. */
  saveSettings(settings: Settings): Promise<Settings>;
}

/** IPC channel names shared by the main process and the preload. */
export const IPC = {
  start: 'warden:start',
  stop: 'warden:stop',
  wait: 'warden:wait',
  extend: 'warden:extend',
  input: 'warden:input',
  signal: 'warden:signal',
  get: 'warden:get',
  output: 'warden:output',
  list: 'warden:list',
  history: 'warden:history',
  timeline: 'warden:timeline',
  sessions: 'warden:sessions',
  restartSession: 'warden:restart-session',
  closeSession: 'warden:close-session',
  host: 'warden:host',
  hosts: 'warden:hosts',
  settings: 'warden:settings',
  saveSettings: 'warden:save-settings',
  event: 'warden:event',
} as const;
