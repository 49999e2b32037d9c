// (o) extended: descriptors under load. `warden serve` (bin/warden.mjs,
// history on, a temp state dir) in its own process under `prlimit
// --nofile=4096` (RLIMIT_NOFILE 4096, soft and hard); `runs` runs started at
// once over the socket, each leaving an escapee in a session of its own
// (marker kept) and ending 2 s after its start, so all their teardowns scan
// /proc together. Every start and every wait is a client call: each must be
// answered (a result, or a 503 that says the host keeps its reserve),
// never a reset or a timeout. The host's open descriptors (/proc/<pid>/fd)
// are counted every 20 ms.
//
// Baseline: the same host's descriptors idle, once it listens. Targets: the
// host alive, every client answered, no escapee left, the peak below the limit.

import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectToHost } from '../src/client/transport';
import type { HttpWardenApi } from '../src/shared/http-api';
import { check, sleep, type Figure } from './lib';

export interface DescriptorBenchOptions {
  runs: number;
  limit: number;
}

function openCount(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return NaN;
  }
}

/** Live processes whose environment carries a marker of `hostId`. */
function marked(hostId: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (/^\d+ \(.*\) [ZX]/s.test(readFileSync(`/proc/${entry}/stat`, 'latin1'))) continue;
      if (readFileSync(`/proc/${entry}/environ`, 'latin1').split('\0').some((e) => e.startsWith(`WARDEN_SCOPE=${hostId}.`))) found.push(Number(entry));
    } catch {
      // gone, or not ours
    }
  }
  return found;
}

export async function benchDescriptors(options: DescriptorBenchOptions): Promise<Figure> {
  const dir = mkdtempSync(join(tmpdir(), 'warden-fds-'));
  const bin = process.env.BENCH_LOAD_BIN ?? fileURLToPath(new URL('../bin/warden.mjs', import.meta.url));
  const host = spawn('prlimit', [`--nofile=${options.limit}:${options.limit}`, process.execPath, bin, 'serve', '--no-tcp'], {
    env: { ...process.env, WARDEN_STATE_DIR: dir },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let hostLog = '';
  host.stderr.on('data', (chunk: Buffer) => (hostLog = (hostLog + chunk.toString()).slice(-4000)));
  let exited = false;
  host.on('exit', () => (exited = true));
  let hostId = '';
  try {
    let api: HttpWardenApi | null = null;
    for (let i = 0; i < 600 && !api && !exited; i++) {
      api = await connectToHost(dir, { timeoutMs: 1000 }).catch(() => null);
      if (!api) await sleep(100);
    }
    if (!api) throw new Error(`the host did not come up: ${hostLog.trim().split('\n').pop() ?? ''}`);
    const info = await api.host();
    hostId = info.hostId;
    const pid = info.pid;
    const idle = openCount(pid);
    let peak = idle;
    const sampler = setInterval(() => {
      const n = openCount(pid);
      if (n > peak) peak = n;
    }, 20);
    const answered = { started: 0, refused: 0, waited: 0 };
    const failures: string[] = [];
    const started = performance.now();
    const script = 'setsid sleep 120 </dev/null >/dev/null 2>&1 & sleep 2';
    const ids = await Promise.all(
      Array.from({ length: options.runs }, async () => {
        try {
          const run = await api.start({ argv: ['sh', '-c', script] });
          answered.started += 1;
          return run.id;
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          if (/low on file descriptors/.test(message)) answered.refused += 1;
          else failures.push(`start: ${message}`);
          return null;
        }
      }),
    );
    const results = await Promise.all(
      ids.map(async (id) => {
        if (id === null) return null;
        try {
          const result = await api.wait(id);
          answered.waited += 1;
          return result;
        } catch (error) {
          failures.push(`wait: ${error instanceof Error ? error.message : String(error)}`);
          return null;
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    const after = exited ? null : await api.host().catch(() => null);
    const left = marked(hostId);
    const reported = results.reduce((n, r) => n + (r?.teardown?.survivors.length ?? 0), 0);
    const unchecked = results.filter((r) => r?.teardown?.unchecked !== undefined).length;
    const killed = results.reduce((n, r) => n + (r?.teardown?.killed.length ?? 0), 0);
    const verdicts = new Map<string, number>();
    for (const r of results) if (r) verdicts.set(r.verdict ?? r.state, (verdicts.get(r.verdict ?? r.state) ?? 0) + 1);
    const alive = !exited && after !== null;
    return {
      title: `(o) descriptors: ${options.runs} concurrent runs with escapees ending together, \`warden serve\` under RLIMIT_NOFILE ${options.limit}`,
      lines: [
        `host open descriptors: peak ${peak} of ${options.limit} (sampled every 20 ms); baseline: the same host idle ${idle}; reserve ${after?.descriptors?.reserve ?? '?'}`,
        `${options.runs} starts: ${answered.started} started, ${answered.refused} refused with 503 (reserve kept), ${failures.length} unanswered${failures.length > 0 ? `: ${failures.slice(0, 3).join('; ')}` : ''}`,
        `${answered.waited} waits answered; verdicts ${[...verdicts].map(([v, n]) => `${n} ${v}`).join(', ')}; ${killed} escapees ended by teardown, ${reported} reported surviving, ${unchecked} reports with processes not checked`,
        `marked processes left after all answers: ${left.length}; ${seconds.toFixed(1)} s from the first start to the last answer; host ${alive ? 'alive at the end' : `died: ${hostLog.trim().split('\n').pop() ?? ''}`}`,
      ],
      checks: [
        check('host alive', alive),
        check('every client answered', failures.length === 0 && answered.started + answered.refused === options.runs && answered.waited === answered.started),
        check('no escapee left alive', left.length === 0),
        check(`peak descriptors < ${options.limit}`, peak < options.limit),
      ],
    };
  } finally {
    host.kill('SIGTERM');
    await new Promise((resolve) => (exited ? resolve(undefined) : host.once('exit', resolve)));
    if (hostId) for (const p of marked(hostId)) process.kill(p, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}
