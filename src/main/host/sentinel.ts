// The sentinel: a tiny process per supervisor (a host, or an embedded
// `warden run`) that ends the supervisor's runs when the supervisor dies,
// however it dies, SIGKILL included, without waiting for another Warden to
// start.
//
// Why a separate process holding a pipe: nothing inside a process survives
// its SIGKILL, and the kernel's own death hooks (PR_SET_PDEATHSIG) reach only
// direct children, are lost on setsid-and-exit tricks and cannot be set from
// Node without a native module. A pipe's end is exact instead: the supervisor
// holds the only write end, so the sentinel reads end-of-file the moment the
// supervisor is gone, for any reason. It then sweeps:
// - every process group of a live run (processes that dropped the marker but
//   stayed in the group),
// - every run cgroup it was told of (no process can leave one),
// - every process whose environment carries this supervisor's marker prefix
//   `WARDEN_SCOPE=<hostId>.` (commands, escapees by setsid or double fork,
//   Python session interpreters `<hostId>.session-...` and what they started),
//   except the scopes of runs whose descendants were kept as asked;
// TERM (+ CONT) first, then KILL passes until nothing is left (under 1 s).
//
// It must not be lost quietly: its argv is short and names nothing an agent's
// `pkill -f sleep` or `killall sh` would match (`warden-sentinel -c eval
// "$WARDEN_SENTINEL" warden-sentinel <host id>`, the script in its
// environment, its comm set to `warden-sentinel`), and the supervisor
// watches it: when it dies, the supervisor logs it, starts another and hands
// it every live group, cgroup and kept scope; while none runs, `uncovered()`
// says why (GET /host shows it).
//
// Why /bin/sh and not a second Node: it starts in about a millisecond and a
// few hundred KB instead of 40 ms and 40 MB (an embedded `warden run` starts
// one per call), and it works under Electron, whose binary does not run as
// Node once its RunAsNode fuse is off. The script's inputs are positional
// parameters and lines on stdin, never parsed as shell code. An orderly close
// says `q` first, so a supervisor that ended its runs itself costs no sweep.

import { spawn, type ChildProcess } from 'node:child_process';
import type { Writable } from 'node:stream';

import type { ScopeWatch } from '../supervisor/scope-watch';


// The passes: TERM and CONT to everything, 200 ms for a clean exit, then KILL
// passes 50 ms apart until one finds nothing (at most 8).
const SCRIPT = `
unset WARDEN_SENTINEL
host=$1
died=$WARDEN_SENTINEL_DIED
unset WARDEN_SENTINEL_DIED
{ printf warden-sentinel > /proc/$$/comm; } 2>/dev/null
nl='
'
ifs=" 	$nl"
trap '' HUP INT QUIT TERM PIPE USR1 USR2 ALRM
groups=' '
cgroups=''
kept=''
remove_group() { new=' '; for x in $groups; do [ "$x" = "$1" ] || new="$new$x "; done; groups=$new; }
remove_cgroup() { new=''; IFS=$nl; for x in $cgroups; do [ "$x" = "$1" ] || new="$new$x$nl"; done; IFS=$ifs; cgroups=$new; }
marked() {
  grep -l -z -e "^WARDEN_SCOPE=$host\\." /proc/[0-9]*/environ 2>/dev/null | while IFS= read -r f; do
    p=\${f#/proc/}; p=\${p%/environ}
    if [ -n "$kept" ]; then
      tr '\\0' '\\n' < "$f" 2>/dev/null | grep -q -x -F "$kept" && continue
    fi
    echo "$p"
  done
}
sweep() {
  found=0
  for g in $groups; do kill -$1 -$g 2>/dev/null && found=1; done
  IFS=$nl
  for c in $cgroups; do
    for p in $(cat "$c/cgroup.procs" 2>/dev/null); do kill -$1 $p 2>/dev/null && found=1; done
  done
  IFS=$ifs
  for p in $(marked); do
    [ "$p" = "$$" ] || { kill -$1 $p 2>/dev/null && found=1; }
  done
  return $((1 - found))
}
while IFS= read -r line; do
  op=\${line%% *}; arg=\${line#* }
  case $op in
    g) groups="$groups$arg " ;;
    G) remove_group "$arg" ;;
    c) cgroups="$cgroups$arg$nl" ;;
    C) remove_cgroup "$arg" ;;
    k) kept="$kept\${kept:+$nl}WARDEN_SCOPE=$arg" ;;
    q) exit 0 ;;
  esac
done
# The moment the supervisor died: the lost runs' last sign of life for the next host.
if [ -n "$died" ]; then
  t=$(date +%s%3N 2>/dev/null)
  case $t in *N*|'') t=$(date +%s)000 ;; esac
  (umask 077; printf '%s\n' "$t" > "$died") 2>/dev/null
fi
if sweep TERM; then
  sweep CONT
  sleep 0.2
  n=0
  while sweep KILL && [ $n -lt 8 ]; do n=$((n + 1)); sleep 0.05; done
fi
IFS=$nl
for c in $cgroups; do rmdir "$c" 2>/dev/null; done
exit 0
`;

export interface Sentinel extends ScopeWatch {
  /** The sentinel running now (undefined while none is). */
  readonly pid: number | undefined;
  /** How many times one died and was replaced. */
  readonly restarts: number;
  /** Why this supervisor's runs would outlive it now (no sentinel runs, and why), or null when they are covered. */
  uncovered(): string | null;
  /** The supervisor ended its runs itself: the sentinel exits without a sweep. */
  close(): void;
}

