// (l) A history of N ended runs written straight into a state dir's database
// before a host opens it: one transaction of writeEnded (row, output,
// full-text row, end events), with the same synthetic runs as bench/store.ts.

import { writeEnded } from '../src/main/store/rows';
import { transaction } from '../src/main/store/sql';
import { openStore } from '../src/main/store/store';
import { syntheticRun } from './store';

/** Writes `runs` ended runs into the history of `stateDir`; returns the ms it took. */
export function seedHistory(stateDir: string, runs: number): number {
  const t = performance.now();
  const store = openStore({ dir: stateDir });
  try {
    const t0 = Date.now() - runs * 1000 - 60_000;
    transaction(store.db, () => {
      for (let i = 0; i < runs; i++) writeEnded(store.db, 'bench-seed', syntheticRun(i, t0));
    });
  } finally {
    store.close();
  }
  return performance.now() - t;
}
