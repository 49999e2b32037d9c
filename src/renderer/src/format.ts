// How the views write times, sizes and commands, so every view says them the same way.

import type { ProcTreeSnapshot } from '../../shared/proc-tree';
import { bytes as sharedBytes } from '../../shared/bytes';
import type { RunResult } from '../../shared/result';
import { minutesText } from '../../shared/duration';

/** 0.42 s, 12.3 s, then as notes write it too: 1 min, 2 min 05 s, 1 h 02 min (shared/duration.ts). */
export function duration(ms: number): string {
  if (!Number.isFinite(ms)) return '–';
  if (ms < 10_000) return `${(ms / 1000).toFixed(2)} s`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return minutesText(ms);
}

/** 512 B, 1.5 KiB, 23.4 MiB, 1.02 GiB (src/shared/bytes.ts); a dash for no figure. */
export function bytes(n: number | null | undefined): string {
  return n === null || n === undefined || !Number.isFinite(n) ? '–' : sharedBytes(n);
}

/**
 * A live run's elapsed time as its clock shows it, ticking once a second:
 * whole seconds under a minute ("42 s"), then as duration() writes it.
 */
export function liveDuration(ms: number): string {
  if (!Number.isFinite(ms)) return '–';
  return ms < 60_000 ? `${Math.floor(Math.max(0, ms) / 1000)} s` : minutesText(ms);
}

/** A word as a shell would need it quoted. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** What a run runs, as one line: the command, or the script's first non-empty line. */
export function commandLine(run: Pick<RunResult, 'argv' | 'code'>): string {
  if (run.argv) return run.argv.map(shellQuote).join(' ');
  return scriptTitle(run.code ?? '');
}

/** A line of Python that says nothing of what a script does: an import, a comment, a shebang or a coding line. */
const PREAMBLE = /^(#|import\s|from\s+[\w.]+\s+import\s)/;

/**
 * What names a Python script in a list: its first line that is not an import
 * or a comment ("import pandas as pd" names nothing), else its first line.
 */
export function scriptTitle(code: string): string {
  const lines = code.split('\n').map((line) => line.trim()).filter((line) => line !== '');
  return (lines.find((line) => !PREAMBLE.test(line)) ?? lines[0] ?? '').trim();
}

/**
 * The word for how a run stands, the same in the title, the badges, the chips
 * and the filters: its verdict when ended ("out of memory" for a kill the
 * out-of-memory killer made, as the cgroup confirmed), else its state.
 */
export function statusOf(run: Pick<RunResult, 'state' | 'verdict'> & { oom?: Pick<NonNullable<RunResult['oom']>, 'confirmed'> }): string {
  if (run.verdict === 'killed' && run.oom?.confirmed) return 'out of memory';
  return run.verdict ?? run.state;
}

/** Local time of an ISO 8601 instant: 14:03:21, with the date when not today. */
// Formatters built once (toLocale*String builds one per call) and answers kept per instant: lists
// re-render rows several times a second.
const TIME = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });
const DATE = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'numeric', day: 'numeric' });
const clocks = new Map<string, { day: string; text: string }>();

export function clock(iso: string | undefined): string {
  if (!iso) return '–';
  const today = new Date().toDateString();
  const cached = clocks.get(iso);
  if (cached && cached.day === today) return cached.text;
  const date = new Date(iso);
  const time = TIME.format(date);
  const text = date.toDateString() === today ? time : `${DATE.format(date)} ${time}`;
  if (clocks.size > 5000) clocks.clear();
  clocks.set(iso, { day: today, text });
  return text;
}