/** WARDEN_SENTINEL=0 (or off) lets runs outlive a Warden that dies; the next host still records them lost. */
export function sentinelWanted(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env.WARDEN_SENTINEL?.trim().toLowerCase();
  return value !== '0' && value !== 'off' && value !== 'false' && value !== 'no';
}

const HOST_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** At most this many replacements in RESTART_WINDOW_MS; past that the supervisor says its runs are not covered. */
const RESTARTS_PER_WINDOW = 5;
const RESTART_WINDOW_MS = 60_000;

/** One sentinel process and its pipe. */
interface Process {
  child: ChildProcess | undefined;
  input: Writable | undefined;
  open: boolean;
}

/**
 * Starts the sentinel for a supervisor whose markers are `<hostId>.*`, and
 * keeps one running while the supervisor lives. Never throws: where no
 * /bin/sh can start, runs are not covered and uncovered() says so (the next
 * host's recovery still sweeps).
 */
export function startSentinel(hostId: string, options: { onError?: (message: string) => void; deathNote?: string } = {}): Sentinel {
  if (!HOST_ID.test(hostId)) throw new Error(`Not a host id a marker can carry: ${JSON.stringify(hostId)}`);
  const log = options.onError ?? (() => undefined);
  // What a replacement is handed: every live scope it must end.
  const groups = new Set<number>();
  const cgroups = new Set<string>();
  const kept = new Set<string>();
  let closed = false;
  let restarts = 0;
  const recentDeaths: number[] = [];
  let notCovered: string | null = null;
  let current: Process;

  const spawnOne = (): Process => {
    const proc: Process = { child: undefined, input: undefined, open: false };
    try {
      const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C', WARDEN_SENTINEL: SCRIPT };
      if (options.deathNote) env.WARDEN_SENTINEL_DIED = options.deathNote;
      if (process.env.WARDEN_SCOPE) env.WARDEN_SCOPE = process.env.WARDEN_SCOPE;
      const child = spawn('/bin/sh', ['-c', 'eval "$WARDEN_SENTINEL"', 'warden-sentinel', hostId], {
        argv0: 'warden-sentinel',
        // Its own process group: a terminal's ^C or a group signal meant for a run never reaches it.
        detached: true,
        stdio: ['pipe', 'ignore', 'ignore'],
        env,
      });
      proc.child = child;
      child.on('error', (error) => {
        proc.open = false;
        if (proc === current) uncover(`the sentinel could not start (${error.message}): runs will not be ended if this Warden is killed`);
      });
      child.on('exit', (code, signal) => {
        proc.open = false;
        if (proc === current && !closed && child.pid !== undefined) died(child.pid, code, signal);
      });
      if (child.pid === undefined || !child.stdin) return proc;
      proc.input = child.stdin;
      proc.open = true;
      proc.input.on('error', () => (proc.open = false));
      // Neither the process nor its pipe keeps the supervisor alive.
      child.unref();
      (proc.input as unknown as { unref?: () => void }).unref?.();
    } catch (error) {
      proc.open = false;
      uncover(`the sentinel could not start (${error instanceof Error ? error.message : String(error)}): runs will not be ended if this Warden is killed`);
    }
    return proc;
  };

  const uncover = (why: string) => {
    if (notCovered === why) return;
    notCovered = why;
    log(why);
  };

  const say = (proc: Process, line: string) => {
    if (proc.open && proc.input && !line.includes('\n')) proc.input.write(`${line}\n`);
  };

  /** Starts a sentinel and tells it everything live. */
  const replace = () => {
    current = spawnOne();
    if (!current.open) return;
    notCovered = null;
    for (const pgid of groups) say(current, `g ${pgid}`);
    for (const dir of cgroups) say(current, `c ${dir}`);
    for (const scope of kept) say(current, `k ${scope}`);
  };

  const died = (pid: number, code: number | null, signal: NodeJS.Signals | null) => {
    const now = performance.now();
    recentDeaths.push(now);
    while (recentDeaths.length > 0 && recentDeaths[0]! < now - RESTART_WINDOW_MS) recentDeaths.shift();
    const how = signal ? `was killed by ${signal}` : `exited with status ${code}`;
    if (recentDeaths.length > RESTARTS_PER_WINDOW) {
      uncover(`the sentinel (pid ${pid}) ${how}, the ${recentDeaths.length}th time in a minute; no other is started, so runs will not be ended if this Warden is killed`);
      return;
    }
    restarts += 1;
    replace();
    if (current.open) {
      log(`the sentinel (pid ${pid}) ${how}; started another (pid ${current.child?.pid}) and handed it ${groups.size} group(s), ${cgroups.size} cgroup(s) and ${kept.size} kept scope(s)`);
    }
  };

  current = spawnOne();

  const tell = (line: string) => say(current, line);
  return {
    get pid() {
      return current.open ? current.child?.pid : undefined;
    },
    get restarts() {
      return restarts;
    },
    uncovered: () => (current.open ? null : (notCovered ?? 'no sentinel is running: runs will not be ended if this Warden is killed')),
    group: (pgid, live) => {
      if (!Number.isSafeInteger(pgid) || pgid <= 1) return;
      if (live) groups.add(pgid);
      else groups.delete(pgid);
      tell(`${live ? 'g' : 'G'} ${pgid}`);
    },
    cgroup: (dir, live) => {
      if (dir.includes('\n')) return;
      if (live) cgroups.add(dir);
      else cgroups.delete(dir);
      tell(`${live ? 'c' : 'C'} ${dir}`);
    },
    kept: (scope) => {
      if (scope.includes('\n')) return;
      kept.add(scope);
      tell(`k ${scope}`);
    },
    close: () => {
      if (closed) return;
      closed = true;
      if (!current.open || !current.input) return;
      current.open = false;
      current.input.end('q\n');
    },
  };
}
