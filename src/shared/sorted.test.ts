// The last entry at or before a value in an ascending list (sorted.ts).

import { describe, expect, it } from 'vitest';
import { lastAtOrBefore } from './sorted';

describe('lastAtOrBefore', () => {
  it.each<[string, number[], number, number | undefined, number]>([
    ['an empty list', [], 5, undefined, -1],
    ['before the first entry', [10, 20, 30], 9, undefined, -1],
    ['at the first entry', [10, 20, 30], 10, undefined, 0],
    ['between two entries', [10, 20, 30], 25, undefined, 1],
    ['at a middle entry', [10, 20, 30], 20, undefined, 1],
    ['at the last entry', [10, 20, 30], 30, undefined, 2],
    ['past the last entry', [10, 20, 30], 99, undefined, 2],
    ['equal entries: the last of them', [0, 5, 5, 5, 9], 5, undefined, 3],
    ['one entry, at it', [7], 7, undefined, 0],
    ['one entry, before it', [7], 6, undefined, -1],
    ['a longer list: the right one of many', [0, 4, 8, 12, 16, 20, 24, 28, 32], 13, undefined, 3],
    ['only the first `count` entries are read', [10, 20, 30, 40], 35, 2, 1],
    ['a count of none', [10, 20], 15, 0, -1],
  ])('%s', (_name, sorted, value, count, want) => {
    expect(lastAtOrBefore(sorted, value, count)).toBe(want);
  });

  it('reads typed arrays as lists', () => {
    expect(lastAtOrBefore(Uint32Array.of(0, 6, 12), 11)).toBe(1);
  });
});
