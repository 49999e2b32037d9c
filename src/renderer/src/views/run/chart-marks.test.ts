import { describe, expect, it } from 'vitest';
import { axisEndMs, chartMarks } from './chart-marks';

const base = { state: 'ended' as const, elapsedMs: 12_400, limitMs: 10_000, verdict: 'timed-out' as const };
const sig = (signal: string, atMs: number) => ({ signal, atMs });

describe("a chart's marks", () => {
  it('names each stop step by its signal, the limit and the end, in time order', () => {
    const marks = chartMarks(base, [sig('SIGINT', 10_000), sig('SIGCONT', 10_000), sig('SIGTERM', 12_000), sig('SIGINT', 10_000)], 12_000);
    expect(marks).toEqual([
      { atMs: 10_000, label: 'limit 10 s', kind: 'limit' },
      { atMs: 10_000, label: 'interrupt (SIGINT)', kind: 'step' },
      { atMs: 12_000, label: 'terminate (SIGTERM)', kind: 'step' },
      { atMs: 12_400, label: 'ended: timed-out', kind: 'end' },
    ]);
  });

  it('calls the SIGKILL of a force kill the force kill, and marks a force kill whose signal it did not see', () => {
    const forced = { ...base, verdict: 'stopped' as const, limitMs: null, stop: { reason: 'user' as const, requestedAtMs: 3000, signals: [], endedBy: 'kill' as const, forcedAtMs: 5000 } };
    expect(chartMarks(forced, [sig('SIGINT', 3000), sig('SIGKILL', 5002)], 4000).map((m) => m.label)).toEqual(['interrupt (SIGINT)', 'force kill (SIGKILL)', 'ended: stopped']);
    // A SIGKILL seen 6 ms off the force kill's moment is the kill step's; the force kill is marked from the result.
    expect(chartMarks(forced, [sig('SIGKILL', 5006)], 4000).map((m) => `${m.kind}@${m.atMs}`)).toEqual(['force@5000', 'step@5006', 'end@12400']);
    expect(chartMarks(forced, [], 4000).map((m) => m.label)).toEqual(['force kill (SIGKILL)', 'ended: stopped']);
  });

  it('marks the out-of-memory kill at the end, and no end while live', () => {
    expect(chartMarks({ ...base, limitMs: null, verdict: 'killed', oom: { confirmed: true } }, [], 3000)).toEqual([{ atMs: 12_400, label: 'out-of-memory kill', kind: 'oom' }]);
    expect(chartMarks({ ...base, state: 'running', limitMs: null, verdict: undefined }, [], 3000)).toEqual([]);
    expect(chartMarks({ ...base, limitMs: null, verdict: undefined }, [], 3000)).toEqual([{ atMs: 12_400, label: 'ended', kind: 'end' }]);
  });

  it('shows a limit near the data only, so a short run is not squashed', () => {
    expect(chartMarks({ ...base, state: 'running', elapsedMs: 2000, limitMs: 600_000 }, [], 2000)).toEqual([]);
    expect(chartMarks({ ...base, state: 'running', elapsedMs: 2000, limitMs: 3500 }, [], 2000)[0]).toMatchObject({ kind: 'limit', label: 'limit 3.5 s' });
    expect(chartMarks({ ...base, limitMs: 120_000, elapsedMs: 110_000 }, [], 100_000).find((m) => m.kind === 'limit')).toMatchObject({ label: 'limit 2 min' });
  });

  it('runs the time axis to the run end, past its last sample, to its last mark', () => {
    expect(axisEndMs(base, 11_000, [])).toBe(12_400);
    expect(axisEndMs({ state: 'running', elapsedMs: 9000 }, 5000, [])).toBe(5000);
    expect(axisEndMs({ state: 'running', elapsedMs: 9000 }, 5000, [{ atMs: 7000, label: 'x', kind: 'step' }])).toBe(7000);
    expect(axisEndMs({ state: 'running', elapsedMs: 0 }, 0, [])).toBe(1);
  });
});
