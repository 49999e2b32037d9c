// The store driven through its actions and events with a fake API; the pure
// merge of a run's output is live-output.test.ts.

import { describe, expect, it, vi } from 'vitest';
import type { WardenApi } from '../../../shared/api';
import type { RunEvent } from '../../../shared/events';
import type { RunResult } from '../../../shared/result';
import { lineCount } from './live-output';
import { liveElapsed, useWarden } from './index';

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
  it('never go down while the page caps a live stream', async () => {
    const listeners: ((e: import('../../../shared/events').RunEvent) => void)[] = [];
    const api = { subscribe: (l: (e: import('../../../shared/events').RunEvent) => void) => (listeners.push(l), () => undefined), list: async () => [] } as unknown as import('../../../shared/api').WardenApi;
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
    const listeners: ((e: import('../../../shared/events').RunEvent) => void)[] = [];
    const api = { subscribe: (l: (e: import('../../../shared/events').RunEvent) => void) => (listeners.push(l), () => undefined), list: async () => [] } as unknown as import('../../../shared/api').WardenApi;
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

describe('a snapshot meeting the stream', () => {
  const linesOf = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `line ${from + i}\n`).join('');

  it('a page opening on a run that prints: chunks sent while its snapshot was on the way are merged, none lost or doubled, and a gap is fetched again', async () => {
    const listeners: ((e: RunEvent) => void)[] = [];
    const run = { id: 'cafe01', kind: 'command', state: 'running', stdout: '', stderr: '', stdoutTruncated: 0, stderrTruncated: 0, startedAt: new Date().toISOString(), elapsedMs: 0 } as unknown as RunResult;
    // What the host has printed, and what a get answers: its snapshot at that moment.
    let printed = linesOf(1, 3000);
    const gets: number[] = [];
    let release: (() => void) | null = null;
    const api = {
      subscribe: (l: (e: RunEvent) => void, options?: { onOpen?: () => void }) => {
        listeners.push(l);
        setTimeout(() => options?.onOpen?.(), 5);
        return () => undefined;
      },
      list: async () => [{ ...run, outputChars: { stdout: printed.length, stderr: 0 } }],
      history: async () => ({ runs: [], nextCursor: null }),
      get: async () => {
        const at = printed.length;
        gets.push(at);
        // The answer comes back while more is printed (the test releases it).
        await new Promise<void>((r) => (release = r));
        return { ...run, stdout: printed.slice(0, at) };
      },
    } as unknown as WardenApi;
    const emit = (text: string) => {
      const offset = printed.length;
      printed += text;
      listeners.forEach((l) => l({ type: 'output', runId: 'cafe01', stream: 'stdout', text, offset }));
    };
    const disconnect = useWarden.getState().connect(api);
    await waitUntil(() => useWarden.getState().partial.cafe01 === true);
    // The detail opens: its snapshot is asked for while the run goes on printing.
    const loading = useWarden.getState().load('cafe01');
    await waitUntil(() => release !== null);
    for (let n = 3001; n <= 3010; n++) emit(`line ${n}\n`);
    // The page applies them (a frame passes) before the snapshot comes back.
    await new Promise((r) => setTimeout(r, 50));
    release!();
    await loading;
    for (let n = 3011; n <= 3020; n++) emit(`line ${n}\n`);
    await waitUntil(() => useWarden.getState().output.cafe01?.stdoutEnd === printed.length);
    expect(useWarden.getState().output.cafe01!.stdout).toBe(linesOf(1, 3020));
    expect(useWarden.getState().output.cafe01!.stdoutLines).toBe(3020);
    // Held while the snapshot was on its way: no second fetch was needed.
    expect(gets).toHaveLength(1);

    // A chunk lost on the way (a gap): the page fetches again instead of skipping it.
    printed += 'line 3021\n';
    release = null;
    emit('line 3022\n');
    await waitUntil(() => release !== null);
    release!();
    await waitUntil(() => useWarden.getState().output.cafe01?.stdoutEnd === printed.length);
    expect(useWarden.getState().output.cafe01!.stdout).toBe(linesOf(1, 3022));
    expect(gets).toHaveLength(2);
    disconnect();
  });
  it('a gap is filled from the output route when nothing of the stream is cut, and from the run whole when it is', async () => {
    const listeners: ((e: RunEvent) => void)[] = [];
    const run = { id: 'cafe02', kind: 'command', state: 'running', stdout: '', stderr: '', stdoutTruncated: 0, stderrTruncated: 0, startedAt: new Date().toISOString(), elapsedMs: 0 } as unknown as RunResult;
    let printed = linesOf(1, 100);
    let cut = 0;
    const wholeGets: number[] = [];
    const pages: { stream: string; offset?: number; limit?: number }[] = [];
    // The host as the store sees it: what it printed, its kept text the stream itself while nothing is cut.
    const api = {
      subscribe: (l: (e: RunEvent) => void, options?: { onOpen?: () => void }) => {
        listeners.push(l);
        setTimeout(() => options?.onOpen?.(), 5);
        return () => undefined;
      },
      list: async () => [],
      history: async () => ({ runs: [], nextCursor: null }),
      get: async (_id: string, options?: { output?: string }) => {
        if (options?.output === 'none') return { ...run, stdoutTruncated: cut, outputChars: { stdout: printed.length, stderr: 0 } };
        wholeGets.push(printed.length);
        return { ...run, stdout: printed, stdoutTruncated: 0 };
      },
      output: async (_id: string, range: { stream: 'stdout'; offset?: number; limit?: number }) => {
        pages.push(range);
        const from = range.offset ?? 0;
        const text = printed.slice(from, from + (range.limit ?? 65_536));
        return { id: 'cafe02', stream: range.stream, offset: from, text, next: from + text.length, total: printed.length, state: 'running' };
      },
    } as unknown as WardenApi;
    const emit = (text: string) => {
      const offset = printed.length;
      printed += text;
      listeners.forEach((l) => l({ type: 'output', runId: 'cafe02', stream: 'stdout', text, offset }));
    };
    const disconnect = useWarden.getState().connect(api);
    await useWarden.getState().load('cafe02');
    expect(wholeGets).toEqual([linesOf(1, 100).length]);
    // Not known before it was opened, and found live: fetched whole, no page asked.
    expect(pages).toEqual([]);

    // A chunk lost on the way: the characters between come from the route, not the run whole.
    const end = printed.length;
    printed += 'line 101\n';
    emit('line 102\n');
    emit('line 103\n');
    await waitUntil(() => useWarden.getState().output.cafe02?.stdoutEnd === printed.length);
    expect(useWarden.getState().output.cafe02!.stdout).toBe(linesOf(1, 103));
    expect(useWarden.getState().output.cafe02!.stdoutLines).toBe(103);
    expect(pages).toEqual([{ stream: 'stdout', offset: end, limit: 'line 101\n'.length }]);
    expect(wholeGets).toHaveLength(1);

    // The host cut the stream (past its cap): a page's offsets are no longer the stream's, so the run comes whole.
    cut = 1;
    printed += 'line 104\n';
    emit('line 105\n');
    await waitUntil(() => useWarden.getState().output.cafe02?.stdoutEnd === printed.length);
    expect(useWarden.getState().output.cafe02!.stdout).toBe(linesOf(1, 105));
    expect(wholeGets).toHaveLength(2);
    disconnect();
  });
});

async function waitUntil(ok: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("the hosts' states", () => {
  it('fetch the runs again when a remote connects, or dropped and came back between two looks, and not otherwise', async () => {
    let lists = 0;
    const api = {
      list: async () => {
        lists += 1;
        return [];
      },
      history: async () => ({ runs: [], nextCursor: null }),
      get: async () => null,
    } as unknown as WardenApi;
    useWarden.setState({ api, hosts: [] });
    const hosts = (state: 'connected' | 'connecting' | 'disconnected', connections: number) => [
      { name: 'local', local: true, state: 'connected' as const, lastError: null, since: '', target: null, connections: 1 },
      { name: 'box', local: false, state, lastError: state === 'disconnected' ? 'gone' : null, since: '', target: 'ssh://box', connections },
    ];
    const { setHosts } = useWarden.getState();
    setHosts(hosts('connecting', 0));
    const atFirst = lists;
    setHosts(hosts('connected', 1));
    expect(lists).toBe(atFirst + 1);
    setHosts(hosts('connected', 1));
    expect(lists).toBe(atFirst + 1);
    // Dropped and back within one poll: the same state, one more connection.
    setHosts(hosts('connected', 2));
    expect(lists).toBe(atFirst + 2);
    setHosts(hosts('disconnected', 2));
    expect(lists).toBe(atFirst + 2);
    expect(useWarden.getState().hosts[1]!.state).toBe('disconnected');
    await new Promise((r) => setTimeout(r, 0));
  });

  it("fetch a live remote run again every few seconds, so an end its events lost still shows", async () => {
    const live = { id: 'abc123@box', kind: 'command', argv: ['sleep', '120'], cwd: '/', state: 'stopping', exitCode: null, signal: null, startedAt: new Date().toISOString(), elapsedMs: 1000, limitMs: null, advice: null, notes: [], stdout: '', stderr: '', stdoutTruncated: 0, stderrTruncated: 0 } as unknown as RunResult;
    const ended = { ...live, state: 'ended', verdict: 'stopped', signal: 'SIGINT', endedAt: new Date().toISOString() } as RunResult;
    const gets: string[] = [];
    const api = {
      list: async () => [],
      history: async () => ({ runs: [], nextCursor: null }),
      get: async (id: string) => {
        gets.push(id);
        return ended;
      },
    } as unknown as WardenApi;
    const connected = [
      { name: 'local', local: true, state: 'connected' as const, lastError: null, since: '', target: null, connections: 1 },
      { name: 'box', local: false, state: 'connected' as const, lastError: null, since: '', target: 'ssh://box', connections: 1 },
    ];
    useWarden.setState({ api, hosts: connected, runs: { [live.id]: live }, order: [live.id] });
    let now = Date.now() + 60_000; // past any earlier look
    const clock = vi.spyOn(Date, 'now').mockImplementation(() => now);
    try {
      useWarden.getState().setHosts(connected);
      await waitUntil(() => useWarden.getState().runs[live.id]?.state === 'ended');
      expect(gets).toEqual([live.id]);
      now += 1000; // within the interval: no fetch
      useWarden.getState().setHosts(connected);
      expect(gets).toHaveLength(1);
    } finally {
      clock.mockRestore();
    }
  });
});
