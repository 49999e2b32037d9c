// How `warden run` turns a run's end into its exit status: the contract a
// caller acts on. `standard` is a shell's reading (the command's code, 124
// timed out, 128+n a signal); `k8s` is for a Kubernetes Job's
// podFailurePolicy, which sees nothing but the number: every verdict gets a
// code of its own where the standard one is ambiguous (an OOM kill and any
// other SIGKILL are both 137; a stop on request is 130 or 143 or 137 by the
// step that ended it). docs/kubernetes.md has the table for users.

import type { RunResult } from '../shared/result';
import { signalNumber } from '../main/supervisor/signals';
import { UsageError } from './parse';
import { exitStatusFor } from './render';

export type ExitCodeContract = 'standard' | 'k8s';

/** The contract's name as the termination message carries it: a reader knows how to read `exit`. */
export const CONTRACT_NAMES: Readonly<Record<ExitCodeContract, string>> = { standard: 'standard/v1', k8s: 'k8s/v1' };

/** The OOM kill's code under k8s unless --oom-exit-code says otherwise: 128 + SIGKILL, what Kubernetes itself shows. */
export const DEFAULT_OOM_EXIT_CODE = 137;
/** Timed out, Warden's own error, stopped on request: codes the k8s contract gives a meaning of their own. */
export const TIMED_OUT_STATUS = 124;
export const WARDEN_ERROR_STATUS = 125;
export const STOPPED_STATUS = 143;

export interface ExitCodeChoice {
  contract: ExitCodeContract;
  /** The status of a confirmed OOM kill under k8s. */
  oomExitCode: number;
}

/** --exit-codes's value. */
export function parseExitCodes(text: string): ExitCodeContract {
  if (text !== 'standard' && text !== 'k8s') throw new UsageError(`--exit-codes takes standard or k8s, not ${JSON.stringify(text)}.`);
  return text;
}

/**
 * The contract a run uses: --exit-codes when given, else k8s when
 * --oom-exit-code is given or inside a Kubernetes pod (KUBERNETES_SERVICE_HOST
 * is set in every container), else standard. --oom-exit-code with
 * --exit-codes standard is refused: standard has no code of its own for an
 * OOM kill.
 */
export function exitCodeChoice(given: { exitCodes?: ExitCodeContract; oomExitCode?: number }, env: NodeJS.ProcessEnv = process.env): ExitCodeChoice {
  const inPod = (env.KUBERNETES_SERVICE_HOST ?? '') !== '';
  const contract = given.exitCodes ?? (given.oomExitCode !== undefined || inPod ? 'k8s' : 'standard');
  if (given.oomExitCode !== undefined && contract === 'standard') throw new UsageError('--oom-exit-code goes with --exit-codes k8s: the standard contract gives an OOM kill 137, as any SIGKILL.');
  return { contract, oomExitCode: given.oomExitCode ?? DEFAULT_OOM_EXIT_CODE };
}

/** Codes the k8s contract already gives a meaning, which an OOM code must not take. */
const TAKEN: Readonly<Record<number, string>> = {
  0: 'completed',
  [TIMED_OUT_STATUS]: 'timed out',
  [WARDEN_ERROR_STATUS]: "Warden's own error",
  126: 'the command could not be run',
  127: 'the command was not found',
  [STOPPED_STATUS]: 'stopped on request',
};

export function parseOomExitCode(text: string): number {
  const n = Number(text);
  if (!/^\d{1,3}$/.test(text) || n < 1 || n > 255) throw new UsageError(`--oom-exit-code takes a status from 1 to 255, not ${JSON.stringify(text)}.`);
  const taken = TAKEN[n];
  if (taken !== undefined) throw new UsageError(`--oom-exit-code ${n} would read as ${taken}: pick another (75, say).`);
  return n;
}

const bySignal = (result: RunResult): number | null => {
  const n = result.signal === null ? undefined : signalNumber(result.signal);
  return n === undefined ? null : 128 + n;
};

/**
 * The k8s contract, verdict by verdict (a row each in exit-codes.test.ts):
 *
 * | verdict      | status |
 * |--------------|--------|
 * | completed    | 0 |
 * | failed       | the command's own code |
 * | timed-out    | 124, whatever ended it |
 * | stopped      | 143, whatever step ended it (a stop asked by a person, a client, a shutdown, the owner's end) |
 * | killed       | the OOM code when the kernel's OOM kill was confirmed; else 128+n (137) |
 * | crashed, signaled | 128+n; a shell's 128+n for its child stays as the shell gave it |
 * | spawn-failed | 126 cannot run, 127 not found (as the standard contract) |
 * | lost         | 125: Warden lost its host, which is Warden's failure |
 * | none yet     | the standard status (a yielded run's 75) |
 */
export function k8sExitStatus(result: RunResult, oomExitCode = DEFAULT_OOM_EXIT_CODE): number {
  switch (result.verdict) {
    case 'completed':
      return 0;
    case 'failed':
      return result.exitCode ?? WARDEN_ERROR_STATUS;
    case 'timed-out':
      return TIMED_OUT_STATUS;
    case 'stopped':
      return STOPPED_STATUS;
    case 'killed':
      if (result.oom?.confirmed === true) return oomExitCode;
      return bySignal(result) ?? result.exitCode ?? WARDEN_ERROR_STATUS;
    case 'crashed':
    case 'signaled':
      return bySignal(result) ?? result.exitCode ?? WARDEN_ERROR_STATUS;
    case 'spawn-failed':
      return result.exitCode ?? WARDEN_ERROR_STATUS;
    case 'lost':
      return WARDEN_ERROR_STATUS;
    default:
      return exitStatusFor(result);
  }
}

/** The exit status of an ended run under the chosen contract. */
export function exitStatusUnder(choice: ExitCodeChoice, result: RunResult): number {
  return choice.contract === 'k8s' ? k8sExitStatus(result, choice.oomExitCode) : exitStatusFor(result);
}
