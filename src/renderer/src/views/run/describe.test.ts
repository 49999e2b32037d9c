import { describe, expect, it } from 'vitest';
import type { EventRecord } from '../../../../shared/history';
import type { ProcNode } from '../../../../shared/proc-tree';
import type { RunResult } from '../../../../shared/result';
import { buildTimeline, copyText, flattenTree, phaseText, rerunRequest, treeRows, verdictSentence } from './describe';

const base: RunResult = {
  id: 'abc123',
  kind: 'command',
  argv: ['sleep', '30'],
  cwd: '/tmp',
  state: 'ended',
  verdict: 'completed',
  exitCode: 0,
  signal: null,
  startedAt: '2025-01-01T00:00:00.000Z',
  endedAt: '2025-01-01T00:00:02.100Z',
  elapsedMs: 2000,
  limitMs: 2000,
  advice: null,
  notes: [],
  stdout: '',
  stderr: '',
  stdoutTruncated: 0,
  stderrTruncated: 0,
};
const run = (patch: Partial<RunResult>): RunResult => ({ ...base, ...patch });

describe('verdictSentence', () => {
  it('says each verdict in words', () => {
    expect(verdictSentence(run({ verdict: 'timed-out', exitCode: null, signal: 'SIGINT' }))).toBe('Stopped by the deadline after 2.00 s (limit 2.00 s).');
    expect(verdictSentence(run({ verdict: 'failed', exitCode: 3 }))).toBe('Failed with exit code 3 after 2.00 s.');
    expect(verdictSentence(run({ verdict: 'crashed', exitCode: null, signal: 'SIGSEGV' }))).toBe('Crashed with SIGSEGV after 2.00 s.');
    expect(verdictSentence(run({ verdict: 'killed', signal: 'SIGKILL', oom: { confirmed: true } }))).toBe('Killed by the out-of-memory killer after 2.00 s.');
    expect(verdictSentence(run({ verdict: 'completed', limitMs: null }))).toBe('Completed with exit code 0 after 2.00 s.');
  });

  it('says a live run is still running', () => {
    expect(verdictSentence(run({ state: 'running', verdict: undefined }), 1234)).toBe('Still running: 1.23 s so far (limit 2.00 s).');
  });
});

describe('phaseText', () => {
  const stopping = run({ state: 'stopping', verdict: undefined, elapsedMs: 2500 });
  const sigint = [{ signal: 'SIGINT', atMs: 2000 }];

  it('counts down the grace while interrupting', () => {
    expect(phaseText(stopping, 'interrupt', sigint, 2500)).toBe('interrupting · grace 5 s left');
    expect(phaseText(stopping, 'terminate', sigint, 5100)).toBe('terminating · grace 2 s left');
    expect(phaseText(stopping, 'kill', sigint, 7000)).toBe('killed');
    expect(phaseText(stopping, undefined, [], 2500)).toBe('stopping');
  });

  it('says nothing for a run not being stopped, and how a stop ended one', () => {
    expect(phaseText(run({ state: 'running', verdict: undefined }), undefined, [], 10)).toBeNull();
    expect(phaseText(run({ stop: { reason: 'deadline', requestedAtMs: 2000, signals: sigint, endedBy: 'kill' } }), undefined, [], 0)).toBe('killed');
    expect(phaseText(base, undefined, [], 0)).toBeNull();
  });
});

describe('copy and re-run', () => {
  it('shell-quotes a command and copies a script whole', () => {
    expect(copyText({ argv: ['bash', '-c', "echo 'hi' there"] })).toBe(`bash -c 'echo '\\''hi'\\'' there'`);
    expect(copyText({ code: 'import os\nprint(1)\n' })).toBe('import os\nprint(1)\n');
  });

  it('asks for the same run again', () => {
    expect(rerunRequest(base)).toEqual({ argv: ['sleep', '30'], cwd: '/tmp', limitMs: 2000 });
    expect(rerunRequest(run({ kind: 'python', argv: undefined, code: 'print(1)', session: 's1', limitMs: null }))).toEqual({ code: 'print(1)', session: 's1', limitMs: null });
  });
});

