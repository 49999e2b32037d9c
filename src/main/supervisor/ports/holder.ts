// Who holds a port another run could not bind: the process whose descriptor
// is the listening socket (a look through every process's fd links, done
// only when a run failed on "address already in use"), and, where it is one,
// the Warden run it belongs to.

import { readdirSync, readFileSync } from 'node:fs';
import { commandLine, listPids, readAllBounded } from '../procfs';
import type { SocketTable } from './socket-table';

export interface PortHolder {
  pid: number;
  command: string;
}

/** Bound on the look: a machine with very many processes is not read whole for one note. */
const MAX_PROCESSES_READ = 5000;

/** Bound on reading the holders' command lines: a process stuck in the kernel costs its name, never the host's thread. */
const COMMAND_READ_MS = 200;

/**
 * The processes holding a listening socket among `inodes` (their fds read, at
 * most MAX_PROCESSES_READ of them), each named by its command line, or by its
 * `[comm]` when the command line cannot be read in time (a cmdline read waits
 * on the process's memory map, which a process stuck in the kernel holds).
 */
export async function holdersOf(procRoot: string, table: SocketTable, inodes: ReadonlySet<number>): Promise<PortHolder[]> {
  if (inodes.size === 0) return [];
  const pids: number[] = [];
  let all: number[];
  try {
    all = listPids(procRoot);
  } catch {
    return [];
  }
  for (const pid of all.slice(0, MAX_PROCESSES_READ)) {
    const held = table.socketInodes(pid);
    if (held === null || !held.some((inode) => inodes.has(inode))) continue;
    pids.push(pid);
    if (pids.length >= 3) break;
  }
  const cmdlines = await readAllBounded(pids.map((pid) => `${procRoot}/${pid}/cmdline`), COMMAND_READ_MS);
  return pids.map((pid, i) => {
    let command = `pid ${pid}`;
    try {
      // comm is the kernel's copy of the name: reading it never waits on the process.
      const cmdline = cmdlines[i];
      command = commandLine(cmdline instanceof Buffer ? cmdline : undefined, readFileSync(`${procRoot}/${pid}/comm`, 'utf8').trim());
    } catch {
      // gone meanwhile
    }
    return { pid, command: command.length > 80 ? `${command.slice(0, 79)}…` : command };
  });
}

/** Processes listed in /proc/PID/task/TID/children below `rootPid` (the kernel's own child lists: no scan), at most `max`. */
export function descendantsOf(procRoot: string, rootPid: number, max = 4096): number[] {
  const found: number[] = [];
  const queue = [rootPid];
  while (queue.length > 0 && found.length < max) {
    const pid = queue.shift()!;
    let tasks: string[];
    try {
      tasks = readdirSync(`${procRoot}/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of tasks) {
      let text: string;
      try {
        text = readFileSync(`${procRoot}/${pid}/task/${tid}/children`, 'latin1');
      } catch {
        continue;
      }
      for (const word of text.split(' ')) {
        const child = Number(word);
        if (word !== '' && Number.isInteger(child) && !found.includes(child)) {
          found.push(child);
          queue.push(child);
        }
      }
    }
  }
  return found;
}
