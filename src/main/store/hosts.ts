// Each host (the app, `warden serve`, an embedded CLI) records itself while
// alive: its pid, that pid's start time, the boot it runs in and a heartbeat.
// From those, another host can tell for sure that it is gone: another boot,
// no such pid, or a pid now started at another time (reused).

import { readFileSync } from 'node:fs';
import { readStat, readStatChecked, UNCHECKED } from '../supervisor/procfs';
import { all, run, type Database } from './sql';

export const HEARTBEAT_MS = 15_000;
/** Without /proc a pid's start time is unknown: a host silent this long is taken for gone. */
export const STALE_HEARTBEAT_MS = 5 * HEARTBEAT_MS;

export interface HostRow {
  host_id: string;
  pid: number;
  start_ticks: number | null;
  boot_id: string | null;
  started_at: number;
  heartbeat_at: number;
  ended_at: number | null;
}

export function currentBootId(procRoot: string | null): string | null {
  if (procRoot === null) return null;
  try {
    return readFileSync(`${procRoot}/sys/kernel/random/boot_id`, 'utf8').trim() || null;
  } catch {
    return null;
  }
}

export function startTicksOf(procRoot: string | null, pid: number): number | null {
  if (procRoot === null) return null;
  const ticks = readStat(procRoot, pid)?.startTicks;
  return ticks === undefined || !Number.isFinite(ticks) ? null : ticks;
}

export function registerHost(db: Database, hostId: string, procRoot: string | null, now = Date.now()): void {
  run(
    db,
    `INSERT INTO hosts (host_id, pid, start_ticks, boot_id, started_at, heartbeat_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (host_id) DO UPDATE SET pid = excluded.pid, start_ticks = excluded.start_ticks,
       boot_id = excluded.boot_id, heartbeat_at = excluded.heartbeat_at, ended_at = NULL`,
    hostId,
    process.pid,
    startTicksOf(procRoot, process.pid),
    currentBootId(procRoot),
    now,
    now,
  );
}

export function heartbeat(db: Database, hostId: string, now = Date.now()): void {
  run(db, 'UPDATE hosts SET heartbeat_at = ? WHERE host_id = ?', now, hostId);
}

export function endHost(db: Database, hostId: string, now = Date.now()): void {
  run(db, 'UPDATE hosts SET ended_at = ?, heartbeat_at = ? WHERE host_id = ?', now, now, hostId);
}

export function readHosts(db: Database, ids: string[]): Map<string, HostRow> {
  const hosts = new Map<string, HostRow>();
  if (ids.length === 0) return hosts;
  for (const row of all<HostRow>(db, `SELECT * FROM hosts WHERE host_id IN (${ids.map(() => '?').join(', ')})`, ...ids)) hosts.set(row.host_id, row);
  return hosts;
}

export interface Liveness {
  alive: boolean;
  /** Why it is taken for gone, as a clause: "its process (pid 42) is gone". */
  why: string;
  /** Its processes may still run (same boot); false after a reboot. */
  sameBoot: boolean;
}

/** Whether a recorded host is still running. */
export function liveness(host: HostRow | undefined, procRoot: string | null, now = Date.now()): Liveness {
  if (!host) return { alive: false, why: 'its host left no record', sameBoot: true };
  const bootId = currentBootId(procRoot);
  if (host.boot_id && bootId && host.boot_id !== bootId) return { alive: false, why: 'the machine was restarted since', sameBoot: false };
  if (host.ended_at !== null) return { alive: false, why: `its host (pid ${host.pid}) closed without recording the run's end`, sameBoot: true };
  try {
    process.kill(host.pid, 0);
  } catch (error) {
    // EPERM: the pid is another user's now, so not our host's.
    const code = (error as NodeJS.ErrnoException).code;
    return { alive: false, why: code === 'EPERM' ? `its host's pid ${host.pid} belongs to another process now` : `its host process (pid ${host.pid}) is gone`, sameBoot: true };
  }
  if (procRoot !== null) {
    const stat = readStatChecked(procRoot, host.pid);
    // Its stat could not be opened (no descriptor free): it answered kill 0, so it is taken as alive, never swept on a guess.
    if (stat === UNCHECKED) return { alive: true, why: '', sameBoot: true };
    if (!stat || stat.state === 'Z' || stat.state === 'X') return { alive: false, why: `its host process (pid ${host.pid}) is gone`, sameBoot: true };
    if (host.start_ticks !== null && stat.startTicks !== host.start_ticks) {
      return { alive: false, why: `its host process (pid ${host.pid}) is gone and the pid was reused`, sameBoot: true };
    }
    return { alive: true, why: '', sameBoot: true };
  }
  if (now - host.heartbeat_at > STALE_HEARTBEAT_MS) {
    return { alive: false, why: `its host (pid ${host.pid}) sent no heartbeat for ${Math.round((now - host.heartbeat_at) / 1000)} s`, sameBoot: true };
  }
  return { alive: true, why: '', sameBoot: true };
}
