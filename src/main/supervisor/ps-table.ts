// The process table from `ps`, where there is no /proc (macOS): one
// `ps -A -o pid=,ppid=,pgid=,stat=,rss=,time=,command=` per sample, read into
// the same rows /proc gives. ps cannot read environments, so the sampler
// fed from here cannot find the processes that left a run's tree by its
// WARDEN_SCOPE marker (a setsid daemon reparented to init): it shows only the
// main process's descendants.

import { execFile } from 'node:child_process';

import type { ProcUsage } from './procfs';

/**
 * One process: stat's fields. From ps, startTicks, sid and exitSignal are NaN
 * (ps does not say), comm is the command line and command is set.
 */
export type ProcessRow = ProcUsage & {
  /** ps gives it with every row; from /proc it is read once and cached. */
  command?: string;
};

export interface Units {
  pageSizeBytes: number;
  clockTicksPerSecond: number;
}

// -ww: never cut the command to a terminal's width.
const PS_ARGS = ['-A', '-ww', '-o', 'pid=,ppid=,pgid=,stat=,rss=,time=,command='];
const PS_ROW = /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s+(\d+)\s+(\S+)\s?(.*)$/;
/** The C locale keeps `time` in its documented format, whatever the user's. */
const PS_ENV = { ...process.env, LC_ALL: 'C' };

/** One `ps` listing; undefined when ps cannot be run. */
export function runPs(units: Units): Promise<Map<number, ProcessRow> | undefined> {
  return new Promise((resolve) => {
    execFile('ps', PS_ARGS, { maxBuffer: 64 * 1024 * 1024, timeout: 10_000, env: PS_ENV }, (error, stdout) => {
      resolve(error ? undefined : parsePs(stdout, units));
    });
  });
}

/** Parses `ps -o pid=,ppid=,pgid=,stat=,rss=,time=,command=` output into stat's units; zombies are left out. */
export function parsePs(stdout: string, units: Units): Map<number, ProcessRow> {
  const table = new Map<number, ProcessRow>();
  for (const line of stdout.split('\n')) {
    const m = PS_ROW.exec(line);
    if (m === null) continue;
    const state = m[4]!.charAt(0);
    if (state === 'Z' || state === 'X') continue;
    const command = m[7]!.trimEnd();
    const pid = Number(m[1]);
    table.set(pid, {
      pid,
      ppid: Number(m[2]),
      pgid: Number(m[3]),
      sid: NaN,
      state,
      startTicks: NaN,
      exitSignal: NaN,
      comm: command,
      cpuTicks: psTimeSeconds(m[6]!) * units.clockTicksPerSecond,
      rssPages: (Number(m[5]) * 1024) / units.pageSizeBytes, // ps: KiB
      command,
    });
  }
  return table;
}

/** ps's `time`: [[dd-]hh:]mm:ss[.ff] (procps: hh:mm:ss, whole seconds; macOS: m:ss.ff). NaN when it is not that. */
export function psTimeSeconds(text: string): number {
  const m = /^(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+(?:\.\d+)?)$/.exec(text);
  if (m === null) return NaN;
  return Number(m[1] ?? 0) * 86_400 + Number(m[2] ?? 0) * 3_600 + Number(m[3]) * 60 + Number(m[4]);
}
