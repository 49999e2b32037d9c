// What the store tells its caller when storage is unusable or a write fails.
// Messages are one line: what happened, the path, and what to do.

import { WardenError } from '../../shared/errors';

export type StoreOpenProblem = 'directory' | 'permission' | 'read-only' | 'newer-schema' | 'unusable' | 'unsafe';

/** The database cannot be opened as it is; nothing was changed on disk. */
export class StoreOpenError extends WardenError {
  override name = 'StoreOpenError';
  constructor(
    readonly path: string,
    readonly problem: StoreOpenProblem,
    message: string,
  ) {
    super('unavailable', message);
  }
}

/** A write that failed; it stays queued and is retried. */
export interface StoreWriteError {
  /** One line for a person: what failed, where, and that it is retried. */
  message: string;
  /** SQLite's code (SQLITE_BUSY, SQLITE_FULL, SQLITE_READONLY, ...), CLOSED, or UNKNOWN. */
  code: string;
  /** Failed attempts in a row so far. */
  attempt: number;
  /** Milliseconds until the next attempt; null when the write was given up (see `dropped`). */
  retryInMs: number | null;
  /** Runs with writes still waiting. */
  pendingRuns: number;
  /** What was given up, when the queue's bound was reached or a write could never succeed. */
  dropped?: string;
  cause: unknown;
}

/** A damaged database moved aside at open; a fresh one was started in its place. */
export interface MovedAside {
  from: string;
  to: string;
  /** SQLite's description of the damage. */
  reason: string;
  /** What was saved from it into the fresh history, when anything could be read. */
  salvage?: import('./salvage').SalvageReport;
  /** One line to show the person. */
  message: string;
}
