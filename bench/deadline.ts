// (c) Deadline overshoot: `sleep 30` under a 1 s limit. The overshoot is the
// time from start() to wait() resolving, minus the limit: spawn, timer
// lateness, the SIGINT, the exit, the drain, teardown and the verdict all
// count. The baseline is a plain setTimeout(1000) armed in the same loop
// iteration at the same moment: its lateness is what the event loop alone costs.

import { Supervisor } from '../src/main/supervisor/supervisor';
import { check, max, median, ms, type Figure } from './lib';

export interface DeadlineOptions {
  runs: number;
  limitMs: number;
}

export async function benchDeadline(options: DeadlineOptions): Promise<Figure> {
  const supervisor = new Supervisor();
  const overshoot: number[] = [];
  const lateness: number[] = [];
  const stopAt: number[] = [];
  const teardownMs: number[] = [];
  for (let i = 0; i < options.runs; i++) {
    const t0 = performance.now();
    const timer = new Promise<number>((resolve) => setTimeout(() => resolve(performance.now() - t0), options.limitMs));
    const result = await supervisor.wait(supervisor.start({ argv: ['sleep', '30'], limitMs: options.limitMs }).id);
    overshoot.push(performance.now() - t0 - options.limitMs);
    lateness.push((await timer) - options.limitMs);
    if (result.verdict !== 'timed-out') throw new Error(`sleep 30 under a ${options.limitMs} ms limit ended ${result.verdict}`);
    if (result.stop) stopAt.push(result.stop.requestedAtMs - options.limitMs);
    if (result.teardown) teardownMs.push(result.teardown.elapsedMs);
  }
  const medianRatio = (options.limitMs + median(overshoot)) / (options.limitMs + median(lateness));
  return {
    title: `(c) deadline overshoot: \`sleep 30\` under a ${options.limitMs} ms limit, ${options.runs} runs, vs a plain setTimeout(${options.limitMs}) in the same loop`,
    lines: [
      `engine    overshoot median ${ms(median(overshoot))}   max ${ms(max(overshoot))}   (stop sent at limit + ${ms(median(stopAt), 0)} on the run's clock, teardown ${ms(median(teardownMs), 0)}; medians)`,
      `baseline  timer lateness median ${ms(median(lateness))}   max ${ms(max(lateness))}`,
      `ratio     delivery time (limit + median overshoot) / (limit + median lateness) ${medianRatio.toFixed(3)}x;   overshoot - lateness (medians) ${ms(median(overshoot) - median(lateness))}`,
      `all runs  ${overshoot.map((o) => o.toFixed(0)).join(' ')} ms`,
    ],
    checks: [
      check(`median overshoot ${ms(median(overshoot))} <= 20 ms`, median(overshoot) <= 20),
      check(`max overshoot ${ms(max(overshoot))} <= 100 ms`, max(overshoot) <= 100),
    ],
  };
}
