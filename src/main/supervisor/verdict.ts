// One pure function from what was observed to the verdict, its advice and its
// notes (docs/architecture.md, "Verdicts"). Every row of that table is a test row
// (verdict.test.ts). Notes are complete sentences that name the numbers.

import type { OomReport, RunKind, StopReason, StopStep, Verdict } from '../../shared/result';
import { findCrash } from '../../shared/crash/traceback';
import { findShellCrash } from '../../shared/crash/shell';
import { crashAdvice, exitCodeAdvice, isCrashSignal, killAdvice, oomNote, otherSignalAdvice, shellCrashNote, timedOutAdvice, tracebackAdvice } from './advice';
import { seconds } from '../../shared/format';
import { signalName } from './signals';

export interface Observations {
  kind: RunKind;
  /** The exact reason it never started. */
  spawnFailure?: string;
  exitCode: number | null;
  signal: string | null;
  elapsedMs: number;
  limitMs: number | null;
  /** Present when a stop was requested before the main process exited. */
  stop?: { reason: StopReason; requestedAtMs: number; endedBy: StopStep };
  /** The memory cgroup's OOM kill counter rose during the run. */
  oom?: OomReport;
  /** stdout and stderr as kept, where faulthandler's traceback may be. */
  outputKept: string;
  /** stdout and stderr apart: a crash report (a traceback) ends one of them, or a shell's word that a command it ran died is in stderr. */
  streams?: { stdout: string; stderr: string };
  /** The run's directory: a report's files are named from it. */
  cwd?: string;
  /** The main process is a shell, so 128+n means a child died of signal n. */
  viaShell: boolean;
  /** The supervisor went away while it ran; text says what was recovered. */
  lost?: string;
  /** Exit codes besides 0 the run was told mean success (okExitCodes). */
  okExitCodes?: readonly number[];
}

export interface Judgement {
  verdict: Verdict;
  advice: string | null;
  notes: string[];
}

const STEP_SIGNAL: Record<StopStep, string> = { interrupt: 'SIGINT', terminate: 'SIGTERM', kill: 'SIGKILL' };

export function judge(o: Observations): Judgement {
  if (o.spawnFailure !== undefined) {
    return { verdict: 'spawn-failed', advice: o.spawnFailure, notes: [] };
  }
  if (o.lost !== undefined) {
    return { verdict: 'lost', advice: o.lost, notes: ['Warden went away while it ran; this result was recovered when Warden started again.'] };
  }
  // A stop Warden asked for explains the ending, whatever the exit code or signal.
  if (o.stop) return judgeStopped(o, o.stop);
  if (o.signal !== null) return judgeSignal(o, o.signal);
  // A shell's child killed by the OOM killer while the shell went on to exit 0.
  if (o.exitCode === 0) return { verdict: 'completed', advice: null, notes: o.oom?.confirmed ? [oomNote(o.oom)] : [] };
  if (o.exitCode !== null && o.okExitCodes?.includes(o.exitCode)) {
    const notes = [`Exit code ${o.exitCode} ${whenEnded(o)}, which this run was told means success (ok-exit ${o.okExitCodes.join(', ')}).`];
    return { verdict: 'completed', advice: null, notes: o.oom?.confirmed ? [...notes, oomNote(o.oom)] : notes };
  }
  if (o.exitCode === null) {
    return {
      verdict: 'failed',
      advice: 'Read stderr for what happened; its exit status could not be read.',
      notes: [`It ended without an exit status or a signal that Warden could read, ${whenEnded(o)}.`],
    };
  }
  return judgeExitCode(o, o.exitCode);
}

/**
 * "after 0.33 s, before the 1 min limit". Only the stop record makes a timeout,
 * so an ending at or just past the limit, before the deadline engine acted,
 * says so instead of claiming "before".
 */
function whenEnded(o: Observations): string {
  if (o.limitMs === null) return `after ${seconds(o.elapsedMs)}`;
  if (o.elapsedMs >= o.limitMs) {
    return `after ${seconds(o.elapsedMs)}, when the ${seconds(o.limitMs)} limit had just passed but before Warden sent any signal`;
  }
  let elapsed = seconds(o.elapsedMs);
  // 59.999 s must not read as "60 s, before the 1 min limit".
  if (elapsed === seconds(o.limitMs) || Number((o.elapsedMs / 1000).toFixed(2)) * 1000 >= o.limitMs) elapsed = `${(o.elapsedMs / 1000).toFixed(3)} s`;
  return `after ${elapsed}, before the ${seconds(o.limitMs)} limit`;
}

