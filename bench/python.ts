// Python sessions. (e) and (f): deadline overshoot of a blocking
// `time.sleep(30)` and of a busy loop under a 1 s limit, in one warm session:
// the time from start() to wait() resolving, minus the limit, against a plain
// setTimeout(limit) armed at the same moment (its lateness). (g): a trivial
// script (`x = 1`) in a warm session against a fresh `python3 -c 'x = 1'`
// spawned and awaited in the same loop.

import { execFileSync, spawn } from 'node:child_process';
import { Supervisor } from '../src/main/supervisor/supervisor';
import { check, max, median, ms, ratio, sum, type Figure } from './lib';

export interface PythonDeadlineOptions {
  runs: number;
  limitMs: number;
  label: string;
  title: string;
  code: string;
}

export async function benchPythonDeadline(options: PythonDeadlineOptions): Promise<Figure> {
  const supervisor = new Supervisor();
  const session = `bench-${options.label}`;
  try {
    // Warm the session: the interpreter's start is not part of the overshoot.
    await supervisor.wait(supervisor.start({ code: 'import time', session }).id);
    const overshoot: number[] = [];
    const lateness: number[] = [];
    const pids = new Set<string>();
    for (let i = 0; i < options.runs; i++) {
      const t0 = performance.now();
      const timer = new Promise<number>((resolve) => setTimeout(() => resolve(performance.now() - t0), options.limitMs));
      const result = await supervisor.wait(supervisor.start({ code: options.code, session, limitMs: options.limitMs }).id);
      overshoot.push(performance.now() - t0 - options.limitMs);
      lateness.push((await timer) - options.limitMs);
      if (result.verdict !== 'timed-out' || result.stop?.endedBy !== 'interrupt') {
        throw new Error(`${options.code} under a ${options.limitMs} ms limit ended ${result.verdict} (${result.stop?.endedBy ?? 'no stop'})`);
      }
      const pid = supervisor.sessions().find((s) => s.name === session)?.pid;
      pids.add(String(pid));
    }
    return {
      title: `(${options.label}) ${options.title}: under a ${options.limitMs} ms limit, ${options.runs} runs in one session, vs a plain setTimeout(${options.limitMs})`,
      lines: [
        `engine    overshoot median ${ms(median(overshoot))}   max ${ms(max(overshoot))}   (interpreter pids seen: ${pids.size}, so none was killed)`,
        `baseline  timer lateness median ${ms(median(lateness))}   max ${ms(max(lateness))}`,
        `ratio     (limit + median overshoot) / (limit + median lateness) ${((options.limitMs + median(overshoot)) / (options.limitMs + median(lateness))).toFixed(3)}x`,
        `all runs  ${overshoot.map((o) => o.toFixed(0)).join(' ')} ms`,
      ],
      checks: [
        check(`median overshoot ${ms(median(overshoot))} <= 30 ms`, median(overshoot) <= 30),
        check(`max overshoot ${ms(max(overshoot))} <= 150 ms`, max(overshoot) <= 150),
      ],
    };
  } finally {
    await supervisor.shutdown();
  }
}

/** The interpreter python3 resolves to: a version manager's shim (pyenv) would make a fresh start look slower than it is. */
function realPython(): string {
  return execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim();
}

function freshPython(executable: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(executable, ['-c', 'x = 1'], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.resume();
    child.stderr.resume();
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`python3 -c exited ${code}`))));
  });
}

export async function benchWarmScript(options: { runs: number }): Promise<Figure> {
  const supervisor = new Supervisor();
  const session = 'bench-warm';
  try {
    await supervisor.wait(supervisor.start({ code: 'x = 0', session }).id);
    const executable = realPython();
    const warm: number[] = [];
    const fresh: number[] = [];
    for (let i = 0; i < options.runs; i++) {
      let t = performance.now();
      const result = await supervisor.wait(supervisor.start({ code: 'x = 1', session }).id);
      warm.push(performance.now() - t);
      if (result.verdict !== 'completed') throw new Error(`x = 1 ended ${result.verdict}`);
      t = performance.now();
      await freshPython(executable);
      fresh.push(performance.now() - t);
    }
    const speedup = median(fresh) / median(warm);
    return {
      title: `(g) a trivial script (x = 1): warm session vs a fresh python3 -c, ${options.runs} alternating runs`,
      lines: [
        `engine    warm session median ${ms(median(warm), 2)}   total ${ms(sum(warm), 0)}`,
        `baseline  fresh ${executable} -c median ${ms(median(fresh), 2)}   total ${ms(sum(fresh), 0)}`,
        `ratio     fresh / warm (medians) ${speedup.toFixed(1)}x;   warm / fresh ${ratio(median(warm), median(fresh))}`,
      ],
      checks: [check(`a warm script is ${speedup.toFixed(1)}x cheaper than a fresh interpreter (>= 10x)`, speedup >= 10)],
    };
  } finally {
    await supervisor.shutdown();
  }
}
