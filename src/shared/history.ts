// The history as every client sees it: the query a list takes, the page it
// gets back, and one run's timeline. The store (src/main/store) answers these;
// the API, the CLI and the renderer use the same types.

import type { OomReport, RunKind, RunResult, Verdict } from './result';

export type TimeBound = number | Date | string;

export interface ListQuery {
  /** One verdict or any of several. */
  verdict?: Verdict | Verdict[];
  /** true: only runs the out-of-memory killer ended (confirmed by the cgroup's counter); false: none of those. */
  oom?: boolean;
  /** 'live': not ended yet (no verdict); 'ended': has a verdict. */
  state?: 'live' | 'ended';
  kind?: RunKind;
  session?: string;
  /** Started at or after (ms since the epoch, a Date or ISO 8601). */
  since?: TimeBound;
  /** Started before. */
  until?: TimeBound;
  exitCode?: number;
  /** Words that must all appear in the command, code, or the end of stdout or stderr (FTS5; words of 3+ characters match as prefixes). */
  text?: string;
  /** Runs per page: default 50, at most 1,000. */
  limit?: number;
  /** The `nextCursor` of the previous page (of the same sort). */
  cursor?: string | null;
  /** The order of the pages: by start (the default), elapsed time or peak memory. */
  sort?: 'started' | 'elapsed' | 'peak';
  /** Default 'desc': newest, longest or largest first. */
  order?: 'asc' | 'desc';
  /** With the first page (no cursor): how many runs match the other filters, per verdict (`counts` of the page). */
  counts?: boolean;
}

/** A run as a list shows it: no output, code cut to its first 500 characters. */
export interface RunSummary
  extends Pick<
    RunResult,
    'id' | 'kind' | 'argv' | 'code' | 'session' | 'cwd' | 'state' | 'verdict' | 'exitCode' | 'signal' | 'startedAt' | 'endedAt' | 'elapsedMs' | 'limitMs' | 'advice' | 'stdoutTruncated' | 'stderrTruncated'
  > {
  hostId: string;
  /** The remote host the run lives on, when relayed by the local host (its id is then `ID@HOST`). */
  host?: string;
  /** argv as one shell-quoted line. */
  command: string | null;
  /** Who started it, as the result says. */
  owner?: RunResult['owner'];
  peakRssBytes: number | null;
  peakProcesses: number | null;
  /** What peakRssBytes is (the result's peak.source): the cgroup's own peak, or the sampled RSS sum. */
  peakSource?: 'cgroup' | 'sampled';
  /** UTF-8 bytes of output stored for it. */
  outputBytes: number;
  /** The result's out-of-memory report, when it has one (a list tells an OOM kill from another). */
  oom?: OomReport;
  /** Processes still running when the main process ended, that the teardown ended (absent: none). */
  leftBehind?: number;
  /** Processes still alive after the teardown (absent: none). */
  survived?: number;
  /** A live service's readiness, as the host knows it now. */
  ready?: RunResult['ready'];
  /** A live run's listening ports, as the host knows them now. */
  ports?: RunResult['ports'];
}

export interface RunPage {
  runs: RunSummary[];
  /** Pass as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
  /** When asked for (`counts`), on the first page: the runs matching every filter but the verdict, per verdict. */
  counts?: VerdictCounts;
}

/** Runs per verdict ('live': not ended); `oom`: of the killed ones, those the out-of-memory killer ended. */
export type VerdictCounts = Partial<Record<Verdict | 'live' | 'oom', number>> & { total: number };

/** One entry of a run's timeline as the history keeps it. */
export interface EventRecord {
  runId: string;
  /** Wall clock, ISO 8601. */
  at: string;
  /** Milliseconds since the run started, on its own clock, where known. */
  atMs: number | null;
  kind: string;
  detail: Record<string, unknown>;
}
