// The runs this page knows: the host's list (live and recent runs, without
// output) and the history's ended runs page by page, merged so a run held
// whole keeps its output; resync after missed events.

import type { WardenApi } from '../../../shared/api';
import type { RunPage } from '../../../shared/history';
import { ALL_HOSTS, LOCAL_HOST } from '../../../shared/hosts';
import { FIRST_ENDED_PAGE, FIRST_LIST } from '../../../shared/http-api';
import type { RunResult } from '../../../shared/result';
import { fromSummary } from './run-fields';
import { ENDED_PAGE_SIZE, withoutKey, type RunsSlice, type Slice, type Store } from './state';

/** Listed runs into the store: a run held whole keeps its output; one not held is kept partial (no output). */
export function mergeListed({ set }: Store, listed: RunResult[]): void {
  const now = performance.now();
  set((state) => {
    const runs = { ...state.runs };
    const syncedAt = { ...state.syncedAt };
    const partial = { ...state.partial };
    let output = state.output;
    for (const run of listed) {
      const known = runs[run.id];
      const whole = known !== undefined && !partial[run.id];
      if (whole && known.state === 'ended') continue;
      if (whole && run.state !== 'ended') {
        const { outputChars: _omitted, ...fields } = run;
        runs[run.id] = { ...fields, stdout: known.stdout, stderr: known.stderr, stdoutTruncated: known.stdoutTruncated, stderrTruncated: known.stderrTruncated };
      } else {
        runs[run.id] = run;
        partial[run.id] = true;
        if (run.state === 'ended' && output[run.id]) output = withoutKey(output, run.id);
      }
      syncedAt[run.id] = now;
    }
    const order = [...new Set([...state.order, ...listed.map((r) => r.id)])].sort((a, b) => (runs[b]?.startedAt ?? '').localeCompare(runs[a]?.startedAt ?? ''));
    return { runs, syncedAt, partial, output, order };
  });
}

/** The host's live and recent runs (without output) and the history's first page of ended ones; the ids the host listed, or null when it could not be asked. */
export async function loadList(store: Store, api: WardenApi, withHistory = true): Promise<Set<string> | null> {
  let list: RunResult[];
  let page: RunPage | null;
  try {
    [list, page] = await Promise.all([
      // Every connected host's runs: the local host relays its remotes' (src/shared/hosts.ts).
      api.list(FIRST_LIST),
      // A host without a history answers an empty page; one that fails to answer leaves the live list alone.
      withHistory ? api.history(FIRST_ENDED_PAGE).catch(() => null) : null,
    ]);
  } catch (error) {
    store.get().report(error);
    return null;
  }
  mergeListed(store, [...list, ...(page?.runs ?? []).map(fromSummary)]);
  if (page) {
    const total = page.counts ? page.counts.total - (page.counts.live ?? 0) : null;
    store.set({ ended: { total, cursor: page.nextCursor, loading: false } });
  }
  return new Set(list.map((r) => r.id));
}

export const createRunsSlice: Slice<RunsSlice> = (store) => {
  const { set, get } = store;
  return {
    runs: {},
    order: [],
    partial: {},
    ended: { total: null, cursor: null, loading: false },
    syncedAt: {},

    async resync() {
      const api = get().api;
      if (!api) return;
      const listed = await loadList(store, api);
      if (!listed) return;
      const { runs, output } = get();
      // A remote that cannot be reached now lists nothing: its runs keep what was last seen, marked unreachable, until it is back.
      const reachable = new Set([LOCAL_HOST, ...get().hosts.filter((h) => h.state === 'connected').map((h) => h.name)]);
      const stale = Object.values(runs).filter((run) => run.state !== 'ended' && !listed.has(run.id) && reachable.has(run.host ?? LOCAL_HOST));
      // Live here, unknown to the host now (it restarted): their stored result says how they ended (lost).
      // Live runs whose output the page shows: fetched again and merged by offset (events may have been missed).
      const shown = Object.keys(output).filter((id) => listed.has(id) && runs[id]?.state !== 'ended');
      await Promise.all([...stale.map((run) => run.id), ...shown].map((id) => get().load(id)));
    },

    async loadMoreEnded() {
      const { api, ended } = get();
      if (!api || ended.loading || ended.cursor === null) return;
      set({ ended: { ...ended, loading: true } });
      try {
        const page = await api.history({ state: 'ended', limit: ENDED_PAGE_SIZE, cursor: ended.cursor, host: ALL_HOSTS });
        mergeListed(store, page.runs.map(fromSummary));
        set((state) => ({ ended: { ...state.ended, cursor: page.nextCursor, loading: false } }));
      } catch (error) {
        set((state) => ({ ended: { ...state.ended, loading: false } }));
        get().report(error);
      }
    },
  };
};
