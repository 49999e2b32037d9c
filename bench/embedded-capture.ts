// (w) `warden run --embedded` capturing 2 GiB: the whole command as a user
// runs it (bin/warden.mjs, the bundle in out/cli: its start, the engine in
// its own process, the capture, the history's record of the kept output, the
// JSON answer) on `head -c 2147483648 /dev/zero`, against a Node process
// that spawns the same command and drains its stdout (reads every chunk,
// discards it). Separate processes both, rounds alternating (which side goes
// first turns), after a warm-up each; medians and bests compared, with each
// side's CPU (its own and its children's, from the kernel: what load from
// elsewhere cannot stretch).

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { check, median, min, ms, ratio, type Figure } from './lib';

export interface EmbeddedCaptureOptions {
  bytes: number;
  rounds: number;
}

const BIN = join(import.meta.dirname, '..', 'bin', 'warden.mjs');

const DRAIN = `const c = require('node:child_process').spawn(process.argv[1], process.argv.slice(2), { stdio: ['ignore', 'pipe', 'pipe'] });
let n = 0;
c.stdout.on('data', (b) => { n += b.length; });
c.stderr.resume();
c.on('close', (code) => { process.stdout.write(String(n)); process.exitCode = code; });`;

/** Wall ms of one call, and the CPU ms it and its children used (bash's `times`, as the kernel counted it). */
function timed(argv: string[], env: NodeJS.ProcessEnv): Promise<{ wallMs: number; cpuMs: number }> {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const child = spawn('bash', ['-c', '"$@" >"$WB_OUT"; s=$?; times >&2; exit $s', 'timed', ...argv], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('error', reject);
    child.once('close', (code) => {
      const wallMs = performance.now() - t;
      if (code !== 0) return reject(new Error(`${argv.join(' ')} exited ${code}: ${err.slice(0, 300)}`));
      // `times` prints the shell's line, then its children's: "0m1.234s 0m0.567s".
      const lines = err.trim().split('\n');
      const children = lines[lines.length - 1]!.match(/(\d+)m([\d.]+)s/g) ?? [];
      const cpuMs = children.reduce((sum, t) => {
        const m = /(\d+)m([\d.]+)s/.exec(t)!;
        return sum + (Number(m[1]) * 60 + Number(m[2])) * 1000;
      }, 0);
      resolve({ wallMs, cpuMs });
    });
  });
}

export async function benchEmbeddedCapture(options: EmbeddedCaptureOptions): Promise<Figure> {
  const dir = mkdtempSync(join(tmpdir(), 'wbench-embedded-'));
  const env: NodeJS.ProcessEnv = { ...process.env, WARDEN_STATE_DIR: join(dir, 'state'), WB_OUT: join(dir, 'out') };
  delete env.WARDEN_EMBEDDED;
  const command = ['head', '-c', String(options.bytes), '/dev/zero'];
  const sides = {
    warden: [process.execPath, BIN, 'run', '--embedded', '--json', '--', ...command],
    drain: [process.execPath, '-e', DRAIN, ...command],
  };
  type Side = keyof typeof sides;
  const wall: Record<Side, number[]> = { warden: [], drain: [] };
  const cpu: Record<Side, number[]> = { warden: [], drain: [] };
  try {
    // Warm-up: the bundle built if needed, the state dir and its history made, the page cache.
    for (const side of ['warden', 'drain'] as const) await timed(sides[side], env);
    for (let round = 0; round < options.rounds; round++) {
      const order: Side[] = round % 2 === 0 ? ['warden', 'drain'] : ['drain', 'warden'];
      for (const side of order) {
        const r = await timed(sides[side], env);
        wall[side].push(r.wallMs);
        cpu[side].push(r.cpuMs);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const m = { warden: median(wall.warden), drain: median(wall.drain) };
  const best = { warden: min(wall.warden), drain: min(wall.drain) };
  const c = { warden: median(cpu.warden), drain: median(cpu.drain) };
  const gib = options.bytes / 2 ** 30;
  return {
    title: `(w) warden run --embedded capturing ${gib} GiB (head -c ${options.bytes} /dev/zero) vs a Node drain of the same command, both as processes, ${options.rounds} alternating rounds`,
    lines: [
      `warden --embedded  median ${ms(m.warden, 0)}   best ${ms(best.warden, 0)}   CPU with its children median ${ms(c.warden, 0)}   rounds ${wall.warden.map((v) => v.toFixed(0)).join(', ')}`,
      `node drain         median ${ms(m.drain, 0)}   best ${ms(best.drain, 0)}   CPU with its children median ${ms(c.drain, 0)}   rounds ${wall.drain.map((v) => v.toFixed(0)).join(', ')}`,
      `ratio              median ${ratio(m.warden, m.drain)}   best ${ratio(best.warden, best.drain)}   CPU ${ratio(c.warden, c.drain)}`,
    ],
    checks: [check(`median ${ratio(m.warden, m.drain)} <= 1.3x a Node drain`, m.warden <= 1.3 * m.drain)],
  };
}
