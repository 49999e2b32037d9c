import type { ProcTreeSnapshot } from './proc-tree';
import type { RunResult, StopStep } from './result';

export type OutputStream = 'stdout' | 'stderr';

export type RunEvent =
  | { type: 'started'; runId: string; snapshot: RunResult }
  | { type: 'output'; runId: string; stream: OutputStream; text: string }
  | { type: 'signal-sent'; runId: string; signal: string; atMs: number; step: StopStep | 'teardown' }
  | { type: 'tree'; runId: string; snapshot: ProcTreeSnapshot }
  | { type: 'ended'; runId: string; result: RunResult };
