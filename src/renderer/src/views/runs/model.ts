// The Runs view's logic, apart from React: live runs pinned above ended ones,
// each section sorted by the chosen column, ended runs a page at a time, and
// the badge a run gets (an out-of-memory kill and processes a run left behind
// told apart from a plain kill).

import type { ProcTreeSnapshot } from '../../../../shared/proc-tree';
import type { RunResult, Verdict } from '../../../../shared/result';
import { hostOf } from '../../../../shared/hosts';
import { commandLine, peakOf } from '../../format';

export { peakOf };

export type SortKey = 'status' | 'command' | 'started' | 'duration' | 'memory';
export type SortDir = 'asc' | 'desc';
export interface Sort {
  key: SortKey;
  dir: SortDir;
}

/** Newest first: what a person keeping the page open wants to see on top. */
export const DEFAULT_SORT: Sort = { key: 'started', dir: 'desc' };
/** Ended runs shown at first, and added per "Show more". */
export const ENDED_PAGE = 50;

/** The direction a click on a column header gives: the other one on the sorted column, else the natural one for it. */
export function nextSort(current: Sort, key: SortKey): Sort {
  if (current.key === key) return { key, dir: current.dir === 'asc' ? 'desc' : 'asc' };
  return { key, dir: key === 'command' || key === 'status' ? 'asc' : 'desc' };
}

export function isLive(run: Pick<RunResult, 'state'>): boolean {
  return run.state !== 'ended';
}

export type StateFilter = 'all' | 'live' | 'ended';
/** A verdict, or 'oom': the kills the out-of-memory killer made, told apart from other kills as the badge tells them. */
export type VerdictChoice = Verdict | 'oom';
export interface Filters {
  state: StateFilter;
  /** '' : any verdict. */
  verdict: VerdictChoice | '';
  /** '' (or absent): every host; else the runs of that host alone ('local' for this machine's). */
  host?: string;
}

/** The runs the State and Verdict filters let through, in the order given. */
export function filterRuns<T extends Pick<RunResult, 'state' | 'verdict' | 'id' | 'oom'>>(runs: T[], filters: Filters): T[] {
  return runs.filter((run) => {
    if (filters.host && hostOf(run.id) !== filters.host) return false;
    if (filters.state === 'live' && !isLive(run)) return false;
    if (filters.state === 'ended' && isLive(run)) return false;
    return filters.verdict === '' || verdictChoiceOf(run) === filters.verdict;
  });
}

/** The verdict a filter sees: 'oom' for a kill the out-of-memory killer made. */
export function verdictChoiceOf(run: Pick<RunResult, 'verdict' | 'oom'>): VerdictChoice | undefined {
  return run.verdict === 'killed' && run.oom?.confirmed ? 'oom' : run.verdict;
}

/** The word a verdict choice reads as, the badge's ("out of memory"). */
export function choiceLabel(choice: VerdictChoice | 'live'): string {
  return choice === 'oom' ? 'out of memory' : choice;
}

const STATUS_RANK: Record<string, number> = {
  stopping: 0,
  running: 1,
  queued: 2,
  crashed: 3,
  oom: 3.5,
  killed: 4,
  'timed-out': 5,
  failed: 6,
  'spawn-failed': 7,
  lost: 8,
  signaled: 9,
  stopped: 10,
  completed: 11,
};

/** How a column orders two runs (ascending); ties fall back to the start time, newest first. */
function compare(a: RunResult, b: RunResult, key: SortKey, elapsed: (run: RunResult) => number, memory: (run: RunResult) => number | undefined): number {
  switch (key) {
    case 'status':
      return (STATUS_RANK[verdictChoiceOf(a) ?? a.state] ?? 99) - (STATUS_RANK[verdictChoiceOf(b) ?? b.state] ?? 99);
    case 'command':
      return commandLine(a).localeCompare(commandLine(b));
    case 'started':
      return a.startedAt.localeCompare(b.startedAt);
    case 'duration':
      return elapsed(a) - elapsed(b);
    case 'memory':
      return (memory(a) ?? -1) - (memory(b) ?? -1);
  }
}

