// Reading a process's resource limits and umask from the text Linux gives
// (/proc/PID/limits, /proc/PID/status): pure, so the client that sends them
// and the engine that applies them read them the same way.

import { RLIMIT_NAMES, type RlimitName, type Rlimits } from './request';

/** /proc/PID/limits' row names, by prlimit's. */
const ROWS: Record<RlimitName, string> = {
  as: 'Max address space',
  core: 'Max core file size',
  cpu: 'Max cpu time',
  data: 'Max data size',
  fsize: 'Max file size',
  locks: 'Max file locks',
  memlock: 'Max locked memory',
  msgqueue: 'Max msgqueue size',
  nice: 'Max nice priority',
  nofile: 'Max open files',
  nproc: 'Max processes',
  rss: 'Max resident set',
  rtprio: 'Max realtime priority',
  rttime: 'Max realtime timeout',
  sigpending: 'Max pending signals',
  stack: 'Max stack size',
};

/** The limits in the text of /proc/PID/limits; a row that does not read is left out. */
export function parseLimits(text: string): Rlimits {
  const out: Rlimits = {};
  const value = (word: string | undefined): number | null | undefined => (word === 'unlimited' ? null : word !== undefined && /^\d+$/.test(word) ? Number(word) : undefined);
  const lines = text.split('\n');
  for (const name of RLIMIT_NAMES) {
    const line = lines.find((l) => l.startsWith(`${ROWS[name]} `));
    if (!line) continue;
    const [soft, hard] = line.slice(ROWS[name].length).trim().split(/\s+/);
    const s = value(soft);
    const h = value(hard);
    if (s !== undefined && h !== undefined) out[name] = [s, h];
  }
  return out;
}

/** The umask in the text of /proc/PID/status (Linux 4.7 and later), or null. */
export function parseUmask(text: string): number | null {
  const match = /^Umask:\s+([0-7]{1,4})$/m.exec(text);
  return match ? parseInt(match[1]!, 8) : null;
}
