// Memory limits on real runs: the run gets its own memory cgroup, the
// out-of-memory killer's SIGKILL becomes a confirmed verdict with the figures,
// nothing of the run's cgroup is left behind, and a limit that cannot be set
// is refused rather than silently dropped.

import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { detectMemoryBackend, memoryBackendOnce } from './cgroup';
import type { RunResult } from '../../shared/result';
import { Harness } from './proc-testkit';
import { until } from '../../../test/kit/until';

const detection = detectMemoryBackend();
const available = detection.ok;
if (!available) console.log(`memory-run tests skipped: ${detection.reason}`);

let harness: Harness;
afterEach(async () => {
  await harness?.cleanup();
});

/** Cgroups this run left under Warden's parent (each run's is named <wardenPid>-<runId>). */
function leftBehind(runId: string): string[] {
  const backend = memoryBackendOnce();
  if (!backend.ok) return [];
  try {
    return readdirSync(backend.backend.parent).filter((name) => name.endsWith(`-${runId}`));
  } catch {
    return [];
  }
}

const ALLOCATE = 'b = bytearray(512 * 1024 * 1024)';

describe.skipIf(!available)('runs with a memory limit', () => {
  it('an out-of-memory kill is verdict killed, confirmed, with the peak and the limit in the advice', async () => {
    harness = new Harness();
    const r = await harness.run({ argv: ['python3', '-c', ALLOCATE], memory: '64Mi', limitMs: 30_000 });
    expect(r.verdict).toBe('killed');
    expect(r.signal).toBe('SIGKILL');
    expect(r.oom).toMatchObject({ confirmed: true, limitBytes: 64 * 1024 ** 2 });
    expect(r.oom!.peakBytes).toBeGreaterThan(32 * 1024 ** 2);
    // One peak, named for what it is: the cgroup's own counter (capped at the limit), never the RSS sum beside it.
    expect(r.peak).toMatchObject({ rssBytes: r.oom!.peakBytes, source: 'cgroup' });
    expect(r.peak!.rssBytes).toBeLessThanOrEqual(64 * 1024 ** 2);
    expect(r.advice).toMatch(/64 MiB memory limit; its peak was [\d.]+ MiB/);
    expect(leftBehind(r.id)).toEqual([]);
  });

  it('a shell reporting exit 137 for its killed child is confirmed too', async () => {
    harness = new Harness();
    const r = await harness.run({ argv: ['bash', '-c', `python3 -c "${ALLOCATE}"; exit $?`], memory: '64Mi' });
    expect(r.exitCode).toBe(137);
    expect(r.verdict).toBe('killed');
    expect(r.oom?.confirmed).toBe(true);
    expect(leftBehind(r.id)).toEqual([]);
  });

  it('a child killed under a shell that goes on leaves a note on a completed run', async () => {
    harness = new Harness();
    const r = await harness.run({ argv: ['bash', '-c', `python3 -c "${ALLOCATE}"; echo survived`], memory: '64Mi' });
    expect(r.verdict).toBe('completed');
    expect(r.stdout).toBe('survived\n');
    expect(r.notes.join(' ')).toMatch(/out-of-memory killer ended a process of this run at its 64 MiB limit/);
  });

  it('a run under its limit completes with no out-of-memory report, and its cgroup is removed', async () => {
    harness = new Harness();
    const r = await harness.run({ argv: ['python3', '-c', 'b = bytearray(8 * 1024 * 1024); print(len(b))'], memory: '256Mi' });
    expect(r.verdict).toBe('completed');
    expect(r.oom?.confirmed ?? false).toBe(false);
    expect(leftBehind(r.id)).toEqual([]);
  });

  it('a missing command under a limit is still spawn-failed with its cause', async () => {
    harness = new Harness();
    const r = await harness.run({ argv: ['warden-no-such-command-xyz'], memory: '64Mi' });
    expect(r.verdict).toBe('spawn-failed');
    expect(r.exitCode).toBe(127);
  });
});

describe.skipIf(!available)('the peak of a run without a memory limit', () => {
  it("takes the cgroup's counter: a spike between two samples is in the peak, live and at the end", async () => {
    harness = new Harness();
    // 320 MiB held for 0.1 s: the sampler (twice a second) rarely sees it; the cgroup's counter always does.
    // Then it stays until the test has looked (a gate file), however slow the machine.
    const gate = join(mkdtempSync(join(tmpdir(), 'warden-spike-')), 'end-now');
    const code = `import os, time\nb = bytearray(320 * 1024 * 1024)\ntime.sleep(0.1)\ndel b\nprint("freed", flush=True)\nwhile not os.path.exists(${JSON.stringify(gate)}):\n    time.sleep(0.02)`;
    const { id } = harness.supervisor.start({ argv: ['python3', '-c', code] });
    // Live, once it freed the spike: its snapshot's peak so far.
    const live: RunResult = await until('the spike to be freed', () => {
      const now = harness.supervisor.get(id);
      return now?.stdout.includes('freed') ? now : undefined;
    });
    expect(live.state).toBe('running');
    expect(live.peak?.rssBytes ?? 0).toBeGreaterThanOrEqual(320 * 1024 ** 2);
    writeFileSync(gate, '');
    const r = await harness.result(id);
    expect(r.verdict).toBe('completed');
    expect(r.oom).toBeUndefined();
    expect(r.peak!.rssBytes).toBeGreaterThanOrEqual(320 * 1024 ** 2);
  });
});

describe('a memory limit that cannot be set', () => {
  it('is refused with one line naming what is missing, never run without it', () => {
    harness = new Harness({ cgroupRoot: mkdtempSync(join(tmpdir(), 'warden-no-cgroup-')) });
    expect(() => harness.supervisor.start({ argv: ['true'], memory: '64Mi' })).toThrow(/No writable memory cgroup/);
    expect(harness.supervisor.list()).toEqual([]);
  });

  it('a bad size is refused with one line', () => {
    harness = new Harness();
    expect(() => harness.supervisor.start({ argv: ['true'], memory: 'lots' })).toThrow(/memory must be a size/);
  });
});

describe.skipIf(!available)('Python sessions with a memory limit', () => {
  it('an interpreter killed by the out-of-memory killer under a script gets the confirmed verdict, and the next script a fresh one', async () => {
    harness = new Harness();
    const session = `mem${process.pid}`;
    await harness.run({ code: 'x = 1', session, memory: '64Mi' });
    const r = await harness.run({ code: ALLOCATE, session });
    expect(r.kind).toBe('python');
    expect(r.verdict).toBe('killed');
    expect(r.oom).toMatchObject({ confirmed: true, limitBytes: 64 * 1024 ** 2 });
    expect(r.advice).toMatch(/64 MiB memory limit/);
    const next = await harness.run({ code: 'print(x)', session });
    expect(next.verdict).toBe('failed');
    expect(next.stderr).toContain('NameError');
    await harness.supervisor.closeSession(session);
    const backend = memoryBackendOnce();
    const mine = () => (backend.ok ? readdirSync(backend.backend.parent).filter((name) => name.includes(`-session-${session}-`)) : []);
    // The cgroup goes once the interpreter's last process has left it: waited for, not guessed at.
    await until('the session\'s cgroup to go', () => mine().length === 0);
  });
});

describe('a Python memory limit that cannot be set', () => {
  it('is refused with one line', () => {
    harness = new Harness({ cgroupRoot: mkdtempSync(join(tmpdir(), 'warden-no-cgroup-')) });
    expect(() => harness.supervisor.start({ code: 'x = 1', memory: '64Mi' })).toThrow(/No writable memory cgroup/);
  });
});
