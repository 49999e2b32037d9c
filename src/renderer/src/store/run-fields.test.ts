// A history summary as the store holds a run (fields, no output), and the
// stream a linked line can be fetched by ahead of the pages before it.

import { describe, expect, it } from 'vitest';
import type { RunSummary } from '../../../shared/history';
import type { RunResult } from '../../../shared/result';
import { fromSummary, linkedStream } from './run-fields';

const summary = (fields: Partial<RunSummary> = {}): RunSummary => ({
  id: 'abc123',
  hostId: 'h1',
  kind: 'command',
  argv: ['make', 'test'],
  command: 'make test',
  cwd: '/p',
  state: 'ended',
  verdict: 'failed',
  exitCode: 2,
  signal: null,
  startedAt: '2026-01-01T00:00:00.000Z',
  endedAt: '2026-01-01T00:00:05.000Z',
  elapsedMs: 5000,
  limitMs: 60_000,
  advice: 'Read stderr.',
  stdoutTruncated: 3,
  stderrTruncated: 4,
  peakRssBytes: null,
  peakProcesses: null,
  outputBytes: 10,
  ...fields,
});

const BASE: RunResult = {
  id: 'abc123',
  kind: 'command',
  argv: ['make', 'test'],
  cwd: '/p',
  state: 'ended',
  verdict: 'failed',
  exitCode: 2,
  signal: null,
  startedAt: '2026-01-01T00:00:00.000Z',
  endedAt: '2026-01-01T00:00:05.000Z',
  elapsedMs: 5000,
  limitMs: 60_000,
  advice: 'Read stderr.',
  notes: [],
  stdout: '',
  stderr: '',
  stdoutTruncated: 3,
  stderrTruncated: 4,
};
const UNLISTED = { pid: 0, ppid: 0, pgid: 0, command: '' };

describe('a history summary as a run without its output', () => {
  it.each<[string, Partial<RunSummary>, RunResult]>([
    ['the result\'s own fields, no output, no notes', {}, BASE],
    ['a remote\'s run names its host', { host: 'box' }, { ...BASE, host: 'box' }],
    ['a script: its code and session, no argv', { kind: 'python', argv: undefined, code: 'print(1)', session: 's1' }, (({ argv: _a, ...rest }) => ({ ...rest, kind: 'python', code: 'print(1)', session: 's1' }) as RunResult)(BASE)],
    ['a live run: no verdict, no end', { state: 'running', verdict: undefined, endedAt: undefined }, (({ verdict: _v, endedAt: _e, ...rest }) => ({ ...rest, state: 'running' }) as RunResult)(BASE)],
    ['its owner', { owner: { label: 'claude', pid: 42 } }, { ...BASE, owner: { label: 'claude', pid: 42 } }],
    ['an OOM report', { oom: { confirmed: true, limitBytes: 100 } as RunSummary['oom'] }, { ...BASE, oom: { confirmed: true, limitBytes: 100 } as RunResult['oom'] }],
    ['a peak: its figures and source', { peakRssBytes: 2048, peakProcesses: 3, peakSource: 'cgroup' }, { ...BASE, peak: { rssBytes: 2048, processes: 3, source: 'cgroup' } }],
    ['a peak without a process count or source', { peakRssBytes: 2048 }, { ...BASE, peak: { rssBytes: 2048, processes: 0 } }],
    ['left-behind processes: a teardown of as many unlisted ones', { leftBehind: 2 }, { ...BASE, teardown: { killed: [UNLISTED, UNLISTED], survivors: [], elapsedMs: 0, complete: true } }],
    ['survivors alone', { survived: 1 }, { ...BASE, teardown: { killed: [], survivors: [UNLISTED], elapsedMs: 0, complete: true } }],
  ])('%s', (_name, fields, want) => {
    expect(fromSummary(summary(fields))).toStrictEqual(want);
  });
});

describe('the stream a linked line is fetched by', () => {
  const run = (stdout: number, stderr: number, stdoutTruncated = 0, stderrTruncated = 0) => ({ outputChars: { stdout, stderr }, stdoutTruncated, stderrTruncated });
  it.each<[string, 'all' | 'stdout' | 'stderr', ReturnType<typeof run> | Pick<RunResult, 'stdoutTruncated' | 'stderrTruncated'>, 'stdout' | 'stderr' | null]>([
    ['stdout named', 'stdout', run(10, 10), 'stdout'],
    ['stderr named', 'stderr', run(10, 10), 'stderr'],
    ['the merged view, stderr empty: stdout', 'all', run(10, 0), 'stdout'],
    ['the merged view, stdout empty: stderr', 'all', run(0, 10), 'stderr'],
    ['the merged view, both with output: none', 'all', run(10, 10), null],
    ['the merged view, no counts known: stdout', 'all', { stdoutTruncated: 0, stderrTruncated: 0 }, 'stdout'],
    ['stdout named, stdout cut: none', 'stdout', run(10, 10, 1), null],
    ['stdout named, stderr cut: stdout', 'stdout', run(10, 10, 0, 1), 'stdout'],
    ['stderr named, stderr cut: none', 'stderr', run(10, 10, 0, 1), null],
    ['stderr named, stdout cut: stderr', 'stderr', run(10, 10, 1), 'stderr'],
    ['the merged view, stdout alone and cut: none', 'all', run(10, 0, 1), null],
  ])('%s', (_name, stream, fields, want) => {
    expect(linkedStream(stream, fields)).toBe(want);
  });
});
