import { describe, expect, it } from 'vitest';
import type { RunResult } from '../../../../shared/result';
import { followedPick, groupKey, groupRuns, moveSelection, newestOf, rowsOf, searchRuns, selectionOf } from './model';

let n = 0;
const run = (over: Partial<RunResult> = {}): RunResult => ({
  id: `r${String(++n).padStart(5, '0')}`, kind: 'command', argv: ['true'], cwd: '/w', state: 'ended', verdict: 'completed', exitCode: 0, signal: null,
  startedAt: new Date(Date.UTC(2026, 0, 1, 0, n)).toISOString(), elapsedMs: 1, limitMs: null, advice: null, notes: [], stdout: '', stderr: '', stdoutTruncated: 0, stderrTruncated: 0, ...over,
});
const claude = { label: 'warden mcp for claude-code', pid: 100 };
const codex = { label: 'warden mcp for codex', pid: 200 };

describe('groups of the monitor', () => {
  it('groups by owner (label and pid), else by directory', () => {
    expect(groupKey({ owner: claude, cwd: '/a' })).toBe('owner:warden mcp for claude-code#100');
    expect(groupKey({ owner: { label: 'bash', pid: null }, cwd: '/a' })).toBe('owner:bash#');
    expect(groupKey({ cwd: '/a' })).toBe('cwd:/a');
    expect(groupKey({ owner: { ...claude, pid: 101 }, cwd: '/a' })).not.toBe(groupKey({ owner: claude, cwd: '/a' }));
  });

  it('counts live runs and failures, says the directory they share, and puts live groups and runs first, newest first', () => {
    const a1 = run({ owner: claude, verdict: 'failed', exitCode: 1 });
    const b1 = run({ owner: codex, cwd: '/x' });
    const a2 = run({ owner: claude, state: 'running', verdict: undefined, cwd: '/other' });
    const a3 = run({ owner: claude, verdict: 'killed' });
    const c1 = run({ cwd: '/solo', verdict: 'stopped' });
    const groups = groupRuns([a1, b1, a2, a3, c1]);
    expect(groups.map((g) => g.label)).toEqual(['warden mcp for claude-code', 'no owner', 'warden mcp for codex']);
    const [a] = groups;
    expect(a).toMatchObject({ pid: 100, cwd: null, live: 1, failed: 2 });
    expect(a!.runs.map((r) => r.id)).toEqual([a2.id, a3.id, a1.id]);
    expect(groups[1]).toMatchObject({ cwd: '/solo', live: 0, failed: 0, pid: null });
    expect(groups[2]).toMatchObject({ cwd: '/x', failed: 0 });
    expect(newestOf(a!)?.id).toBe(a2.id);
    expect(newestOf(groups[1]!)?.id).toBe(c1.id);
  });

  it('searches every word in the command, the script, the owner and the id', () => {
    const p = run({ argv: ['pytest', '-x'], owner: codex });
    const s = run({ kind: 'python', argv: undefined, code: 'import pandas' });
    expect(searchRuns([p, s], 'PYTEST codex')).toEqual([p]);
    expect(searchRuns([p, s], 'pandas')).toEqual([s]);
    expect(searchRuns([p, s], p.id)).toEqual([p]);
    expect(searchRuns([p, s], '  ')).toEqual([p, s]);
    expect(searchRuns([p, s], 'pytest pandas')).toEqual([]);
  });
});

describe('the list and its selection', () => {
  const a = run({ owner: claude, state: 'running', verdict: undefined });
  const b = run({ owner: claude });
  const c = run({ owner: codex });
  const groups = groupRuns([a, b, c]);
  const rows = rowsOf(groups, new Set());

  it('has a header per group, then its runs, unless it is collapsed', () => {
    expect(rows.map((r) => (r.kind === 'group' ? `g:${r.group.label}` : r.run.id))).toEqual(['g:warden mcp for claude-code', a.id, b.id, 'g:warden mcp for codex', c.id]);
    const folded = rowsOf(groups, new Set([groups[0]!.key]));
    expect(folded.map((r) => r.kind)).toEqual(['group', 'group', 'run']);
    expect(folded[0]).toMatchObject({ collapsed: true });
  });

  it('moves down and up a row at a time, held at the ends, from none to the first or the last', () => {
    expect(moveSelection(rows, null, 1)).toEqual({ kind: 'group', key: groups[0]!.key });
    expect(moveSelection(rows, null, -1)).toEqual({ kind: 'run', id: c.id });
    expect(moveSelection(rows, { kind: 'run', id: a.id }, 1)).toEqual({ kind: 'run', id: b.id });
    expect(moveSelection(rows, { kind: 'run', id: b.id }, 1)).toEqual({ kind: 'group', key: groups[1]!.key });
    expect(moveSelection(rows, { kind: 'run', id: a.id }, -1)).toEqual({ kind: 'group', key: groups[0]!.key });
    expect(moveSelection(rows, { kind: 'run', id: c.id }, 1)).toEqual({ kind: 'run', id: c.id });
    expect(moveSelection(rows, { kind: 'group', key: groups[0]!.key }, -1)).toEqual({ kind: 'group', key: groups[0]!.key });
    expect(moveSelection(rows, { kind: 'run', id: 'gone' }, 1)).toEqual({ kind: 'group', key: groups[0]!.key });
    expect(moveSelection([], null, 1)).toBeNull();
    expect(selectionOf(rows[1]!)).toEqual({ kind: 'run', id: a.id });
  });

  it('follows the newest new run of a followed group only', () => {
    const known = new Set([a.id, b.id, c.id]);
    const d = run({ owner: claude });
    const e = run({ owner: codex });
    const later = groupRuns([a, b, c, d, e]);
    const claudeKey = later.find((g) => g.pid === 100)!.key;
    expect(followedPick(later, new Set([claudeKey]), known)).toBe(d.id);
    expect(followedPick(later, new Set(), known)).toBeUndefined();
    expect(followedPick(later, new Set([claudeKey]), new Set([...known, d.id]))).toBeUndefined();
    expect(followedPick(later, new Set(later.map((g) => g.key)), known)).toBe(e.id);
  });
});
