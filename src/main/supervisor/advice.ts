// The first step for the reader, picked by how the run ended. Hedged wherever
// the evidence is indirect: an exit code does not prove who sent a signal.

import { CRASH_SIGNALS, type StopStep } from '../../shared/result';
import { bytes, seconds } from './format';

/** faulthandler's first words; it does not start a line, so look anywhere. */
export const FATAL_PYTHON_ERROR = 'Fatal Python error: ';

export function isCrashSignal(signal: string): boolean {
  return CRASH_SIGNALS.includes(signal);
}

export function crashAdvice(outputKept: string): string {
  return outputKept.includes(FATAL_PYTHON_ERROR)
    ? 'Check the traceback above for the call that crashed in native code, such as an extension module the script uses.'
    : 'Check whether native code the command calls crashes, such as an extension module it uses.';
}

export function killAdvice(oom?: { peakBytes?: number; limitBytes?: number }): string {
  if (oom?.limitBytes !== undefined) {
    const peak = oom.peakBytes !== undefined ? `; its peak was ${bytes(oom.peakBytes)}` : '';
    return `The out-of-memory killer ended it at its ${bytes(oom.limitBytes)} limit${peak}. Raise --memory or use less memory.`;
  }
  return 'Check whether it uses too much memory: SIGKILL is what the out-of-memory killer sends. If not, ask whoever runs this host what else kills processes.';
}

export function otherSignalAdvice(kind: 'command' | 'python'): string {
  const self = kind === 'python' ? 'the script' : 'the command';
  return `Check whether ${self} ends itself, for example with os.kill() or kill; if not, ask whoever runs this host what sends it signals.`;
}

export function timedOutAdvice(step: StopStep, limitMs: number): string {
  const raise = `Raise the limit (now ${seconds(limitMs)}) if it needs longer, or make it report progress and finish in parts.`;
  if (step === 'interrupt') return raise;
  return `${raise} It ignored SIGINT${step === 'kill' ? ' and SIGTERM' : ''}, so it had no chance to clean up: handle SIGINT to stop cleanly.`;
}

/** Advice for a non-zero exit code, read the way a shell reports its children. */
export function exitCodeAdvice(exitCode: number, kind: 'command' | 'python', childSignal?: string): string {
  if (kind === 'python') return 'Check whether the script ends the process with os._exit().';
  if (childSignal !== undefined) {
    if (childSignal === 'SIGKILL') return killAdvice();
    if (isCrashSignal(childSignal)) return crashAdvice('');
    return `Check what sent ${childSignal} to the command it ran.`;
  }
  switch (exitCode) {
    case 124:
      return 'Check the timeout the command sets itself (a nested `timeout`, for example): the limit here did not stop it.';
    case 126:
      return 'A command it ran was found but could not be executed: check its permissions and its #! line.';
    case 127:
      return 'A command it ran was not found: check its spelling and PATH.';
    case 2:
      return 'Exit code 2 often means a usage error: check the arguments, then read stderr.';
    default:
      return 'Read stderr for the error the command reported.';
  }
}
