// The local host's API as the app and the web UI use it: this host's engine
// and every configured remote's host behind one WardenApi. A remote's run is
// `ID@HOST` (shared/hosts.ts); a call naming one goes to that remote over
// its link (remote-hosts.ts) and its answer comes back named the same way.
// A local id goes to the engine exactly as before, so the CLI and agents,
// which never name a remote here, see what they always saw: the lists take
// remote runs only when asked (list hosts=all, history host=NAME or *).

import type { HistoryQuery, ListOptions, ProcessSignal, StartOn, WaitOptions, WardenApi } from '../../shared/api';
import type { RunEvent } from '../../shared/events';
import type { EventRecord, RunPage, RunSummary, VerdictCounts } from '../../shared/history';
import { ALL_HOSTS, HOST_NAME, LOCAL_HOST, splitRunId, type HostStatus } from '../../shared/hosts';
import type { RunRequest } from '../../shared/request';
import type { RunResult } from '../../shared/result';
import { WardenInputError } from '../supervisor/errors';
import { relayRun, type RemoteHosts } from './remote-hosts';
import { outputPage } from './output-page';
import { OUTPUT_PAGE_DEFAULT_CHARS } from '../../shared/http-api';

/**
 * The order a merged page keeps, as each host's history sorts (descending;
 * a missing figure last). Were it ever to differ from a host's own order, a
 * merged page would interleave less neatly, but the cursors per host still
 * skip and repeat nothing.
 */
function comparator(sort: HistoryQuery['sort'], order: HistoryQuery['order']): (a: RunSummary, b: RunSummary) => number {
  const figure = (run: RunSummary): number | string | null => (sort === 'elapsed' ? run.elapsedMs : sort === 'peak' ? run.peakRssBytes : run.startedAt);
  const sign = order === 'asc' ? -1 : 1;
  return (a, b) => {
    const x = figure(a);
    const y = figure(b);
    if (x === null || y === null) return x === y ? 0 : x === null ? 1 : -1;
    const byFigure = typeof x === 'number' && typeof y === 'number' ? y - x : String(y).localeCompare(String(x));
    return sign * (byFigure || b.startedAt.localeCompare(a.startedAt));
  };
}

/** A merged page's cursor: each host's own cursor ('': from its start, nothing taken yet; null: that host is done). */
type Cursors = Record<string, string | null>;

function encodeCursors(cursors: Cursors): string | null {
  return Object.values(cursors).some((c) => c !== null) ? `h:${Buffer.from(JSON.stringify(cursors)).toString('base64url')}` : null;
}

function decodeCursors(cursor: string): Cursors {
  try {
    if (!cursor.startsWith('h:')) throw new Error('not a merged cursor');
    const parsed = JSON.parse(Buffer.from(cursor.slice(2), 'base64url').toString('utf8')) as unknown;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
    for (const [name, value] of Object.entries(parsed)) if ((name !== LOCAL_HOST && !HOST_NAME.test(name)) || (value !== null && typeof value !== 'string')) throw new Error('bad entry');
    return parsed as Cursors;
  } catch {
    throw new WardenInputError('The cursor is not one a history page of all hosts gave.');
  }
}

function addCounts(into: VerdictCounts | undefined, more: VerdictCounts | undefined): VerdictCounts | undefined {
  if (!more) return into;
  const sum: VerdictCounts = { ...(into ?? { total: 0 }) };
  for (const [key, value] of Object.entries(more)) (sum as Record<string, number>)[key] = ((sum as Record<string, number>)[key] ?? 0) + (value ?? 0);
  return sum;
}

export interface FederatedApi extends WardenApi {
  hosts(): Promise<HostStatus[]>;
}

