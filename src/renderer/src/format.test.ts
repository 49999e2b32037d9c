import { describe, expect, it } from 'vitest';
import { ago, columnBytes, liveDuration, limitWords, memoryLimitOf, peakFigure, peakMeaning, peakName, peakOf, scriptTitle, shortCommand, statusOf } from './format';

describe('relative times', () => {
  const now = Date.parse('2026-03-04T12:00:00Z');
  const before = (ms: number) => new Date(now - ms).toISOString();

  it('says how long ago in the largest whole unit', () => {
    expect(ago(before(1_000), now)).toBe('just now');
    expect(ago(before(42_000), now)).toBe('42 s ago');
    expect(ago(before(3 * 60_000 + 10_000), now)).toBe('3 min ago');
    expect(ago(before(2 * 3_600_000 + 5), now)).toBe('2 h ago');
    expect(ago(before(30 * 3_600_000), now)).toBe('yesterday');
    expect(ago(before(5 * 86_400_000), now)).toBe('5 days ago');
  });

  it('never says a time in the future or from nothing', () => {
    expect(ago(before(-10_000), now)).toBe('just now');
    expect(ago(undefined, now)).toBe('–');
    expect(ago('not a date', now)).toBe('–');
  });

  it('names a missing limit in words', () => {
    expect(limitWords(null)).toBe('no limit');
    expect(limitWords(30_000)).toBe('limit 30.0 s');
  });
});

describe('names and limits as every view writes them', () => {
  it('names a Python script by its first line that is not an import or a comment', () => {
    expect(scriptTitle('#!/usr/bin/env python3\n# fetch\nimport json\nfrom os import path\n\nprint(json.dumps(1))\n')).toBe('print(json.dumps(1))');
    expect(scriptTitle('import pandas as pd\n')).toBe('import pandas as pd');
    expect(scriptTitle('\n  x = 1  \n')).toBe('x = 1');
    expect(scriptTitle('')).toBe('');
  });

  it('shows a program by its name, not its path, so a cut line still shows the script', () => {
    expect(shortCommand('/usr/local/bin/python3.12 /home/me/job.py --fast')).toBe('python3.12 /home/me/job.py --fast');
    expect(shortCommand('python3 job.py')).toBe('python3 job.py');
    expect(shortCommand('[kworker]')).toBe('[kworker]');
    expect(shortCommand('/bin/sleep')).toBe('sleep');
  });

  it('has no memory limit of 0 B', () => {
    expect(memoryLimitOf({ oom: { confirmed: false, limitBytes: 0 } })).toBeUndefined();
    expect(memoryLimitOf({})).toBeUndefined();
    expect(memoryLimitOf({ oom: { confirmed: false, limitBytes: 64 << 20 } })).toBe(64 << 20);
  });
});

describe('one figure everywhere', () => {
  const MiB = 1024 * 1024;
  it("takes a run's cgroup peak over any RSS sum beside it, and says which it is", () => {
    // The samples' sum passed the limit (shared pages counted per process); the cgroup's count is capped there.
    const oom = { peak: { rssBytes: 100 * MiB, processes: 3, source: 'cgroup' as const }, oom: { confirmed: true, peakBytes: 100 * MiB, limitBytes: 100 * MiB } };
    expect(peakFigure(oom, { peak: { rssBytes: 105 * MiB, processes: 3 }, rssBytes: 105 * MiB })).toEqual({ bytes: 100 * MiB, source: 'cgroup' });
    // An older result without a source: its out-of-memory report's counter is the cgroup's.
    expect(peakFigure({ peak: { rssBytes: 105 * MiB, processes: 1 }, oom: { confirmed: true, peakBytes: 100 * MiB } })).toEqual({ bytes: 100 * MiB, source: 'cgroup' });
    // A live sample carrying the cgroup's peak so far, newer than the snapshot's.
    expect(peakFigure({ peak: { rssBytes: 10 * MiB, processes: 1, source: 'cgroup' } }, { peak: { rssBytes: 12 * MiB, processes: 1, source: 'cgroup' }, rssBytes: 30 * MiB })).toEqual({ bytes: 12 * MiB, source: 'cgroup' });
    expect(peakOf({ peak: { rssBytes: 10 * MiB, processes: 1, source: 'cgroup' } })).toBe(10 * MiB);
  });

  it('takes the highest RSS sum sampled for a run without a cgroup', () => {
    expect(peakFigure({ peak: { rssBytes: 5 * MiB, processes: 1, source: 'sampled' } }, { peak: { rssBytes: 7 * MiB, processes: 1 }, rssBytes: 6 * MiB })).toEqual({ bytes: 7 * MiB, source: 'sampled' });
    expect(peakFigure({}, { peak: { rssBytes: 1, processes: 1 }, rssBytes: 9 })).toEqual({ bytes: 9, source: 'sampled' });
    expect(peakFigure({ peak: { rssBytes: 5, processes: 1 } })).toEqual({ bytes: 5, source: 'sampled' });
    expect(peakFigure({})).toBeUndefined();
    expect(peakOf({})).toBeUndefined();
  });

  it('names the peak for what it is', () => {
    expect(peakName('cgroup')).toBe('cgroup peak');
    expect(peakName('sampled')).toBe('peak RSS sum');
    expect(peakName(undefined)).toBe('peak RSS sum');
    expect(peakMeaning('cgroup')).toMatch(/cgroup's own peak/);
    expect(peakMeaning('sampled')).toMatch(/sum of its processes' RSS/);
  });

  it('says the same word for a kill the out-of-memory killer made everywhere', () => {
    expect(statusOf({ state: 'ended', verdict: 'killed', oom: { confirmed: true } })).toBe('out of memory');
    expect(statusOf({ state: 'ended', verdict: 'killed', oom: { confirmed: false } })).toBe('killed');
    expect(statusOf({ state: 'ended', verdict: 'failed', oom: { confirmed: true } })).toBe('failed');
    expect(statusOf({ state: 'running' })).toBe('running');
  });

  it('writes sizes in a column with one decimal, whatever the size', () => {
    expect([13 * MiB, 13.1 * MiB, 4.77 * MiB, 512, 1536, 1.5 * 1024 * MiB].map(columnBytes)).toEqual(['13.0 MiB', '13.1 MiB', '4.8 MiB', '512 B', '1.5 KiB', '1.5 GiB']);
    expect(columnBytes(undefined)).toBe('–');
    expect(columnBytes(null)).toBe('–');
    expect(columnBytes(Number.NaN)).toBe('–');
  });
});

describe('a live clock', () => {
  it('ticks in whole seconds under a minute, then as durations are written', () => {
    expect([0, 999, 1000, 59_999, -5].map(liveDuration)).toEqual(['0 s', '0 s', '1 s', '59 s', '0 s']);
    expect(liveDuration(60_000)).toBe('1 min');
    expect(liveDuration(125_000)).toBe('2 min 05 s');
    expect(liveDuration(Number.NaN)).toBe('–');
  });
});
