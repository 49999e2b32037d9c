import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { SignalSent, StopStep } from '../../shared/result';
import { checkExtension, extendedLimit, MAX_LIMIT_MS, StopSequence, stepsFor, timerDelay, type StopTiming } from './deadline';
import { WardenInputError } from './errors';

describe('stepsFor', () => {
  it('default timing: SIGINT+SIGCONT at once, SIGTERM+SIGCONT at 2 s, SIGKILL at 5 s', () => {
    expect(stepsFor({ terminateAfterMs: 2_000, graceMs: 5_000 })).toEqual([
      { step: 'interrupt', afterMs: 0, signals: ['SIGINT', 'SIGCONT'] },
      { step: 'terminate', afterMs: 2_000, signals: ['SIGTERM', 'SIGCONT'] },
      { step: 'kill', afterMs: 5_000, signals: ['SIGKILL'] },
    ]);
  });

  it('keeps the terminate step just before the grace', () => {
    expect(stepsFor({ terminateAfterMs: 4_999, graceMs: 5_000 }).map((s) => s.step)).toEqual(['interrupt', 'terminate', 'kill']);
  });

  it.each([
    [5_000, 5_000],
    [6_000, 5_000],
    [0, 0],
  ])('skips the terminate step when terminateAfterMs (%i) >= graceMs (%i)', (terminateAfterMs, graceMs) => {
    const steps = stepsFor({ terminateAfterMs, graceMs });
    expect(steps.map((s) => s.step)).toEqual(['interrupt', 'kill']);
    expect(steps.flatMap((s) => s.signals)).not.toContain('SIGTERM');
    expect(steps.at(-1)).toEqual({ step: 'kill', afterMs: graceMs, signals: ['SIGKILL'] });
  });
});

