// The history store from the CLI, loaded only by the commands that open it
// themselves (an embedded run, list/show with no host running, history
// prune): a call through a running host never loads SQLite. A store that
// cannot be used never stops a run: the user is told in one line.

import { randomUUID } from 'node:crypto';
import { attachRecorder, openStore, openStoreReadOnly, StoreOpenError, type HistoryStore, type Recorder } from '../main/store';
import { bytes } from '../shared/format';
import { parseMemory } from '../main/supervisor/cgroup';
import type { Supervisor } from '../main/supervisor/supervisor';
import { flags, type HistorySource } from './history';
import { UsageError } from './parse';

export interface History {
  store: HistoryStore;
  recorder: Recorder;
  close(): Promise<void>;
}

/** Opens the store for a run and records it; null (with a one-line warning) when the store cannot be used. */
export async function recordHistory(supervisor: Supervisor, warn: (line: string) => void): Promise<History | null> {
  let store: HistoryStore;
  try {
    store = openStore();
  } catch (error) {
    warn(`warden: history is off for this run: ${error instanceof Error ? error.message : String(error)}`);
    return null;
  }
  if (store.movedAside) warn(`warden: ${store.movedAside.message}`);
  // One line at most about writing: the first failure says what and why; retries stay quiet.
  let told = false;
  const tell = (line: string) => {
    if (told) return;
    told = true;
    warn(line);
  };
  let recorder: Recorder;
  try {
    recorder = attachRecorder(store, supervisor, { onError: (e) => tell(`warden: history: ${e.message}`) });
  } catch (error) {
    // A history that opens but cannot be written (a read-only file or disk): the run goes on without it.
    store.close();
    warn(`warden: history is off for this run: Warden cannot write its history database ${store.path} (${error instanceof Error ? error.message : String(error)}). Make it writable, or set WARDEN_STATE_DIR to a writable directory.`);
    return null;
  }
  try {
    const report = await store.recoverLostRuns({ tearDown: true });
    if (report.recovered.length > 0) warn(`warden: recovered ${report.recovered.length} run(s) left live by a Warden that went away (see warden list --verdict lost).`);
  } catch (error) {
    warn(`warden: history: recovery failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  return {
    store,
    recorder,
    async close() {
      const status = await recorder.close();
      store.close();
      if (status.unrecorded.length > 0) tell(`warden: history: run ${status.unrecorded.map((r) => r.id).join(', ')} was not recorded (${status.unrecorded[0]!.why}).`);
    },
  };
}

function openForReading(readOnlyToo = false): HistoryStore {
  let store: HistoryStore;
  try {
    store = openStore();
  } catch (error) {
    if (!(error instanceof StoreOpenError)) throw error;
    if (!readOnlyToo || (error.problem !== 'read-only' && error.problem !== 'permission')) throw new UsageError(error.message);
    try {
      store = openStoreReadOnly(error);
    } catch {
      throw new UsageError(error.message);
    }
    process.stderr.write(`warden: the history is read-only here, shown as it is (${store.readOnly}).\n`);
    return store;
  }
  if (store.movedAside) process.stderr.write(`warden: ${store.movedAside.message}\n`);
  return store;
}


/** The store read directly (no host running): opened for the one call. */
/**
 * The store for list and show with no host running: runs a Warden left live
 * when it died are recorded as lost first (their leftovers torn down), so
 * nothing shows as running that no Warden runs.
 */
async function openRecovered(warn: (line: string) => void = (line) => process.stderr.write(`${line}\n`)): Promise<HistoryStore> {
  const store = openForReading(true);
  if (store.readOnly !== null) return store; // nothing can be recovered or written: shown as it is
  try {
    store.registerHost(randomUUID().replace(/-/g, '').slice(0, 12));
    const report = await store.recoverLostRuns({ tearDown: true });
    if (report.recovered.length > 0) warn(`warden: recovered ${report.recovered.length} run(s) left live by a Warden that went away (see warden list --verdict lost).`);
  } catch (error) {
    warn(`warden: history: recovery failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  return store;
}

export const storeSource: HistorySource = {
  page: async (query) => {
    const store = await openRecovered();
    try {
      return store.list(query);
    } finally {
      store.close();
    }
  },
  get: async (id) => {
    const store = await openRecovered();
    try {
      return store.get(id);
    } finally {
      store.close();
    }
  },
};


export function prune(args: string[], out: (text: string) => void): number {
  const f = flags(args, 'history prune', ['max-runs', 'max-bytes'], []);
  if (f.words.length > 0) throw new UsageError(`warden history prune takes no words; see warden history prune --help.`);
  const maxRunsText = f.values.get('--max-runs');
  const maxRuns = maxRunsText === undefined ? undefined : Number(maxRunsText);
  if (maxRuns !== undefined && (!Number.isInteger(maxRuns) || maxRuns < 0)) throw new UsageError(`--max-runs takes a whole number, not ${JSON.stringify(maxRunsText)}.`);
  const maxBytesText = f.values.get('--max-bytes');
  const maxBytes = maxBytesText === undefined ? undefined : parseMemory(maxBytesText, '--max-bytes');
  const store = openForReading();
  try {
    const report = store.prune({ ...(maxRuns !== undefined ? { maxRuns } : {}), ...(maxBytes !== undefined ? { maxBytes } : {}) });
    out(`Removed ${report.removedRuns} run(s) (${bytes(report.removedBytes)} of output); kept ${report.keptRuns} (${bytes(report.keptBytes)}).\n`);
    return 0;
  } finally {
    store.close();
  }
}
