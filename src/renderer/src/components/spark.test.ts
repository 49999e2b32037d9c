import { describe, expect, it } from 'vitest';
import { sparkLabel, sparkPaths } from './spark';

describe('sparkline geometry', () => {
  it('draws the last minute only, CPU against one core at least, memory as an area to the baseline', () => {
    const points: [number, number, number, number][] = [
      [0, 50, 100, 1],
      [30_000, 100, 200, 1],
      [90_000, 0, 400, 1],
      [120_000, 100, 200, 1],
    ];
    const paths = sparkPaths(points, 61, 11)!;
    expect(paths.count).toBe(2);
    // The two points in the minute span the box.
    expect(paths.cpu).toBe('0.5,10.0 60.5,1.0');
    // Memory's highest (400) at four fifths of the height: 10 - 0.8 * 9 = 2.8; 200 at 10 - 0.4 * 9 = 6.4.
    expect(paths.rss.split(' ')).toEqual(['0.5,11', '0.5,2.8', '60.5,6.4', '60.5,11']);
    expect(paths).toMatchObject({ now: { x: 60.5, y: 1 }, cpuNow: 100, cpuMax: 100, rssNow: 200, rssMax: 400, againstLimit: false, nearLimit: false, spanMs: 30_000 });
  });

  it('draws a run younger than a minute across the box, not as a sliver at its right', () => {
    const paths = sparkPaths(
      [
        [0, 10, 100, 1],
        [1_000, 20, 100, 1],
        [2_000, 30, 100, 1],
      ],
      61,
      11,
    )!;
    expect(paths.cpu.split(' ').map((p) => p.split(',')[0])).toEqual(['0.5', '30.5', '60.5']);
    expect(sparkLabel(paths)).toMatch(/; since it started$/);
  });

  it('draws memory against the limit when there is one: a quarter of it fills a quarter', () => {
    const points: [number, number, number, number][] = [
      [0, 0, 100, 1],
      [1_000, 0, 100, 1],
    ];
    // height 10: the area's top is at 9 - 0.25 * 8 = 7.
    expect(sparkPaths(points, 61, 10, 60_000, 400)!.rss.split(' ')[1]).toBe('0.5,7.0');
    expect(sparkPaths(points, 61, 10, 60_000, 400)).toMatchObject({ againstLimit: true, nearLimit: false });
    // Without one, its own highest value is four fifths of the height (9 - 0.8 * 8 = 2.6): flat memory is a level, not a solid block.
    expect(sparkPaths(points, 61, 10)!.rss.split(' ')[1]).toBe('0.5,2.6');
    // At 80 % of the limit or more it is near.
    expect(sparkPaths(points, 61, 10, 60_000, 120)).toMatchObject({ againstLimit: true, nearLimit: true });
  });

  it('says the figures in words: now and highest, and the limit when drawn against it', () => {
    const MiB = 1024 ** 2;
    expect(sparkLabel({ cpuNow: 12.4, cpuMax: 98, rssNow: 45 * MiB, rssMax: 60 * MiB, againstLimit: true }, 256 * MiB)).toBe(
      'CPU 12 % now, highest 98 %; memory 45 MiB now, highest 60 MiB of a 256 MiB limit; last minute',
    );
    expect(sparkLabel({ cpuNow: 0, cpuMax: 3, rssNow: 5 * MiB, rssMax: 5 * MiB, againstLimit: false })).toBe('CPU 0 % now, highest 3 %; memory 5 MiB now, highest 5 MiB; last minute');
    // A lost run's latest point is not now.
    expect(sparkLabel({ cpuNow: 1, cpuMax: 3, rssNow: 5 * MiB, rssMax: 6 * MiB, againstLimit: false }, undefined, 'at its last sample')).toBe(
      'CPU 1 % at its last sample, highest 3 %; memory 5 MiB at its last sample, highest 6 MiB; last minute',
    );
  });

  it('needs two points', () => {
    expect(sparkPaths([[0, 1, 1, 1]], 10, 10)).toBeNull();
  });
});
