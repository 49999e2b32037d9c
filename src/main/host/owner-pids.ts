// Runs owned by a process: started with ?ownerPid=PID&ownerStart=T (an MCP
// session's `warden mcp`, or `warden run --owner-pid PID` for a shell hook's
// agent), each is stopped when that process is gone. A pid counts as the same
// process only while its start time (field 22 of /proc/PID/stat, clock ticks
// since boot) is the one the client saw, so a pid the kernel reused for
// another process does not keep a run alive.

import { readFileSync } from 'node:fs';

/** How often the owners' pids are looked at while any is watched. */
export const OWNER_CHECK_MS = 500;

/** A process's start time as /proc shows it (clock ticks since boot, as text); null when there is no such process. */
export function processStartTime(pid: number): string | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // The command name (field 2) is in parentheses and may hold spaces or ')': fields resume after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Field 3 (state) is fields[0]; field 22 (starttime) is fields[19]. A zombie has exited: it owns nothing.
  if (fields[0] === 'Z' || fields[0] === 'X') return null;
  return fields[19] ?? null;
}

/** A process's command name (/proc/PID/comm), or null. */
export function processName(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() || null;
  } catch {
    return null;
  }
}

export interface PidOwner {
  pid: number;
  /** The start time the client read (processStartTime). */
  startTime: string;
  /** Who the owner is, for the note: "warden mcp for claude-code". */
  label: string;
}

interface Watched extends PidOwner {
  runId: string;
}

export class OwnerPids {
  private readonly watched = new Map<string, Watched>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    /** The owner of `runId` is gone: stop the run, with this note. */
    private readonly onGone: (runId: string, note: string) => void,
    /** Whether a run is still live (an ended run's entry is dropped). */
    private readonly isLive: (runId: string) => boolean,
  ) {}

  /** Watches `owner` for `runId`; one already gone stops the run at once. */
  add(runId: string, owner: PidOwner): void {
    this.watched.set(runId, { ...owner, runId });
    if (!this.alive(owner)) {
      queueMicrotask(() => this.check());
      return;
    }
    this.timer ??= setInterval(() => this.check(), OWNER_CHECK_MS);
    this.timer.unref();
  }

  /** Stops watching everything. */
  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.watched.clear();
  }

  private alive(owner: PidOwner): boolean {
    return processStartTime(owner.pid) === owner.startTime;
  }

  private check(): void {
    // One read of /proc per owner process a tick, however many runs it owns.
    const starts = new Map<number, string | null>();
    for (const [runId, owner] of this.watched) {
      if (!this.isLive(runId)) {
        this.watched.delete(runId);
        continue;
      }
      if (!starts.has(owner.pid)) starts.set(owner.pid, processStartTime(owner.pid));
      if (starts.get(owner.pid) === owner.startTime) continue;
      this.watched.delete(runId);
      this.onGone(
        runId,
        `Its owner, ${owner.label} (pid ${owner.pid}), went away before the run ended, so Warden stopped it: a run an agent starts ends with the agent unless it was started detached.`,
      );
    }
    if (this.watched.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }
}
