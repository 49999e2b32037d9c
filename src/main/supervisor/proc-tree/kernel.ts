// What the kernel tells this process about itself: the page size and clock
// tick rate (the auxiliary vector), and the time since boot.

import { readFileSync } from 'node:fs';
import { endianness } from 'node:os';

export function readUptime(procRoot: string): number | undefined {
  try {
    const seconds = Number.parseFloat(readFileSync(`${procRoot}/uptime`, 'latin1'));
    return Number.isFinite(seconds) ? seconds : undefined;
  } catch {
    return undefined;
  }
}

const AT_PAGESZ = 6;
const AT_CLKTCK = 17;
const WORD_32_ARCHES = new Set(['arm', 'ia32', 'mips', 'mipsel', 'ppc']);

/**
 * The page size and clock tick rate from the auxiliary vector the kernel gave
 * this process: the values getconf prints, without spawning it.
 */
export function kernelConstants(auxvPath = '/proc/self/auxv'): { pageSizeBytes?: number; clockTicksPerSecond?: number } {
  let auxv: Buffer;
  try {
    auxv = readFileSync(auxvPath);
  } catch {
    return {};
  }
  const word = WORD_32_ARCHES.has(process.arch) ? 4 : 8;
  const little = endianness() === 'LE';
  const at = (offset: number): number => {
    if (word === 4) return little ? auxv.readUInt32LE(offset) : auxv.readUInt32BE(offset);
    return Number(little ? auxv.readBigUInt64LE(offset) : auxv.readBigUInt64BE(offset));
  };
  const found: { pageSizeBytes?: number; clockTicksPerSecond?: number } = {};
  for (let offset = 0; offset + 2 * word <= auxv.length; offset += 2 * word) {
    const type = at(offset);
    if (type === 0) break; // AT_NULL ends the vector
    if (type === AT_PAGESZ) found.pageSizeBytes = at(offset + word);
    if (type === AT_CLKTCK) found.clockTicksPerSecond = at(offset + word);
  }
  return found;
}
