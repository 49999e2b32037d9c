// Numbers as a reader sees them in notes and advice.

/** "0.33 s", "1 s", "60 s", "1.5 s": at most two decimals, none trailing. */
export function seconds(ms: number): string {
  const s = ms / 1000;
  const text = s >= 100 ? String(Math.round(s)) : s.toFixed(2).replace(/\.?0+$/, '');
  return `${text} s`;
}

/** The one byte formatter (src/shared/bytes.ts). */
export { bytes } from '../../shared/bytes';

/** "12,345" */
export function count(n: number): string {
  return n.toLocaleString('en-US');
}
