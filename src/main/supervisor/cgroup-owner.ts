// Which Warden made a run's cgroup, and whether it is provably gone.
//
// Every Warden under the same parent cgroup shares it: other users' Wardens,
// a Warden in a container or in a PID namespace of its own (`npm run
// test:mutation`), and Wardens outside such a namespace. A pid means
// something only in its own PID namespace, so a cgroup is named after its
// owner's pid, that pid's start time and the owner's PID namespace
// (`<pid>.<startTicks>.<pidNs>-<runId>`), and a Warden sweeps a cgroup only
// when that namespace is its own and no process with that pid and start time
// is running there. Anything else (another namespace, an older Warden's
// `<pid>-<runId>`, a name of no Warden's, a pid it may not look at) cannot be
// judged and is left alone: sweeping a live run's cgroup would kill its
// processes, or make the run fail to join a cgroup removed under it.
//
// judgeOwner() decides from what was read; ownIdentity() and lookAtPid()
// read it from /proc.

import { readFileSync, readlinkSync } from 'node:fs';
import { readStatChecked, UNCHECKED } from './procfs';

export interface OwnerTag {
  pid: number;
  /** Field 22 of /proc/PID/stat: clock ticks after boot (tells a reused pid from its owner). */
  startTicks: number;
  /** The inode of /proc/PID/ns/pid: which PID namespace `pid` is a pid of. */
  pidNs: number;
}

export interface OwnIdentity {
  tag: OwnerTag;
  /**
   * Whether /proc here shows this process's own PID namespace (pids are looked
   * up there). Not so under `unshare --pid --fork` without --mount-proc: /proc
   * then shows the outer namespace's pids.
   */
  procIsOurs: boolean;
}

/** What /proc says of the pid a cgroup names as its owner. */
export type PidLook =
  | { kind: 'none' }
  | { kind: 'process'; startTicks: number; zombie: boolean }
  /** It exists (or may), but its stat could not be read: another user's under hidepid, or no descriptor free. */
  | { kind: 'unreadable' };

export type OwnerVerdict =
  /** Its Warden runs: leave it. */
  | { kind: 'alive' }
  /** Its Warden is gone for certain: its processes may be ended and the cgroup removed. */
  | { kind: 'gone'; why: string }
  /** Cannot be told: left alone and reported. */
  | { kind: 'unknown'; why: string };

const DIGITS = '(0|[1-9]\\d{0,18})';
const NAME = new RegExp(`^${DIGITS}\\.${DIGITS}\\.${DIGITS}-(.+)$`);

/** The owner part of a run's cgroup name; the name is `${ownerTagText(tag)}-${runId}`. */
export function ownerTagText(tag: OwnerTag): string {
  return `${tag.pid}.${tag.startTicks}.${tag.pidNs}`;
}

/** The owner and run id a run's cgroup name holds; undefined for any other name (an older Warden's `<pid>-<runId>` among them). */
export function parseRunCgroupName(name: string): { owner: OwnerTag; runId: string } | undefined {
  const m = NAME.exec(name);
  if (!m) return undefined;
  const owner = { pid: Number(m[1]), startTicks: Number(m[2]), pidNs: Number(m[3]) };
  if (!Object.values(owner).every(Number.isSafeInteger) || owner.pid === 0) return undefined;
  return { owner, runId: m[4]! };
}

/** Whether the Warden that named a run's cgroup `name` is running, gone for certain, or cannot be told. Pure. */
export function judgeOwner(name: string, self: OwnIdentity | undefined, look: (pid: number) => PidLook): OwnerVerdict {
  const parsed = parseRunCgroupName(name);
  if (!parsed) return { kind: 'unknown', why: 'its name does not say which Warden made it (an older Warden names it <pid>-<run id>, without the start time and PID namespace that prove its owner gone)' };
  const { owner } = parsed;
  if (self === undefined) return { kind: 'unknown', why: "this Warden cannot read its own pid's start time and PID namespace in /proc" };
  if (owner.pidNs !== self.tag.pidNs) return { kind: 'unknown', why: `its Warden (pid ${owner.pid}) runs in another PID namespace (pid:[${owner.pidNs}], this one is pid:[${self.tag.pidNs}]), whose pids cannot be judged from here` };
  if (!self.procIsOurs) return { kind: 'unknown', why: "/proc here shows another PID namespace's pids than this Warden's own, so its owner's pid cannot be looked up" };
  const seen = look(owner.pid);
  if (seen.kind === 'none') return { kind: 'gone', why: `its Warden (pid ${owner.pid}) is gone` };
  if (seen.kind === 'unreadable') return { kind: 'unknown', why: `its Warden's pid ${owner.pid} could not be looked at in /proc` };
  if (seen.startTicks !== owner.startTicks) return { kind: 'gone', why: `its Warden (pid ${owner.pid}) is gone and the pid now belongs to a process started later` };
  if (seen.zombie) return { kind: 'gone', why: `its Warden (pid ${owner.pid}) has exited` };
  return { kind: 'alive' };
}

/** This process's owner tag and whether /proc shows its namespace; undefined when /proc does not say. Reads /proc. */
export function ownIdentity(procRoot = '/proc'): OwnIdentity | undefined {
  try {
    const pidNs = Number(/^pid:\[(\d+)\]$/.exec(readlinkSync(`${procRoot}/self/ns/pid`))?.[1]);
    const stat = readStatChecked(procRoot, Number(readlinkSync(`${procRoot}/self`)));
    // NSpid lists this process's pid in /proc's namespace first and in its own last: one entry, ours, when they are the same.
    const nspid = /^NSpid:\s+(.*)$/m.exec(readFileSync(`${procRoot}/self/status`, 'utf8'))?.[1]?.trim().split(/\s+/);
    if (!Number.isSafeInteger(pidNs) || stat === undefined || stat === UNCHECKED || !Number.isSafeInteger(stat.startTicks)) return undefined;
    return {
      tag: { pid: process.pid, startTicks: stat.startTicks, pidNs },
      procIsOurs: nspid !== undefined && nspid.length === 1 && nspid[0] === String(process.pid),
    };
  } catch {
    return undefined;
  }
}

/** What /proc shows of `pid` (signal 0 first: ESRCH says gone even where /proc hides other users' pids). */
export function lookAtPid(pid: number, procRoot = '/proc'): PidLook {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return { kind: 'none' };
  }
  const stat = readStatChecked(procRoot, pid);
  if (stat === undefined || stat === UNCHECKED || !Number.isSafeInteger(stat.startTicks)) return { kind: 'unreadable' };
  return { kind: 'process', startTicks: stat.startTicks, zombie: stat.state === 'Z' || stat.state === 'X' };
}
