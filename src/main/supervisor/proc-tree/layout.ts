// The trees' layout from one scan: parent links into each run's descendants,
// then each run's roots, children and build order. Pure functions over the
// table of a tick.

import type { ProcessRow } from '../ps-table';
import type { Layout, Tracked } from './state';

/** The parent links of a scan, and each run's main process with its descendants. */
export interface Links {
  children: Map<number, number[]>;
  descent: Map<Tracked, Set<number>>;
  inSomeDescent: Set<number>;
}

export function linkRows(table: Map<number, ProcessRow>, runs: Tracked[]): Links {
  const children = new Map<number, number[]>();
  for (const row of table.values()) {
    const siblings = children.get(row.ppid);
    if (siblings === undefined) children.set(row.ppid, [row.pid]);
    else siblings.push(row.pid);
  }
  const descent = new Map<Tracked, Set<number>>();
  let inSomeDescent: Set<number> | undefined;
  for (const run of runs) {
    const root = table.get(run.rootPid);
    const alive = root !== undefined && (run.rootStartTicks === undefined || root.startTicks === run.rootStartTicks);
    if (alive) run.rootPgid ??= root.pgid;
    const tree = alive ? closure([run.rootPid], children) : new Set<number>();
    descent.set(run, tree);
    if (inSomeDescent === undefined) inSomeDescent = tree; // one run, the usual case: no copy
    else {
      if (inSomeDescent === descent.get(runs[0]!)) inSomeDescent = new Set(inSomeDescent);
      for (const pid of tree) inSomeDescent.add(pid);
    }
  }
  return { children, descent, inSomeDescent: inSomeDescent ?? new Set() };
}

/** True when a new process's parent is in a tree. */
export function joinsATree(fresh: ProcessRow[], inAnyTree: Set<number>): boolean {
  for (const row of fresh) if (inAnyTree.has(row.ppid)) return true;
  return false;
}

/** The run's roots (its main process first, then the escaped by pid), each node's children by pid, and the build order. */
export function layoutOf(run: Tracked, table: Map<number, ProcessRow>, members: Set<number>): Layout {
  const kids = new Map<number, number[]>();
  const rootPids: number[] = [];
  for (const pid of members) {
    const ppid = table.get(pid)!.ppid;
    if (ppid === pid || !members.has(ppid)) {
      rootPids.push(pid);
      continue;
    }
    const siblings = kids.get(ppid);
    if (siblings === undefined) kids.set(ppid, [pid]);
    else siblings.push(pid);
  }
  rootPids.sort(byNumber);
  const at = rootPids.indexOf(run.rootPid);
  if (at > 0) rootPids.unshift(...rootPids.splice(at, 1));
  for (const siblings of kids.values()) siblings.sort(byNumber);
  // Parents before children, without recursion, however deep the tree; a crafted cycle is never reached.
  const order: number[] = [];
  const stack = [...rootPids].reverse();
  while (stack.length > 0) {
    const pid = stack.pop()!;
    order.push(pid);
    const children = kids.get(pid);
    if (children !== undefined) for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return { rootPids, kids, order };
}

function byNumber(a: number, b: number): number {
  return a - b;
}

/** The pids given and all their descendants by ppid links; safe against a cycle in a crafted table. */
export function closure(starts: number[], children: Map<number, number[]>): Set<number> {
  const found = new Set<number>();
  const stack = [...starts];
  while (stack.length > 0) {
    const pid = stack.pop()!;
    if (found.has(pid)) continue;
    found.add(pid);
    const kids = children.get(pid);
    if (kids !== undefined) for (const kid of kids) stack.push(kid);
  }
  return found;
}
