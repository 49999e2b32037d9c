// One pure function from what was observed to the verdict, its advice and its
// notes (ARCHITECTURE.md, "Verdicts"). Every row of that table is a test row.

import type { RunKind, StopReason, StopStep, Verdict } from '../../shared/result';
import {
  crashAdvice,
  exitCodeAdvice,
  isCrashSignal,
  killAdvice,
  otherSignalAdvice,
  timedOutAdvice,
} from './advice';
import { seconds } from './format';
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
  oom?: { confirmed: boolean; peakBytes?: number; limitBytes?: number };
  /** stdout and stderr as kept, where faulthandler's traceback may be. */
  outputKept: string;
  /** The main process is a shell, so 128+n means a child died of signal n. */
  viaShell: boolean;
  /** The supervisor went away while it ran; text says what was recovered. */
  lost?: string;
}

export interface Judgement {
  verdict: Verdict;
  advice: string | null;
  notes: string[];
}

export function judge(o: Observations): Judgement {
  if (o.spawnFailure !== undefined) {
    return { verdict: 'spawn-failed', advice: o.spawnFailure, notes: [] };
  }
  if (o.lost !== undefined) {
    return { verdict: 'lost', advice: o.lost, notes: [] };
  }
  if (o.stop) return judgeStopped(o, o.stop);
  if (o.signal !== null) return judgeSignal(o, o.signal);
  if (o.exitCode === 0) return { verdict: 'completed', advice: null, notes: [] };
  return judgeExitCode(o, o.exitCode ?? -1);
}

function judgeStopped(o: Observations, stop: NonNullable<Observations['stop']>): Judgement {
  const how = endedHow(o, stop.endedBy);
  if (stop.reason === 'deadline' && o.limitMs !== null) {
    return {
      verdict: 'timed-out',
      advice: timedOutAdvice(stop.endedBy, o.limitMs),
      notes: [`Stopped at the ${seconds(o.limitMs)} limit; ${how} after ${seconds(o.elapsedMs)}.`],
    };
  }
  const who = stop.reason === 'shutdown' ? 'Warden shut down while it ran' : 'Stopped on request';
  return {
    verdict: 'stopped',
    advice: null,
    notes: [`${who} after ${seconds(stop.requestedAtMs)}; ${how} after ${seconds(o.elapsedMs)}.`],
  };
}

function endedHow(o: Observations, step: StopStep): string {
  const ending = o.signal !== null ? `died of ${o.signal}` : `exited with code ${o.exitCode}`;
  const at = { interrupt: 'at SIGINT', terminate: 'at SIGTERM', kill: 'at SIGKILL' }[step];
  return `it ${ending} ${at}`;
}

function judgeSignal(o: Observations, signal: string): Judgement {
  const when = `after ${seconds(o.elapsedMs)}${o.limitMs !== null ? `, before the ${seconds(o.limitMs)} limit` : ''}`;
  if (signal === 'SIGKILL') {
    if (o.oom?.confirmed) {
      return { verdict: 'killed', advice: killAdvice(o.oom), notes: [`Killed by the out-of-memory killer ${when}.`] };
    }
    return {
      verdict: 'killed',
      advice: killAdvice(),
      notes: [`Killed by SIGKILL ${when}. Warden did not send it; possibly the out-of-memory killer.`],
    };
  }
  if (isCrashSignal(signal)) {
    return { verdict: 'crashed', advice: crashAdvice(o.outputKept), notes: [`Crashed with ${signal} ${when}.`] };
  }
  return {
    verdict: 'signaled',
    advice: otherSignalAdvice(o.kind),
    notes: [`Ended by ${signal} ${when}. Warden did not send it.`],
  };
}

function judgeExitCode(o: Observations, exitCode: number): Judgement {
  const notes: string[] = [];
  const limit = o.limitMs !== null ? `, before the ${seconds(o.limitMs)} limit` : '';
  const after = `Exit code ${exitCode} after ${seconds(o.elapsedMs)}${limit}.`;
  const childSignal = exitCode > 128 && exitCode < 128 + 65 ? signalName(exitCode - 128) : undefined;
  if (exitCode === 124) {
    notes.push(`${after} The limit did not stop it: exit code 124 usually comes from a nested timeout.`);
  } else if (exitCode === 137) {
    notes.push(`${after} This usually means a process was killed with SIGKILL, possibly by the out-of-memory killer.`);
  } else if (childSignal !== undefined) {
    const who = o.viaShell ? 'a command the shell ran' : 'it or a process it ran';
    notes.push(`Exit code ${exitCode} usually means ${who} died of ${childSignal} (128 + ${exitCode - 128}).`);
  }
  return { verdict: 'failed', advice: exitCodeAdvice(exitCode, o.kind, childSignal), notes };
}
