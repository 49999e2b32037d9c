// A search over runs' kept output (GET /api/v1/search): one run, or the
// newest runs the history names. The host reads each stream's kept text (a
// live run's as it is now), and the worker scans it a stretch at a time,
// within the call's bounds: TEXT_BUDGET_CHARS of text and TIME_BUDGET_MS.
// Past either, or at maxMatches, the answer says `more` and gives a cursor
// that carries the search on from exactly there: the pages of a search put
// end to end are the answer one large call would give.

import type { HistoryQuery, WardenApi } from '../../../shared/api';
import { InputError, WardenError } from '../../../shared/errors';
import type { RunResult } from '../../../shared/result';
import {
  DEFAULT_CONTEXT,
  DEFAULT_MAX_MATCHES,
  DEFAULT_RUNS,
  HARD_STOP_GRACE_MS,
  MAX_CONTEXT,
  MAX_MATCHES,
  MAX_PATTERN_CHARS,
  MAX_RUNS,
  TEXT_BUDGET_CHARS,
  TIME_BUDGET_MS,
  type SearchAnswer,
  type SearchGap,
  type SearchMatch,
  type SearchQuery,
  type SearchedRun,
} from '../../../shared/search';
import { decodeCursor, encodeCursor, gapIn, regionFor, type SearchCursor, type SearchSpec } from './plan';
import { searchScanner } from './scan';
import type { SearchWorker } from './worker';

const scanner = searchScanner();

/** Bounds a test (or a host) may set lower; the defaults are the contract's. */
export interface SearchBounds {
  textBudgetChars: number;
  timeBudgetMs: number;
  hardStopGraceMs: number;
}

const BOUNDS: SearchBounds = { textBudgetChars: TEXT_BUDGET_CHARS, timeBudgetMs: TIME_BUDGET_MS, hardStopGraceMs: HARD_STOP_GRACE_MS };

function whole(name: string, value: number | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min || value > max) throw new InputError(`${name} takes a whole number from ${min} to ${max}, not ${JSON.stringify(value)}.`);
  return value;
}

/** The pattern as given, checked: one line, not empty, a valid regular expression unless literal. */
export function checkPattern(pattern: string | undefined, literal: boolean, ignoreCase: boolean): string {
  if (pattern === undefined || pattern === '') throw new InputError('search needs a pattern: a regular expression, or the text itself with literal.');
  if (pattern.length > MAX_PATTERN_CHARS) throw new InputError(`pattern is at most ${MAX_PATTERN_CHARS} characters, not ${pattern.length}.`);
  if (/[\n\r]/.test(pattern)) throw new InputError('pattern holds a line break, but a search matches one line at a time: search for one line of it.');
  try {
    scanner.compile(pattern, literal, ignoreCase);
  } catch (error) {
    // V8 says "Invalid regular expression: /(a+/gmu: Unterminated group": the reason is the part after the pattern.
    const why = (error instanceof Error ? error.message : String(error)).replace(/^Invalid regular expression: \/.*\/[a-z]*: /s, '');
    throw new InputError(`pattern is not a valid regular expression (JavaScript, u flag): ${why}. To search for the text as it is, make it literal (warden search -F).`);
  }
  return pattern;
}

/** What the query asks, checked; from the cursor when it gives one. */
async function startFrom(api: WardenApi, query: SearchQuery): Promise<SearchCursor> {
  if (query.cursor !== undefined) {
    const others = (['id', 'pattern', 'literal', 'ignoreCase', 'stream', 'context', 'since', 'verdict', 'maxRuns'] as const).filter((key) => query[key] !== undefined);
    if (others.length > 0) throw new InputError(`cursor carries the search it continues: give it alone (with maxMatches at most), not with ${others.join(', ')}.`);
    const cursor = decodeCursor(query.cursor);
    checkPattern(cursor.spec.pattern, cursor.spec.literal, cursor.spec.ignoreCase);
    return cursor;
  }
  const literal = query.literal === true;
  const ignoreCase = query.ignoreCase === true;
  const stream = query.stream ?? 'both';
  if (stream !== 'stdout' && stream !== 'stderr' && stream !== 'both') throw new InputError(`stream is stdout, stderr or both, not ${JSON.stringify(stream)}.`);
  const spec: SearchSpec = { pattern: checkPattern(query.pattern, literal, ignoreCase), literal, ignoreCase, stream, context: whole('context', query.context, DEFAULT_CONTEXT, 0, MAX_CONTEXT) };
  const start = { stdout: [0, 1] as [number, number], stderr: [0, 1] as [number, number] };
  if (query.id !== undefined) {
    if (query.since !== undefined || query.verdict !== undefined || query.maxRuns !== undefined) throw new InputError('since, verdict and maxRuns choose runs for a search without id: give them or an id, not both.');
    return { spec, runs: [query.id], single: true, index: 0, at: start };
  }
  const history: HistoryQuery = {
    limit: whole('maxRuns', query.maxRuns, DEFAULT_RUNS, 1, MAX_RUNS),
    ...(query.since !== undefined ? { since: query.since } : {}),
    ...(query.verdict !== undefined ? { verdict: query.verdict } : {}),
  };
  const page = await api.history(history);
  return { spec, runs: page.runs.map((run) => run.id), single: false, index: 0, at: start };
}

