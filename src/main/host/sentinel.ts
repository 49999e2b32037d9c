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
host=$1
died=$2
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
  readonly pid: number | undefined;
  /** The supervisor ended its runs itself: the sentinel exits without a sweep. */
  close(): void;
}

/** WARDEN_SENTINEL=0 (or off) lets runs outlive a Warden that dies; the next host still records them lost. */
export function sentinelWanted(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env.WARDEN_SENTINEL?.trim().toLowerCase();
  return value !== '0' && value !== 'off' && value !== 'false' && value !== 'no';
}

const HOST_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Starts the sentinel for a supervisor whose markers are `<hostId>.*`.
 * Never throws: where no /bin/sh can start, the returned sentinel does
 * nothing (the next host's recovery still sweeps).
 */
export function startSentinel(hostId: string, options: { onError?: (message: string) => void; deathNote?: string } = {}): Sentinel {
  if (!HOST_ID.test(hostId)) throw new Error(`Not a host id a marker can carry: ${JSON.stringify(hostId)}`);
  let child: ChildProcess | undefined;
  let input: Writable | undefined;
  let open = false;
  try {
    child = spawn('/bin/sh', ['-c', SCRIPT, 'warden-sentinel', hostId, options.deathNote ?? ''], {
      // Its own process group: a terminal's ^C or a group signal meant for a run never reaches it.
      detached: true,
      stdio: ['pipe', 'ignore', 'ignore'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C', ...(process.env.WARDEN_SCOPE ? { WARDEN_SCOPE: process.env.WARDEN_SCOPE } : {}) },
    });
    input = child.stdin!;
    open = true;
    child.on('error', (error) => {
      open = false;
      options.onError?.(`the sentinel could not start (${error.message}): runs will not be ended if this Warden is killed`);
    });
    child.on('exit', () => (open = false));
    input.on('error', () => (open = false));
    // Neither the process nor its pipe keeps the supervisor alive.
    child.unref();
    (input as unknown as { unref?: () => void }).unref?.();
  } catch (error) {
    options.onError?.(`the sentinel could not start (${error instanceof Error ? error.message : String(error)})`);
  }
  const say = (line: string) => {
    if (open && input && !line.includes('\n')) input.write(`${line}\n`);
  };
  return {
    pid: child?.pid,
    group: (pgid, live) => {
      if (Number.isSafeInteger(pgid) && pgid > 1) say(`${live ? 'g' : 'G'} ${pgid}`);
    },
    cgroup: (dir, live) => say(`${live ? 'c' : 'C'} ${dir}`),
    kept: (scope) => say(`k ${scope}`),
    close: () => {
      if (!open || !input) return;
      open = false;
      input.end('q\n');
    },
  };
}
