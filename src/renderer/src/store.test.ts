import { describe, expect, it } from 'vitest';
import type { RunResult } from '../../shared/result';
import { capLive, liveElapsed, useWarden } from './store';

describe('live output in the page', () => {
  it('is kept whole up to the cap', () => {
    expect(capLive('abc', 10, 2)).toBe('abc');
  });

  it('past the cap keeps the head, a marker counting what was dropped, and the newest tail', () => {
    const once = capLive('H'.repeat(100) + 'x'.repeat(200) + 'T'.repeat(100), 300, 100);
    expect(once.startsWith('H'.repeat(100) + '\n[warden: ')).toBe(true);
    expect(once.endsWith('T'.repeat(100))).toBe(true);
    expect(once.length).toBeLessThanOrEqual(300);
    const dropped = Number(/\[warden: ([\d,]+) characters/.exec(once)![1]!.replace(/,/g, ''));
    // Every character is either kept or counted.
    const kept = once.length - once.indexOf(']\n') - 2 + 100;
    expect(kept + dropped).toBe(400);
    // Dropping again adds to the count instead of stacking markers.
    const twice = capLive(once + 'N'.repeat(100), 300, 100);
    expect(twice.match(/\[warden:/g)).toHaveLength(1);
    const dropped2 = Number(/\[warden: ([\d,]+) characters/.exec(twice)![1]!.replace(/,/g, ''));
    const kept2 = twice.length - twice.indexOf(']\n') - 2 + 100;
    expect(kept2 + dropped2).toBe(500);
    expect(twice.endsWith('N'.repeat(100))).toBe(true);
  });
});

describe('live clocks while the host is away', () => {
  const running = { state: 'running', elapsedMs: 1000 } as RunResult;

  it('stand still from the moment it went away', () => {
    expect(liveElapsed(running, 100, 5000, null)).toBe(5900);
    expect(liveElapsed(running, 100, 5000, 2100)).toBe(3000);
    // An ended run's time is its own, away or not.
    expect(liveElapsed({ ...running, state: 'ended' }, 100, 5000, 2100)).toBe(1000);
  });

  it('freeze through the store, and run again when it is back', () => {
    const store = useWarden.getState();
    store.setConnection('offline');
    const since = useWarden.getState().offlineSince!;
    expect(useWarden.getState()).toMatchObject({ connection: 'offline', connected: false });
    expect(liveElapsed(running, since - 500, since + 10_000)).toBe(1500);
    store.setConnection('online');
    expect(useWarden.getState()).toMatchObject({ connection: 'online', offlineSince: null });
    expect(liveElapsed(running, since - 500, since + 10_000)).toBe(11_500);
  });
});
