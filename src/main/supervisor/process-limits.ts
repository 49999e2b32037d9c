// A run starts with its client's umask and resource limits (sent in the run
// request), not the host's: a command an agent runs through Warden creates
// files and meets limits as it would have run by the agent itself (a token
// written under `umask 077` stays private). Applied at the spawn by words
// put before the command, and only for what differs from the host's own
// (the child inherits those): `/bin/sh -c 'umask M; exec "$@"'` for the
// mask, prlimit(1) for the limits (exact to the byte, both values at once,
// where a shell's ulimit rounds to blocks). Node has neither setrlimit nor
// a per-spawn umask, and flipping the host's umask around a spawn would
// race the host's own file creation in libuv's threads.

import { accessSync, constants, readFileSync } from 'node:fs';
import { parseLimits, parseUmask } from '../../shared/limits-text';
import { RLIMIT_NAMES, type Rlimits } from '../../shared/request';

/** Whether `a` is at most `b`, null being unlimited. */
const atMost = (a: number | null, b: number | null) => b === null || (a !== null && a <= b);

export interface HostProcess {
  /** The host's own limits (what a child inherits). */
  limits: Rlimits;
  /** The host's umask, or null when unknown. */
  umask: number | null;
  /** Whether the host may raise a hard limit (root). */
  mayRaise: boolean;
  /** prlimit(1), or null where it is not installed. */
  prlimit: string | null;
}

/**
 * The words to put before a command's argv so it starts with `umask` and
 * `rlimits` where they differ from the host's; [] when nothing differs.
 * A hard limit the host may not raise is kept at the host's (and a soft
 * one at most the hard): the command then runs at the nearest it can.
 */
export function preludeFor(wanted: { umask?: number; rlimits?: Rlimits }, host: HostProcess): string[] {
  const words: string[] = [];
  if (wanted.umask !== undefined && wanted.umask !== host.umask) {
    words.push('/bin/sh', '-c', `umask ${wanted.umask.toString(8).padStart(4, '0')} && exec "$@"`, 'sh');
  }
  const flags: string[] = [];
  for (const name of RLIMIT_NAMES) {
    const want = wanted.rlimits?.[name];
    const has = host.limits[name];
    if (!want || !has) continue;
    const hard = host.mayRaise || atMost(want[1], has[1]) ? want[1] : has[1];
    const soft = atMost(want[0], hard) ? want[0] : hard;
    if (soft === has[0] && hard === has[1]) continue;
    flags.push(`--${name}=${soft ?? 'unlimited'}:${hard ?? 'unlimited'}`);
  }
  if (flags.length > 0 && host.prlimit !== null) words.push(host.prlimit, ...flags, '--');
  return words;
}

let cached: HostProcess | undefined;

/** This process as the host whose children inherit it: read once. */
export function hostProcess(): HostProcess {
  if (cached) return cached;
  let limits: Rlimits = {};
  let umask: number | null = null;
  try {
    limits = parseLimits(readFileSync('/proc/self/limits', 'utf8'));
    umask = parseUmask(readFileSync('/proc/self/status', 'utf8'));
  } catch {
    // No /proc: nothing is known to differ, so nothing is applied.
  }
  const prlimit = ['/usr/bin/prlimit', '/bin/prlimit'].find((path) => {
    try {
      accessSync(path, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
  cached = { limits, umask, mayRaise: process.geteuid?.() === 0, prlimit: prlimit ?? null };
  return cached;
}
