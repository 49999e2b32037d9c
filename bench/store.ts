// (j) The history store with 100,000 runs: a filtered page of 50, a
// full-text search, opening the database cold in a fresh process; and the
// write cost of recording a run that prints 100 MB, against the same run with
// the store off. The database lives in a temp dir and is deleted afterwards.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunResult, Verdict } from '../src/shared/result';
import { Supervisor } from '../src/main/supervisor/supervisor';
import { attachRecorder } from '../src/main/store/recorder';
import { writeEnded } from '../src/main/store/rows';
import { transaction } from '../src/main/store/sql';
import { openStore, type HistoryStore } from '../src/main/store/store';
import { check, mb, median, min, ms, type Figure } from './lib';

export interface StoreBenchOptions {
  runs: number;
  /** Bytes printed by the run whose recording cost is measured. */
  outputBytes: number;
  rounds: number;
  /** Repetitions of each query. */
  repeats: number;
}

const here = dirname(fileURLToPath(import.meta.url));

// A vocabulary for commands and output, so the full-text index is not trivially small.
const WORDS = 'build test lint deploy fetch parse compile render index query cache worker server client module import export error warning timeout retry socket buffer stream parser token schema migrate record replay'.split(' ');
const VERDICTS: [Verdict, number][] = [['completed', 0.7], ['failed', 0.18], ['timed-out', 0.05], ['stopped', 0.03], ['killed', 0.02], ['crashed', 0.01], ['spawn-failed', 0.01]];

function pick<T>(items: readonly T[], i: number): T {
  return items[i % items.length]!;
}

function verdictFor(x: number): Verdict {
  let acc = 0;
  for (const [verdict, share] of VERDICTS) if (x < (acc += share)) return verdict;
  return 'completed';
}

/** A deterministic, varied run: i picks its words, verdict and time (run i starts i seconds after t0). */
export function syntheticRun(i: number, t0: number): RunResult {
  const r = Math.abs(Math.sin(i * 12.9898) * 43758.5453) % 1;
  const verdict = verdictFor(r);
  const w = (k: number) => pick(WORDS, i * 7 + k * 13);
  const lines = Array.from({ length: 6 }, (_, k) => `${w(k)} ${w(k + 1)} step ${k} of run ${i}: ${w(k + 2)} ok`);
  // One run in a hundred carries a rare word: what a search for a specific failure finds.
  if (i % 100 === 0) lines.push(`FATAL rarewordzebra${i % 7} in ${w(3)}`);
  const startedAt = new Date(t0 + i * 1000).toISOString();
  return {
    id: `b${i.toString(16).padStart(11, '0')}`,
    kind: i % 10 === 0 ? 'python' : 'command',
    ...(i % 10 === 0 ? { code: `import ${w(1)}\nprint(${w(2)}.run(${i}))`, session: 'default' } : { argv: ['npm', 'run', w(0), '--', `--${w(1)}`] }),
    cwd: `/home/dev/project-${i % 20}`,
    state: 'ended',
    verdict,
    exitCode: verdict === 'completed' ? 0 : verdict === 'failed' ? 1 + (i % 3) : null,
    signal: verdict === 'crashed' ? 'SIGSEGV' : null,
    startedAt,
    endedAt: new Date(t0 + i * 1000 + 250).toISOString(),
    elapsedMs: 250,
    limitMs: i % 2 === 0 ? 60_000 : null,
    advice: verdict === 'completed' ? null : `The run ended ${verdict}.`,
    notes: [],
    stdout: `${lines.join('\n')}\n`,
    stderr: verdict === 'failed' ? `error: ${w(4)} ${w(5)} failed\n` : '',
    stdoutTruncated: 0,
    stderrTruncated: 0,
  };
}

function seed(store: HistoryStore, runs: number): number {
  const t = performance.now();
  const t0 = Date.now() - runs * 1000;
  transaction(store.db, () => {
    for (let i = 0; i < runs; i++) writeEnded(store.db, 'bench-host', syntheticRun(i, t0));
  });
  return performance.now() - t;
}

function timeIt(repeats: number, fn: () => unknown): number[] {
  fn(); // the first call prepares the statement
  const times: number[] = [];
  for (let i = 0; i < repeats; i++) {
    const t = performance.now();
    fn();
    times.push(performance.now() - t);
  }
  return times;
}

