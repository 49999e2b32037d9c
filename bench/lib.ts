// Shared helpers for the benchmarks: statistics, formatting and the target
// checks. Every figure is printed with its baseline, measured in the same
// process run, the ratio and the raw numbers.

import { readFileSync } from 'node:fs';

export interface Check {
  /** What is checked, e.g. "ratio <= 1.3". */
  label: string;
  pass: boolean;
}

export interface Figure {
  title: string;
  /** Raw figures, one per line, already formatted. */
  lines: string[];
  checks: Check[];
}

export function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

/** The q-quantile (0..1) by nearest rank on a sorted copy. */
export function quantile(values: number[], q: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[index]!;
}

export const median = (values: number[]): number => {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

export const max = (values: number[]): number => Math.max(...values);
export const min = (values: number[]): number => Math.min(...values);

export function ms(value: number, digits = 1): string {
  return `${value.toFixed(digits)} ms`;
}

export function mb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

export function ratio(value: number, baseline: number): string {
  return `${(value / baseline).toFixed(2)}x`;
}

export function check(label: string, pass: boolean): Check {
  return { label, pass };
}

export const sleep = (msToWait: number) => new Promise<void>((resolve) => setTimeout(resolve, msToWait));

/** Samples this process's RSS every `everyMs` while running; `stop()` returns the peak seen. */
export function rssSampler(everyMs = 20): { reset(): void; peak(): number; stop(): number } {
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => {
    const rss = process.memoryUsage().rss;
    if (rss > peak) peak = rss;
  }, everyMs);
  return {
    reset() {
      peak = process.memoryUsage().rss;
    },
    peak() {
      return Math.max(peak, process.memoryUsage().rss);
    },
    stop() {
      clearInterval(timer);
      return Math.max(peak, process.memoryUsage().rss);
    },
  };
}

/** Load average and CPU count, printed with the figures because the numbers depend on them. */
export function machineLine(): string {
  let load = '?';
  try {
    load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  } catch {
    // not Linux
  }
  return `node ${process.version}, ${process.platform}, load average ${load}`;
}

export function printFigure(figure: Figure): void {
  console.log(`\n${figure.title}`);
  for (const line of figure.lines) console.log(`  ${line}`);
  for (const c of figure.checks) console.log(`  ${c.pass ? 'PASS' : 'MISS'}  ${c.label}`);
}
