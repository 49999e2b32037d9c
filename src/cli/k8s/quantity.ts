// Memory as Kubernetes writes it (resource.Quantity): 2Gi and 512Mi are
// powers of 1024, 2G and 500M powers of 1000, a bare number is bytes, and
// nothing else (a manifest must take it). `warden run --memory` reads the
// same units (shared/size.ts); `warden k8s job` still gives it the exact size
// in MiB or bytes, which older Wardens in an image read the same way.

import { UsageError } from '../parse';

const FACTOR: Readonly<Record<string, number>> = { '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4 };
const MIB = 1024 ** 2;

/** Bytes of a memory quantity; at least 1 MiB (below that not even the wrapper shell starts). */
export function parseQuantity(flag: string, text: string): number {
  const m = /^(\d+(?:\.\d+)?)(k|M|G|T|Ki|Mi|Gi|Ti)?$/.exec(text);
  const bytes = m ? Math.ceil(Number(m[1]) * FACTOR[m[2] ?? '']!) : Number.NaN;
  if (!Number.isSafeInteger(bytes)) throw new UsageError(`${flag} takes a size as Kubernetes writes it: 512Mi, 2Gi (powers of 1024), 500M, 2G (powers of 1000), not ${JSON.stringify(text)}.`);
  if (bytes < MIB) throw new UsageError(`${flag} must be at least 1Mi, not ${JSON.stringify(text)}.`);
  return bytes;
}

/** The size as `warden run --memory` reads it: whole MiB when exact, else bytes. */
export function wardenMemory(bytes: number): string {
  return bytes % MIB === 0 ? `${bytes / MIB}MiB` : String(bytes);
}

/** A quantity in whole Mi, rounded up. */
export function mebibytes(bytes: number): string {
  return `${Math.ceil(bytes / MIB)}Mi`;
}
