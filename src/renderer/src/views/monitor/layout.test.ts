import { describe, expect, it } from 'vitest';
import { layoutFor, MONITOR_MIN_WIDTH, readChoice } from './layout';

describe('the Runs layout', () => {
  it('is the monitor on a wide screen, the list below, unless the reader chose', () => {
    expect(layoutFor('auto', MONITOR_MIN_WIDTH)).toBe('monitor');
    expect(layoutFor('auto', MONITOR_MIN_WIDTH - 1)).toBe('list');
    expect(layoutFor('list', 2000)).toBe('list');
    expect(layoutFor('monitor', 800)).toBe('monitor');
  });

  it('reads only a choice it knows from storage', () => {
    expect(readChoice('monitor')).toBe('monitor');
    expect(readChoice('list')).toBe('list');
    expect(readChoice('grid')).toBe('auto');
    expect(readChoice(null)).toBe('auto');
  });
});