function dropPageCache(): boolean {
  try {
    execFileSync('sync');
    writeFileSync('/proc/sys/vm/drop_caches', '1');
    return true;
  } catch {
    return false;
  }
}

interface ColdOpen {
  importMs: number;
  openMs: number;
  firstPageMs: number;
}

/** Opens the store in a fresh Node process and times it there (tsx's own start is not counted). */
function coldOpen(dir: string): ColdOpen {
  const storeModule = join(here, '..', 'src', 'main', 'store', 'store.ts');
  const script = `
    const t0 = performance.now();
    const { openStore } = await import(${JSON.stringify(storeModule)});
    const t1 = performance.now();
    const store = openStore({ dir: ${JSON.stringify(dir)} });
    const t2 = performance.now();
    const page = store.list({ verdict: 'failed', limit: 50 });
    const t3 = performance.now();
    if (page.runs.length !== 50) throw new Error('short page');
    console.log(JSON.stringify({ importMs: t1 - t0, openMs: t2 - t1, firstPageMs: t3 - t2 }));
  `;
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').pop()!) as ColdOpen;
}

async function writeCost(options: StoreBenchOptions): Promise<{ off: number[]; on: number[]; storedBytes: number; writeMs: number[]; endMs: number[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'warden-bench-store-write-'));
  const argv = ['bash', '-c', `yes 'warden store bench: a line of output from a chatty build' | head -c ${options.outputBytes}`];
  const plain = new Supervisor();
  const recorded = new Supervisor();
  const store = openStore({ dir });
  const errors: string[] = [];
  const recorder = attachRecorder(store, recorded, { onError: (e) => errors.push(e.message), retention: false });
  const off: number[] = [];
  const on: number[] = [];
  const writeMs: number[] = [];
  const endMs: number[] = [];
  let storedBytes = 0;
  try {
    // Round 0 warms both sides up (page cache, JIT, the database's first pages) and is not counted.
    for (let round = 0; round <= options.rounds; round++) {
      const sides = round % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const);
      for (const side of sides) {
        const supervisor = side === 'on' ? recorded : plain;
        const spentBefore = recorder.status().writeMs;
        const t = performance.now();
        const result = await supervisor.wait(supervisor.start({ argv }).id);
        const elapsed = performance.now() - t;
        // The end is written a turn after the answer: written here, so it is billed to no round, and counted apart.
        const beforeEnd = recorder.status().writeMs;
        if (side === 'on') recorder.flush();
        if (round > 0 && side === 'on') endMs.push(recorder.status().writeMs - beforeEnd);
        if (round > 0) (side === 'on' ? on : off).push(elapsed);
        if (round > 0 && side === 'on') writeMs.push(recorder.status().writeMs - spentBefore);
        if (result.verdict !== 'completed') throw new Error(`the 100 MB run ended ${result.verdict}`);
        if (side === 'on') {
          const stored = store.get(result.id);
          if (stored?.stdout !== result.stdout) throw new Error('the stored output differs from the result');
          storedBytes = store.list({ limit: 1 }).runs[0]!.outputBytes;
        }
      }
    }
    if (errors.length > 0) throw new Error(`store errors: ${errors[0]}`);
  } finally {
    await recorder.close();
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return { off, on, storedBytes, writeMs, endMs };
}

