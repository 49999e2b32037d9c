// What a client sends so the host runs a command as this process would: its
// umask and resource limits (the host applies them at the spawn where they
// differ from its own: supervisor/process-limits.ts). Read from /proc; on a
// system without it nothing is sent and the host's own apply.

import { readFileSync } from 'node:fs';
import { parseLimits, parseUmask } from '../shared/limits-text';
import type { Rlimits } from '../shared/request';

/**
 * This process's umask and limits, as the command would have had them run
 * by this process's parent: Node raises its own soft limit of open files to
 * the hard one at start, so that soft limit is the parent's (when the
 * parent's hard one is the same, i.e. Node inherited it).
 */
export function processContext(pid = process.pid, ppid = process.ppid): { umask?: number; rlimits?: Rlimits } {
  let rlimits: Rlimits;
  let umask: number | undefined;
  try {
    rlimits = parseLimits(readFileSync(`/proc/${pid}/limits`, 'utf8'));
    umask = parseUmask(readFileSync(`/proc/${pid}/status`, 'utf8')) ?? undefined;
  } catch {
    return {};
  }
  try {
    const parent = parseLimits(readFileSync(`/proc/${ppid}/limits`, 'utf8')).nofile;
    if (parent && rlimits.nofile && parent[1] === rlimits.nofile[1]) rlimits.nofile = parent;
  } catch {
    // The parent is gone or not ours to read: this process's own stands.
  }
  return { ...(umask !== undefined ? { umask } : {}), rlimits };
}
