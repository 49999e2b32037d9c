// (a) Spawn overhead: `true` run through the engine (Supervisor.start + wait,
// which includes the spawn checks, output capture, the drain and the teardown
// scan for leftovers) against a plain child_process.spawn('true') awaited on
// 'exit' and the close of its stdio. The two alternate in blocks, so a burst of
// load from elsewhere lands on both.

import { spawn } from 'node:child_process';
import { Supervisor } from '../src/main/supervisor/registry';
import { check, median, ms, quantile, ratio, sum, type Figure } from './lib';

export interface SpawnOptions {
  runs: number;
  block: number;
  warmup: number;
}

function plainTrue(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('true', [], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.resume();
    child.stderr.resume();
    child.once('error', reject);
    // 'close' comes after 'exit' and after every stdio stream closed.
    child.once('close', () => resolve());
  });
}

async function engineTrue(supervisor: Supervisor): Promise<void> {
  const result = await supervisor.wait(supervisor.start({ argv: ['true'] }).id);
  if (result.verdict !== 'completed') throw new Error(`engine run of true ended ${result.verdict}: ${result.notes.join(' ')}`);
}

export async function benchSpawn(options: SpawnOptions): Promise<Figure> {
  const supervisor = new Supervisor();
  for (let i = 0; i < options.warmup; i++) {
    await plainTrue();
    await engineTrue(supervisor);
  }
  const plain: number[] = [];
  const engine: number[] = [];
  const teardownMs: number[] = [];
  const unsubscribe = supervisor.subscribe((event) => {
    if (event.type === 'ended' && event.result.teardown) teardownMs.push(event.result.teardown.elapsedMs);
  });
  for (let done = 0, b = 0; done < options.runs; done += options.block, b++) {
    const n = Math.min(options.block, options.runs - done);
    // Alternate which side goes first in each block.
    const order = b % 2 === 0 ? ['plain', 'engine'] : ['engine', 'plain'];
    for (const side of order) {
      for (let i = 0; i < n; i++) {
        const t = performance.now();
        if (side === 'plain') await plainTrue();
        else await engineTrue(supervisor);
        (side === 'plain' ? plain : engine).push(performance.now() - t);
      }
    }
  }
  unsubscribe();
  const totalRatio = sum(engine) / sum(plain);
  const medianRatio = median(engine) / median(plain);
  return {
    title: `(a) spawn overhead: ${options.runs} sequential runs of \`true\`, engine vs plain child_process.spawn (blocks of ${options.block}, alternating)`,
    lines: [
      `engine    total ${ms(sum(engine), 0).padStart(9)}   median ${ms(median(engine), 2)}/run   p90 ${ms(quantile(engine, 0.9), 2)}   (its teardown median ${ms(median(teardownMs), 0)}, as rounded in the result)`,
      `baseline  total ${ms(sum(plain), 0).padStart(9)}   median ${ms(median(plain), 2)}/run   p90 ${ms(quantile(plain, 0.9), 2)}`,
      `ratio     total ${ratio(sum(engine), sum(plain))}   median ${ratio(median(engine), median(plain))}   (extra per run: ${ms(median(engine) - median(plain), 2)} median)`,
    ],
    checks: [check(`ratio of totals ${totalRatio.toFixed(2)} <= 1.3 (median ratio ${medianRatio.toFixed(2)})`, totalRatio <= 1.3)],
  };
}
