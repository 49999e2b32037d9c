// What a live run's events say besides its output (trees, telemetry series,
// output times, stop signals): filled by the events (events.ts); the host's
// own series is joined before what the page sampled.

import { joinSeries } from '../../../shared/telemetry';
import type { Slice, TelemetrySlice } from './state';

export const createTelemetrySlice: Slice<TelemetrySlice> = ({ set }) => ({
  trees: {},
  marks: {},
  series: {},
  signals: {},
  stopProgress: {},

  seedSeries(id, host) {
    set((state) => ({ series: { ...state.series, [id]: joinSeries(host, state.series[id]) } }));
  },
});