function summaryOf(run: RunResult): SearchedRun {
  const command = run.argv ? run.argv.join(' ') : `python${run.session ? `[${run.session}]` : ''}: ${(run.code ?? '').split('\n').find((l) => l.trim() !== '')?.trim() ?? ''}`;
  return {
    id: run.id,
    command: command.length > 120 ? `${command.slice(0, 119)}…` : command,
    state: run.state,
    ...(run.verdict !== undefined ? { verdict: run.verdict } : {}),
    exitCode: run.exitCode,
    signal: run.signal,
  };
}

/**
 * Searches the runs a query names, within the call's bounds. A run id the
 * host does not know is not-found when it is the one run asked for, and
 * named in `missing` when a cursor or the history named it.
 */
export async function searchRuns(api: WardenApi, query: SearchQuery, worker: SearchWorker, bounds: Partial<SearchBounds> = {}): Promise<SearchAnswer> {
  const { textBudgetChars, timeBudgetMs, hardStopGraceMs } = { ...BOUNDS, ...bounds };
  const began = performance.now();
  const cursor = await startFrom(api, query);
  const { spec } = cursor;
  const maxMatches = whole('maxMatches', query.maxMatches, DEFAULT_MAX_MATCHES, 1, MAX_MATCHES);
  const streams = spec.stream === 'both' ? (['stdout', 'stderr'] as const) : ([spec.stream] as const);
  const matches: SearchMatch[] = [];
  const gaps: SearchGap[] = [];
  const runs: SearchedRun[] = [];
  const missing: string[] = [];
  let scanned = 0;
  let at = { stdout: [...cursor.at.stdout] as [number, number], stderr: [...cursor.at.stderr] as [number, number] };
  let lastLive = false;
  const answer = (stoppedBy: SearchAnswer['stoppedBy'], index: number): SearchAnswer => {
    const more = stoppedBy !== null;
    // One live run searched to its end: the cursor goes on with what it prints next.
    const keep = more || (cursor.single && lastLive);
    return {
      pattern: spec.pattern,
      literal: spec.literal,
      ignoreCase: spec.ignoreCase,
      matches,
      gaps,
      runs,
      more,
      stoppedBy,
      cursor: keep ? encodeCursor({ spec, runs: cursor.runs, single: cursor.single, index, at }) : null,
      scannedChars: scanned,
      missing,
    };
  };
  for (let index = cursor.index; index < cursor.runs.length; index++) {
    const id = cursor.runs[index]!;
    if (index > cursor.index) at = { stdout: [0, 1], stderr: [0, 1] };
    if (matches.length >= maxMatches) return answer('matches', index);
    const run = await api.get(id);
    if (!run) {
      if (cursor.single) throw new WardenError('not-found', `No run with id ${JSON.stringify(id)} (the list tool, or warden list, shows the runs there are).`);
      missing.push(id);
      continue;
    }
    runs.push(summaryOf(run));
    lastLive = run.state !== 'ended';
    for (const stream of streams) {
      const text = run[stream];
      const gap = gapIn(text, stream === 'stdout' ? run.stdoutTruncated : run.stderrTruncated);
      if (gap) gaps.push({ run: id, stream, line: scanner.countLines(text, 0, gap.start + 1) + 1, offset: gap.start + 1, droppedChars: stream === 'stdout' ? run.stdoutTruncated : run.stderrTruncated });
      const [from, fromLine] = at[stream];
      if (from >= text.length) continue;
      if (matches.length >= maxMatches) return answer('matches', index);
      // Each call scans something before a bound stops it: a cursor always moves on.
      if (scanned > 0 && scanned >= textBudgetChars) return answer('text', index);
      const timeLeft = Math.max(1, timeBudgetMs - (performance.now() - began));
      if (scanned > 0 && timeLeft <= 1) return answer('time', index);
      const region = regionFor(text, from, Math.max(1, textBudgetChars - scanned), spec.context);
      const result = await worker.scan(
        {
          region: text.slice(region.base, region.end),
          base: region.base,
          scanFrom: region.scanFrom,
          scanTo: region.scanTo,
          fromLine,
          pattern: spec.pattern,
          literal: spec.literal,
          ignoreCase: spec.ignoreCase,
          context: spec.context,
          maxMatches: maxMatches - matches.length,
          budgetMs: timeLeft,
          gap,
          // Counting lines to the end costs a pass: only a search that goes on from there needs it.
          wantEndLine: region.scanTo < text.length || (cursor.single && run.state !== 'ended'),
        },
        timeLeft + hardStopGraceMs,
      );
      for (const m of result.matches) matches.push({ run: id, stream, ...m });
      if (result.stoppedAt !== null) {
        scanned += result.stoppedAt.offset - from;
        at[stream] = [result.stoppedAt.offset, result.stoppedAt.line];
        return answer(result.stoppedBy, index);
      }
      scanned += region.scanTo - from;
      // (A stream searched to its end is taken up again only by a live run's cursor, whose end line was counted.)
      at[stream] = [region.scanTo, result.endLine ?? fromLine];
      if (region.scanTo < text.length) return answer('text', index);
    }
  }
  return answer(null, Math.max(0, cursor.runs.length - 1));
}
