// What a Python session is configured with: the host's settings shared by
// every session, and their defaults.

import type { RunEvent } from '../../../shared/events';
import type { MemoryBackend } from '../cgroup';
import type { ProcessSampler } from '../proc-tree/sampler';
import type { ScopeWatch } from '../scope-watch';
import type { Reaper } from '../reaper';

export interface SessionSettings {
  hostId: string;
  procRoot: string | null;
  /** The interpreter to run (default python3, looked up on the environment's PATH). */
  pythonCommand: string;
  /** runtime/warden_runtime.py; found next to the sources when not given. */
  runtimePath?: string;
  /** Bound on the interpreter's start, until its `ready` message. */
  readyTimeoutMs: number;
  /** Bound on waiting for the end markers after a script's result. */
  markerWaitMs: number;
  /** Bound on the interpreter's exit after the close op, before SIGKILL. */
  closeTimeoutMs: number;
  emit: (event: RunEvent) => void;
  /** The memory cgroup backend, for interpreters with a memory limit; throws MemoryLimitUnavailable where there is none. */
  memoryBackend?: () => MemoryBackend;
  /** Told of each interpreter's cgroup, so that it is ended if this process dies (the host's sentinel). */
  watch?: ScopeWatch;
  /** The process sampler for script trees (the interpreter and what the script starts); none when sampling is off. */
  sampler?: () => ProcessSampler | undefined;
  /** The subreaper shim an interpreter without a cgroup runs under (null: none on this machine, or turned off). */
  reaper?: () => Reaper | null;
}

export const SESSION_DEFAULTS = {
  pythonCommand: 'python3',
  readyTimeoutMs: 10_000,
  markerWaitMs: 2_000,
  closeTimeoutMs: 2_000,
} as const;