export function federate(local: WardenApi, remotes: RemoteHosts, localSince: string): FederatedApi {
  /** The API a run id belongs to, and the id that API knows it by. */
  const route = (ref: string): { api: WardenApi; id: string; host: string | null } => {
    const split = splitRunId(ref);
    if (!split) throw new WardenInputError(`A run id is 6 to 32 hex characters, or that and @HOST for a remote's run, not ${JSON.stringify(ref.slice(0, 80))}.`);
    return { api: split.host === null ? local : remotes.api(split.host), id: split.id, host: split.host };
  };

  /** Calls a remote (or the local engine) and names the answer's run with its host. */
  const onRun = async (ref: string, call: (api: WardenApi, id: string) => Promise<RunResult>): Promise<RunResult> => {
    const { api, id, host } = route(ref);
    if (host === null) return call(api, id);
    try {
      return relayRun(await call(api, id), host);
    } catch (error) {
      remotes.failed(host, error);
      throw error;
    }
  };

  const remoteHistory = async (name: string, query: HistoryQuery): Promise<RunPage> => {
    const api = remotes.api(name);
    try {
      const page = await api.history(query);
      return { ...page, runs: page.runs.map((r) => relayRun(r, name)) };
    } catch (error) {
      remotes.failed(name, error);
      throw error;
    }
  };

  /**
   * Every connected host's history, merged newest first. Each host is asked
   * for a page from its own cursor; the merged page takes the newest `limit`;
   * a host whose rows were not all taken is asked again for just the rows
   * taken, for the cursor after them, so the next merged page starts where
   * this one ended on every host, none skipped or shown twice.
   */
  const allHistory = async (query: Omit<HistoryQuery, 'host'>): Promise<RunPage> => {
    const limit = query.limit ?? 50;
    const from: Cursors = query.cursor ? decodeCursors(query.cursor) : Object.fromEntries([LOCAL_HOST, ...remotes.connected()].map((n) => [n, '']));
    const asked = Object.keys(from).filter((name) => from[name] !== null);
    const ask = (name: string, q: HistoryQuery) => (name === LOCAL_HOST ? local.history(q) : remoteHistory(name, q));
    const pages = await Promise.all(
      asked.map(async (name) => {
        try {
          return { name, page: await ask(name, { ...query, limit, cursor: from[name] || null }) };
        } catch (error) {
          // A remote that went away meanwhile is left out of this page (its state says why); the local host's failure is the answer's.
          if (name === LOCAL_HOST) throw error;
          return { name, page: null };
        }
      }),
    );
    const order = comparator(query.sort, query.order);
    const merged = pages.flatMap(({ name, page }) => (page?.runs ?? []).map((run) => ({ name, run }))).sort((a, b) => order(a.run, b.run));
    const taken = merged.slice(0, limit);
    const next: Cursors = {};
    let counts: VerdictCounts | undefined;
    await Promise.all(
      pages.map(async ({ name, page }) => {
        if (!page) {
          next[name] = from[name] ?? null;
          return;
        }
        counts = addCounts(counts, page.counts);
        const used = taken.filter((t) => t.name === name).length;
        if (used === page.runs.length) next[name] = page.nextCursor;
        else if (used === 0) next[name] = from[name] ?? null;
        else next[name] = (await ask(name, { ...query, counts: false, limit: used, cursor: from[name] || null })).nextCursor;
      }),
    );
    return { runs: taken.map((t) => t.run), nextCursor: encodeCursors(next), ...(counts ? { counts } : {}) };
  };

  const api: FederatedApi = {
    async start(request: RunRequest, on: StartOn = {}) {
      if (on.host === undefined || on.host === LOCAL_HOST) return local.start(request, on.ownedBy ? { ownedBy: on.ownedBy } : {});
      const remote = remotes.api(on.host);
      try {
        return relayRun(await remote.start(request), on.host);
      } catch (error) {
        remotes.failed(on.host, error);
        throw error;
      }
    },
    stop: (ref, options) => onRun(ref, (a, id) => a.stop(id, options)),
    wait: (ref, options?: WaitOptions) => onRun(ref, (a, id) => a.wait(id, options)),
    extend: (ref, byMs) => onRun(ref, (a, id) => a.extend(id, byMs)),
    input: (ref, input) => onRun(ref, (a, id) => a.input(id, input)),
    // This host's runs: a remote's are asked of it (warden --remote NAME ports).
    ...(local.ports ? { ports: () => local.ports!() } : {}),
    signal: (ref, pid, signal: ProcessSignal) => onRun(ref, (a, id) => a.signal(id, pid, signal)),
    async get(ref, options) {
      const { api: target, id, host } = route(ref);
      if (host === null) return target.get(id, options);
      try {
        const run = await target.get(id, options);
        return run ? relayRun(run, host) : null;
      } catch (error) {
        remotes.failed(host, error);
        throw error;
      }
    },
    // A remote's run: its host answers the page, so only the page crosses the link.
    async output(ref, range) {
      const { api: target, id, host } = route(ref);
      if (host === null) return outputPage(target, id, { offset: 0, limit: OUTPUT_PAGE_DEFAULT_CHARS, ...range });
      try {
        const page = await outputPage(target, id, { offset: 0, limit: OUTPUT_PAGE_DEFAULT_CHARS, ...range });
        return { ...page, id: `${page.id}@${host}` };
      } catch (error) {
        remotes.failed(host, error);
        throw error;
      }
    },
    async timeline(ref): Promise<EventRecord[]> {
      const { api: target, id, host } = route(ref);
      if (host === null) return target.timeline(id);
      const records = await target.timeline(id).catch((error: unknown) => {
        remotes.failed(host, error);
        throw error;
      });
      return records.map((r) => ({ ...r, runId: `${r.runId}@${host}` }));
    },
    async list(options: ListOptions = {}) {
      const { hosts, ...rest } = options;
      const mine = await local.list(rest);
      if (hosts !== 'all') return mine;
      const theirs = await Promise.all(
        remotes.connected().map(async (name) => {
          try {
            return (await remotes.api(name).list(rest)).map((run) => relayRun(run, name));
          } catch (error) {
            remotes.failed(name, error);
            return [];
          }
        }),
      );
      return [...mine, ...theirs.flat()];
    },
    async history(query: HistoryQuery = {}) {
      const { host, ...rest } = query;
      if (host === undefined || host === LOCAL_HOST) return local.history(rest);
      if (host === ALL_HOSTS) return allHistory(rest);
      return remoteHistory(host, rest);
    },
    subscribe(listener: (event: RunEvent) => void, options) {
      const mine = local.subscribe(listener, options);
      const theirs = remotes.subscribe(listener);
      return () => {
        mine();
        theirs();
      };
    },
    sessions: () => local.sessions(),
    restartSession: (name) => local.restartSession(name),
    closeSession: (name) => local.closeSession(name),
    host: () => local.host(),
    hosts: async () => remotes.statuses(localSince),
    settings: () => local.settings(),
    saveSettings: (settings) => local.saveSettings(settings),
  };
  return api;
}
