// Numbers as notes, advice, the CLI and `warden mcp` write them (format.ts):
// seconds under a minute with at most two decimals, then minutes; sizes in
// binary units; counts with thousands separators.

import { describe, expect, it } from 'vitest';
import { bytes, count, seconds } from './format';

const MiB = 1024 * 1024;

describe('format', () => {
  it.each([
    [0, '0 s'],
    [330, '0.33 s'],
    [1_000, '1 s'],
    [1_010, '1.01 s'],
    [1_500, '1.5 s'],
    [10_000, '10 s'],
    [59_999, '60 s'],
    [60_000, '1 min'],
    [150_400, '2 min 30 s'],
    [1_231_000, '20 min 31 s'],
    [3_600_000, '1 h'],
    [3_725_000, '1 h 02 min'],
  ])('seconds(%i) is %s', (ms, text) => {
    expect(seconds(ms)).toBe(text);
  });

  it.each([
    [100, '100 B'],
    [512 * 1024, '512 KiB'],
    [256 * MiB, '256 MiB'],
    [Math.round(255.8 * MiB), '255.8 MiB'],
    [1.5 * 1024 * MiB, '1.5 GiB'],
  ])('bytes(%i) is %s', (n, text) => {
    expect(bytes(n)).toBe(text);
  });

  it.each([
    [0, '0'],
    [999, '999'],
    [1_000, '1,000'],
    [12_345, '12,345'],
    [1_234_567, '1,234,567'],
  ])('count(%i) is %s', (n, text) => {
    expect(count(n)).toBe(text);
  });
});
