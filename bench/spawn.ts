// (a) Spawn overhead, three series of `true` awaited until it exited and its
// stdio closed: a plain child_process.spawn with the options the engine
// passes (detached, the same environment and cwd); the engine's own execa
// call (spawnProcess: what execa adds on top of that spawn); and the whole
// engine (Supervisor.start + wait: the spawn checks, output capture, the
// drain and the teardown scan for leftovers). They take turns in blocks, in an
// order that rotates from block to block, so a burst of load from elsewhere
// lands on all three.

import { spawn } from 'node:child_process';
import { memoryBackendOnce } from '../src/main/supervisor/cgroup';
import { HOST_CGROUP_POOL } from '../src/main/supervisor/cgroup-pool';
import { Supervisor } from '../src/main/supervisor/supervisor';
import { spawnProcess, type Subprocess } from '../src/main/supervisor/spawn';
import { scanStats } from '../src/main/supervisor/teardown';
import { check, median, ms, quantile, ratio, sum, type Figure } from './lib';

export interface SpawnOptions {
  runs: number;
  block: number;
  warmup: number;
}

const env = { ...process.env, WARDEN_SCOPE: 'bench-spawn' };
const cwd = process.cwd();

/** Resolves on 'close': after 'exit' and after every stdio stream closed. */
function closed(child: Pick<Subprocess, 'stdout' | 'stderr' | 'once'>): Promise<void> {
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', () => undefined);
    child.stderr!.on('data', () => undefined);
    child.once('error', reject);
    child.once('close', () => resolve());
  });
}

function plainTrue(): Promise<void> {
  return closed(spawn('true', [], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] }));
}

function execaTrue(): Promise<void> {
  return closed(spawnProcess('true', [], { cwd, env, stdin: 'ignore', extraPipes: 0 }));
}

async function engineTrue(supervisor: Supervisor): Promise<void> {
  const result = await supervisor.wait(supervisor.start({ argv: ['true'] }).id);
  if (result.verdict !== 'completed') throw new Error(`engine run of true ended ${result.verdict}: ${result.notes.join(' ')}`);
}

type Side = 'plain' | 'execa' | 'engine';
const SIDES: Side[] = ['plain', 'execa', 'engine'];

export async function benchSpawn(options: SpawnOptions): Promise<Figure> {
  // As the host runs it: with its pool of prepared cgroups (BENCH_CGROUP_POOL=0: none, as embedded runs).
  const poolSize = process.env.BENCH_CGROUP_POOL !== undefined ? Number(process.env.BENCH_CGROUP_POOL) : HOST_CGROUP_POOL;
  const supervisor = new Supervisor({ cgroupPool: poolSize });
  const once: Record<Side, () => Promise<void>> = { plain: plainTrue, execa: execaTrue, engine: () => engineTrue(supervisor) };
  for (let i = 0; i < options.warmup; i++) for (const side of SIDES) await once[side]();
  const times: Record<Side, number[]> = { plain: [], execa: [], engine: [] };
  const teardownMs: number[] = [];
  const scansBefore = scanStats.scans;
  const unsubscribe = supervisor.subscribe((event) => {
    if (event.type === 'ended' && event.result.teardown) teardownMs.push(event.result.teardown.elapsedMs);
  });
  for (let done = 0, b = 0; done < options.runs; done += options.block, b++) {
    const n = Math.min(options.block, options.runs - done);
    // Rotate which side goes first (and which last) from block to block.
    const order = SIDES.map((_, i) => SIDES[(i + b) % SIDES.length]!);
    for (const side of order) {
      for (let i = 0; i < n; i++) {
        const t = performance.now();
        await once[side]();
        times[side].push(performance.now() - t);
      }
    }
  }
  unsubscribe();
  const scans = scanStats.scans - scansBefore;
  const pool = supervisor.cgroupPoolStats();
  await supervisor.shutdown();
  const backend = process.env.WARDEN_CGROUPS === '0' ? undefined : memoryBackendOnce();
  const cgroup = backend?.ok ? `each in a cgroup of its own (v${backend.backend.version})` : 'no cgroup (WARDEN_CGROUPS=0 or none writable)';
  const { plain, execa, engine } = times;
  const row = (name: string, values: number[]) =>
    `${name.padEnd(9)} total ${ms(sum(values), 0).padStart(9)}   median ${ms(median(values), 2)}/run   p90 ${ms(quantile(values, 0.9), 2)}`;
  const totalRatio = sum(engine) / sum(plain);
  const medianRatio = median(engine) / median(plain);
  const execaAddsMedian = median(execa) - median(plain);
  const execaAddsP90 = quantile(execa, 0.9) - quantile(plain, 0.9);
  return {
    title: `(a) spawn overhead: ${options.runs} sequential runs of \`true\` each, plain child_process.spawn vs the engine's execa call vs the whole engine (blocks of ${options.block}, order rotating)`,
    lines: [
      row('engine', engine) + `   (its teardown median ${ms(median(teardownMs), 0)}, as rounded in the result)`,
      row('execa', execa) + '   (spawnProcess alone: execa with the engine\'s options)',
      row('baseline', plain) + '   (child_process.spawn, detached, same env and cwd)',
      `execa     adds ${ms(execaAddsMedian, 2)} median, ${ms(execaAddsP90, 2)} p90 per run   (ratio of medians ${ratio(median(execa), median(plain))}, of totals ${ratio(sum(execa), sum(plain))})`,
      `engine    ratio total ${ratio(sum(engine), sum(plain))}   median ${ratio(median(engine), median(plain))}   (extra per run: ${ms(median(engine) - median(plain), 2)} median)`,
      `engine    runs ${cgroup}; teardowns that scanned /proc: ${scans} of ${options.runs} (the others found their cgroup empty, or nothing started since)`,
      `engine    pool of ${poolSize} prepared cgroups: ${pool ? `${pool.taken} runs took one, ${pool.missed} found none ready (spawned as before)` : 'none'}`,
    ],
    checks: [
      check(`execa adds ${execaAddsMedian.toFixed(2)} ms median per run < 2 ms`, execaAddsMedian < 2),
      check(`engine ratio of totals ${totalRatio.toFixed(2)} <= 1.5 (median ratio ${medianRatio.toFixed(2)})`, totalRatio <= 1.5),
    ],
  };
}
