// What the engine tells a watcher of its runs' scopes (the host's sentinel,
// src/main/host/sentinel.ts) so that it can end them if this process dies.

export interface ScopeWatch {
  /** A run's process group exists (true), or was torn down (false). */
  group(pgid: number, live: boolean): void;
  /** A run cgroup was made (true), or removed (false). */
  cgroup(dir: string, live: boolean): void;
  /** A run ended with its descendants kept as asked: its scope is never swept. */
  kept(scope: string): void;
}
