// For the Python session tests: a fresh Harness per test (cleaned up after
// it), and the few calls every one of them uses.

import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
  /** A new gate (a file this test's temp dir may hold): a script waits for it instead of for a time. */
  gate(): Gate;
}

export interface Gate {
  /** Python (a statement at the top level, or indented by the caller) that waits until the gate is open. */
  readonly waitPy: string;
  /** Python that opens the gate (a script tells the test it got somewhere). */
  readonly openPy: string;
  open(): void;
  readonly isOpen: boolean;
}

export function pythonHarness(): PythonHarness {
  let h: Harness | undefined;
  let dir: string | undefined;
  let gates = 0;
  beforeEach(() => {
    h = new Harness();
  });
  afterEach(async () => {
    await h?.cleanup();
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });
  return {
    get h() {
      return h!;
    },
    py: (request) => h!.run(request),
    pidOf: (session = 'default') => h!.supervisor.sessions().find((s) => s.name === session)?.pid ?? null,
    gate() {
      dir ??= mkdtempSync(join(tmpdir(), 'warden-py-gate-'));
      const path = join(dir, `gate-${++gates}`);
      return {
        waitPy: `while not __import__("os").path.exists(${JSON.stringify(path)}):\n    __import__("time").sleep(0.01)`,
        openPy: `open(${JSON.stringify(path)}, "w").close()`,
        open: () => writeFileSync(path, ''),
        get isOpen() {
          return existsSync(path);
        },
      };
    },
  };
}

/** Whether a signal sent to `pid` still waits to be delivered (/proc/PID/status SigPnd, ShdPnd). */
export function signalPending(pid: number): boolean {
  const status = readFileSync(`/proc/${pid}/status`, 'latin1');
  return /^(SigPnd|ShdPnd):\s*0*[1-9a-f]/m.test(status);
}

/** Only for checking that nothing happens (an absence); never to wait for something to happen. */
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
