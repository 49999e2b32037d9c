// Hooks more than one view uses: a clock for live times, and form values kept in localStorage.

import { useCallback, useEffect, useState, useSyncExternalStore } from 'react';

// One timer per interval for the whole page: every clock of the same interval
// ticks in the same task with the same reading, so React renders them in one
// pass and the browser lays the page out once per tick, not once per clock.
interface Ticker {
  now: number;
  timer: ReturnType<typeof setInterval> | undefined;
  listeners: Set<() => void>;
}
const tickers = new Map<number, Ticker>();

function tickerOf(intervalMs: number): Ticker {
  let ticker = tickers.get(intervalMs);
  if (!ticker) {
    ticker = { now: performance.now(), timer: undefined, listeners: new Set() };
    tickers.set(intervalMs, ticker);
  }
  return ticker;
}

function subscribeTicker(intervalMs: number, listener: () => void): () => void {
  const ticker = tickerOf(intervalMs);
  ticker.listeners.add(listener);
  if (ticker.timer === undefined) {
    ticker.now = performance.now();
    ticker.timer = setInterval(() => {
      ticker.now = performance.now();
      for (const l of [...ticker.listeners]) l();
    }, intervalMs);
  }
  return () => {
    ticker.listeners.delete(listener);
    if (ticker.listeners.size === 0) {
      clearInterval(ticker.timer);
      tickers.delete(intervalMs);
    }
  };
}

const never = () => () => undefined;

/** performance.now(), refreshed every `intervalMs` while it is not null (a live clock or bar), on the page's shared timer for that interval. */
export function useNow(intervalMs: number | null): number {
  const subscribe = useCallback((listener: () => void) => (intervalMs === null ? never() : subscribeTicker(intervalMs, listener)), [intervalMs]);
  const ticked = useSyncExternalStore(subscribe, () => (intervalMs === null ? 0 : tickerOf(intervalMs).now));
  return intervalMs === null ? performance.now() : ticked;
}

/** Sets the page's title (the window's and the tab's) while the calling view shows; null leaves it to another view. */
export function useTitle(title: string | null): void {
  useEffect(() => {
    if (title !== null) document.title = title;
  }, [title]);
}

/** A value kept in localStorage under `key` as JSON; storage that fails (private mode, quota) is ignored. */
export function readStored<T extends object>(key: string): Partial<T> {
  try {
    const text = globalThis.localStorage?.getItem(key);
    const value: unknown = text ? JSON.parse(text) : null;
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Partial<T>) : {};
  } catch {
    return {};
  }
}

export function writeStored(key: string, value: object): void {
  try {
    globalThis.localStorage?.setItem(key, JSON.stringify(value));
  } catch {
    // Not kept: the form still works, it just forgets.
  }
}

/** Date.now(), refreshed every `intervalMs` while it is not null: keeps "3 min ago" true. */
export function useWallClock(intervalMs: number | null): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (intervalMs === null) return;
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), intervalMs);
    return () => clearInterval(timer);
  }, [intervalMs]);
  return intervalMs === null ? Date.now() : now;
}
