// The one API every client uses: the renderer through the preload, the CLI and
// tests in process. Later the HTTP client implements the same interface.

import type { RunEvent } from './events';
import type { CommandRunRequest } from './request';
import type { RunResult } from './result';

export interface WardenApi {
  /** Starts a command run; resolves with its first snapshot (state 'running', or 'ended' when it could not start). */
  start(request: CommandRunRequest): Promise<RunResult>;
  /** Runs the stop sequence now; `force` sends SIGKILL at once. Resolves with the current snapshot. */
  stop(id: string, options?: { force?: boolean }): Promise<RunResult>;
  /** The final result, or the running snapshot when `timeoutMs` passes first. */
  wait(id: string, timeoutMs?: number): Promise<RunResult>;
  get(id: string): Promise<RunResult | null>;
  list(): Promise<RunResult[]>;
  /** Live events of every run; returns the unsubscribe function. */
  subscribe(listener: (event: RunEvent) => void): () => void;
}

/** IPC channel names shared by the main process and the preload. */
export const IPC = {
  start: 'warden:start',
  stop: 'warden:stop',
  wait: 'warden:wait',
  get: 'warden:get',
  list: 'warden:list',
  event: 'warden:event',
} as const;
