// (b) Output throughput: 1 GiB on stdout (`head -c 1073741824 /dev/zero`)
// captured by the engine (decoded, capped to head + tail, every character
// counted, a live output event per chunk) against a plain Node pipe drain of
// the same command (spawn, read stdout, discard). Rounds alternate; the best
// round of each side is compared, since load from elsewhere only ever slows
// a round down. The engine's peak RSS is sampled every 20 ms during its runs.

import { spawn } from 'node:child_process';
import { Supervisor } from '../src/main/supervisor/supervisor';
import { DEFAULTS } from '../src/shared/request';
import { check, mb, median, min, ms, ratio, rssSampler, type Figure } from './lib';

export interface ThroughputOptions {
  bytes: number;
  rounds: number;
}

function plainDrain(argv: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    let received = 0;
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (chunk: Buffer) => {
      received += chunk.length;
    });
    child.stderr.resume();
    child.once('error', reject);
    child.once('close', () => resolve(received));
  });
}

export async function benchThroughput(options: ThroughputOptions): Promise<Figure> {
  const argv = ['head', '-c', String(options.bytes), '/dev/zero'];
  const supervisor = new Supervisor();
  const plain: number[] = [];
  const engine: number[] = [];
  const peaks: number[] = [];
  const plainPeaks: number[] = [];
  const before: number[] = [];
  const sampler = rssSampler(20);
  const expectDropped = Math.max(0, options.bytes - DEFAULTS.outputCapChars);
  try {
    for (let round = 0; round < options.rounds; round++) {
      const sides = round % 2 === 0 ? ['plain', 'engine'] : ['engine', 'plain'];
      for (const side of sides) {
        if (side === 'plain') {
          sampler.reset();
          const t = performance.now();
          const received = await plainDrain(argv);
          plain.push(performance.now() - t);
          plainPeaks.push(sampler.peak());
          if (received !== options.bytes) throw new Error(`plain drain read ${received} bytes, expected ${options.bytes}`);
        } else {
          before.push(process.memoryUsage().rss);
          sampler.reset();
          const t = performance.now();
          const result = await supervisor.wait(supervisor.start({ argv }).id);
          engine.push(performance.now() - t);
          peaks.push(sampler.peak());
          if (result.verdict !== 'completed') throw new Error(`engine run ended ${result.verdict}`);
          if (result.stdoutTruncated !== expectDropped) {
            throw new Error(`engine dropped ${result.stdoutTruncated} characters, expected ${expectDropped}`);
          }
        }
      }
    }
  } finally {
    sampler.stop();
  }
  const gib = options.bytes / 2 ** 30;
  const rate = (t: number) => `${((options.bytes / 2 ** 20) / (t / 1000)).toFixed(0)} MiB/s`;
  const best = min(engine) / min(plain);
  const peak = Math.max(...peaks);
  return {
    title: `(b) output throughput: ${gib === 1 ? '1 GiB' : `${options.bytes} bytes`} on stdout, engine capture vs plain pipe drain (${options.rounds} alternating rounds each)`,
    lines: [
      `engine    best ${ms(min(engine), 0)} (${rate(min(engine))})   median ${ms(median(engine), 0)}   rounds ${engine.map((t) => t.toFixed(0)).join(', ')} ms`,
      `baseline  best ${ms(min(plain), 0)} (${rate(min(plain))})   median ${ms(median(plain), 0)}   rounds ${plain.map((t) => t.toFixed(0)).join(', ')} ms`,
      `ratio     best ${ratio(min(engine), min(plain))}   median ${ratio(median(engine), median(plain))}`,
      `engine peak RSS ${mb(peak)} (whole process, sampled every 20 ms; RSS before its runs ${before.map(mb).join(', ')}; largest rise during one run ${mb(Math.max(...peaks.map((p, i) => p - before[i]!)))})`,
      `baseline peak RSS ${mb(Math.max(...plainPeaks))} during the plain drains, in the same process`,
    ],
    checks: [
      check(`ratio of best rounds ${best.toFixed(2)} <= 1.3`, best <= 1.3),
      check(`engine peak RSS ${mb(peak)} < 200 MB`, peak < 200e6),
    ],
  };
}
