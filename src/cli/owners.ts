// Which runs belong to a process: its own (the run's owner is that pid) and
// those of the processes under it (an agent's `warden mcp` is its child, and
// owns the runs the agent starts through MCP, while the shell hook names the
// agent itself). `agent` is the agent this command runs under: the nearest
// ancestor that is not a shell (as the hook finds it).

import { readFileSync } from 'node:fs';
import type { RunOwner } from '../shared/result';
import { findAgent } from './hook/hook';
import { UsageError } from './parse';

/** --owner's value: a pid, or `agent`. */
export function ownerPidFrom(text: string, flag = '--owner'): number {
  if (text === 'agent') {
    const agent = findAgent();
    if (!agent) throw new UsageError(`${flag} agent: no agent found above this command (its parents are shells up to init); give the agent's pid.`);
    return agent.pid;
  }
  const pid = Number(text);
  if (!/^\d{1,10}$/.test(text) || !Number.isSafeInteger(pid) || pid < 1) throw new UsageError(`${flag} takes a process id or agent (the agent this runs under), not ${JSON.stringify(text)}.`);
  return pid;
}

function parentOf(pid: number, procRoot: string): number | null {
  try {
    const stat = readFileSync(`${procRoot}/${pid}/stat`, 'utf8');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    return Number.isInteger(ppid) && ppid > 0 ? ppid : null;
  } catch {
    return null;
  }
}

/**
 * Whether a run's owner is `root` or a process under it, by the parent links
 * in /proc; the answer for an owner seen running is kept per pid (an owner
 * that exits keeps it: its runs' ends come after it is gone).
 */
export class OwnerFilter {
  private readonly known = new Map<number, boolean>();

  constructor(
    readonly root: number,
    private readonly procRoot = '/proc',
  ) {}

  owns(owner: RunOwner | undefined): boolean {
    // A run that names who started it without a pid belongs to no process.
    if (!owner || owner.pid === null) return false;
    const cached = this.known.get(owner.pid);
    if (cached !== undefined) return cached;
    let mine = false;
    let pid: number | null = owner.pid;
    for (let depth = 0; pid !== null && depth < 64; depth++) {
      if (pid === this.root) {
        mine = true;
        break;
      }
      // init's parent is 0, which parentOf reads as none: the walk ends there.
      pid = parentOf(pid, this.procRoot);
    }
    // An owner found while it runs keeps its answer; one already gone tells nothing now (it is looked at again).
    if (parentOf(owner.pid, this.procRoot) !== null) this.known.set(owner.pid, mine);
    return mine;
  }
}
