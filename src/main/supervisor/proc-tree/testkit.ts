// For the process-tree tests: walking a snapshot, and samplers closed after each test.

import { afterEach } from 'vitest';
import type { ProcNode, ProcTreeSnapshot } from '../../../shared/proc-tree';
import { ProcessSampler } from './sampler';

/** Every node of a forest, parents before children. */
export const all = (roots: ProcNode[]): ProcNode[] => roots.flatMap((n) => [n, ...all(n.children)]);

/** The snapshot of one run, or a thrown error naming it. */
export function only(snapshots: ProcTreeSnapshot[], runId: string): ProcTreeSnapshot {
  const snapshot = snapshots.find((s) => s.runId === runId);
  if (snapshot === undefined) throw new Error(`no snapshot for ${runId}`);
  return snapshot;
}

const samplers: ProcessSampler[] = [];
afterEach(() => {
  for (const s of samplers.splice(0)) s.close();
});

/** A sampler that is closed after the test. */
export function newSampler(options: ConstructorParameters<typeof ProcessSampler>[0] = {}): ProcessSampler {
  const sampler = new ProcessSampler(options);
  samplers.push(sampler);
  return sampler;
}
