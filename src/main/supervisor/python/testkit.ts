// For the Python session tests: a fresh Harness per test (cleaned up after
// it), and the few calls every one of them uses.

import { afterEach, beforeEach } from 'vitest';
import type { PythonRunRequest } from '../../../shared/request';
import { Harness } from '../proc-testkit';

export interface PythonHarness {
  /** This test's harness. */
  readonly h: Harness;
  /** Runs a script and waits for its result. */
  py(request: PythonRunRequest): ReturnType<Harness['run']>;
  /** The session interpreter's pid, or null. */
  pidOf(session?: string): number | null;
}

export function pythonHarness(): PythonHarness {
  let h: Harness | undefined;
  beforeEach(() => {
    h = new Harness();
  });
  afterEach(async () => {
    await h?.cleanup();
  });
  return {
    get h() {
      return h!;
    },
    py: (request) => h!.run(request),
    pidOf: (session = 'default') => h!.supervisor.sessions().find((s) => s.name === session)?.pid ?? null,
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
