// Small hooks of the run detail.

import { useEffect, useState } from 'react';

/** performance.now(), refreshed every `intervalMs` while it is not null (a live clock). */
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
