// `warden k8s job`: a batch/v1 Job whose container runs its command under
// `warden run`, with what makes the Job act on Warden's verdict
// (docs/kubernetes.md): the k8s exit-code contract, the termination message,
// a podFailurePolicy keyed on its codes, a pod deadline that never comes
// before Warden's own, and a container memory limit above Warden's so the OOM
// kill happens in Warden's cgroup, where it is seen and confirmed.
//
// Typed against @kubernetes/client-node's V1Job (a dev dependency: the type
// is checked by `npm run typecheck` and erased from the bundle).

import type { V1Job, V1PodFailurePolicyRule } from '@kubernetes/client-node';
import { DEFAULT_OOM_EXIT_CODE, TIMED_OUT_STATUS, WARDEN_ERROR_STATUS } from '../exit-codes';
import { mebibytes, wardenMemory } from './quantity';

/** Where the pod's Warden keeps its history and socket (an emptyDir), for `warden remote add --k8s-pod`. */
export const POD_STATE_DIR = '/var/lib/warden';
export const STATE_VOLUME = 'warden-state';
/**
 * Memory the container gets above Warden's limit for the run: `warden run`
 * and its background host are two Node processes (about 60 to 100 MiB each
 * at their peak), plus the sentinel's shell.
 */
export const MEMORY_HEADROOM_BYTES = 256 * 1024 ** 2;
/**
 * The pod's activeDeadlineSeconds beyond the limit, by default. The pod's
 * clock starts when the kubelet takes it, before the image is pulled; after
 * the limit Warden still interrupts, waits its grace (5 s), ends what is left
 * (teardown, up to 10 s) and writes the message. Five minutes covers an
 * ordinary image pull; a larger one wants --deadline-grace.
 */
export const DEFAULT_DEADLINE_GRACE_S = 300;

export interface JobOptions {
  /** The command Warden runs. */
  argv: string[];
  image: string;
  name: string;
  namespace?: string;
  container: string;
  /** --limit as given (Warden reads it) and in ms (the pod's deadline). */
  limit?: { text: string; ms: number };
  /** Warden's memory limit for the run, in bytes. */
  memoryBytes?: number;
  /** --indexed N: an Indexed Job of N completions. */
  indexed?: number;
  parallelism?: number;
  /** Retries: backoffLimit, or backoffLimitPerIndex with --indexed. */
  backoffLimit: number;
  /** --oom-exit-code, when given (else Warden's default, 137). */
  oomExitCode?: number;
  deadlineGraceS: number;
  /** How the image runs warden: its words (default ["warden"]). */
  warden: string[];
}

/** The container's command: the run's under `warden run` with the k8s contract and the termination message. */
export function wardenCommand(options: Pick<JobOptions, 'argv' | 'limit' | 'memoryBytes' | 'oomExitCode' | 'warden'>): string[] {
  return [
    ...options.warden,
    'run',
    '--exit-codes',
    'k8s',
    ...(options.oomExitCode !== undefined ? ['--oom-exit-code', String(options.oomExitCode)] : []),
    ...(options.limit ? ['--limit', options.limit.text] : []),
    ...(options.memoryBytes !== undefined ? ['--memory', wardenMemory(options.memoryBytes)] : []),
    '--termination-log',
    '--',
    ...options.argv,
  ];
}

/**
 * The podFailurePolicy: a timeout, Warden's own error, a command that cannot
 * run or is not there fail the Job (or the index) at once, since a retry
 * would end the same way; the OOM code is counted against the retries; a
 * disruption (a drain, a preemption) is not the task's doing and is not.
 */
export function failureRules(options: Pick<JobOptions, 'container' | 'indexed' | 'oomExitCode'>): V1PodFailurePolicyRule[] {
  const onCodes = (values: number[]) => ({ containerName: options.container, operator: 'In', values });
  return [
    { action: options.indexed !== undefined ? 'FailIndex' : 'FailJob', onExitCodes: onCodes([TIMED_OUT_STATUS, WARDEN_ERROR_STATUS, 126, 127]) },
    { action: 'Count', onExitCodes: onCodes([options.oomExitCode ?? DEFAULT_OOM_EXIT_CODE]) },
    { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] },
  ];
}

export function jobManifest(options: JobOptions): V1Job {
  const memory = options.memoryBytes !== undefined ? mebibytes(options.memoryBytes + MEMORY_HEADROOM_BYTES) : undefined;
  const indexed = options.indexed !== undefined;
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: options.name, ...(options.namespace !== undefined ? { namespace: options.namespace } : {}) },
    spec: {
      ...(indexed
        ? { completionMode: 'Indexed', completions: options.indexed, parallelism: options.parallelism ?? options.indexed, backoffLimitPerIndex: options.backoffLimit }
        : { backoffLimit: options.backoffLimit, ...(options.parallelism !== undefined ? { parallelism: options.parallelism } : {}) }),
      podFailurePolicy: { rules: failureRules(options) },
      template: {
        spec: {
          restartPolicy: 'Never', // a podFailurePolicy needs it
          ...(options.limit ? { activeDeadlineSeconds: Math.ceil(options.limit.ms / 1000) + options.deadlineGraceS } : {}),
          containers: [
            {
              name: options.container,
              image: options.image,
              command: wardenCommand(options),
              // Warden's message when it wrote one; the log's tail when it could not (the container killed at its own limit).
              terminationMessagePolicy: 'FallbackToLogsOnError',
              env: [{ name: 'WARDEN_STATE_DIR', value: POD_STATE_DIR }],
              ...(memory !== undefined ? { resources: { limits: { memory }, requests: { memory } } } : {}),
              volumeMounts: [{ name: STATE_VOLUME, mountPath: POD_STATE_DIR }],
            },
          ],
          volumes: [{ name: STATE_VOLUME, emptyDir: {} }],
        },
      },
    },
  };
}
