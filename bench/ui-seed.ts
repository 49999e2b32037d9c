// (l) A history of N ended runs written straight into a state dir's database
// before a host opens it: one transaction of writeEnded (row, output,
// full-text row, end events), as bench/store.ts seeds its own.

import type { RunResult, Verdict } from '../src/shared/result';
import { writeEnded } from '../src/main/store/rows';
import { transaction } from '../src/main/store/sql';
import { openStore } from '../src/main/store/store';

const WORDS = 'build test lint deploy fetch parse compile render index query cache worker server client module import export error warning timeout retry socket buffer stream'.split(' ');
const VERDICTS: [Verdict, number][] = [['completed', 0.7], ['failed', 0.18], ['timed-out', 0.05], ['stopped', 0.03], ['killed', 0.02], ['crashed', 0.01], ['spawn-failed', 0.01]];

function verdictFor(x: number): Verdict {
  let acc = 0;
  for (const [verdict, share] of VERDICTS) if (x < (acc += share)) return verdict;
  return 'completed';
}

/** Deterministic and varied; run i started i seconds after t0, so the newest is last. */
function seededRun(i: number, t0: number): RunResult {
  const r = Math.abs(Math.sin(i * 12.9898) * 43758.5453) % 1;
  const verdict = verdictFor(r);
  const w = (k: number) => WORDS[(i * 7 + k * 13) % WORDS.length]!;
  const python = i % 10 === 0;
  const lines = Array.from({ length: 4 }, (_, k) => `${w(k)} ${w(k + 1)} step ${k} of run ${i}: ${w(k + 2)} ok`);
  const elapsedMs = 100 + (i % 50) * 37;
  return {
    id: `b${i.toString(16).padStart(11, '0')}`,
    kind: python ? 'python' : 'command',
    ...(python ? { code: `import ${w(1)}\nprint(${w(2)}.run(${i}))`, session: 'default' } : { argv: ['npm', 'run', w(0), '--', `--${w(1)}`] }),
    cwd: `/home/dev/project-${i % 20}`,
    state: 'ended',
    verdict,
    exitCode: verdict === 'completed' ? 0 : verdict === 'failed' ? 1 + (i % 3) : null,
    signal: verdict === 'crashed' ? 'SIGSEGV' : null,
    startedAt: new Date(t0 + i * 1000).toISOString(),
    endedAt: new Date(t0 + i * 1000 + elapsedMs).toISOString(),
    elapsedMs,
    limitMs: i % 2 === 0 ? 60_000 : null,
    advice: verdict === 'completed' ? null : `The run ended ${verdict}.`,
    notes: [],
    stdout: `${lines.join('\n')}\n`,
    stderr: verdict === 'failed' ? `error: ${w(4)} ${w(5)} failed\n` : '',
    stdoutTruncated: 0,
    stderrTruncated: 0,
  };
}

/** Writes `runs` ended runs into the history of `stateDir`; returns the ms it took. */
export function seedHistory(stateDir: string, runs: number): number {
  const t = performance.now();
  const store = openStore({ dir: stateDir });
  try {
    const t0 = Date.now() - runs * 1000 - 60_000;
    transaction(store.db, () => {
      for (let i = 0; i < runs; i++) writeEnded(store.db, 'bench-seed', seededRun(i, t0));
    });
  } finally {
    store.close();
  }
  return performance.now() - t;
}
