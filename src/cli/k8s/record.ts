// A pod's run written into this machine's history (warden k8s verdict),
// under the pod's host name, the way an embedded run writes its own: the
// store directly, beside any host that has it open (SQLite's WAL).

import { openStore, StoreOpenError } from '../../main/store';
import { value } from '../../main/store/sql';
import type { RunResult } from '../../shared/result';
import { UsageError } from '../parse';

/** 'recorded', or 'already' when the same pod's run is there from an earlier read. Another host's run by that id is never overwritten. */
export function recordImported(result: RunResult, hostId: string): 'recorded' | 'already' {
  let store;
  try {
    store = openStore();
  } catch (error) {
    if (error instanceof StoreOpenError) throw new UsageError(`The history cannot be written: ${error.message}`);
    throw error;
  }
  try {
    if (store.movedAside) process.stderr.write(`warden: ${store.movedAside.message}\n`);
    const owner = value<string>(store.db, 'SELECT host_id FROM runs WHERE id = ?', result.id);
    if (owner === hostId) return 'already';
    if (owner !== undefined) throw new UsageError(`The history already has a run ${result.id} of another host (${owner}): the pod's run is not recorded over it.`);
    store.recordResult(result, hostId);
    return 'recorded';
  } finally {
    store.close();
  }
}