describe('flattenTree', () => {
  const node = (pid: number, children: ProcNode[] = [], escaped = false): ProcNode => ({ pid, ppid: 0, pgid: 0, command: `p${pid}`, state: 'S', cpuPercent: 0, rssBytes: 0, escaped, children });

  it('lists parents before children with their depth', () => {
    const flat = flattenTree([node(1, [node(2, [node(3)]), node(4)]), node(9, [], true)]);
    expect(flat.map((f) => [f.node.pid, f.depth])).toEqual([
      [1, 0],
      [2, 1],
      [3, 2],
      [4, 1],
      [9, 0],
    ]);
  });

  it('draws tree lines: a branch per child, a bar while siblings follow, nothing below a last child', () => {
    const rows = treeRows([node(1, [node(2, [node(3), node(5)]), node(4, [node(6)])]), node(9, [], true)]);
    expect(rows.map((r) => [r.node.pid, r.guides])).toEqual([
      [1, ''],
      [2, '├─ '],
      [3, '│  ├─ '],
      [5, '│  └─ '],
      [4, '└─ '],
      [6, '   └─ '],
      [9, ''],
    ]);
    expect(rows.map((r) => r.hasChildren)).toEqual([true, true, false, false, true, false, false]);
  });

  it('orders siblings by CPU or RSS, the highest first, ties by pid, the main process first among the roots', () => {
    const n = (pid: number, cpu: number, rss: number, children: ReturnType<typeof node>[] = []) => ({ ...node(pid, children), cpuPercent: cpu, rssBytes: rss });
    const tree = [n(1, 0, 10, [n(2, 5, 300), n(3, 50, 100, [n(7, 1, 1), n(8, 9, 2)]), n(4, 5, 200)]), n(9, 99, 999), n(6, 80, 5)];
    expect(treeRows(tree, new Set(), 'cpu').map((r) => r.node.pid)).toEqual([1, 3, 8, 7, 2, 4, 9, 6]);
    expect(treeRows(tree, new Set(), 'rss').map((r) => r.node.pid)).toEqual([1, 2, 4, 3, 8, 7, 9, 6]);
    expect(treeRows(tree, new Set(), 'tree').map((r) => r.node.pid)).toEqual([1, 2, 3, 7, 8, 4, 9, 6]);
    // Guides follow the order shown: the last shown child closes the branch.
    expect(treeRows(tree, new Set(), 'cpu').find((r) => r.node.pid === 4)!.guides).toBe('└─ ');
  });

  it('folds a process: its descendants are hidden and counted', () => {
    const rows = treeRows([node(1, [node(2, [node(3), node(5)]), node(4)])], new Set([2, 3]));
    expect(rows.map((r) => r.node.pid)).toEqual([1, 2, 4]);
    expect(rows[1]).toMatchObject({ folded: true, hidden: 2 });
    // A leaf in the folded set is not folded: it has nothing to hide.
    expect(treeRows([node(7)], new Set([7]))[0]).toMatchObject({ folded: false, hidden: 0 });
  });
});

