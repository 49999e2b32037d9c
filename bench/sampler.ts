// (h) Process sampler cost: a tree of 500 processes (one bash and 499
// `sleep`, all carrying a WARDEN_SCOPE marker) sampled by ProcessSampler at
// 4 Hz, as a host runs it (its own timer).
// - CPU: this process's CPU time (process.cpuUsage, user + system, every
//   thread) over a 5 s window of sampling, minus the same over an idle period
//   of the same length (half before tracking, half after), as % of one core.
//   The window starts after 15 s of warm-up, the time V8 takes here to
//   compile the sampler's code at 4 ticks a second (a host runs for hours);
//   the first tick, which reads every process's stat, command line and new
//   environments once, and the whole warm-up are measured and printed on
//   their own.
// - Per sample: the wall time of a timer tick against one
//   `ps -A -o pid,ppid,rss,time` run (spawned and read to its end) right
//   after it, in the same loop; the ratio of the medians.
// The tree is ended by killing each sleep (bash, waiting on them, reaps them),
// so no zombie is left where PID 1 does not reap; bash then exits by itself.

import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { ProcessSampler } from '../src/main/supervisor/proc-tree/sampler';
import { check, median, ms, sleep, type Figure } from './lib';

export interface SamplerOptions {
  /** Processes in the tree, bash included. */
  processes: number;
  rateHz: number;
  seconds: number;
  /** Sampling before the window: the first tick's reads, the JIT. */
  warmupSeconds: number;
  /** Timer tick vs ps pairs. */
  pairs: number;
  /** The sampler's option (default: its default, 1000 ms); 0 reads every process every tick. */
  sleepingReadMs?: number;
}

const execFileAsync = promisify(execFile);
const SCRIPT = `
for ((i = 1; i < $1; i++)); do sleep 300 </dev/null >/dev/null 2>&1 & echo "$!"; done
echo ready
wait
`;

function cpuMs(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
}

async function idle(periodMs: number): Promise<number> {
  const before = process.cpuUsage();
  await sleep(periodMs);
  return cpuMs(before);
}

