import { describe, expect, it } from 'vitest';
import type { RunResult } from '../../shared/result';
import { capLive, lineCount, liveElapsed, useWarden } from './store';

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
    // A clock's last timer reading from before the host went away shows the frozen moment too, not an earlier one.
    expect(liveElapsed(running, since - 500, since - 40)).toBe(1500);
    store.setConnection('online');
    expect(useWarden.getState()).toMatchObject({ connection: 'online', offlineSince: null });
    expect(liveElapsed(running, since - 500, since + 10_000)).toBe(11_500);
  });
});

describe('live line counts', () => {
  it('count a text\'s lines, an unfinished last one included', () => {
    expect(lineCount('')).toBe(0);
    expect(lineCount('a')).toBe(1);
    expect(lineCount('a\nb\n')).toBe(2);
    expect(lineCount('a\nb')).toBe(2);
  });

  it('never go down while the page caps a live stream', async () => {
    const listeners: ((e: import('../../shared/events').RunEvent) => void)[] = [];
    const api = { subscribe: (l: (e: import('../../shared/events').RunEvent) => void) => (listeners.push(l), () => undefined), list: async () => [] } as unknown as import('../../shared/api').WardenApi;
    const disconnect = useWarden.getState().connect(api);
    const snapshot = { id: 'beef01', state: 'running', stdout: '', stderr: '', startedAt: new Date().toISOString(), elapsedMs: 0 } as RunResult;
    listeners.forEach((l) => l({ type: 'started', runId: 'beef01', snapshot }));
    await new Promise((r) => setTimeout(r, 30));
    const line = `${'x'.repeat(99)}\n`;
    const counts: number[] = [];
    let offset = 0;
    for (let i = 0; i < 6; i++) {
      const text = line.repeat(10_000);
      listeners.forEach((l) => l({ type: 'output', runId: 'beef01', stream: 'stdout', text, offset }));
      offset += text.length;
      await new Promise((r) => setTimeout(r, 30));
      counts.push(useWarden.getState().output.beef01!.stdoutLines);
    }
    expect(counts).toEqual([10_000, 20_000, 30_000, 40_000, 50_000, 60_000]);
    // The page kept less than it counted.
    expect(lineCount(useWarden.getState().output.beef01!.stdout)).toBeLessThan(60_000);
    disconnect();
  });

  it('count a line split across chunks once, from a stream that already had text, and an empty chunk as nothing', async () => {
    const listeners: ((e: import('../../shared/events').RunEvent) => void)[] = [];
    const api = { subscribe: (l: (e: import('../../shared/events').RunEvent) => void) => (listeners.push(l), () => undefined), list: async () => [] } as unknown as import('../../shared/api').WardenApi;
    const disconnect = useWarden.getState().connect(api);
    // The snapshot already holds one whole line and half of the next.
    const snapshot = { id: 'beef02', state: 'running', stdout: 'one\ntw', stderr: '', startedAt: new Date().toISOString(), elapsedMs: 0 } as RunResult;
    listeners.forEach((l) => l({ type: 'started', runId: 'beef02', snapshot }));
    await new Promise((r) => setTimeout(r, 30));
    const counts: number[] = [];
    let offset = snapshot.stdout.length;
    for (const text of ['o', '\nthr', '', 'ee\n', '\n', 'four']) {
      listeners.forEach((l) => l({ type: 'output', runId: 'beef02', stream: 'stdout', text, offset }));
      offset += text.length;
      await new Promise((r) => setTimeout(r, 20));
      counts.push(useWarden.getState().output.beef02!.stdoutLines);
    }
    expect(useWarden.getState().output.beef02!.stdout).toBe('one\ntwo\nthree\n\nfour');
    expect(counts).toEqual([2, 3, 3, 3, 4, 5]);
    expect(counts.at(-1)).toBe(lineCount('one\ntwo\nthree\n\nfour'));
    disconnect();
  });
});
