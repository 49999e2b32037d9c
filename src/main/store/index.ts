// The history store's public face: what the host, the CLI and the app use.
//
// A host's life with the store (the app, `warden serve`, the embedded CLI):
//
//   const store = openStore();                       // throws StoreOpenError (one line) when unusable
//   if (store.movedAside) tell(store.movedAside.message);
//   store.registerHost(supervisor.hostId);           // pid, start time, boot id, heartbeat
//   await store.recoverLostRuns({ tearDown: true }); // gone hosts' live runs become `lost`, once
//   store.prune();                                   // 50,000 runs / 2 GiB unless told otherwise
//   const recorder = attachRecorder(store, supervisor, { onError: (e) => log(e.message) });
//   ...
//   await supervisor.shutdown();
//   await recorder.close();                          // writes what is pending (bounded wait)
//   store.close();                                   // records an orderly end of the host
//
// Readers (`warden list`, `warden show`) only open it: store.list / get / events / countsByVerdict.

export { openStore, HistoryStore, DB_FILE, type OpenStoreOptions } from './store';
export { resolveStateDir } from '../../client/state-dir';
export { ensureStateDir } from './state-dir';
export { attachRecorder, type Recorder, type RecorderOptions, type RunSource } from './recorder';
export { StoreOpenError, type MovedAside, type StoreWriteError } from './errors';
export { StoreQueryError, type ListQuery, type RunPage, type RunSummary, type VerdictCounts, type TimeBound } from './queries';
export { RETENTION_DEFAULTS, type PruneReport, type RetentionLimits } from './retention';
export type { RecoverOptions, RecoveredRun, RecoveryReport } from './recovery';
export type { EventRecord } from './rows';
export type { WriterStatus } from './writer';
