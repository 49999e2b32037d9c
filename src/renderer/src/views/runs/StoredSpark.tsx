// A lost run's sparkline: its series as its host last stored it, read from
// its timeline once (a lost run's history does not change) and kept for the
// page's life, so rows that scroll out and back do not ask again. Only lost
// runs have one in the list: a live row draws the page's own samples, and an
// ended run's charts are one click away.

import { useEffect, useState } from 'react';
import type { WardenApi } from '../../../../shared/api';
import { readTelemetry, TELEMETRY_EVENT, type TelemetryPoint } from '../../../../shared/telemetry';
import { Sparkline } from '../../components/Sparkline';
import { useWarden } from '../../store';

/** The series read so far, by run id; null when the run has none. At most MAX_KEPT runs. */
const kept = new Map<string, Promise<TelemetryPoint[] | null>>();
const MAX_KEPT = 200;

function storedPoints(api: WardenApi, id: string): Promise<TelemetryPoint[] | null> {
  let found = kept.get(id);
  if (!found) {
    found = api.timeline(id).then(
      (events) => readTelemetry(events.find((e) => e.kind === TELEMETRY_EVENT)?.detail)?.points ?? null,
      () => {
        // Not kept: the next row that shows it asks again (the host may be back).
        kept.delete(id);
        return null;
      },
    );
    kept.set(id, found);
    if (kept.size > MAX_KEPT) kept.delete(kept.keys().next().value!);
  }
  return found;
}

export function StoredSpark({ id, limitBytes }: { id: string; limitBytes?: number | undefined }) {
  const api = useWarden((s) => s.api);
  const [points, setPoints] = useState<TelemetryPoint[] | null>(null);
  useEffect(() => {
    if (!api) return undefined;
    let current = true;
    void storedPoints(api, id).then((found) => current && setPoints(found));
    return () => {
      current = false;
    };
  }, [api, id]);
  return points ? <Sparkline points={points} limitBytes={limitBytes} at="at its last sample" /> : null;
}
