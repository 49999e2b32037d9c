import { describe, expect, it } from 'vitest';
import { addSample, emptySeries, readTelemetry, type TelemetryPoint, type TelemetrySeries } from './telemetry';

const feed = (points: TelemetryPoint[], max?: number): TelemetrySeries => points.reduce((s, p) => addSample(s, p, max), emptySeries());

describe('telemetry series', () => {
  it('keeps one point per second: CPU averaged, RSS and processes at their highest', () => {
    const s = feed([
      [0, 10, 100, 1],
      [500, 30, 300, 3],
      [1000, 50, 200, 2],
      [1500, 70, 50, 1],
      [2400, 5, 10, 1],
    ]);
    expect(s.points).toEqual([
      [0, 20, 300, 3],
      [1000, 60, 200, 2],
      [2400, 5, 10, 1],
    ]);
  });

  it('stays bounded for a long run by merging neighbours, without losing a peak', () => {
    const points: TelemetryPoint[] = Array.from({ length: 10_000 }, (_, i) => [i * 1000, 1, i === 4321 ? 9_999_999 : 100, 1]);
    const s = feed(points, 3600);
    expect(s.points.length).toBeLessThanOrEqual(3600);
    expect(s.points.length).toBeGreaterThan(1200);
    expect(s.stepMs).toBe(4000);
    expect(Math.max(...s.points.map((p) => p[2]))).toBe(9_999_999);
    expect(s.points.every((p, i) => i === 0 || p[0] > s.points[i - 1]![0])).toBe(true);
    // An hour at 1 s fits whole.
    expect(feed(points.slice(0, 3600), 3600).points).toHaveLength(3600);
  });

  it('ignores a sample older than the last, and reads back only a well-formed stored series', () => {
    const s = feed([[2000, 1, 1, 1]]);
    expect(addSample(s, [1000, 5, 5, 5])).toBe(s);
    expect(readTelemetry({ stepMs: 1000, points: [[0, 1, 2, 3]] })).toEqual({ stepMs: 1000, points: [[0, 1, 2, 3]] });
    expect(readTelemetry({ stepMs: 1000, points: [[0, 1, 2]] })).toBeNull();
    expect(readTelemetry(null)).toBeNull();
  });
});
