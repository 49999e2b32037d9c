// Helpers for the engine's integration tests, which run REAL processes
// (bash, python3, sleep, setsid, timeout) and send real signals. Nothing here
// mocks the OS: it only reads /proc to check what is alive, and cleans up
// whatever a test (or a deliberately broken engine) left running.

import { readdirSync, readFileSync } from 'node:fs';
import type { RunRequest } from '../../shared/request';
import type { Proc, RunResult } from '../../shared/result';
import { Supervisor, type SupervisorOptions } from './supervisor';
import { PATIENCE_MS } from '../../../test/kit/until';

/** Generous bound that only guards against a hang; never a speed assertion (test/kit/until.ts). */
export const HANG_GUARD_MS = PATIENCE_MS;

/**
 * State letter from /proc/PID/stat, or undefined when the process is gone.
 * PID 1 on the test machines does not reap orphans, so a killed orphan stays
 * a zombie ('Z'): callers must treat 'Z' (and 'X') as dead.
 */
export function procState(pid: number): string | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return text.slice(text.lastIndexOf(')') + 2).split(' ')[0];
  } catch {
    return undefined;
  }
}

/** True when the pid is gone or only a zombie is left (checked by signal 0 and /proc). */
export function isDead(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return true;
  }
  const state = procState(pid);
  return state === undefined || state === 'Z' || state === 'X';
}

/**
 * Waits until every pid is dead; returns the ones still alive after `boundMs`
 * (a hang guard: a process killed on a loaded machine may take a while to go).
 */
export async function waitDead(pids: number[], boundMs = HANG_GUARD_MS): Promise<number[]> {
  const end = performance.now() + boundMs;
  let alive = pids.filter((pid) => !isDead(pid));
  while (alive.length > 0 && performance.now() < end) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    alive = alive.filter((pid) => !isDead(pid));
  }
  return alive;
}

/** Every live process whose environment carries a WARDEN_SCOPE starting with `prefix`. */
export function pidsWithScope(prefix: string): number[] {
  const needle = Buffer.from(`WARDEN_SCOPE=${prefix}`);
  const found: number[] = [];
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return found; // no /proc: nothing to find this way
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (pid === process.pid || isDead(pid)) continue;
    try {
      const environ = readFileSync(`/proc/${pid}/environ`);
      let at = environ.indexOf(needle);
      while (at > 0 && environ[at - 1] !== 0) at = environ.indexOf(needle, at + 1);
      if (at >= 0) found.push(pid);
    } catch {
      // gone, or not readable
    }
  }
  return found;
}

/** SIGKILLs every process a supervisor's runs started (by the host's marker prefix), and the given pids. */
export function killLeftovers(hostId: string, extraPids: number[] = []): void {
  for (const pid of [...pidsWithScope(`${hostId}.`), ...extraPids]) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/**
 * A supervisor per test, with a unique host id so the cleanup can find every
 * process its runs started, even ones a broken teardown left behind.
 */
export class Harness {
  readonly supervisor: Supervisor;
  /** Pids a test left alive on purpose (keepDescendants); killed in cleanup. */
  readonly extraPids: number[] = [];

  constructor(options: SupervisorOptions = {}) {
    this.supervisor = new Supervisor(options);
  }

  /** Starts a run and waits for its result, failing fast (not hanging) if it never arrives. */
  async run(request: RunRequest, guardMs = HANG_GUARD_MS): Promise<RunResult> {
    const { id } = this.supervisor.start(request);
    return this.result(id, guardMs);
  }

  async result(id: string, guardMs = HANG_GUARD_MS): Promise<RunResult> {
    let timer: NodeJS.Timeout | undefined;
    const guard = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`run ${id} gave no result within ${guardMs} ms`)), guardMs);
    });
    try {
      return await Promise.race([this.supervisor.wait(id), guard]);
    } finally {
      clearTimeout(timer);
    }
  }

  async cleanup(): Promise<void> {
    // Stop whatever still runs without waiting for a possibly broken engine forever.
    const live = this.supervisor.list().filter((r) => r.state !== 'ended');
    for (const r of live) {
      try {
        this.supervisor.stop(r.id, { force: true });
      } catch {
        // already forgotten
      }
    }
    killLeftovers(this.supervisor.hostId, this.extraPids);
    await Promise.race([this.supervisor.shutdown(), new Promise((resolve) => setTimeout(resolve, 3_000))]);
    killLeftovers(this.supervisor.hostId, this.extraPids);
  }
}

/** The teardown entries whose command line contains `text`. */
export function procsMatching(procs: Proc[] | undefined, text: string): Proc[] {
  return (procs ?? []).filter((p) => p.command.includes(text));
}

/** Parses `name pid` lines a test command printed about the processes it started. */
export function printedPids(stdout: string): Record<string, number> {
  const pids: Record<string, number> = {};
  for (const m of stdout.matchAll(/^(\w+) (\d+)$/gm)) pids[m[1]!] = Number(m[2]);
  return pids;
}