export async function benchStore(options: StoreBenchOptions): Promise<Figure> {
  const dir = mkdtempSync(join(tmpdir(), 'warden-bench-store-'));
  try {
    const store = openStore({ dir });
    const seedMs = seed(store, options.runs);
    store.close();
    const size = statSync(join(dir, 'history.db')).size;

    const dropped = dropPageCache();
    const cold = coldOpen(dir);

    const reader = openStore({ dir });
    const firstPage = timeIt(options.repeats, () => reader.list({ verdict: 'failed', limit: 50 }));
    let cursor: string | null = null;
    for (let i = 0; i < 100; i++) cursor = reader.list({ verdict: 'failed', limit: 50, cursor }).nextCursor;
    const deepPage = timeIt(options.repeats, () => reader.list({ verdict: 'failed', limit: 50, cursor }));
    const rarePage = timeIt(options.repeats, () => reader.list({ verdict: 'crashed', limit: 50 }));
    const rareHits = reader.list({ text: 'rarewordzebra3', limit: 1000 }).runs.length;
    const rareSearch = timeIt(options.repeats, () => reader.list({ text: 'rarewordzebra3', limit: 50 }));
    const commonSearch = timeIt(options.repeats, () => reader.list({ text: 'socket buffer', limit: 50 }));
    const searchWithFilter = timeIt(options.repeats, () => reader.list({ text: 'error', verdict: 'failed', limit: 50 }));
    const counts = timeIt(options.repeats, () => reader.countsByVerdict({ since: Date.now() - 86_400_000 }));
    const warmOpen = timeIt(5, () => openStore({ dir }).close());
    reader.close();

    const write = await writeCost(options);
    const bestRatio = min(write.on) / min(write.off);
    const medianRatio = median(write.on) / median(write.off);
    const worstQuery = Math.max(median(firstPage), median(deepPage), median(rarePage));
    const worstSearch = Math.max(median(rareSearch), median(commonSearch), median(searchWithFilter));
    const coldTotal = cold.openMs + cold.firstPageMs;
    return {
      title: `(j) history store: ${options.runs.toLocaleString('en-US')} stored runs (${mb(size)} database); recording a ${mb(options.outputBytes)} run vs the store off`,
      lines: [
        `seed      ${options.runs} runs in one transaction in ${ms(seedMs, 0)}`,
        `page      verdict=failed, 50 runs: first page median ${ms(median(firstPage), 2)} (max ${ms(Math.max(...firstPage), 2)}); page 101 median ${ms(median(deepPage), 2)}; verdict=crashed (1%) median ${ms(median(rarePage), 2)}`,
        `search    rare word (${rareHits} hits) median ${ms(median(rareSearch), 2)}; two common words median ${ms(median(commonSearch), 2)}; word + verdict median ${ms(median(searchWithFilter), 2)}`,
        `counts    countsByVerdict over the last day median ${ms(median(counts), 2)}`,
        `open      cold, fresh process${dropped ? ', page cache dropped' : ' (page cache not dropped: no permission)'}: openStore ${ms(cold.openMs)} + first page ${ms(cold.firstPageMs)} = ${ms(coldTotal)}; importing the store and libsql ${ms(cold.importMs)}; warm in-process open+close median ${ms(median(warmOpen))}`,
        `write     ${mb(options.outputBytes)} run, ${options.rounds} alternating rounds: store off best ${ms(min(write.off), 0)} median ${ms(median(write.off), 0)}; store on best ${ms(min(write.on), 0)} median ${ms(median(write.on), 0)}; ${mb(write.storedBytes)} stored`,
        `ratio     best ${bestRatio.toFixed(3)}x, median ${medianRatio.toFixed(3)}x; the store's own writes took ${ms(median(write.writeMs))} per run, ${((100 * median(write.writeMs)) / median(write.off)).toFixed(0)}% of the run with the store off (medians; each: ${write.writeMs.map((t) => t.toFixed(1)).join(' ')} ms)`,
        `after     the end's write after the answer: median ${ms(median(write.endMs))} per run (each: ${write.endMs.map((t) => t.toFixed(1)).join(' ')} ms); counted in, the ratio would be best ${(min(write.on.map((t, i) => t + write.endMs[i]!)) / min(write.off)).toFixed(3)}x, median ${(median(write.on.map((t, i) => t + write.endMs[i]!)) / median(write.off)).toFixed(3)}x`,
        `raw       off ${write.off.map((t) => t.toFixed(0)).join(' ')} ms; on ${write.on.map((t) => t.toFixed(0)).join(' ')} ms`,
      ],
      checks: [
        check(`filtered page of 50 ${ms(worstQuery, 2)} <= 20 ms`, worstQuery <= 20),
        check(`full-text search ${ms(worstSearch, 2)} <= 100 ms`, worstSearch <= 100),
        check(`cold open ${ms(coldTotal)} <= 300 ms`, coldTotal <= 300),
        check(`recording a ${mb(options.outputBytes)} run ${bestRatio.toFixed(2)}x <= 1.2x`, bestRatio <= 1.2),
      ],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