export async function benchSampler(options: SamplerOptions): Promise<Figure> {
  const scope = `bench${randomBytes(4).toString('hex')}.sampler`;
  const env = { ...process.env, WARDEN_SCOPE: scope };
  const bash = spawn('bash', ['-c', SCRIPT, 'tree', String(options.processes)], { detached: true, env, stdio: ['ignore', 'pipe', 'ignore'] });
  const exited = new Promise<void>((resolve) => bash.once('exit', () => resolve()));
  const sleeps: number[] = [];
  try {
    for await (const line of createInterface({ input: bash.stdout })) {
      if (line === 'ready') break;
      sleeps.push(Number(line));
    }
    const periodMs = options.seconds * 1000;

    // Until every sleep has exec'd: a warm sampler, and a tree of the size asked.
    const probe = new ProcessSampler({ rateHz: 0.001 });
    probe.track('probe', { rootPid: bash.pid!, scope });
    const readyBy = performance.now() + 30_000;
    let seen = 0;
    for (;;) {
      const [snapshot] = await probe.sample();
      seen = snapshot?.processes ?? 0;
      const commands = snapshot?.roots[0]?.children.filter((n) => n.command === 'sleep 300').length ?? 0;
      if ((seen === options.processes && commands === options.processes - 1) || performance.now() > readyBy) break;
      await sleep(50);
    }
    probe.close();
    if (seen !== options.processes) throw new Error(`the tree has ${seen} processes, not ${options.processes}`);

    // The sampler as a host runs it: tracking the tree at the bench's rate,
    // warmed up (its first tick reads every stat and 500 command lines once,
    // and the JIT compiles it), then a window of the same length as the idle
    // period, half of which comes before tracking and half after.
    const idleBefore = await idle(periodMs / 2);
    const sampler = new ProcessSampler({ rateHz: options.rateHz, sleepingReadMs: options.sleepingReadMs });
    const tickMs: number[] = [];
    let onTick: (() => void) | undefined;
    sampler.onSample(() => {
      tickMs.push(sampler.stats.lastTickMs);
      onTick?.();
    });
    const nextTick = () => new Promise<void>((resolve) => (onTick = resolve));
    const trackedAt = process.cpuUsage();
    const firstTick = nextTick();
    sampler.track('bench', { rootPid: bash.pid!, scope });
    await firstTick;
    const firstTickCpuMs = cpuMs(trackedAt);
    await sleep(options.warmupSeconds * 1000);
    const warmupCpuMs = cpuMs(trackedAt);

    const ticksBefore = tickMs.length;
    const before = process.cpuUsage();
    await sleep(periodMs);
    const samplingCpuMs = cpuMs(before);
    const windowTicks = tickMs.slice(ticksBefore);
    const reads = { stat: sampler.stats.lastStatReads, carried: sampler.stats.lastCarried };

    // Per sample, against one ps run in the same loop: each timer tick, then one ps.
    const psMs: number[] = [];
    const pairedTickMs: number[] = [];
    let psRows = 0;
    for (let i = 0; i < options.pairs; i++) {
      await nextTick();
      pairedTickMs.push(sampler.stats.lastTickMs);
      const t0 = performance.now();
      const { stdout } = await execFileAsync('ps', ['-A', '-o', 'pid,ppid,rss,time'], { maxBuffer: 64 * 1024 * 1024 });
      psMs.push(performance.now() - t0);
      psRows = stdout.split('\n').length - 2;
    }
    const peak = sampler.untrack('bench');
    const environReads = sampler.stats.environReads;
    const cmdlineReads = sampler.stats.cmdlineReads;
    sampler.close();
    const idleAfter = await idle(periodMs / 2);
    const idleCpuMs = idleBefore + idleAfter;

    const percentOfCore = ((samplingCpuMs - idleCpuMs) / periodMs) * 100;
    const firstTickPercent = (firstTickCpuMs / periodMs) * 100;
    const perSampleRatio = median(psMs) / median(pairedTickMs);

    return {
      title: `(h) process sampler: a tree of ${options.processes} processes at ${options.rateHz} Hz, ${options.seconds} s window, vs idle and vs one \`ps -A -o pid,ppid,rss,time\`${options.sleepingReadMs === 0 ? ' (every process read every tick)' : ''}`,
      lines: [
        `sampler   CPU ${ms(samplingCpuMs)} over ${options.seconds} s of sampling (${windowTicks.length} ticks, tick median ${ms(median(windowTicks), 2)} wall; last tick read ${reads.stat} stat files and carried ${reads.carried} sleepers over), after ${options.warmupSeconds} s of warm-up`,
        `baseline  CPU ${ms(idleCpuMs)} over ${options.seconds} s idle (half before tracking, half after)`,
        `cost      (sampling - idle) / ${options.seconds} s = ${percentOfCore.toFixed(2)}% of one core`,
        `start     the first tick (every stat, ${cmdlineReads} command lines and ${environReads} environments read once; descriptors opened): ${ms(firstTickCpuMs)} CPU, ${firstTickPercent.toFixed(2)}% of one core if it fell in a ${options.seconds} s window; the ${options.warmupSeconds} s of warm-up with it (V8 compiling the sampler): ${ms(warmupCpuMs)}, ${((warmupCpuMs / (options.warmupSeconds * 1000)) * 100).toFixed(2)}% of one core`,
        `per sample  timer tick median ${ms(median(pairedTickMs), 2)} wall;  one ps median ${ms(median(psMs), 2)} wall (${psRows} rows);  ${options.pairs} pairs in one loop`,
        `ratio     ps / sampler (median wall per sample) ${perSampleRatio.toFixed(1)}x;  peak ${peak?.processes} processes, ${((peak?.rssBytes ?? 0) / 2 ** 20).toFixed(0)} MiB`,
      ],
      checks: [
        check(`sampler CPU ${percentOfCore.toFixed(2)}% of one core <= 2%`, percentOfCore <= 2),
        check(`per sample ${perSampleRatio.toFixed(1)}x cheaper than one ps >= 10x`, perSampleRatio >= 10),
      ],
    };
  } finally {
    for (const pid of sleeps) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    // bash reaps them and exits; the group kill only guards a bash that did not.
    await Promise.race([exited, sleep(5_000)]);
    try {
      process.kill(-bash.pid!, 'SIGKILL');
    } catch {
      // the group is gone
    }
  }
}
