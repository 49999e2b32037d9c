// `warden k8s sandbox`: an agent-sandbox Sandbox (kubernetes-sigs/agent-sandbox,
// agents.x-k8s.io/v1alpha1: one stateful pod with a stable identity) running
// `warden serve`, so agents' runs in it go through one host with a history
// that outlives restarts; reached with `warden remote add NAME --k8s-pod
// NS/POD`, which carries the API over `kubectl exec -i ... warden dial-stdio`.
// The pod spec is typed against @kubernetes/client-node's V1PodSpec (the
// Sandbox resource itself is agent-sandbox's, not in that package).

import type { V1ObjectMeta, V1PersistentVolumeClaimSpec, V1PodSpec } from '@kubernetes/client-node';
import { mebibytes } from './quantity';
import { POD_STATE_DIR, STATE_VOLUME } from './job';

export const SANDBOX_API_VERSION = 'agents.x-k8s.io/v1alpha1';

export interface SandboxManifest {
  apiVersion: typeof SANDBOX_API_VERSION;
  kind: 'Sandbox';
  metadata: V1ObjectMeta;
  spec: {
    podTemplate: { metadata?: { labels?: Record<string, string> }; spec: V1PodSpec };
    volumeClaimTemplates?: { metadata: { name: string }; spec: V1PersistentVolumeClaimSpec }[];
  };
}

export interface SandboxOptions {
  name: string;
  namespace?: string;
  image: string;
  container: string;
  /** The container's memory limit (bytes), for everything the agents run in it. */
  memoryBytes?: number;
  /** The history's volume (a claim of this many bytes); null: an emptyDir, gone with the pod. */
  storageBytes: number | null;
  warden: string[];
}

export function sandboxManifest(options: SandboxOptions): SandboxManifest {
  const memory = options.memoryBytes !== undefined ? mebibytes(options.memoryBytes) : undefined;
  return {
    apiVersion: SANDBOX_API_VERSION,
    kind: 'Sandbox',
    metadata: { name: options.name, ...(options.namespace !== undefined ? { namespace: options.namespace } : {}) },
    spec: {
      podTemplate: {
        spec: {
          containers: [
            {
              name: options.container,
              image: options.image,
              // The host alone: no TCP, no web UI; clients come in over kubectl exec (warden dial-stdio).
              command: [...options.warden, 'serve', '--no-tcp'],
              env: [{ name: 'WARDEN_STATE_DIR', value: POD_STATE_DIR }],
              ...(memory !== undefined ? { resources: { limits: { memory }, requests: { memory } } } : {}),
              volumeMounts: [{ name: STATE_VOLUME, mountPath: POD_STATE_DIR }],
            },
          ],
          // SIGTERM stops the live runs with the stop sequence and records them: room for the grace (5 s) and teardown (10 s).
          terminationGracePeriodSeconds: 30,
          ...(options.storageBytes === null ? { volumes: [{ name: STATE_VOLUME, emptyDir: {} }] } : {}),
        },
      },
      ...(options.storageBytes !== null
        ? { volumeClaimTemplates: [{ metadata: { name: STATE_VOLUME }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: mebibytes(options.storageBytes) } } } }] }
        : {}),
    },
  };
}
