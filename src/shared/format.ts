// Numbers as a reader sees them in notes and advice.

import { minutesText } from './duration';

/**
 * "0.33 s", "1 s", "1.5 s" (at most two decimals, none trailing) under a
 * minute, then as the views write it: "1 min", "20 min 31 s", "1 h 02 min".
 */
export function seconds(ms: number): string {
  if (ms >= 60_000) return minutesText(ms);
  return `${(ms / 1000).toFixed(2).replace(/\.?0+$/, '')} s`;
}

/** The one byte formatter (src/shared/bytes.ts). */
export { bytes } from './bytes';

/** "12,345" */
export function count(n: number): string {
  return n.toLocaleString('en-US');
}