function judgeStopped(o: Observations, stop: NonNullable<Observations['stop']>): Judgement {
  const how = endedHow(o, stop.endedBy);
  if (stop.reason === 'deadline') {
    const limitMs = o.limitMs ?? stop.requestedAtMs;
    return {
      verdict: 'timed-out',
      advice: timedOutAdvice(stop.endedBy, limitMs, o.kind),
      notes: [`Stopped at the ${seconds(limitMs)} limit: ${how}.`],
    };
  }
  const requested = `after ${seconds(stop.requestedAtMs)}${o.limitMs !== null ? `, before the ${seconds(o.limitMs)} limit` : ''}`;
  // The host's note says whose going away stopped it; "on request" would be false.
  if (stop.reason === 'owner') return { verdict: 'stopped', advice: null, notes: [`It ${how.replace(/^it /, '')}.`] };
  // The run's own notes say how long the lease was, and which probes did not pass.
  if (stop.reason === 'lease') return { verdict: 'stopped', advice: 'Renew a service\'s lease with extend while you still use it, or start it with a longer --lease.', notes: [`Stopped when its lease ran out ${requested}: ${how}.`] };
  if (stop.reason === 'not-ready') {
    return {
      verdict: 'stopped',
      advice: 'It never became ready: compare the readiness probes with what it printed (a server that moved to another port, a banner worded differently, a health path that answers 404), or give it longer with --ready-timeout.',
      notes: [`Stopped because it was not ready ${requested}: ${how}.`],
    };
  }
  const who = stop.reason === 'shutdown' ? `Stopped because Warden shut down ${requested}` : `Stopped on request ${requested}`;
  return { verdict: 'stopped', advice: null, notes: [`${who}: ${how}.`] };
}

/** "it ended at the interrupt step (SIGINT) after 1.01 s[, with exit code 130]" */
function endedHow(o: Observations, step: StopStep): string {
  const stepSignal = STEP_SIGNAL[step];
  let ending = '';
  if (o.signal !== null) ending = o.signal === stepSignal ? '' : `, by ${o.signal}`;
  else if (o.exitCode !== null) ending = `, with exit code ${o.exitCode}`;
  else ending = ', without an exit status';
  return `it ended at the ${step} step (${stepSignal}) after ${seconds(o.elapsedMs)}${ending}`;
}

function judgeSignal(o: Observations, signal: string): Judgement {
  const when = whenEnded(o);
  if (signal === 'SIGKILL') {
    if (o.oom?.confirmed) {
      return {
        verdict: 'killed',
        advice: killAdvice(o.oom, o.kind),
        notes: [`Killed by the out-of-memory killer ${when}: the memory cgroup's out-of-memory counter rose.`],
      };
    }
    return {
      verdict: 'killed',
      advice: killAdvice(o.oom, o.kind),
      notes: [`Killed by SIGKILL ${when}. Warden did not send it; possibly the out-of-memory killer.`],
    };
  }
  if (isCrashSignal(signal)) {
    // A panic that aborts (Rust's panic = "abort") says where; so does faulthandler's report of a native crash.
    const crash = o.streams ? findCrash(o.streams) : null;
    const advice = crash && crash.traceback.how !== 'fatal' ? tracebackAdvice(crash, o.cwd) : crashAdvice(o.outputKept, o.kind, crash?.traceback, o.cwd);
    return { verdict: 'crashed', advice, notes: [`Crashed with ${signal} ${when}.`] };
  }
  return {
    verdict: 'signaled',
    advice: otherSignalAdvice(o.kind),
    notes: [`Ended by ${signal} ${when}. Warden did not send it.`],
  };
}

function judgeExitCode(o: Observations, exitCode: number): Judgement {
  const notes: string[] = [];
  const when = whenEnded(o);
  const head = `Exit code ${exitCode} ${when}.`;
  const n = exitCode - 128;
  const childSignal = n > 0 && n < 65 ? signalName(n) : undefined;
  if (exitCode === 124) {
    const why = o.limitMs === null ? 'No limit was set here, so Warden did not stop it' : 'The limit did not stop it';
    notes.push(`${head} ${why}: exit code 124 usually comes from a timeout the command sets itself, such as a nested \`timeout\`.`);
  } else if (exitCode === 137 && o.oom?.confirmed) {
    // A shell's 137 with the counter risen: its command was OOM-killed, which is the run's ending.
    const who = o.viaShell ? 'a command the shell ran' : 'it or a process it ran';
    return {
      verdict: 'killed',
      advice: killAdvice(o.oom, o.kind),
      notes: [`${head} The out-of-memory killer killed ${who}: the memory cgroup's out-of-memory counter rose.`],
    };
  } else if (exitCode === 137) {
    const who = o.viaShell ? 'a command the shell ran' : 'it or a process it ran';
    notes.push(`${head} This usually means ${who} was killed with SIGKILL, possibly by the out-of-memory killer; Warden sent no signal.`);
  } else if (childSignal !== undefined) {
    notes.push(
      o.viaShell
        ? `${head} From a shell, exit code ${exitCode} (128 + ${n}) means a command the shell ran died of ${childSignal}.`
        : `${head} Exit code ${exitCode} is 128 + ${n}: it may mean a process it ran died of ${childSignal}, though a program can also exit with ${exitCode} by itself.`,
    );
  } else if (o.kind === 'python') {
    notes.push(`The Python interpreter exited with code ${exitCode} ${when}, while the script ran.`);
  }
  if (o.oom?.confirmed) notes.push(oomNote(o.oom));
  const crash = o.streams ? findCrash(o.streams) : null;
  // A shell's word that a command it ran died says which one, whatever status the shell went on to exit with.
  const shellCrash = o.streams && o.kind === 'command' ? findShellCrash(o.streams.stderr) : null;
  if (shellCrash) notes.push(shellCrashNote(shellCrash));
  return {
    verdict: 'failed',
    advice: exitCodeAdvice(exitCode, { kind: o.kind, childSignal, viaShell: o.viaShell, outputKept: o.outputKept, oom: o.oom, crash, shellCrash, ...(o.cwd !== undefined ? { cwd: o.cwd } : {}) }),
    notes,
  };
}
