// The engine as a WardenApi: the in-process implementation the CLI, the
// Electron IPC handlers, the HTTP host and tests share. What it refuses is a
// WardenError (one line) whose kind the transports map (src/shared/errors.ts).

import type { HostInfo, WardenApi } from '../../shared/api';
import type { EventRecord, ListQuery, RunPage, RunSummary } from '../../shared/history';
import type { RunResult } from '../../shared/result';
import { streamLength } from '../../shared/stream-length';
import { DEFAULT_SETTINGS, type Settings } from '../../shared/settings';
import type { Supervisor } from './supervisor';

/** What the API reads of the history (the HistoryStore of src/main/store has these). */
export interface HistorySource {
  list(query?: ListQuery): RunPage;
  get(id: string): RunResult | null;
  events(id: string): EventRecord[];
}

export interface EngineApiOptions {
  /** The history: past runs for get, history and timeline. Without one, only runs in memory are known. */
  store?: HistorySource;
  /** Who answers host(); by default the supervisor's host id and this process, with no state dir and no TCP port. */
  host?: () => HostInfo;
  /** Where settings are kept (the host keeps them in its state dir); default: in memory. */
  settings?: { get(): Settings; save(settings: Settings): Settings };
}

/** A run without its output, with the output's length (a list, or a view that fetches the output in pages). */
function withoutOutput(run: RunResult): RunResult {
  return { ...run, stdout: '', stderr: '', outputChars: { stdout: streamLength(run.stdout, run.stdoutTruncated), stderr: streamLength(run.stderr, run.stderrTruncated) } };
}

/** What a list shows of a live service: its readiness and ports. */
function serviceFields(run: RunResult): Pick<RunSummary, 'ready' | 'ports'> {
  return { ...(run.ready !== undefined ? { ready: run.ready } : {}), ...(run.ports ? { ports: run.ports } : {}) };
}

export function engineApi(supervisor: Supervisor, options: EngineApiOptions = {}): WardenApi {
  const { store } = options;
  const startedAt = new Date().toISOString();
  let memorySettings: Settings = structuredClone(DEFAULT_SETTINGS);
  const settings = options.settings ?? { get: () => memorySettings, save: (s: Settings) => (memorySettings = structuredClone(s)) };
  return {
    start: async (request, on) => supervisor.start(request, on?.ownedBy ? { owner: on.ownedBy } : {}),
    stop: async (id, stopOptions) => supervisor.stop(id, stopOptions),
    wait: (id, waitOptions) => supervisor.wait(id, waitOptions),
    extend: async (id, byMs) => supervisor.extend(id, byMs),
    input: async (id, input) => supervisor.input(id, input),
    signal: (id, pid, signal) => supervisor.signal(id, pid, signal),
    get: async (id, getOptions) => {
      const run = supervisor.get(id) ?? store?.get(id) ?? null;
      return run && getOptions?.output === 'none' ? withoutOutput(run) : run;
    },
    // A listing for a list view: every run without its output, with the output's length.
    list: async (listOptions) => (listOptions?.output === 'none' ? supervisor.list().map(withoutOutput) : supervisor.list()),
    ports: async () => Object.fromEntries(supervisor.ports()),
    history: async (query = {}) => {
      if (!store) return { runs: [], nextCursor: null };
      // A query the store refuses (a bad cursor, time or limit) is already bad input (StoreQueryError).
      const page = store.list(query);
      // The store holds a live run as it started; this host knows where it stands now.
      return {
        ...page,
        runs: page.runs.map((run) => {
          if (run.state === 'ended') return run;
          const live = supervisor.get(run.id);
          return live ? { ...run, state: live.state, elapsedMs: live.elapsedMs, limitMs: live.limitMs, ...serviceFields(live) } : run;
        }),
      };
    },
    timeline: async (id) => store?.events(id) ?? [],
    subscribe: (listener) => supervisor.subscribe(listener),
    sessions: async () => supervisor.sessions(),
    restartSession: (name) => supervisor.restartSession(name),
    closeSession: (name) => supervisor.closeSession(name),
    settings: async () => settings.get(),
    saveSettings: async (next) => settings.save(next),
    host: async () =>
      options.host?.() ?? {
        hostId: supervisor.hostId,
        pid: process.pid,
        version: 'unknown',
        stateDir: '',
        startedAt,
        accepting: supervisor.accepting,
        history: store !== undefined,
        port: null,
      },
  };
}
