// `warden run --core`: the command runs with its soft core file size limit
// raised to its hard one, so a crash can leave a core dump whatever the
// host's own limit is (a background host started from a login shell with
// `ulimit -c 0` would pass that on to every run). Node cannot set a child's
// rlimit, so a shell sets it and then execs the command: the same pid, the
// command's words untouched (positional parameters, never parsed).

/** The wrapper's name ($0): a line it prints names it. */
export const CORE_WRAPPER_NAME = 'warden-core';

// Unlimited where the hard limit allows, else up to the hard limit; a shell that cannot do either runs the command as it was.
const SCRIPT = 'ulimit -S -c unlimited 2>/dev/null || ulimit -S -c "$(ulimit -H -c)" 2>/dev/null; exec "$@"';

/** argv run with core dumps allowed. */
export function coreWrap(argv: string[]): string[] {
  return ['/bin/sh', '-c', SCRIPT, CORE_WRAPPER_NAME, ...argv];
}
