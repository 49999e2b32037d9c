// This host and its remotes as the host says them: a remote that connects
// (again) has its runs fetched, and live remote runs are fetched again every
// few seconds whatever their events said.

import type { HostsSlice, Slice } from './state';

/** How often a live run of a remote host is fetched again, whatever its events said (setHosts). */
const REMOTE_RECONCILE_MS = 5_000;

export const createHostsSlice: Slice<HostsSlice> = (store) => {
  const { set, get } = store;
  return {
    hosts: [],

    setHosts(hosts) {
      // A remote run's events cross a link, where one can be lost (a stream that stalls without an error): each live
      // remote run is fetched again every REMOTE_RECONCILE_MS, so a lost end or step leaves it stale that long at most.
      const now = Date.now();
      if (now - store.lastReconcile >= REMOTE_RECONCILE_MS) {
        store.lastReconcile = now;
        const reachable = new Set(hosts.filter((h) => h.state === 'connected').map((h) => h.name));
        for (const run of Object.values(get().runs)) {
          const at = run.id.lastIndexOf('@');
          if (at > 0 && run.state !== 'ended' && reachable.has(run.id.slice(at + 1))) void get().load(run.id);
        }
      }
      const before = new Map(get().hosts.map((h) => [h.name, h]));
      const same = hosts.length === before.size && hosts.every((h) => before.get(h.name)?.state === h.state && before.get(h.name)?.lastError === h.lastError && before.get(h.name)?.connections === h.connections);
      if (same) return;
      set({ hosts });
      // A remote connected again (or for the first time, or it dropped and came back between two looks): its runs are fetched, those that ended meanwhile with them.
      if (hosts.some((h) => h.state === 'connected' && (before.get(h.name)?.state !== 'connected' || before.get(h.name)?.connections !== h.connections))) void get().resync();
    },
  };
};
