// (i) Time to a confirmed out-of-memory verdict: `python3 -c "b = bytearray(1 << 30)"`
// (bytearray zero-fills, so every page is touched and RSS really grows) under
// a 256 MiB memory cgroup, from the run's start (making its cgroup) until its
// OOM kill is confirmed by the cgroup's counter (cgroup.ts: create, wrap,
// spawn, exit by SIGKILL, observeOom). The baseline, alternating with it in
// the same loop: the same interpreter with no limit allocating just 256 MiB
// (`b = bytearray(256 << 20)`), from spawn to exit: how long reaching the
// limit takes anyway. Teardown and removal of the cgroup are timed apart.

import { spawn } from 'node:child_process';
import { requireMemoryBackend, type RunCgroup } from '../src/main/supervisor/cgroup';
import { check, max, median, ms, type Figure } from './lib';

export interface OomOptions {
  runs: number;
}

const MiB = 1024 * 1024;
const LIMIT = 256 * MiB;

function exitOf(argv: string[]): Promise<{ code: number | null; signal: string | null; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, stdout }));
  });
}

export async function benchOom(options: OomOptions): Promise<Figure> {
  const backend = requireMemoryBackend({ parentName: `warden-bench-${process.pid}` });
  const toVerdict: number[] = [];
  const toExit: number[] = [];
  const cleanup: number[] = [];
  const baseline: number[] = [];
  const peaks: number[] = [];
  let current: RunCgroup | undefined;
  try {
    // RSS really grows: the baseline's own maximum RSS, measured once (not timed).
    const rss = await exitOf(['python3', '-c', 'import resource; b = bytearray(256 << 20); print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)']);
    const maxRssBytes = Number(rss.stdout.trim()) * 1024;
    if (!(maxRssBytes >= LIMIT)) throw new Error(`bytearray(256 << 20) reached a max RSS of only ${(maxRssBytes / MiB).toFixed(1)} MiB: its pages are not touched`);
    for (let i = 0; i < options.runs; i++) {
      // Alternate which side goes first.
      for (const side of i % 2 === 0 ? ['engine', 'baseline'] : ['baseline', 'engine']) {
        if (side === 'baseline') {
          const t0 = performance.now();
          const r = await exitOf(['python3', '-c', 'b = bytearray(256 << 20)']);
          baseline.push(performance.now() - t0);
          if (r.code !== 0) throw new Error(`the baseline allocation ended with ${r.code ?? r.signal}`);
          continue;
        }
        const t0 = performance.now();
        const cg = backend.createRunCgroup(`bench${i}`, LIMIT);
        current = cg;
        const before = cg.readOomKills();
        const r = await exitOf(cg.wrap(['python3', '-c', 'b = bytearray(1 << 30)']));
        const tExit = performance.now();
        const oom = await cg.observeOom(before, { exitCode: r.code, signal: r.signal });
        const tVerdict = performance.now();
        await cg.killAll();
        const removed = await cg.remove();
        current = undefined;
        cleanup.push(performance.now() - tVerdict);
        if (!removed) throw new Error(`the cgroup ${cg.path} could not be removed`);
        if (r.signal !== 'SIGKILL' || !oom.confirmed) throw new Error(`1 GiB under 256 MiB ended with ${r.code ?? r.signal}, oom ${JSON.stringify(oom)}`);
        toExit.push(tExit - t0);
        toVerdict.push(tVerdict - t0);
        peaks.push(oom.peakBytes ?? 0);
      }
    }
    const ratio = median(toVerdict) / median(baseline);
    return {
      title: `(i) time to a confirmed OOM verdict: \`bytearray(1 << 30)\` under a ${LIMIT / MiB} MiB cgroup v${backend.version} limit, vs allocating 256 MiB with no limit, ${options.runs} runs each (medians)`,
      lines: [
        `engine    start -> confirmed OOM verdict ${ms(median(toVerdict))}   max ${ms(max(toVerdict))}   (of which start -> SIGKILL exit ${ms(median(toExit))}; peak ${(median(peaks) / MiB).toFixed(1)} MiB; teardown + cgroup removal afterwards ${ms(median(cleanup))})`,
        `baseline  spawn -> exit of \`bytearray(256 << 20)\` with no limit ${ms(median(baseline))}   max ${ms(max(baseline))}   (its max RSS ${(maxRssBytes / MiB).toFixed(1)} MiB: pages are touched)`,
        `ratio     ${ratio.toFixed(2)}x;   verdict - baseline ${ms(median(toVerdict) - median(baseline))}`,
        `all runs  engine ${toVerdict.map((t) => t.toFixed(0)).join(' ')} ms;  baseline ${baseline.map((t) => t.toFixed(0)).join(' ')} ms`,
      ],
      checks: [check(`confirmed OOM kill in ${toVerdict.length}/${options.runs} runs, every cgroup removed`, toVerdict.length === options.runs)],
    };
  } finally {
    if (current) {
      await current.killAll();
      await current.remove();
    }
    backend.removeParentIfEmpty();
  }
}
