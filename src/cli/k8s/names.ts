// Kubernetes' names as `warden k8s` and `warden remote add --k8s-pod` take
// them: checked here, so nothing a user types reaches kubectl's argv or a
// manifest as anything but a name (RFC 1123, as the API server checks them).

import { UsageError } from '../parse';

/** A namespace, a container, a Job's name: an RFC 1123 label (a Job's name is also its pods' job-name label). */
const LABEL = /^[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?$/;
/** A pod's name: an RFC 1123 subdomain (labels joined by dots, 253 characters at most). */
const SUBDOMAIN = /^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*$/;

export function checkLabel(what: string, text: string): string {
  if (!LABEL.test(text)) throw new UsageError(`${what} is 1 to 63 lower-case letters, digits or '-', starting and ending with a letter or digit (RFC 1123), not ${JSON.stringify(text)}.`);
  return text;
}

export function checkPodName(text: string): string {
  if (text.length > 253 || !SUBDOMAIN.test(text)) throw new UsageError(`A pod's name is lower-case letters, digits, '-' and '.' (RFC 1123, 253 at most), not ${JSON.stringify(text)}.`);
  return text;
}

export interface PodRef {
  namespace: string;
  pod: string;
  container?: string;
}

/** NS/POD or NS/POD/CONTAINER. */
export function parsePodRef(text: string): PodRef {
  const parts = text.split('/');
  if (parts.length < 2 || parts.length > 3) throw new UsageError(`Name a pod as NAMESPACE/POD or NAMESPACE/POD/CONTAINER, not ${JSON.stringify(text)}.`);
  const [namespace, pod, container] = parts as [string, string, string | undefined];
  return {
    namespace: checkLabel('A namespace', namespace),
    pod: checkPodName(pod),
    ...(container !== undefined ? { container: checkLabel("A container's name", container) } : {}),
  };
}

export function podRefText(ref: PodRef): string {
  return `${ref.namespace}/${ref.pod}${ref.container !== undefined ? `/${ref.container}` : ''}`;
}

/** A Job's default name from its command: `warden-` and the program's name as a label ("warden-train-py"). */
export function jobNameFor(argv: readonly string[]): string {
  const program = (argv[0] ?? '').split('/').pop() ?? '';
  const word = program.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 56).replace(/-+$/, '');
  return word === '' ? 'warden-job' : `warden-${word}`;
}
