// Small hooks of the Runs, New run and Settings views.

import { useEffect, useState } from 'react';

/** performance.now(), refreshed every `everyMs` while `active`: moves live bars between events. */
export function useNow(active: boolean, everyMs = 250): number {
  const [now, setNow] = useState(() => performance.now());
  useEffect(() => {
    if (!active) return undefined;
    setNow(performance.now());
    const timer = setInterval(() => setNow(performance.now()), everyMs);
    return () => clearInterval(timer);
  }, [active, everyMs]);
  return now;
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
