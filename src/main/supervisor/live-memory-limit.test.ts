// A live run with a memory limit carries the limit in its snapshots (oom:
// { confirmed: false, limitBytes }), so the Runs list and the detail show it
// beside the peak so far, not only once the run has ended.

import { afterEach, describe, expect, it } from 'vitest';
import { detectMemoryBackend } from './cgroup';
import { Harness } from './proc-testkit';

const detection = detectMemoryBackend();
if (!detection.ok) console.log(`live-memory-limit tests skipped: ${detection.reason}`);

let harness: Harness;
afterEach(async () => {
  await harness?.cleanup();
});

describe.skipIf(!detection.ok)('a live run with a memory limit', () => {
  it('shows its limit while it runs, and none when it has no limit', async () => {
    harness = new Harness();
    const limited = harness.supervisor.start({ argv: ['sleep', '30'], memory: '96Mi', limitMs: 30_000 });
    const unlimited = harness.supervisor.start({ argv: ['sleep', '30'], limitMs: 30_000 });
    expect(limited.state).toBe('running');
    expect(harness.supervisor.get(limited.id)!.oom).toEqual({ confirmed: false, limitBytes: 96 * 1024 ** 2 });
    expect(harness.supervisor.list().find((r) => r.id === limited.id)!.oom?.limitBytes).toBe(96 * 1024 ** 2);
    expect(harness.supervisor.get(unlimited.id)!.oom).toBeUndefined();
    harness.supervisor.stop(limited.id);
    harness.supervisor.stop(unlimited.id);
    const [ended] = await Promise.all([harness.supervisor.wait(limited.id), harness.supervisor.wait(unlimited.id)]);
    // Ended: the cgroup's own report, as before.
    expect(ended.oom).toMatchObject({ confirmed: false, limitBytes: 96 * 1024 ** 2 });
  });

  it("its samples carry the cgroup's peak as the peak so far, capped at the limit, as its result says it", async () => {
    harness = new Harness();
    const peaks: { rssBytes: number; source?: string }[] = [];
    harness.supervisor.subscribe((event) => {
      if (event.type === 'tree') peaks.push(event.snapshot.peak);
    });
    // Several processes sharing their libraries: their RSS sum counts the shared pages in each, the cgroup once.
    const r = await harness.run({ argv: ['bash', '-c', 'for i in 1 2 3 4 5 6; do python3 -c "import time; time.sleep(1.5)" & done; wait'], memory: '96M', limitMs: 30_000 });
    expect(peaks.length).toBeGreaterThan(0);
    expect(peaks.every((p) => p.source === 'cgroup' && p.rssBytes <= 96 * 1024 ** 2)).toBe(true);
    expect(r.peak).toMatchObject({ source: 'cgroup' });
    expect(r.peak!.rssBytes).toBeGreaterThanOrEqual(Math.max(...peaks.map((p) => p.rssBytes)));
  });

  it('a live Python script with a memory limit shows it too, and one without none', async () => {
    harness = new Harness();
    const limited = harness.supervisor.start({ code: 'import time\ntime.sleep(30)', session: 'limited', memory: '128Mi', limitMs: 30_000 });
    const unlimited = harness.supervisor.start({ code: 'import time\ntime.sleep(30)', session: 'free', limitMs: 30_000 });
    expect(harness.supervisor.get(limited.id)!.oom).toEqual({ confirmed: false, limitBytes: 128 * 1024 ** 2 });
    expect(harness.supervisor.get(unlimited.id)!.oom).toBeUndefined();
    harness.supervisor.stop(limited.id);
    harness.supervisor.stop(unlimited.id);
    await Promise.all([harness.supervisor.wait(limited.id), harness.supervisor.wait(unlimited.id)]);
  });
});
