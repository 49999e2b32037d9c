// The one API every client uses: the renderer through the preload, the CLI and
// tests in process. Later the HTTP client implements the same interface.

import type { RunEvent } from './events';
import type { RunRequest } from './request';
import type { RunResult, SessionInfo } from './result';

export interface WardenApi {
  /**
   * Starts a command run (argv) or a Python script in a session (code); resolves
   * with its first snapshot: 'running', 'queued' behind a busy session's script,
   * or 'ended' when it could not start. A busy session refuses (rejects) when the
   * request says onBusy: 'refuse'.
   */
  start(request: RunRequest): Promise<RunResult>;
  /** Runs the stop sequence now; `force` sends SIGKILL at once. Resolves with the current snapshot. */
  stop(id: string, options?: { force?: boolean }): Promise<RunResult>;
  /** The final result, or the running snapshot when `timeoutMs` passes first. */
  wait(id: string, timeoutMs?: number): Promise<RunResult>;
  get(id: string): Promise<RunResult | null>;
  list(): Promise<RunResult[]>;
  /** Live events of every run; returns the unsubscribe function. */
  subscribe(listener: (event: RunEvent) => void): () => void;
  /** Every Python session. */
  sessions(): Promise<SessionInfo[]>;
  /** Kills the session's interpreter (a running script ends with it); the next script starts a fresh one. */
  restartSession(name: string): Promise<SessionInfo>;
  /** Stops its scripts (queued and running), closes its interpreter and forgets the session. */
  closeSession(name: string): Promise<SessionInfo>;
}

/** IPC channel names shared by the main process and the preload. */
export const IPC = {
  start: 'warden:start',
  stop: 'warden:stop',
  wait: 'warden:wait',
  get: 'warden:get',
  list: 'warden:list',
  sessions: 'warden:sessions',
  restartSession: 'warden:restart-session',
  closeSession: 'warden:close-session',
  event: 'warden:event',
} as const;