/** How long ago an instant was, in words: "just now", "42 s ago", "3 min ago", "2 h ago", "yesterday", "5 days ago". */
export function ago(iso: string | undefined, nowMs: number = Date.now()): string {
  if (!iso) return '–';
  const then = Date.parse(iso);
  if (!Number.isFinite(then)) return '–';
  const s = Math.max(0, Math.floor((nowMs - then) / 1000));
  if (s < 5) return 'just now';
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`;
  const days = Math.floor(s / 86_400);
  return days === 1 ? 'yesterday' : `${days} days ago`;
}

const FULL = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });

/** The absolute local date and time of an instant, for a tooltip beside a relative time. */
export function fullTime(iso: string | undefined): string {
  if (!iso) return '';
  const date = new Date(iso);
  return Number.isFinite(date.getTime()) ? FULL.format(date) : '';
}

/** The limit in words: "limit 30 s", or "no limit". */
export function limitWords(limitMs: number | null): string {
  return limitMs === null ? 'no limit' : `limit ${duration(limitMs)}`;
}

/**
 * A process's command line as a narrow column shows it: the program by its
 * name, not its path ("/usr/local/bin/python3.12 /home/me/job.py" reads
 * "python3.12 /home/me/job.py"), so a cut line still shows the script. The
 * whole line goes in the title.
 */
export function shortCommand(command: string): string {
  const m = /^(\S*\/)([^\s/]+)(\s|$)/.exec(command);
  return m ? command.slice(m[1]!.length) : command;
}

/** A run's memory limit in bytes, or undefined when it has none (a limit of 0 is none: never "of 0 B limit"). */
export function memoryLimitOf(run: Pick<RunResult, 'oom'>): number | undefined {
  const limit = run.oom?.limitBytes;
  return limit !== undefined && limit > 0 ? limit : undefined;
}

/** A run's peak memory and what it is: the cgroup's own peak counter, or the sampled sum of its processes' RSS. */
export interface PeakFigure {
  bytes: number;
  source: 'cgroup' | 'sampled';
}

const isNumber = (n: unknown): n is number => typeof n === 'number' && Number.isFinite(n);

/**
 * A run's peak memory, the one figure every view shows, named for what it is.
 * A run in a memory cgroup of its own: the cgroup's peak counter (the
 * result's, a live sample's, the out-of-memory report's; the kernel caps it at
 * the limit, as the advice says it), never mixed with the RSS sum, which
 * counts shared pages once per process and can pass the limit. Else the
 * highest RSS sum sampled (the result's, else the live sample's, which is
 * newer than a live snapshot's).
 */
export function peakFigure(run: Pick<RunResult, 'peak' | 'oom'>, tree?: Pick<ProcTreeSnapshot, 'peak' | 'rssBytes'>): PeakFigure | undefined {
  const cgroup = [run.peak?.source === 'cgroup' ? run.peak.rssBytes : undefined, tree?.peak.source === 'cgroup' ? tree.peak.rssBytes : undefined, run.oom?.peakBytes].filter(isNumber);
  if (cgroup.length > 0) return { bytes: Math.max(...cgroup), source: 'cgroup' };
  const sampled = [run.peak?.rssBytes, tree?.peak.rssBytes, tree?.rssBytes].filter(isNumber);
  return sampled.length > 0 ? { bytes: Math.max(...sampled), source: 'sampled' } : undefined;
}

/** The peak's bytes alone (sorting, a column). */
export function peakOf(run: Pick<RunResult, 'peak' | 'oom'>, tree?: Pick<ProcTreeSnapshot, 'peak' | 'rssBytes'>): number | undefined {
  return peakFigure(run, tree)?.bytes;
}

/** What the peak is called beside its figure: "cgroup peak", "peak RSS sum". */
export function peakName(source: PeakFigure['source'] | undefined): string {
  return source === 'cgroup' ? 'cgroup peak' : 'peak RSS sum';
}

/** What the peak is, in a sentence (a tooltip). */
export function peakMeaning(source: PeakFigure['source'] | undefined): string {
  return source === 'cgroup'
    ? "The run's memory cgroup's own peak: every page charged to it, which the kernel caps at its limit."
    : "The highest sum of its processes' RSS over the samples (twice a second); pages they share are counted in each.";
}

/** A size in a column: binary units, always one decimal (so "13.0 MiB" stands above "13.1 MiB", never "13 MiB"). */
export function columnBytes(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '–';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = n;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`;
}