export interface Sections {
  live: RunResult[];
  ended: RunResult[];
  /** Ended runs matching the filters, before paging. */
  endedTotal: number;
}

/**
 * Live runs (all of them, always on top) and ended runs (the first `endedShown`),
 * each sorted by `sort`. `elapsed` and `memory` give the figures the rows show.
 */
export function sections(
  runs: RunResult[],
  sort: Sort,
  endedShown: number,
  elapsed: (run: RunResult) => number = (r) => r.elapsedMs,
  memory: (run: RunResult) => number | undefined = (r) => peakOf(r),
): Sections {
  const sign = sort.dir === 'asc' ? 1 : -1;
  const order = (a: RunResult, b: RunResult) => sign * compare(a, b, sort.key, elapsed, memory) || b.startedAt.localeCompare(a.startedAt) || a.id.localeCompare(b.id);
  const live = runs.filter(isLive).sort(order);
  const endedAll = runs.filter((r) => !isLive(r)).sort(order);
  return { live, ended: endedAll.slice(0, endedShown), endedTotal: endedAll.length };
}

export interface Badge {
  /** The word on the badge. */
  label: string;
  /** The CSS class that colours it (a verdict's, a state's, or oom). */
  tone: string;
  title?: string;
}

/** A run's status badge: its verdict, with an out-of-memory kill named as one; else its state. */
export function statusBadge(run: Pick<RunResult, 'state' | 'verdict' | 'oom' | 'signal'>): Badge {
  if (run.verdict === 'killed' && run.oom?.confirmed) return { label: 'out of memory', tone: 'oom', title: 'Killed by the out-of-memory killer (the memory cgroup counted it)' };
  if (run.verdict === 'killed') return { label: 'killed', tone: 'killed', title: `Killed by ${run.signal ?? 'a signal'} that Warden did not send` };
  const status = run.verdict ?? run.state;
  return { label: status, tone: status };
}

/** The badges beside the status: processes that escaped the group (live), left behind or surviving the teardown (ended). */
/** Processes of a live run's sampled tree that left its group or tree. */
export function escapedIn(tree?: Pick<ProcTreeSnapshot, 'roots'>): number {
  let escaped = 0;
  const walk = (nodes: ProcTreeSnapshot['roots']) => {
    for (const n of nodes) {
      if (n.escaped) escaped++;
      walk(n.children);
    }
  };
  walk(tree?.roots ?? []);
  return escaped;
}

/** `tree`: a live run's sampled tree, or just how many of its processes escaped. */
export function processBadges(run: Pick<RunResult, 'state' | 'teardown'>, tree?: Pick<ProcTreeSnapshot, 'roots'> | number): Badge[] {
  const out: Badge[] = [];
  if (run.state !== 'ended') {
    const escaped = typeof tree === 'number' ? tree : escapedIn(tree);
    if (escaped > 0) out.push({ label: `${escaped} escaped`, tone: 'escaped', title: 'Processes that left the run’s process group or tree; its marker still finds them' });
    return out;
  }
  const t = run.teardown;
  return summaryBadges({ survived: t?.survivors.length ?? 0, leftBehind: t?.killed.length ?? 0 });
}

/** The badges beside an ended run's status from a history summary's counts (the list has no teardown lists). */
export function summaryBadges(run: { leftBehind?: number; survived?: number }): Badge[] {
  const out: Badge[] = [];
  if (run.survived) out.push({ label: `${run.survived} survived`, tone: 'survived', title: 'Processes of the run still alive after the teardown' });
  if (run.leftBehind) out.push({ label: `${run.leftBehind} left behind`, tone: 'escaped', title: 'Processes still running when the main process ended; the teardown ended them' });
  return out;
}

export const VERDICTS: VerdictChoice[] = ['completed', 'failed', 'timed-out', 'stopped', 'oom', 'killed', 'crashed', 'signaled', 'lost', 'spawn-failed'];