describe('StopSequence', () => {
  /** The run's monotonic clock: the run started 10 s before the fake epoch. */
  const RUN_AGE_MS = 10_000;
  let delivered: string[];
  let steps: Array<{ step: StopStep; sent: SignalSent[] }>;
  let refuse: Set<string>;

  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(0);
    delivered = [];
    steps = [];
    refuse = new Set();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function make(timing: StopTiming = { terminateAfterMs: 2_000, graceMs: 5_000 }): StopSequence {
    return new StopSequence(
      timing,
      (signal) => {
        delivered.push(signal);
        return !refuse.has(signal);
      },
      () => Date.now() + RUN_AGE_MS,
      (step, sent) => steps.push({ step, sent }),
    );
  }

  it('has no record and sends nothing before begin()', () => {
    const seq = make();
    vi.advanceTimersByTime(60_000);
    expect(seq.started).toBe(false);
    expect(seq.record()).toBeUndefined();
    expect(delivered).toEqual([]);
  });

  it('begin() sends SIGINT then SIGCONT at once, SIGTERM + SIGCONT at terminateAfterMs, SIGKILL at graceMs', () => {
    const seq = make();
    vi.advanceTimersByTime(1_000); // the limit comes 1 s after this clock's zero
    seq.begin('deadline');
    expect(seq.started).toBe(true);
    expect(delivered).toEqual(['SIGINT', 'SIGCONT']);
    // toStrictEqual: an unforced stop has no forcedAtMs key at all (structured clones and IPC keep undefined ones).
    expect(seq.record()).toStrictEqual({
      reason: 'deadline',
      requestedAtMs: 11_000,
      signals: [
        { signal: 'SIGINT', atMs: 11_000 },
        { signal: 'SIGCONT', atMs: 11_000 },
      ],
      endedBy: 'interrupt',
    });

    vi.advanceTimersByTime(1_999);
    expect(delivered).toEqual(['SIGINT', 'SIGCONT']);
    vi.advanceTimersByTime(1);
    expect(delivered).toEqual(['SIGINT', 'SIGCONT', 'SIGTERM', 'SIGCONT']);
    expect(seq.record()?.endedBy).toBe('terminate');

    vi.advanceTimersByTime(2_999);
    expect(delivered).toHaveLength(4);
    vi.advanceTimersByTime(1);
    expect(delivered).toEqual(['SIGINT', 'SIGCONT', 'SIGTERM', 'SIGCONT', 'SIGKILL']);
    expect(seq.record()).toEqual({
      reason: 'deadline',
      requestedAtMs: 11_000,
      signals: [
        { signal: 'SIGINT', atMs: 11_000 },
        { signal: 'SIGCONT', atMs: 11_000 },
        { signal: 'SIGTERM', atMs: 13_000 },
        { signal: 'SIGCONT', atMs: 13_000 },
        { signal: 'SIGKILL', atMs: 16_000 },
      ],
      endedBy: 'kill',
    });
    expect(steps.map((s) => s.step)).toEqual(['interrupt', 'terminate', 'kill']);
    expect(steps[1]!.sent).toEqual([
      { signal: 'SIGTERM', atMs: 13_000 },
      { signal: 'SIGCONT', atMs: 13_000 },
    ]);

    vi.advanceTimersByTime(60_000);
    expect(delivered).toHaveLength(5);
  });

  it('skips SIGTERM when terminateAfterMs >= graceMs', () => {
    const seq = make({ terminateAfterMs: 5_000, graceMs: 5_000 });
    seq.begin('deadline');
    vi.advanceTimersByTime(10_000);
    expect(delivered).toEqual(['SIGINT', 'SIGCONT', 'SIGKILL']);
    expect(seq.record()?.endedBy).toBe('kill');
  });

  it('a second begin() changes nothing: no new signals, no new timers, the first reason kept', () => {
    const seq = make();
    seq.begin('deadline');
    vi.advanceTimersByTime(500);
    seq.begin('user');
    seq.begin('shutdown');
    expect(delivered).toEqual(['SIGINT', 'SIGCONT']);
    vi.advanceTimersByTime(10_000);
    expect(delivered).toEqual(['SIGINT', 'SIGCONT', 'SIGTERM', 'SIGCONT', 'SIGKILL']);
    expect(seq.record()).toMatchObject({ reason: 'deadline', requestedAtMs: RUN_AGE_MS, endedBy: 'kill' });
  });

  it('begin(..., { force: true }) on a running sequence jumps to SIGKILL and cancels the rest', () => {
    const seq = make();
    seq.begin('deadline');
    vi.advanceTimersByTime(700);
    seq.begin('user', { force: true });
    expect(delivered).toEqual(['SIGINT', 'SIGCONT', 'SIGKILL']);
    expect(seq.record()).toEqual({
      reason: 'deadline',
      requestedAtMs: RUN_AGE_MS,
      signals: [
        { signal: 'SIGINT', atMs: RUN_AGE_MS },
        { signal: 'SIGCONT', atMs: RUN_AGE_MS },
        { signal: 'SIGKILL', atMs: RUN_AGE_MS + 700 },
      ],
      endedBy: 'kill',
      forcedAtMs: RUN_AGE_MS + 700,
    });
    vi.advanceTimersByTime(60_000);
    expect(delivered).toEqual(['SIGINT', 'SIGCONT', 'SIGKILL']);
  });

  it('begin(..., { force: true }) as the first request sends the first step, then SIGKILL at once', () => {
    const seq = make();
    seq.begin('user', { force: true });
    expect(delivered).toEqual(['SIGINT', 'SIGCONT', 'SIGKILL']);
    expect(seq.record()).toMatchObject({ reason: 'user', endedBy: 'kill', forcedAtMs: RUN_AGE_MS });
    vi.advanceTimersByTime(60_000);
    expect(delivered).toHaveLength(3);
  });

  it('a forced request after SIGKILL sends nothing more', () => {
    const seq = make();
    seq.begin('deadline');
    vi.advanceTimersByTime(5_000);
    expect(delivered.at(-1)).toBe('SIGKILL');
    const before = delivered.length;
    seq.begin('user', { force: true });
    expect(delivered).toHaveLength(before);
  });

  it('cancel() stops the later steps; the record keeps what was sent', () => {
    const seq = make();
    seq.begin('user');
    vi.advanceTimersByTime(2_500);
    seq.cancel();
    vi.advanceTimersByTime(60_000);
    expect(delivered).toEqual(['SIGINT', 'SIGCONT', 'SIGTERM', 'SIGCONT']);
    expect(seq.record()).toMatchObject({ reason: 'user', endedBy: 'terminate' });
    expect(vi.getTimerCount()).toBe(0);
  });

  it('cancel() right after begin() leaves it ended by the interrupt step', () => {
    const seq = make();
    seq.begin('shutdown');
    seq.cancel();
    vi.advanceTimersByTime(60_000);
    expect(delivered).toEqual(['SIGINT', 'SIGCONT']);
    expect(seq.record()?.endedBy).toBe('interrupt');
  });

  it('records only the signals something received', () => {
    refuse.add('SIGCONT');
    const seq = make();
    seq.begin('deadline');
    expect(delivered).toEqual(['SIGINT', 'SIGCONT']);
    expect(seq.record()?.signals).toEqual([{ signal: 'SIGINT', atMs: RUN_AGE_MS }]);
    expect(steps[0]!.sent).toEqual([{ signal: 'SIGINT', atMs: RUN_AGE_MS }]);
  });
});

