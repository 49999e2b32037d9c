// The browser transport's connection awareness, with a fake EventSource and
// fetch (the real ones are driven end to end in e2e/connection.spec.ts).

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BrowserTransport, OFFLINE_AFTER_MS, REOPEN_EVERY_MS, type ConnectionState } from './web-api';

class FakeEventSource {
  static readonly CONNECTING = 0;
  static readonly OPEN = 1;
  static readonly CLOSED = 2;
  static all: FakeEventSource[] = [];
  readyState = FakeEventSource.CONNECTING;
  onopen: (() => void) | null = null;
  onerror: (() => void) | null = null;
  onmessage: ((m: { data: string; lastEventId: string }) => void) | null = null;
  private listeners = new Map<string, ((m: { data: string; lastEventId: string }) => void)[]>();
  constructor(readonly url: string) {
    FakeEventSource.all.push(this);
  }
  addEventListener(name: string, fn: (m: { data: string; lastEventId: string }) => void) {
    this.listeners.set(name, [...(this.listeners.get(name) ?? []), fn]);
  }
  close() {
    this.readyState = FakeEventSource.CLOSED;
  }
  open() {
    this.readyState = FakeEventSource.OPEN;
    this.onopen?.();
  }
  drop(closed = false) {
    this.readyState = closed ? FakeEventSource.CLOSED : FakeEventSource.CONNECTING;
    this.onerror?.();
  }
  batch(events: unknown[], id: string) {
    for (const fn of this.listeners.get('batch') ?? []) fn({ data: JSON.stringify(events), lastEventId: id });
  }
  emit(name: string) {
    for (const fn of this.listeners.get(name) ?? []) fn({ data: '{}', lastEventId: '' });
  }
}

let fetchStatus: number | 'unreachable' = 200;

beforeEach(() => {
  vi.useFakeTimers();
  FakeEventSource.all = [];
  fetchStatus = 200;
  vi.stubGlobal('EventSource', FakeEventSource);
  vi.stubGlobal('fetch', async () => {
    if (fetchStatus === 'unreachable') throw new TypeError('Failed to fetch');
    return { status: fetchStatus, text: async () => (fetchStatus === 401 ? '{"error":"needs the token"}' : '{}') };
  });
});

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

function setup() {
  const states: ConnectionState[] = [];
  const events: unknown[] = [];
  let gaps = 0;
  const transport = new BrowserTransport({ onConnection: (s) => states.push(s) });
  const close = transport.events('/api/v1/events', { onEvent: (e) => events.push(e), onGap: () => gaps++ });
  return { transport, states, events, gaps: () => gaps, close, source: () => FakeEventSource.all.at(-1)! };
}

describe('BrowserTransport', () => {
  it('says offline shortly after the stream drops, and online when EventSource reconnects by itself', () => {
    const t = setup();
    t.source().open();
    expect(t.states).toEqual(['online']);
    t.source().drop();
    vi.advanceTimersByTime(OFFLINE_AFTER_MS - 1);
    expect(t.states).toEqual(['online']);
    vi.advanceTimersByTime(1);
    expect(t.states).toEqual(['online', 'offline']);
    t.source().open();
    expect(t.states).toEqual(['online', 'offline', 'online']);
    // The same EventSource came back: it resumes with Last-Event-ID itself.
    expect(FakeEventSource.all).toHaveLength(1);
  });

  it('does not flash offline for a drop that reconnects at once', () => {
    const t = setup();
    t.source().open();
    t.source().drop();
    t.source().open();
    vi.advanceTimersByTime(5_000);
    expect(t.states).toEqual(['online']);
  });

  it('reopens a stream the host refused, from the last event seen, and tells a login that ended', async () => {
    const t = setup();
    t.source().open();
    t.source().batch([{ type: 'tree', runId: 'a' }], 'epoch1-41');
    expect(t.events).toHaveLength(1);
    fetchStatus = 401;
    t.source().drop(true);
    await vi.advanceTimersByTimeAsync(OFFLINE_AFTER_MS);
    expect(t.states).toContain('unauthorised');
    await vi.advanceTimersByTimeAsync(REOPEN_EVERY_MS);
    expect(FakeEventSource.all).toHaveLength(2);
    expect(t.source().url).toBe('/api/v1/events?batch=1&ended=summary&lastEventId=epoch1-41');
    // Logged in again (in another tab): the reopened stream comes up, and the page is online.
    fetchStatus = 200;
    t.source().open();
    expect(t.states.at(-1)).toBe('online');
    t.close();
  });

  it('passes a gap on, and treats a return with nothing to resume from as one', async () => {
    const t = setup();
    t.source().open();
    t.source().emit('gap');
    expect(t.gaps()).toBe(1);
    fetchStatus = 'unreachable';
    t.source().drop(true);
    await vi.advanceTimersByTimeAsync(REOPEN_EVERY_MS);
    expect(t.states).toEqual(['online', 'offline']);
    t.source().open();
    expect(t.gaps()).toBe(2);
  });

  it('words a request that never reached the host, and reports a 401 answer', async () => {
    const t = setup();
    fetchStatus = 'unreachable';
    await expect(t.transport.request('GET', '/api/v1/runs')).rejects.toThrow(/cannot be reached/);
    fetchStatus = 401;
    const reply = await t.transport.request('GET', '/api/v1/runs');
    expect(reply.status).toBe(401);
    expect(t.states).toEqual(['unauthorised']);
  });
});
