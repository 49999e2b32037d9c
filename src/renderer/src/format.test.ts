import { describe, expect, it } from 'vitest';
import { ago, limitWords, memoryLimitOf, scriptTitle, shortCommand } from './format';

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