describe('a step that reaches nothing', () => {
  it('does not become endedBy: the group was already gone when it fired', () => {
    vi.useFakeTimers();
    try {
      let alive = true;
      let now = 0;
      const seq = new StopSequence({ terminateAfterMs: 100, graceMs: 300 }, () => alive, () => now, () => undefined);
      seq.begin('deadline');
      now = 100;
      vi.advanceTimersByTime(100);
      alive = false; // the main process exited after SIGTERM, before its exit was handled
      now = 300;
      vi.advanceTimersByTime(200);
      const record = seq.record()!;
      expect(record.endedBy).toBe('terminate');
      expect(record.signals.map((s) => s.signal)).toEqual(['SIGINT', 'SIGCONT', 'SIGTERM', 'SIGCONT']);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('the deadline timer and the longest limit', () => {
  it('arms a real timer for a 40-day deadline without it firing at once', async () => {
    // Node clamps a delay past 2^31 - 1 ms to 1 ms (with a TimeoutOverflowWarning): the deadline would fire at once.
    const warnings: string[] = [];
    const onWarning = (w: Error) => void warnings.push(w.name);
    process.on('warning', onWarning);
    let fired = false;
    const timer = setTimeout(() => (fired = true), timerDelay(40 * 24 * 3_600_000));
    try {
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(fired).toBe(false);
      expect(warnings).not.toContain('TimeoutOverflowWarning');
    } finally {
      clearTimeout(timer);
      process.off('warning', onWarning);
    }
  });

  it('takes a limit of ten years (315,360,000,000 ms) and refuses one millisecond more', () => {
    expect(MAX_LIMIT_MS).toBe(315_360_000_000);
    expect(checkExtension(315_360_000_000)).toBe(315_360_000_000);
    expect(() => checkExtension(315_360_000_001)).toThrow(WardenInputError);
    // An extension may bring the limit to exactly ten years, not past it.
    expect(extendedLimit(MAX_LIMIT_MS - 1_000, 500, 1_000)).toBe(MAX_LIMIT_MS);
    expect(() => extendedLimit(MAX_LIMIT_MS - 1_000, 500, 1_001)).toThrow(/over the longest Warden can time/);
  });

  it.each([
    [0, '0'],
    [-5, '-5'],
    [Number.NaN, 'NaN'],
    [Number.POSITIVE_INFINITY, 'Infinity'],
    ['5000', '"5000"'],
    [undefined, 'undefined'],
  ])('refuses an extension of %s in one line that names it', (byMs, shown) => {
    expect(() => checkExtension(byMs)).toThrow(new WardenInputError(`byMs must be a number of milliseconds above 0 and at most 315360000000, not ${shown}.`));
  });

  it('takes the smallest extension, 1 ms', () => {
    expect(checkExtension(1)).toBe(1);
  });
});
