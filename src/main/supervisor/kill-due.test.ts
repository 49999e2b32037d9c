// A stop step's event says when SIGKILL is due, so a view counts the grace
// down exactly: the stop's start plus the run's own grace.

import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../../shared/events';
import { Supervisor } from './supervisor';

function collect(supervisor: Supervisor, id: () => string) {
  const events: Extract<RunEvent, { type: 'signal-sent' }>[] = [];
  supervisor.subscribe((e) => {
    if (e.type === 'signal-sent' && e.runId === id() && e.step !== 'teardown') events.push(e);
  });
  return events;
}

describe('signal-sent carries when SIGKILL is due', () => {
  it('a command: the stop began at the limit, SIGKILL due a grace later, and the kill step at its own time', async () => {
    const supervisor = new Supervisor({ sampleRateHz: 0 });
    let id = '';
    const events = collect(supervisor, () => id);
    // The limit leaves bash ample time to set its trap before the deadline's SIGINT.
    id = supervisor.start({ argv: ['bash', '-c', "trap '' INT TERM; sleep 30"], limitMs: 1_000, graceMs: 1500, terminateAfterMs: 700 }).id;
    const result = await supervisor.wait(id);
    expect(result.stop?.endedBy).toBe('kill');
    const began = result.stop!.requestedAtMs;
    const steps = events.map((e) => e.step);
    expect(steps).toContain('interrupt');
    expect(steps).toContain('terminate');
    for (const e of events.filter((x) => x.step !== 'kill')) expect(e.killAtMs).toBe(Math.round(began + 1500));
    const kill = events.find((e) => e.step === 'kill')!;
    expect(kill.killAtMs).toBe(Math.round(kill.atMs));
  });

  it('a Python script: its own grace, from the first stop signal', async () => {
    const supervisor = new Supervisor({ sampleRateHz: 0 });
    let id = '';
    const events = collect(supervisor, () => id);
    id = supervisor.start({ code: 'import time\ntime.sleep(30)', limitMs: 300, graceMs: 4000 }).id;
    const result = await supervisor.wait(id);
    expect(result.verdict).toBe('timed-out');
    expect(events.length).toBeGreaterThan(0);
    const first = events[0]!;
    for (const e of events) expect(e.killAtMs).toBe(Math.round(first.atMs + 4000));
    await supervisor.shutdown();
  });
});
