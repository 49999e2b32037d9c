// The monitor's list as data, apart from React: runs grouped by who started
// them (an agent's label and pid, a terminal's shell; else the working
// directory), each group with its live count and failures; the rows a list
// shows with collapsed groups left out; and the selection moved as j/k and
// the arrows move it, as htop and process-compose do.

import type { RunResult, Verdict } from '../../../../shared/result';
import { commandLine } from '../../format';

/** Verdicts a group counts as failures: whatever did not complete or was not stopped on purpose. */
const FAILURES: ReadonlySet<Verdict> = new Set<Verdict>(['failed', 'crashed', 'killed', 'timed-out', 'signaled', 'lost', 'spawn-failed']);

export interface RunGroup {
  key: string;
  /** Who started its runs: the owner's label, or for runs that name none, "no owner". */
  label: string;
  pid: number | null;
  /** The working directory all its runs share, else null. */
  cwd: string | null;
  /** Newest first, live ones before ended ones. */
  runs: RunResult[];
  live: number;
  failed: number;
}

export type Selection = { kind: 'run'; id: string } | { kind: 'group'; key: string } | null;

export type Row = { kind: 'group'; group: RunGroup; collapsed: boolean } | { kind: 'run'; run: RunResult; group: RunGroup };

const isLive = (run: Pick<RunResult, 'state'>) => run.state !== 'ended';

/** The group a run belongs to: its owner (label and pid) when it names one, else its working directory. */
export function groupKey(run: Pick<RunResult, 'owner' | 'cwd'>): string {
  return run.owner ? `owner:${run.owner.label}#${run.owner.pid ?? ''}` : `cwd:${run.cwd}`;
}

/** Newest start first; live runs before ended ones. */
function byLiveThenNewest(a: RunResult, b: RunResult): number {
  return Number(isLive(b)) - Number(isLive(a)) || b.startedAt.localeCompare(a.startedAt) || a.id.localeCompare(b.id);
}

/** Runs grouped: groups with live runs first, then by their newest run; runs in each live first, then newest first. */
export function groupRuns(runs: RunResult[]): RunGroup[] {
  const groups = new Map<string, RunGroup>();
  for (const run of runs) {
    const key = groupKey(run);
    let group = groups.get(key);
    if (!group) {
      group = { key, label: run.owner?.label ?? 'no owner', pid: run.owner?.pid ?? null, cwd: run.cwd, runs: [], live: 0, failed: 0 };
      groups.set(key, group);
    }
    group.runs.push(run);
    if (group.cwd !== run.cwd) group.cwd = null;
    if (isLive(run)) group.live++;
    else if (run.verdict && FAILURES.has(run.verdict)) group.failed++;
  }
  const list = [...groups.values()];
  for (const group of list) group.runs.sort(byLiveThenNewest);
  return list.sort((a, b) => Number(b.live > 0) - Number(a.live > 0) || b.runs[0]!.startedAt.localeCompare(a.runs[0]!.startedAt) || a.key.localeCompare(b.key));
}

/** The runs a search keeps: every word in its command line, script or owner (any case). */
export function searchRuns(runs: RunResult[], query: string): RunResult[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return runs;
  return runs.filter((run) => {
    const text = `${commandLine(run)} ${run.code ?? ''} ${run.owner?.label ?? ''} ${run.id}`.toLowerCase();
    return words.every((w) => text.includes(w));
  });
}

/** The rows of the list: each group's header, then its runs unless it is collapsed. */
export function rowsOf(groups: RunGroup[], collapsed: ReadonlySet<string>): Row[] {
  const rows: Row[] = [];
  for (const group of groups) {
    const folded = collapsed.has(group.key);
    rows.push({ kind: 'group', group, collapsed: folded });
    if (!folded) for (const run of group.runs) rows.push({ kind: 'run', run, group });
  }
  return rows;
}

function indexOf(rows: Row[], selection: Selection): number {
  if (!selection) return -1;
  return rows.findIndex((row) => (selection.kind === 'run' ? row.kind === 'run' && row.run.id === selection.id : row.kind === 'group' && row.group.key === selection.key));
}

export function selectionOf(row: Row): Selection {
  return row.kind === 'run' ? { kind: 'run', id: row.run.id } : { kind: 'group', key: row.group.key };
}

/** The selection `by` rows down (up when negative), held at the ends; from none, the first row (or the last, going up). */
export function moveSelection(rows: Row[], selection: Selection, by: number): Selection {
  if (rows.length === 0) return null;
  const at = indexOf(rows, selection);
  const next = at < 0 ? (by > 0 ? 0 : rows.length - 1) : Math.min(rows.length - 1, Math.max(0, at + by));
  return selectionOf(rows[next]!);
}

/** The run a followed group selects: its newest live run, else its newest. */
export function newestOf(group: RunGroup): RunResult | undefined {
  return group.runs.find(isLive) ?? group.runs[0];
}

/** Runs that are new since `known`, per followed group: the one to select (the newest), or undefined. */
export function followedPick(groups: RunGroup[], followed: ReadonlySet<string>, known: ReadonlySet<string>): string | undefined {
  let pick: RunResult | undefined;
  for (const group of groups) {
    if (!followed.has(group.key)) continue;
    for (const run of group.runs) if (!known.has(run.id) && (!pick || run.startedAt > pick.startedAt)) pick = run;
  }
  return pick?.id;
}
