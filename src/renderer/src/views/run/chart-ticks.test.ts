import { describe, expect, it } from 'vitest';
import { binaryTicks, timeTicks } from './chart-ticks';

const MiB = 1024 * 1024;

describe('chart ticks', () => {
  it('steps memory in powers of two, so every tick is a whole KiB, MiB or GiB', () => {
    expect(binaryTicks(200 * MiB)).toEqual([0, 64, 128, 192].map((n) => n * MiB));
    expect(binaryTicks(5 * MiB)).toEqual([0, 2, 4].map((n) => n * MiB));
    expect(binaryTicks(3 * 1024 * MiB)).toEqual([0, 1024, 2048, 3072].map((n) => n * MiB));
    expect(binaryTicks(0)).toEqual([0]);
    // Never 4.77 or 47.7 MiB (decimal steps shown in binary units).
    for (const t of binaryTicks(50_000_000)) expect((t / MiB) % 1 === 0 || (t / 1024) % 1 === 0).toBe(true);
  });

  it('steps time as a clock reads, never closer than asked', () => {
    expect(timeTicks(130, 25)).toEqual([0, 30, 60, 90, 120]);
    expect(timeTicks(3700, 700)).toEqual([0, 900, 1800, 2700, 3600]);
    expect(timeTicks(4, 0.5)).toEqual([0, 1, 2, 3, 4]);
  });
  it('a zoomed range: ticks on the step, in tenths when it is narrow', () => {
    expect(timeTicks(4.2, 0.8, 2.1)).toEqual([3, 4]);
    expect(timeTicks(4.2, 0.4, 2.1)).toEqual([2.5, 3, 3.5, 4]);
    expect(timeTicks(2.65, 0.15, 2.1)).toEqual([2.2, 2.4, 2.6]);
  });
});
