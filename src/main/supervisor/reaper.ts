// Runs without a cgroup run under a child subreaper: orphans of the command's
// tree are re-parented to it, not to init, so teardown finds them by
// parentage even when they dropped the WARDEN_SCOPE marker and left the
// group. Used only where no cgroup can hold a run (a cgroup is cheaper and
// sees everything).
//
// The shim makes itself a subreaper (prctl PR_SET_CHILD_SUBREAPER), forks the
// command into a session and group of its own (the run's group: Warden
// signals that, never the shim), with every signal disposition at its
// default, ignores the stop signals itself, and speaks on fd 3:
//
//     pid N       the command started as pid N (written by the command's side after setsid)
//     exit C      the command exited with status C, or was ended by signal -C
//     error MSG   no subreaper could be made (the run goes on, as without one)
//
// After `exit` it reaps the orphans it adopts until Warden closes the pipe.
// Then, unless Warden said `keep` (descendants kept as asked), it kills
// whatever it still parents, pass after pass (each kill orphans the next
// generation to it), so nothing it adopted outlives the run, and a Warden
// that dies (its end of the pipe closes) takes the run's escapees with it.
//
// Why Perl: the subreaper flag belongs to a process that must stay alive as
// the command's parent and reap what it adopts. Node cannot call prctl, and a
// Node adopter could not reap children libuv did not spawn (they would stay
// zombies). Python can, but starts in 15-50 ms here, which a short command
// pays every time and which a tight limit feels; perl starts in about 2 ms,
// has fork, waitpid, exec without a shell and raw syscall() built in (no
// module to load), and is on every Debian-like system (perl-base is
// essential). The syscall numbers are per architecture; where perl or the
// number is missing, runs go on without a subreaper and their teardown report
// says what it cannot see. The command's words are positional arguments,
// never parsed by a shell.

import { execFileSync } from 'node:child_process';
import { CLI_ERROR_EXIT } from '../../shared/errors';

export interface Reaper {
  perl: string;
  prctl: number;
  setsid: number;
}

/** prctl(2) and setsid(2) syscall numbers by Node's process.arch (Linux). */
const SYSCALLS: Record<string, { prctl: number; setsid: number }> = {
  x64: { prctl: 157, setsid: 112 },
  arm64: { prctl: 167, setsid: 157 },
  riscv64: { prctl: 167, setsid: 157 },
  loong64: { prctl: 167, setsid: 157 },
  arm: { prctl: 172, setsid: 66 },
  ia32: { prctl: 172, setsid: 66 },
  ppc64: { prctl: 171, setsid: 66 },
  s390x: { prctl: 172, setsid: 66 },
};

const SHIM = `
my ($prctl, $setsid, $scope, $fd, @cmd) = @ARGV;
open(my $status, '+<&=', $fd) or exit ${CLI_ERROR_EXIT};
syscall($prctl, 36, 1, 0, 0, 0) == 0 or syswrite($status, "error no subreaper\\n");
$SIG{$_} = 'IGNORE' for qw(INT TERM HUP QUIT USR1 USR2 ALRM PIPE TSTP TTIN TTOU);
my $pid = fork();
exit 126 unless defined $pid;
if ($pid == 0) {
  syscall($setsid) >= 0 or setpgrp(0, 0);
  syswrite($status, "pid $$\\n");
  close($status);
  $SIG{$_} = 'DEFAULT' for keys %SIG;
  $ENV{WARDEN_SCOPE} = $scope;
  { no warnings; exec { $cmd[0] } @cmd; }
  my $errno = $! + 0;
  print STDERR "warden-reaper: $cmd[0]: $!\\n";
  exit($errno == 2 ? 127 : 126);
}
open(STDIN, '<', '/dev/null');
open(STDOUT, '>', '/dev/null');
open(STDERR, '>', '/dev/null');
# The command's own pipes below the status fd (an interpreter's 3 and 4) are its alone.
for my $n (3 .. $fd - 1) { if (open(my $h, '+<&=', $n)) { close($h); } }
my $st = 0;
while (1) {
  my $p = waitpid(-1, 0);
  last if $p == -1;
  if ($p == $pid) { $st = $?; last; }
}
syswrite($status, 'exit ' . (($st & 127) ? -($st & 127) : ($st >> 8)) . "\\n");
my $rin = '';
vec($rin, $fd, 1) = 1;
my $keep = 0;
while (1) {
  1 while waitpid(-1, 1) > 0;
  my $n = select(my $r = $rin, undef, undef, 0.1);
  if ($n > 0) {
    my $buf;
    my $got = sysread($status, $buf, 64);
    $keep = 1 if $got && $buf =~ /keep/;
    last unless $got;
  }
}
exit 0 if $keep;
for my $pass (1 .. 50) {
  my @kids;
  if (opendir(my $dir, '/proc')) {
    for my $p (readdir $dir) {
      next unless $p =~ /^[0-9]+$/;
      open(my $f, '<', "/proc/$p/stat") or next;
      my $line = <$f>;
      close($f);
      push @kids, $p if defined $line && $line =~ /\\) \\S ([0-9]+)/ && $1 == $$;
    }
    closedir($dir);
  }
  last unless @kids;
  kill 'KILL', @kids;
  select(undef, undef, undef, 0.02);
  1 while waitpid(-1, 1) > 0;
}
exit 0;
`;

let found: Reaper | null | undefined;

/**
 * The subreaper shim, checked once: Linux, a known architecture, perl on
 * PATH and prctl allowed. Null where any is missing, or with WARDEN_REAPER=0.
 */
export function reaperOnce(): Reaper | null {
  if (found !== undefined) return found;
  found = null;
  const numbers = SYSCALLS[process.arch];
  if (process.platform !== 'linux' || !numbers || process.env.WARDEN_REAPER === '0') return found;
  try {
    execFileSync('perl', ['-e', `exit(syscall(${numbers.prctl}, 36, 1, 0, 0, 0) == 0 ? 0 : 1)`], { stdio: 'ignore', timeout: 5000 });
    found = { perl: 'perl', ...numbers };
  } catch {
    found = null;
  }
  return found;
}

/**
 * The argv that runs `argv` under the shim. Spawn it with WARDEN_SCOPE out of
 * its environment: the command gets `scope` from the shim, and the shim, which
 * is Warden's and not the run's, is then never taken for one of the run's processes.
 * `statusFd` is the shim's status pipe (3 for a command; after the pipes the
 * command itself keeps, 5 for a Python interpreter with its 3 and 4).
 */
export function reaperArgv(reaper: Reaper, argv: string[], scope: string, statusFd = 3): string[] {
  return [reaper.perl, '-e', SHIM, String(reaper.prctl), String(reaper.setsid), scope, String(statusFd), ...argv];
}

export type ReaperMessage = { type: 'pid'; pid: number } | { type: 'exit'; exitCode: number | null; signal: string | null } | { type: 'error'; message: string };

/** One line of the shim's status pipe. */
export function parseReaperLine(line: string, signalName: (n: number) => string | null): ReaperMessage | undefined {
  const [word, ...rest] = line.split(' ');
  const value = Number(rest[0]);
  if (word === 'pid' && Number.isSafeInteger(value) && value > 1) return { type: 'pid', pid: value };
  if (word === 'exit' && Number.isSafeInteger(value)) {
    return value >= 0 ? { type: 'exit', exitCode: value, signal: null } : { type: 'exit', exitCode: null, signal: signalName(-value) };
  }
  if (word === 'error') return { type: 'error', message: rest.join(' ') };
  return undefined;
}
