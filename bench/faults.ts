// (p) Faults: how fast a killed supervisor's runs are ended, and how fast the
// next host recovers many lost runs.
//
// Sweep: a real host process (src/main/store/host-testkit.ts: a Supervisor with
// its sentinel and the history) runs N commands that each start a setsid
// escapee, then gets SIGKILL; the time until every one of those processes is
// dead is measured against the same processes ended by one kill -9 each
// (what is left is the polling and the kernel's own cost).
//
// Recovery: a host recording 100 live runs is killed with its sentinel off
// (so their processes outlive it, the worst case); the next store's
// recoverLostRuns is timed, against the same open and registration with
// nothing to recover.

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { openStore } from '../src/main/store/store';
import { check, median, ms, ratio, type Figure } from './lib';

const HOST = join(dirname(fileURLToPath(import.meta.url)), '../src/main/store/host-testkit.ts');

function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) [ZX]/s.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

async function untilDead(pids: number[], boundMs: number): Promise<number> {
  const t0 = performance.now();
  while (pids.some(alive) && performance.now() - t0 < boundMs) await new Promise((r) => setTimeout(r, 5));
  return performance.now() - t0;
}

interface Started {
  kill(): void;
  pids: number[];
  exited: Promise<void>;
}

/** A host process with `runs` commands live (each prints its pid and its escapee's), sentinel on or off. */
async function liveHost(dir: string, runs: number, sentinel: boolean): Promise<Started> {
  const argv = JSON.stringify(['bash', '-c', 'setsid sleep 600 </dev/null >/dev/null 2>&1 & echo "ready $$ $!"; sleep 600']);
  const child = spawn(process.execPath, ['--import', 'tsx', HOST, 'host', dir, ...Array.from({ length: runs }, () => argv)], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, WARDEN_SENTINEL: sentinel ? '1' : '0', WARDEN_WITH_SENTINEL: sentinel ? '1' : '0' },
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const line = await new Promise<string>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    rl.once('line', resolve);
    child.once('exit', () => reject(new Error('the host exited before its runs were live')));
  });
  const info = JSON.parse(line) as { runs: string[] };
  const store = openStore({ dir });
  const pids = info.runs.flatMap((id) => (/ready (\d+) (\d+)/.exec(store.get(id)?.stdout ?? '')?.slice(1) ?? []).map(Number));
  store.close();
  return { kill: () => child.kill('SIGKILL'), pids, exited };
}

export async function benchFaults(options: { rounds: number; sweepRuns: number; lostRuns: number }): Promise<Figure> {
  const sweeps: number[] = [];
  const baselines: number[] = [];
  let survivors = 0;
  for (let round = 0; round < options.rounds; round++) {
    const host = await liveHost(mkdtempSync(join(tmpdir(), 'warden-bench-p-')), options.sweepRuns, true);
    const t0 = performance.now();
    host.kill();
    await host.exited;
    await untilDead(host.pids, 10_000);
    sweeps.push(performance.now() - t0);
    survivors += host.pids.filter(alive).length;
    for (const pid of host.pids.filter(alive)) process.kill(pid, 'SIGKILL');

    // Baseline: the same tree, each process sent kill -9 by this process.
    const again = await liveHost(mkdtempSync(join(tmpdir(), 'warden-bench-p-')), options.sweepRuns, false);
    again.kill();
    await again.exited;
    const t1 = performance.now();
    for (const pid of again.pids) process.kill(pid, 'SIGKILL');
    await untilDead(again.pids, 10_000);
    baselines.push(performance.now() - t1);
  }

  // Recovery of many lost runs whose processes still live (sentinel off: the worst case).
  const dir = mkdtempSync(join(tmpdir(), 'warden-bench-p-'));
  const dead = await liveHost(dir, options.lostRuns, false);
  dead.kill();
  await dead.exited;
  const base = mkdtempSync(join(tmpdir(), 'warden-bench-p-'));
  const tb = performance.now();
  const empty = openStore({ dir: base });
  empty.registerHost('bench-base');
  await empty.recoverLostRuns({ tearDown: true });
  const baseline = performance.now() - tb;
  empty.close();
  const tr = performance.now();
  const store = openStore({ dir });
  store.registerHost('bench-next');
  const report = await store.recoverLostRuns({ tearDown: true });
  const recovery = performance.now() - tr;
  store.close();
  const left = dead.pids.filter(alive);
  for (const pid of left) process.kill(pid, 'SIGKILL');

  const worst = Math.max(...sweeps);
  return {
    title: `(p) faults: SIGKILL of a host with ${options.sweepRuns} live runs (each with a setsid escapee), its sentinel ending them, vs kill -9 of each; recovery of ${options.lostRuns} lost runs whose processes still live`,
    lines: [
      `sweep     to all dead median ${ms(median(sweeps))}   max ${ms(worst)}   survivors ${survivors}   rounds ${sweeps.map((t) => t.toFixed(0)).join(', ')} ms`,
      `baseline  kill -9 each + poll median ${ms(median(baselines))}   rounds ${baselines.map((t) => t.toFixed(0)).join(', ')} ms`,
      `ratio     median ${ratio(median(sweeps), median(baselines))}`,
      `recovery  ${report.recovered.length} lost runs (${dead.pids.length} live processes torn down, ${left.length} left) in ${ms(recovery)}; open + register with nothing to recover ${ms(baseline)}`,
    ],
    checks: [
      check(`sweep max ${ms(worst)} <= 1000 ms with 0 survivors (${survivors})`, worst <= 1000 && survivors === 0),
      check(`recovery of ${options.lostRuns} lost runs ${ms(recovery)} <= 2000 ms, all recovered (${report.recovered.length}), nothing left (${left.length})`, recovery <= 2000 && report.recovered.length === options.lostRuns && left.length === 0),
    ],
  };
}
