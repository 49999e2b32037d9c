// Numbers as a reader sees them in notes and advice.

import { minutesText } from '../../shared/duration';

/**
 * "0.33 s", "1 s", "1.5 s" (at most two decimals, none trailing) under a
 * minute, then as the views write it: "1 min", "20 min 31 s", "1 h 02 min".
 */
export function seconds(ms: number): string {
  if (ms >= 60_000) return minutesText(ms);
  return `${(ms / 1000).toFixed(2).replace(/\.?0+$/, '')} s`;
}

/** "256 MiB", "1.5 GiB", "512 KiB", "100 B". */
export function bytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const text = unit === 0 ? String(value) : value.toFixed(1).replace(/\.0$/, '');
  return `${text} ${units[unit]}`;
}

/** "12,345" */
export function count(n: number): string {
  return n.toLocaleString('en-US');
}
