// (o) The host's memory under load: `warden serve` (bin/warden.mjs, history
// on, in a temp state dir) in its own process, so its peak RSS is its own
// (VmHWM in /proc/<pid>/status). Rounds of `runs` concurrent runs, each
// writing `bytes` characters on stdout and then on stderr (head -c of
// /dev/zero through tr), started over the socket; after every round each
// result is fetched again over the socket (wait, as `warden wait` does) and
// checked complete per its cap: head and tail of the default 2,000,000 kept,
// the exact dropped count. Ended runs past the host's budget are read back
// from the history, so this checks that path too.
//
// Baseline: the same host's RSS once it listens, before any run (VmRSS):
// the ratio says how much the load adds. Target: peak < 1 GB, every result
// complete, the host alive at the end.

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunResult } from '../src/shared/result';
import { DEFAULTS } from '../src/shared/request';
import { connectToHost } from '../src/client/transport';
import type { HttpWardenApi } from '../src/shared/http-api';
import { droppedMarker } from '../src/shared/stream-length';
import { check, mb, sleep, type Figure } from './lib';

export interface LoadBenchOptions {
  runs: number;
  rounds: number;
  /** Characters each run writes on each stream. */
  bytes: number;
}

function statusField(pid: number, field: string): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${field}:`));
  if (!line) throw new Error(`/proc/${pid}/status has no ${field}`);
  return Number(line.split(/\s+/)[1]) * 1024;
}

/** Whether a result holds what a run writing `bytes` of `char` keeps under the default cap. */
function complete(result: RunResult, bytes: number): string | null {
  const cap = DEFAULTS.outputCapChars;
  for (const [stream, char] of [['stdout', 'a'], ['stderr', 'b']] as const) {
    const text = result[stream];
    const dropped = stream === 'stdout' ? result.stdoutTruncated : result.stderrTruncated;
    const expected = bytes <= cap ? char.repeat(bytes) : char.repeat(cap / 2) + droppedMarker(bytes - cap) + char.repeat(cap / 2);
    if (dropped !== Math.max(0, bytes - cap) || text !== expected) return `${result.id} ${stream}: ${text.length} characters kept, ${dropped} dropped`;
  }
  return result.verdict === 'completed' ? null : `${result.id} ended ${result.verdict}`;
}

export async function benchLoad(options: LoadBenchOptions): Promise<Figure> {
  const dir = mkdtempSync(join(tmpdir(), 'warden-load-'));
  // BENCH_LOAD_BIN: another checkout's bin/warden.mjs, to measure its host under the same load.
  const bin = process.env.BENCH_LOAD_BIN ?? fileURLToPath(new URL('../bin/warden.mjs', import.meta.url));
  const host = spawn(process.execPath, [bin, 'serve', '--no-tcp'], { env: { ...process.env, WARDEN_STATE_DIR: dir }, stdio: ['ignore', 'ignore', 'pipe'] });
  let hostLog = '';
  host.stderr.on('data', (chunk: Buffer) => (hostLog = (hostLog + chunk.toString()).slice(-4000)));
  let exited = false;
  host.on('exit', () => (exited = true));
  try {
    let api: HttpWardenApi | null = null;
    for (let i = 0; i < 600 && !api && !exited; i++) {
      api = await connectToHost(dir, { timeoutMs: 1000 }).catch(() => null);
      if (!api) await sleep(100);
    }
    if (!api) throw new Error(`the host did not come up: ${hostLog.trim().split('\n').pop() ?? ''}`);
    const idleRss = statusField(host.pid!, 'VmRSS');
    const script = `head -c ${options.bytes} /dev/zero | tr '\\0' a; head -c ${options.bytes} /dev/zero | tr '\\0' b >&2`;
    const problems: string[] = [];
    const roundPeaks: number[] = [];
    // VmRSS sampled per phase: while the runs are live and their ends answered, and while every result is asked for again.
    const phasePeak = { live: 0, again: 0 };
    let phase: keyof typeof phasePeak = 'live';
    const sampler = setInterval(() => {
      if (!exited) phasePeak[phase] = Math.max(phasePeak[phase], statusField(host.pid!, 'VmRSS'));
    }, 50);
    let checked = 0;
    const started = performance.now();
    for (let round = 0; round < options.rounds && !exited; round++) {
      const ids = await Promise.all(Array.from({ length: options.runs }, async () => (await api.start({ argv: ['sh', '-c', script], limitMs: 600_000 })).id));
      phase = 'live';
      const ended = await Promise.all(ids.map((id) => api.wait(id)));
      phase = 'again';
      // Asked again once all have ended: the older ones now come from the history.
      const again = await Promise.all(ids.map((id) => api.wait(id)));
      for (const result of [...ended, ...again]) {
        const problem = complete(result, options.bytes);
        if (problem) problems.push(`round ${round + 1}: ${problem}`);
        checked++;
      }
      roundPeaks.push(statusField(host.pid!, 'VmHWM'));
    }
    clearInterval(sampler);
    const seconds = (performance.now() - started) / 1000;
    const alive = !exited;
    const peak = alive ? statusField(host.pid!, 'VmHWM') : (roundPeaks.at(-1) ?? NaN);
    return {
      title: `(o) host memory: ${options.rounds} rounds of ${options.runs} concurrent runs writing ${mb(options.bytes)} on each stream, through \`warden serve\``,
      lines: [
        `host peak RSS (VmHWM) ${mb(peak)}; baseline: the same host idle ${mb(idleRss)}; ratio ${(peak / idleRss).toFixed(2)}x`,
        `peak after each round: ${roundPeaks.map(mb).join(', ')}`,
        `VmRSS sampled every 50 ms: at most ${mb(phasePeak.live)} while runs are live, ${mb(phasePeak.again)} while all ${options.runs} results of a round are asked for again at once`,
        `${checked} results checked (each run's end and a second wait after its round), ${problems.length} incomplete${problems.length > 0 ? `: ${problems.slice(0, 3).join('; ')}` : ''}`,
        `${roundPeaks.length} of ${options.rounds} rounds ran in ${seconds.toFixed(1)} s; host ${alive ? 'alive at the end' : `died: ${hostLog.trim().split('\n').pop() ?? ''}`}`,
      ],
      checks: [check('host peak RSS < 1 GB', peak < 1e9), check('every result complete per its cap', problems.length === 0 && checked === 2 * options.runs * options.rounds), check('host alive after every round', alive)],
    };
  } finally {
    host.kill('SIGTERM');
    await new Promise((resolve) => (exited ? resolve(undefined) : host.once('exit', resolve)));
    rmSync(dir, { recursive: true, force: true });
  }
}
