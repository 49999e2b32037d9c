// A run without a memory limit on cgroup v1 is born in its cgroup
// (RunCgroup.spawnInside) while the kernel's cgroup attach is warm: the
// spawning thread moves in for the fork and back out, so no wrapper shell
// runs first, and since every process of the run is in there, an empty
// cgroup at the end means nothing is left: its teardown reads the cgroup
// instead of every process in /proc. Cold (no attach for a while), the
// wrapper joins it, so the event loop never waits for a grace period.
// Real cgroups, real processes; skipped where no writable v1 memory cgroup
// exists.

import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { cgroupAttachWarm, detectMemoryBackend, type MemoryBackend } from './cgroup';
import { Harness } from './proc-testkit';
import { scanStats } from './teardown';

const detection = detectMemoryBackend();
const backend: MemoryBackend | undefined = detection.ok && detection.backend.version === 1 && process.env.WARDEN_CGROUPS !== '0' ? detection.backend : undefined;
if (!backend) console.log(`cgroup birth tests skipped: ${detection.ok ? 'not cgroup v1, or WARDEN_CGROUPS=0' : detection.reason}`);

const threadCgroup = () => readFileSync('/proc/thread-self/cgroup', 'utf8');

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.cleanup();
  harness = undefined;
});

// Until the background child has exec'd sleep (bounded): before that it is a
// fork of bash, named by bash's command line, however teardown finds it.
const EXECED = 'for i in $(seq 500); do [ "$(cat /proc/$p/comm 2>/dev/null)" = sleep ] && break; sleep 0.01; done';

describe.skipIf(!backend)('a run born in its cgroup', () => {
  it('is in its cgroup with what it starts, and the spawning thread goes back to its own', () => {
    const cgroup = backend!.createRunCgroup(`birth-${process.pid}`, null);
    const own = threadCgroup();
    try {
      // The child reports its own cgroup and its child's: both were born in the run's.
      const out = cgroup.spawnInside(() => execFileSync('bash', ['-c', 'grep :memory: /proc/$$/cgroup; bash -c "grep :memory: /proc/\\$\\$/cgroup"'], { encoding: 'utf8' }));
      const lines = out!.trim().split('\n');
      expect(lines).toHaveLength(2);
      for (const line of lines) expect(line.endsWith(`-birth-${process.pid}`)).toBe(true);
      expect(threadCgroup()).toBe(own);
      // Whatever the spawn does, the thread is back home after it.
      expect(() => cgroup.spawnInside(() => {
        throw new Error('no spawn');
      })).toThrow('no spawn');
      expect(threadCgroup()).toBe(own);
    } finally {
      void cgroup.remove();
    }
  });

  it('is never entered with a memory limit: the wrapper joins it instead', () => {
    const cgroup = backend!.createRunCgroup(`birth-limit-${process.pid}`, 64 * 1024 ** 2);
    try {
      let called = false;
      expect(cgroup.spawnInside(() => (called = true))).toBeUndefined();
      expect(called).toBe(false);
      expect(cgroup.wrap(['true'])[0]).toBe('/bin/sh');
    } finally {
      void cgroup.remove();
    }
  });

  /** Moves this thread into a scratch cgroup and back: the attach is warm for the next few milliseconds. */
  function warmAttach(): void {
    const scratch = backend!.createRunCgroup(`birth-warm-${process.pid}`, null);
    scratch.spawnInside(() => undefined);
    void scratch.remove();
  }

  it('cold, is joined by the wrapper, so the event loop never waits for the kernel', async () => {
    harness = new Harness();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(cgroupAttachWarm()).toBe(false);
    const scansBefore = scanStats.scans;
    const r = await harness.run({ argv: ['bash', '-c', 'sleep 0.01 & wait; grep :memory: /proc/$$/cgroup'] });
    expect(r.stdout.trim().endsWith(`-${r.id}`)).toBe(true);
    // Not born in it: the marker scan runs as it always did.
    expect(scanStats.scans).toBeGreaterThan(scansBefore);
  });

  it('ends with an empty cgroup and is torn down without a look at /proc', async () => {
    harness = new Harness();
    const own = threadCgroup();
    const scansBefore = scanStats.scans;
    warmAttach();
    // A child of its own (so "no pid handed out since" cannot skip the scan), gone before the end.
    const r = await harness.run({ argv: ['bash', '-c', 'sleep 0.01 & wait; echo done'] });
    expect(r.verdict).toBe('completed');
    expect(r.stdout).toBe('done\n');
    expect(r.teardown).toMatchObject({ killed: [], survivors: [], complete: true });
    expect(scanStats.scans).toBe(scansBefore);
    expect(threadCgroup()).toBe(own);
    expect(existsSync(backend!.parent) ? readdirSync(backend!.parent).filter((name) => name.endsWith(`-${r.id}`)) : []).toEqual([]);
  });

  it('with a process left in it, is torn down as before: the leftover is found, named and ended', async () => {
    harness = new Harness();
    const r = await harness.run({ argv: ['bash', '-c', `env -u WARDEN_SCOPE setsid sleep 313 </dev/null >/dev/null 2>&1 & p=$!; ${EXECED}; echo "left $p"`] });
    const pid = Number(/left (\d+)/.exec(r.stdout)![1]);
    expect(r.teardown!.killed.find((p) => p.pid === pid)?.command).toBe('sleep 313');
    expect(r.teardown!.complete).toBe(true);
    let state: string | undefined;
    try {
      state = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]![0];
    } catch {
      state = undefined;
    }
    expect(state === undefined || state === 'Z' || state === 'X').toBe(true);
  });
});