describe('buildTimeline', () => {
  const ev = (kind: string, atMs: number | null, detail: Record<string, unknown> = {}, at = '2025-01-01T00:00:02.050Z'): EventRecord => ({ runId: 'abc123', at, atMs, kind, detail });
  const timedOut = run({
    verdict: 'timed-out',
    exitCode: null,
    signal: 'SIGINT',
    elapsedMs: 2010,
    stop: { reason: 'deadline', requestedAtMs: 2000, signals: [{ signal: 'SIGINT', atMs: 2000 }], endedBy: 'interrupt' },
    teardown: { killed: [], survivors: [], elapsedMs: 5, complete: true },
  });

  it('merges the stored events with the limit and the stop, in time order', () => {
    const stored = [ev('started', 0), ev('signal-sent', 2000, { signal: 'SIGINT', step: 'interrupt' }), ev('exit', 2010, { exitCode: null, signal: 'SIGINT' }), ev('teardown', null, { killed: 0, survivors: 0, elapsedMs: 5, complete: true }), ev('ended', null, { verdict: 'timed-out' })];
    const entries = buildTimeline(timedOut, stored, [{ signal: 'SIGINT', atMs: 2000 }], []);
    expect(entries.map((e) => [e.kind, e.atMs])).toEqual([
      ['started', 0],
      ['limit', 0],
      ['stop-requested', 2000],
      ['signal-sent', 2000],
      ['exit', 2010],
      ['teardown', 2050],
      ['ended', 2050],
    ]);
    expect(entries.find((e) => e.kind === 'limit')!.detail).toBe('deadline at +2.00 s');
  });

  it('fills in from the result and live events what the history does not have yet', () => {
    const entries = buildTimeline(timedOut, [], [{ signal: 'SIGINT', atMs: 2000 }], [{ limitMs: 2000, byMs: 1000, atMs: 500 }]);
    const kinds = entries.map((e) => e.kind);
    expect(kinds).toEqual(['started', 'limit', 'limit-extended', 'stop-requested', 'signal-sent', 'exit', 'teardown', 'ended']);
    expect(entries.filter((e) => e.kind === 'signal-sent')).toHaveLength(1);
    expect(entries[1]!.detail).toBe('deadline at +1.00 s');
  });

  it('groups the teardown signals and keeps the teardown after them', () => {
    const stored = [
      ev('started', 0),
      ev('signal-sent', 1000, { signal: 'SIGINT', step: 'interrupt' }),
      ev('exit', 1010, { exitCode: 0, signal: null }),
      ev('signal-sent', 3000, { signal: 'SIGTERM to group 10', step: 'teardown' }),
      ev('signal-sent', 3000, { signal: 'SIGTERM to pid 11', step: 'teardown' }),
      ev('teardown', null, { killed: 2, survivors: 0, elapsedMs: 30, complete: true }, '2025-01-01T00:00:01.500Z'),
    ];
    const stopped = run({ verdict: 'stopped', elapsedMs: 1010, stop: { reason: 'user', requestedAtMs: 1000.5, signals: [{ signal: 'SIGINT', atMs: 1000 }], endedBy: 'interrupt' } });
    const entries = buildTimeline(stopped, stored, [], []);
    expect(entries.map((e) => e.kind)).toEqual(['started', 'limit', 'stop-requested', 'signal-sent', 'exit', 'signal-sent', 'teardown', 'ended']);
    expect(entries[5]).toMatchObject({ title: 'Sent SIGTERM (teardown)', detail: 'to group 10, pid 11' });
    expect(entries[6]!.atMs).toBe(3000);
  });

  it('records a force kill as such, not as the kill step after the grace', () => {
    const forced = run({
      verdict: 'stopped',
      exitCode: null,
      signal: 'SIGKILL',
      elapsedMs: 1610,
      stop: { reason: 'user', requestedAtMs: 1000, signals: [{ signal: 'SIGINT', atMs: 1000 }, { signal: 'SIGCONT', atMs: 1000 }, { signal: 'SIGKILL', atMs: 1600 }], endedBy: 'kill', forcedAtMs: 1600 },
    });
    const stored = [ev('started', 0), ev('signal-sent', 1000, { signal: 'SIGINT', step: 'interrupt' }), ev('signal-sent', 1600, { signal: 'SIGKILL', step: 'kill' })];
    const entries = buildTimeline(forced, stored, [], []);
    expect(entries.map((e) => e.kind)).toEqual(['started', 'limit', 'stop-requested', 'signal-sent', 'signal-sent', 'force-kill', 'signal-sent', 'exit', 'ended']);
    expect(entries.find((e) => e.kind === 'stop-requested')!.detail).toMatch(/step by step/);
    const kill = entries.find((e) => e.title === 'Sent SIGKILL')!;
    expect(kill.detail).toBe('force kill: at once, not after the grace');
    expect(entries.some((e) => e.detail.includes('kill step'))).toBe(false);
    expect(phaseText(forced, undefined, [], 1610)).toBe('force-killed');

    // Forced with the stop itself: one entry says so.
    const atOnce = run({ ...forced, stop: { ...forced.stop!, signals: [{ signal: 'SIGKILL', atMs: 1000 }], forcedAtMs: 1000 } });
    const first = buildTimeline(atOnce, [], [], []);
    expect(first.find((e) => e.kind === 'stop-requested')).toMatchObject({ title: 'Force kill', detail: 'stopped on request: SIGKILL at once, without the grace' });
    expect(first.some((e) => e.kind === 'force-kill')).toBe(false);
  });

  it('lists a force kill before the SIGKILL it caused, even when the signal was timed a moment earlier', () => {
    const forced = run({
      verdict: 'stopped',
      exitCode: null,
      signal: 'SIGKILL',
      elapsedMs: 1610,
      stop: { reason: 'user', requestedAtMs: 1000, signals: [{ signal: 'SIGINT', atMs: 1000 }, { signal: 'SIGKILL', atMs: 1599.4 }], endedBy: 'kill', forcedAtMs: 1600.3 },
    });
    const stored = [ev('started', 0), ev('signal-sent', 1000, { signal: 'SIGINT', step: 'interrupt' }), ev('signal-sent', 1599.4, { signal: 'SIGKILL', step: 'kill' })];
    const titles = buildTimeline(forced, stored, [], []).map((e) => e.title);
    expect(titles.indexOf('Force kill')).toBeGreaterThan(-1);
    expect(titles.indexOf('Force kill')).toBeLessThan(titles.indexOf('Sent SIGKILL'));
  });

  it('leaves the telemetry series out of the timeline', () => {
    const entries = buildTimeline(timedOut, [ev('started', 0), ev('telemetry', null, { stepMs: 1000, points: [[0, 1, 2, 3]] })], [], []);
    expect(entries.some((e) => e.kind === 'telemetry' || e.title === 'telemetry')).toBe(false);
  });

  it('tells a run that had no limit before its first extension', () => {
    const entries = buildTimeline(run({ state: 'running', verdict: undefined, limitMs: 31_000 }), [ev('started', 0), ev('limit-extended', 1000, { limitMs: 31_000, byMs: 30_000 })], [], []);
    expect(entries.find((e) => e.kind === 'limit')!.title).toBe('No limit');
    expect(entries.map((e) => e.kind)).toEqual(['started', 'limit', 'limit-extended']);
  });
});
