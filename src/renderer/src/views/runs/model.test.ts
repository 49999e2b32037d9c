import { describe, expect, it } from 'vitest';
import type { ProcNode } from '../../../../shared/proc-tree';
import type { RunResult } from '../../../../shared/result';
import { choiceLabel, DEFAULT_SORT, filterRuns, nextSort, peakOf, processBadges, sections, statusBadge, verdictChoiceOf, type SortKey } from './model';

let n = 0;
function run(patch: Partial<RunResult>): RunResult {
  n++;
  return {
    id: `r${String(n).padStart(5, '0')}`,
    kind: 'command',
    argv: ['echo', String(n)],
    cwd: '/tmp',
    state: 'ended',
    verdict: 'completed',
    exitCode: 0,
    signal: null,
    startedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
    elapsedMs: 10,
    limitMs: null,
    advice: null,
    notes: [],
    stdout: '',
    stderr: '',
    stdoutTruncated: 0,
    stderrTruncated: 0,
    ...patch,
  };
}

describe('the Runs sections', () => {
  it('pins every live run above the ended ones, however many ended runs are newer', () => {
    const live = run({ state: 'running', verdict: undefined });
    const ended = Array.from({ length: 140 }, () => run({}));
    const s = sections([...ended, live], DEFAULT_SORT, 50);
    expect(s.live.map((r) => r.id)).toEqual([live.id]);
    expect(s.ended).toHaveLength(50);
    expect(s.endedTotal).toBe(140);
    // Newest first by default.
    expect(s.ended[0]!.id).toBe(ended[139]!.id);
  });

  it('sorts each section by the chosen column, both ways', () => {
    const a = run({ elapsedMs: 300, argv: ['b'] });
    const b = run({ elapsedMs: 100, argv: ['c'] });
    const c = run({ elapsedMs: 200, argv: ['a'] });
    expect(sections([a, b, c], { key: 'duration', dir: 'desc' }, 10).ended.map((r) => r.elapsedMs)).toEqual([300, 200, 100]);
    expect(sections([a, b, c], { key: 'duration', dir: 'asc' }, 10).ended.map((r) => r.elapsedMs)).toEqual([100, 200, 300]);
    expect(sections([a, b, c], { key: 'command', dir: 'asc' }, 10).ended.map((r) => r.argv![0])).toEqual(['a', 'b', 'c']);
    const failed = run({ verdict: 'failed', exitCode: 1 });
    expect(sections([a, failed], { key: 'status', dir: 'asc' }, 10).ended[0]!.id).toBe(failed.id);
  });

  it('toggles a sorted column and starts a new one the natural way', () => {
    expect(nextSort(DEFAULT_SORT, 'started')).toEqual({ key: 'started', dir: 'asc' });
    expect(nextSort(DEFAULT_SORT, 'duration')).toEqual({ key: 'duration', dir: 'desc' });
    expect(nextSort(DEFAULT_SORT, 'command')).toEqual({ key: 'command', dir: 'asc' });
  });
});

