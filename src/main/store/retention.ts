// Keeps the history within N runs and B bytes of stored output, deleting the
// oldest ended runs first. A live run is never deleted (it is counted, so a
// history of live runs alone can stay over the bounds until they end).
// Deletes go in short transactions so other writers wait milliseconds at most.

import { all, one, run, transaction, type Database } from './sql';

export interface RetentionLimits {
  /** Default 50,000. */
  maxRuns?: number;
  /** UTF-8 bytes of stored output; default 2 GiB. */
  maxBytes?: number;
}

export const RETENTION_DEFAULTS = { maxRuns: 50_000, maxBytes: 2 * 1024 ** 3 } as const;

export interface PruneReport {
  removedRuns: number;
  removedBytes: number;
  keptRuns: number;
  keptBytes: number;
  /** Host records without runs left, removed with them. */
  removedHosts: number;
}

const BATCH = 500;
/** A host record with no runs and no heartbeat for this long is forgotten. */
const STALE_HOST_MS = 7 * 24 * 3600 * 1000;

function limit(value: number | undefined, fallback: number, name: string): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < 0) throw new RangeError(`${name} must be a whole number of at least 0, not ${JSON.stringify(value)}.`);
  return v;
}

export function prune(db: Database, limits: RetentionLimits = {}): PruneReport {
  const maxRuns = limit(limits.maxRuns, RETENTION_DEFAULTS.maxRuns, 'maxRuns');
  const maxBytes = limit(limits.maxBytes, RETENTION_DEFAULTS.maxBytes, 'maxBytes');
  const totals = one<{ runs: number; bytes: number }>(db, 'SELECT count(*) AS runs, coalesce(sum(output_bytes), 0) AS bytes FROM runs')!;
  let excessRuns = totals.runs - maxRuns;
  let excessBytes = totals.bytes - maxBytes;
  let removedRuns = 0;
  let removedBytes = 0;
  let after: [number, string] = [-Number.MAX_SAFE_INTEGER, ''];
  while (excessRuns > 0 || excessBytes > 0) {
    const oldest = all<{ n: number; id: string; started_at: number; output_bytes: number }>(
      db,
      `SELECT n, id, started_at, output_bytes FROM runs WHERE state = 'ended' AND (started_at, id) > (?, ?)
       ORDER BY started_at, id LIMIT ?`,
      after[0],
      after[1],
      BATCH,
    );
    if (oldest.length === 0) break; // only live runs are left
    const victims: number[] = [];
    for (const row of oldest) {
      if (excessRuns <= 0 && excessBytes <= 0) break;
      victims.push(row.n);
      excessRuns--;
      excessBytes -= row.output_bytes;
      removedBytes += row.output_bytes;
      after = [row.started_at, row.id];
    }
    // The FTS row goes with its run (trigger); output and events by ON DELETE CASCADE.
    transaction(db, () => run(db, `DELETE FROM runs WHERE state = 'ended' AND n IN (${victims.map(() => '?').join(', ')})`, ...victims));
    removedRuns += victims.length;
  }
  const removedHosts = transaction(db, () =>
    run(
      db,
      `DELETE FROM hosts WHERE (ended_at IS NOT NULL OR heartbeat_at < ?)
         AND NOT EXISTS (SELECT 1 FROM runs WHERE runs.host_id = hosts.host_id)`,
      Date.now() - STALE_HOST_MS,
    ).changes,
  );
  return { removedRuns, removedBytes, keptRuns: totals.runs - removedRuns, keptBytes: totals.bytes - removedBytes, removedHosts };
}
