// Search over runs' kept output (GET /api/v1/search, `warden search`, the MCP
// search tool): what is asked, what comes back, and the bounds of one call.
// Lines are the kept text's (what `show` pages, the drop marker a line of its
// own); offsets are characters of that text, the ones `show` takes.

import type { RunResult, Verdict } from './result';

export type SearchStream = 'stdout' | 'stderr' | 'both';

export interface SearchQuery {
  /** One run; absent: the newest runs (live ones too) matching `since` and `verdict`, at most `maxRuns`. */
  id?: string;
  /** A JavaScript regular expression (the u flag), or with `literal` the text itself. One line: no line break. */
  pattern?: string;
  literal?: boolean;
  ignoreCase?: boolean;
  /** Default both. */
  stream?: SearchStream;
  /** Lines before and after each match, 0 to MAX_CONTEXT (default DEFAULT_CONTEXT). */
  context?: number;
  /** Matching lines one answer holds, 1 to MAX_MATCHES (default DEFAULT_MAX_MATCHES). */
  maxMatches?: number;
  /** Continues where an answer left off; the query is in it (pattern, flags, runs): give nothing else but maxMatches. */
  cursor?: string;
  /** Runs started since: ms since the epoch or ISO 8601. */
  since?: number | string;
  verdict?: Verdict | Verdict[];
  /** The newest runs a search without `id` looks in: 1 to MAX_RUNS (default DEFAULT_RUNS). */
  maxRuns?: number;
}

export interface SearchMatch {
  run: string;
  stream: 'stdout' | 'stderr';
  /** 1-based, in the kept text. */
  line: number;
  /** Character offset of the match in the stream's kept text: `show` with this offset starts there. */
  offset: number;
  /** The line, escape sequences (colours) and a CR before its line break taken out; a very long one is cut around the match. */
  text: string;
  /** Up to `context` lines before and after, cut the same way. */
  before: string[];
  after: string[];
}

/** Where a stream's kept text leaves characters out (the cap keeps head and tail): nothing there can be found. */
export interface SearchGap {
  run: string;
  stream: 'stdout' | 'stderr';
  /** The line of the drop marker in the kept text: lines after it are numbered in the kept text. */
  line: number;
  /** Offset of the marker. */
  offset: number;
  droppedChars: number;
}

/** A run a search looked in. */
export interface SearchedRun {
  id: string;
  command: string;
  state: RunResult['state'];
  verdict?: Verdict;
  exitCode: number | null;
  signal: string | null;
}

export interface SearchAnswer {
  /** The pattern searched for (a cursor's too), and how. */
  pattern: string;
  literal: boolean;
  ignoreCase: boolean;
  matches: SearchMatch[];
  gaps: SearchGap[];
  runs: SearchedRun[];
  /** The search stopped before the end of the kept text (matches, text or time bound): `cursor` continues it. */
  more: boolean;
  /** Why it stopped early: maxMatches reached, the call's text bound or its CPU time bound; null when it reached the end. */
  stoppedBy: 'matches' | 'text' | 'time' | null;
  /** Continues the search (also, for one live run, with what it prints next); null when there is nothing to continue. */
  cursor: string | null;
  /** Characters of kept text this call looked through. */
  scannedChars: number;
  /** Runs named (the cursor's, or the history's) that are gone from the history: nothing of theirs was searched. */
  missing: string[];
}

export const DEFAULT_CONTEXT = 2;
export const MAX_CONTEXT = 20;
export const DEFAULT_MAX_MATCHES = 20;
export const MAX_MATCHES = 200;
export const DEFAULT_RUNS = 20;
export const MAX_RUNS = 50;
/** The longest pattern: a search is for a line, not a document. */
export const MAX_PATTERN_CHARS = 1000;
/** One call looks through at most this much kept text, then answers `more` with a cursor. */
export const TEXT_BUDGET_CHARS = 50_000_000;
/** One call spends at most this long scanning, then answers `more` with a cursor. */
export const TIME_BUDGET_MS = 2000;
/** A scan of one stretch of text that runs this far past the time bound is stopped: the pattern is too slow. */
export const HARD_STOP_GRACE_MS = 500;