describe('every sort and filter of the Runs view', () => {
  // Four ended runs whose order differs for every column, and from the start
  // order that ties fall back to: a sort that did nothing would leave them in
  // start order, and fail.
  const rows = [
    run({ argv: ['cc'], verdict: 'completed', elapsedMs: 40, peak: { rssBytes: 3 << 20, processes: 1 } }),
    run({ argv: ['aa'], verdict: 'failed', exitCode: 1, elapsedMs: 10, peak: { rssBytes: 1 << 20, processes: 1 } }),
    run({ argv: ['dd'], verdict: 'crashed', exitCode: null, signal: 'SIGSEGV', elapsedMs: 30, peak: { rssBytes: 9 << 20, processes: 1 } }),
    run({ argv: ['bb'], verdict: 'timed-out', exitCode: 124, elapsedMs: 20, peak: { rssBytes: 5 << 20, processes: 1 }, oom: { confirmed: false, peakBytes: 2 << 20 } }),
  ];
  const [cc, aa, dd, bb] = rows.map((r) => r.id) as [string, string, string, string];
  const expected: Record<SortKey, string[]> = {
    // Ascending, as each column orders.
    status: [dd, bb, aa, cc], // crashed, timed-out, failed, completed
    command: [aa, bb, cc, dd],
    started: [cc, aa, dd, bb],
    duration: [aa, bb, dd, cc],
    memory: [aa, bb, cc, dd], // 1, 2 (the cgroup's own count, never mixed with the RSS sum's 5 beside it), 3, 9 MiB
  };

  for (const key of Object.keys(expected) as SortKey[]) {
    it(`sorts by ${key}, both ways`, () => {
      const asc = sections(rows, { key, dir: 'asc' }, 10).ended.map((r) => r.id);
      const desc = sections(rows, { key, dir: 'desc' }, 10).ended.map((r) => r.id);
      expect(asc).toEqual(expected[key]);
      expect(desc).toEqual([...expected[key]].reverse());
      // Not what no sort at all gives (newest first), whichever way it goes.
      if (key !== 'started') expect(desc).not.toEqual([bb, dd, aa, cc]);
    });
  }

  it('sorts live runs by memory from what the rows show (the live tree)', () => {
    const a = run({ state: 'running', verdict: undefined });
    const b = run({ state: 'running', verdict: undefined });
    const live = { [a.id]: 200, [b.id]: 100 };
    expect(sections([a, b], { key: 'memory', dir: 'asc' }, 10, undefined, (r) => live[r.id]).live.map((r) => r.id)).toEqual([b.id, a.id]);
    expect(sections([a, b], { key: 'memory', dir: 'desc' }, 10, undefined, (r) => live[r.id]).live.map((r) => r.id)).toEqual([a.id, b.id]);
  });

  it('filters by state and by verdict', () => {
    const live = run({ state: 'running', verdict: undefined });
    const all = [...rows, live];
    expect(filterRuns(all, { state: 'all', verdict: '' })).toHaveLength(5);
    expect(filterRuns(all, { state: 'live', verdict: '' }).map((r) => r.id)).toEqual([live.id]);
    expect(filterRuns(all, { state: 'ended', verdict: '' }).map((r) => r.id)).toEqual([cc, aa, dd, bb]);
    expect(filterRuns(all, { state: 'all', verdict: 'crashed' }).map((r) => r.id)).toEqual([dd]);
    expect(filterRuns(all, { state: 'live', verdict: 'crashed' })).toEqual([]);
    expect(filterRuns(all, { state: 'ended', verdict: 'timed-out' }).map((r) => r.id)).toEqual([bb]);
    // An out-of-memory kill is its own word, apart from other kills.
    const oom = run({ verdict: 'killed', exitCode: null, signal: 'SIGKILL', oom: { confirmed: true, peakBytes: 1 } });
    const killed = run({ verdict: 'killed', exitCode: null, signal: 'SIGKILL', oom: { confirmed: false } });
    expect(filterRuns([oom, killed], { state: 'all', verdict: 'oom' })).toEqual([oom]);
    expect(filterRuns([oom, killed], { state: 'all', verdict: 'killed' })).toEqual([killed]);
    expect(verdictChoiceOf(oom)).toBe('oom');
    expect(verdictChoiceOf(killed)).toBe('killed');
    expect(verdictChoiceOf({ verdict: 'failed', oom: { confirmed: true } })).toBe('failed');
    expect(choiceLabel('oom')).toBe('out of memory');
    expect(choiceLabel('killed')).toBe('killed');
    expect(sections([killed, oom], { key: 'status', dir: 'asc' }, 10).ended.map((r) => r.id)).toEqual([oom.id, killed.id]);
  });

  it("filters by host: a remote's runs are ID@HOST, this machine's are 'local'", () => {
    const remote = run({ id: 'abc123@gpu', state: 'running', verdict: undefined });
    const all = [...rows, remote];
    expect(filterRuns(all, { state: 'all', verdict: '', host: 'gpu' }).map((r) => r.id)).toEqual(['abc123@gpu']);
    expect(filterRuns(all, { state: 'all', verdict: '', host: 'local' }).map((r) => r.id)).toEqual(rows.map((r) => r.id));
    expect(filterRuns(all, { state: 'all', verdict: '', host: '' })).toHaveLength(5);
    expect(filterRuns(all, { state: 'live', verdict: '', host: 'other' })).toEqual([]);
  });
});

describe('badges', () => {
  it('tells an out-of-memory kill from a SIGKILL from outside', () => {
    expect(statusBadge(run({ verdict: 'killed', signal: 'SIGKILL', oom: { confirmed: true, peakBytes: 64 << 20, limitBytes: 64 << 20 } }))).toMatchObject({ label: 'out of memory', tone: 'oom' });
    expect(statusBadge(run({ verdict: 'killed', signal: 'SIGKILL', oom: { confirmed: false } }))).toMatchObject({ label: 'killed', tone: 'killed' });
    expect(statusBadge(run({ state: 'running', verdict: undefined }))).toMatchObject({ label: 'running' });
  });

  it('counts escaped processes while live, and what the teardown found after', () => {
    const node = (pid: number, escaped: boolean, children: ProcNode[] = []): ProcNode => ({ pid, ppid: 1, pgid: 1, command: 'x', state: 'S', cpuPercent: 0, rssBytes: 0, escaped, children });
    expect(processBadges({ state: 'running' }, { roots: [node(1, false, [node(2, true)]), node(3, true)] }).map((b) => b.label)).toEqual(['2 escaped']);
    expect(processBadges({ state: 'running' }, { roots: [node(1, false)] })).toEqual([]);
    const proc = { pid: 9, ppid: 1, pgid: 9, command: 'sleep' };
    expect(processBadges({ state: 'ended', teardown: { killed: [proc, proc], survivors: [proc], elapsedMs: 1, complete: false } }).map((b) => b.label)).toEqual(['1 survived', '2 left behind']);
  });

  it('shows one peak: the highest of the sampler and the cgroup', () => {
    expect(peakOf(run({ peak: { rssBytes: 9_570_000, processes: 1 }, oom: { confirmed: true, peakBytes: 67_108_864 } }))).toBe(67_108_864);
    expect(peakOf(run({ peak: { rssBytes: 100, processes: 1 } }))).toBe(100);
    expect(peakOf(run({}))).toBeUndefined();
    // A live run: the snapshot's peak is older than the latest sample's; the highest figure is the one shown.
    const tree = { peak: { rssBytes: 139 << 20, processes: 1 }, rssBytes: 130 << 20 };
    expect(peakOf(run({ state: 'running', peak: { rssBytes: 123 << 20, processes: 1 } }), tree)).toBe(139 << 20);
  });
});
