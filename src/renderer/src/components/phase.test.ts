import { describe, expect, it } from 'vitest';
import type { SignalSent } from '../../../shared/result';
import { runPhase, stopSignals, type PhaseInput } from './phase';

const base: PhaseInput = { kind: 'command', state: 'running', elapsedMs: 0, limitMs: 10_000, signals: [] };
const sig = (signal: string, atMs: number): SignalSent => ({ signal, atMs });

describe('runPhase', () => {
  it('is normal below 80 % of the limit, with the percent and time left', () => {
    expect(runPhase({ ...base, elapsedMs: 4_000 })).toMatchObject({ phase: 'normal', percent: 40, label: '6 s left', graceLeftMs: null });
  });

  it('says a long time left in the clock\'s units, not thousands of seconds', () => {
    expect(runPhase({ ...base, limitMs: 600_000, elapsedMs: 242_600 }).label).toBe('5 min 57 s left');
    expect(runPhase({ ...base, limitMs: 600_000, elapsedMs: 545_000 }).label).toBe('55 s left');
  });

  it('turns amber at 80 % and stays amber at the limit before any signal', () => {
    expect(runPhase({ ...base, elapsedMs: 7_999 }).phase).toBe('normal');
    expect(runPhase({ ...base, elapsedMs: 8_000 })).toMatchObject({ phase: 'amber', percent: 80 });
    expect(runPhase({ ...base, elapsedMs: 10_050 })).toMatchObject({ phase: 'amber', percent: 100, label: 'at the limit' });
  });

  it('has no percent without a limit', () => {
    expect(runPhase({ ...base, limitMs: null, elapsedMs: 99_000 })).toMatchObject({ phase: 'normal', percent: null, label: 'no limit' });
  });

  it('shows a queued script with its place', () => {
    expect(runPhase({ ...base, kind: 'python', state: 'queued', queuePosition: 2 })).toMatchObject({ phase: 'normal', label: 'queued #2' });
  });

  it('is interrupting after SIGINT, counting the default command grace (5 s) from the first signal', () => {
    const view = runPhase({ ...base, state: 'stopping', elapsedMs: 10_800, signals: [sig('SIGINT', 10_000), sig('SIGCONT', 10_000)] });
    expect(view).toMatchObject({ phase: 'interrupting', graceLeftMs: 4_200, estimated: true, label: 'interrupting · kill in ≈5 s' });
  });

  it('is in grace after SIGTERM: "grace 3.2 s left" with a known grace', () => {
    const view = runPhase({ ...base, state: 'stopping', elapsedMs: 11_800, graceMs: 5_000, signals: [sig('SIGINT', 10_000), sig('SIGTERM', 11_000)] });
    expect(view).toMatchObject({ phase: 'grace', graceLeftMs: 3_200, estimated: false, label: 'grace 4 s left' });
  });

  it('counts a Python script down from 10 s by default', () => {
    const view = runPhase({ ...base, kind: 'python', state: 'stopping', elapsedMs: 3_000, limitMs: null, signals: [sig('SIGINT', 1_000), sig('SIGINT', 1_200)] });
    expect(view).toMatchObject({ phase: 'interrupting', graceLeftMs: 8_000 });
  });

  it('takes the step from the store when the signals are not known yet', () => {
    expect(runPhase({ ...base, step: 'interrupt' })).toMatchObject({ phase: 'interrupting', label: 'interrupting', graceLeftMs: null });
    expect(runPhase({ ...base, state: 'stopping' }).phase).toBe('interrupting');
    expect(runPhase({ ...base, step: 'terminate', signals: [sig('SIGINT', 0)], elapsedMs: 6_000 })).toMatchObject({ phase: 'grace', label: 'grace over' });
  });

  it('is killed after SIGKILL, whichever source says so', () => {
    expect(runPhase({ ...base, state: 'stopping', signals: [sig('SIGINT', 10_000), sig('SIGTERM', 12_000), sig('SIGKILL', 15_000)] })).toMatchObject({ phase: 'killed', label: 'killed' });
    expect(runPhase({ ...base, state: 'stopping', step: 'kill', signals: [sig('SIGINT', 10_000)] }).phase).toBe('killed');
    // A forced stop sends SIGKILL at once.
    expect(runPhase({ ...base, state: 'stopping', signals: [sig('SIGKILL', 300)] }).phase).toBe('killed');
  });

  it('is ended once the run ends, whatever was sent', () => {
    expect(runPhase({ ...base, state: 'ended', verdict: 'killed', elapsedMs: 15_100, signals: [sig('SIGKILL', 15_000)] })).toMatchObject({ phase: 'ended', percent: 100 });
    expect(runPhase({ ...base, state: 'ended', verdict: 'completed', elapsedMs: 2_500 })).toMatchObject({ phase: 'ended', percent: 25 });
  });
});

describe('stopSignals', () => {
  it('merges the snapshot and the events once each, in time order, without teardown signals', () => {
    const recorded = [sig('SIGINT', 100), sig('SIGCONT', 100)];
    const streamed = [sig('SIGINT', 100), sig('SIGTERM', 2_100), sig('SIGKILL to group 4242', 2_600)];
    expect(stopSignals(recorded, streamed)).toEqual([sig('SIGINT', 100), sig('SIGTERM', 2_100)]);
    expect(stopSignals(undefined, undefined)).toEqual([]);
  });
});
