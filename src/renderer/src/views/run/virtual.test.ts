import { describe, expect, it } from 'vitest';
import { scrollTopFor, visibleRange } from './virtual';

const base = { height: 400, lineHeight: 20, overscan: 5 };

describe('visibleRange', () => {
  it('renders the visible lines plus overscan', () => {
    expect(visibleRange({ ...base, scrollTop: 0, count: 40_000 })).toEqual({ first: 0, last: 26, top: 0, total: 800_000 });
    const r = visibleRange({ ...base, scrollTop: 10_010, count: 40_000 });
    expect(r.first).toBe(495);
    expect(r.last).toBe(500 + 21 + 5);
    expect(r.top).toBe(495 * 20);
  });

  it('clamps at the end and for short lists', () => {
    expect(visibleRange({ ...base, scrollTop: 0, count: 3 })).toEqual({ first: 0, last: 3, top: 0, total: 60 });
    expect(visibleRange({ ...base, scrollTop: 0, count: 0 })).toEqual({ first: 0, last: 0, top: 0, total: 0 });
    const end = visibleRange({ ...base, scrollTop: 800_000 - 400, count: 40_000 });
    expect(end.last).toBe(40_000);
  });

  it('scales past the height browsers allow, reaching the last line', () => {
    const count = 2_000_000;
    const maxHeight = 1_000_000;
    const start = visibleRange({ ...base, scrollTop: 0, count, maxHeight });
    expect(start).toMatchObject({ first: 0, top: 0, total: maxHeight });
    const end = visibleRange({ ...base, scrollTop: maxHeight - 400, count, maxHeight });
    expect(end.last).toBe(count);
    // The last line's bottom is the viewport's bottom.
    expect(end.top + (count - end.first) * 20).toBeCloseTo(maxHeight, 5);
  });
});

describe('scrollTopFor', () => {
  it('puts a line at the top or the middle', () => {
    expect(scrollTopFor(100, 0, { height: 400, lineHeight: 20, count: 1000 })).toBe(2000);
    expect(scrollTopFor(100, 0.5, { height: 400, lineHeight: 20, count: 1000 })).toBe(2000 - 200 + 10);
    expect(scrollTopFor(0, 0.5, { height: 400, lineHeight: 20, count: 1000 })).toBe(0);
    expect(scrollTopFor(999, 0, { height: 400, lineHeight: 20, count: 1000 })).toBe(20_000 - 400);
  });

  it('inverts the scaled mapping', () => {
    const v = { height: 400, lineHeight: 20, count: 2_000_000, maxHeight: 1_000_000 };
    const top = scrollTopFor(1_000_000, 0, v);
    const r = visibleRange({ ...v, scrollTop: top, overscan: 0 });
    expect(r.first).toBeGreaterThanOrEqual(999_999);
    expect(r.first).toBeLessThanOrEqual(1_000_000);
  });
});
