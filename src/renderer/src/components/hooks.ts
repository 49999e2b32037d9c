// Hooks more than one view uses: a clock for live times, and form values kept in localStorage.

import { useEffect, useState } from 'react';

/** performance.now(), refreshed every `intervalMs` while it is not null (a live clock or bar). */
export function useNow(intervalMs: number | null): number {
  const [now, setNow] = useState(() => performance.now());
  useEffect(() => {
    if (intervalMs === null) return;
    setNow(performance.now());
    const timer = setInterval(() => setNow(performance.now()), intervalMs);
    return () => clearInterval(timer);
  }, [intervalMs]);
  return intervalMs === null ? performance.now() : now;
}

/** Sets the page's title (the window's and the tab's) while the calling view shows. */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = title;
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
