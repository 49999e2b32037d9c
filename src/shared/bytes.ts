// Sizes as every part of Warden writes them, so a figure reads the same in a
// note, the CLI and the app: "512 B", "64 MiB", "4.77 MiB", "255.8 MiB", "1.5 GiB".

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

/** Binary units; two decimals under 10 and one above, trailing zeros dropped. */
export function bytes(n: number): string {
  let value = n;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  if (unit === 0) return `${value} B`;
  const text = value.toFixed(Math.abs(value) < 10 ? 2 : 1).replace(/\.?0+$/, '');
  return `${text} ${UNITS[unit]}`;
}
