import { describe, expect, it } from 'vitest';
import { sparkPaths } from './spark';

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
    expect(paths.cpu).toBe('30.5,10.0 60.5,1.0');
    expect(paths.rss.split(' ')).toEqual(['30.5,11', '30.5,1.0', '60.5,5.5', '60.5,11']);
  });

  it('needs two points', () => {
    expect(sparkPaths([[0, 1, 1, 1]], 10, 10)).toBeNull();
  });
});
