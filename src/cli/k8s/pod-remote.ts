// `warden remote add NAME --k8s-pod NS/POD[/CONTAINER]`: the `kubectl exec`
// transport written for the user, as the command line a --command remote
// keeps (src/client/remotes.ts splits it into words, no shell): kubectl from
// PATH, -i for stdio, the pod's warden dial-stdio. Access is kubectl's: whoever
// may exec into the pod may use its Warden.

import { parsePodRef, type PodRef } from './names';

/** A word as remotes.ts's splitter reads it back: bare when plain, else double-quoted with \" and \\. */
export function quoteWord(word: string): string {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(word) ? word : `"${word.replace(/[\\"]/g, '\\$&')}"`;
}

export function podDialArgv(ref: PodRef, warden: readonly string[] = ['warden']): string[] {
  return ['kubectl', 'exec', '-i', '-n', ref.namespace, ref.pod, ...(ref.container !== undefined ? ['-c', ref.container] : []), '--', ...warden, 'dial-stdio'];
}

/** The --command line for the pod named NS/POD[/CONTAINER]; `warden` is how the pod runs warden, split at spaces. */
export function podCommand(text: string, warden?: string): string {
  const words = warden === undefined ? ['warden'] : warden.split(' ').filter((w) => w !== '');
  return podDialArgv(parsePodRef(text), words.length > 0 ? words : ['warden']).map(quoteWord).join(' ');
}
