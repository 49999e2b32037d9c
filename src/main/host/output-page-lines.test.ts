// The output route's pages as functions: where lines start, the line a
// character is on, a page by offset or by line, a range checked at the IPC
// boundary, and an ended run's text held between pages (the history read once).

import { describe, expect, it, vi } from 'vitest';
import type { WardenApi } from '../../shared/api';
import type { RunResult } from '../../shared/result';
import { checkOutputRange, lineAt, lineStarts, outputPage, pageOf } from './output-page';

const run = (over: Partial<RunResult> = {}): RunResult => ({
  id: 'abc123', kind: 'command', cwd: '/', state: 'ended', exitCode: 0, signal: null, startedAt: '2026-01-01T00:00:00.000Z',
  elapsedMs: 1, limitMs: null, advice: null, notes: [], stdout: 'one\ntwo\nthree\n', stderr: 'no newline', stdoutTruncated: 0, stderrTruncated: 0, ...over,
});

describe('lines of a kept text', () => {
  it.each([
    ['', []],
    ['a', [0]],
    ['a\n', [0]],
    ['a\nb', [0, 2]],
    ['a\n\nb\n', [0, 2, 3]],
    ['\n', [0]],
  ])('%j starts lines at %j', (text, starts) => {
    expect([...lineStarts(text)]).toEqual(starts);
  });

  it('says the line a character is on', () => {
    const starts = lineStarts('one\ntwo\nthree\n');
    expect([0, 3, 4, 7, 8, 13, 99].map((o) => lineAt(starts, o))).toEqual([1, 1, 2, 2, 3, 3, 3]);
    expect(lineAt(new Uint32Array(0), 0)).toBe(1);
  });
});

describe('a page', () => {
  it('by offset: the characters, where it ends, the line it starts on', () => {
    expect(pageOf(run(), { stream: 'stdout', offset: 5, limit: 6 })).toEqual({ id: 'abc123', stream: 'stdout', offset: 5, text: 'wo\nthr', next: 11, total: 14, state: 'ended', firstLine: 2, lines: 3 });
    expect(pageOf(run(), { stream: 'stdout', offset: 99, limit: 6 })).toMatchObject({ offset: 14, text: '', next: 14, firstLine: 3 });
  });

  it('by line: from its start (the offset not read), past the last line an empty page at the end', () => {
    expect(pageOf(run(), { stream: 'stdout', offset: 9, line: 3, limit: 100 })).toMatchObject({ offset: 8, text: 'three\n', firstLine: 3 });
    expect(pageOf(run(), { stream: 'stdout', offset: 0, line: 1, limit: 3 })).toMatchObject({ offset: 0, text: 'one', firstLine: 1 });
    expect(pageOf(run(), { stream: 'stdout', offset: 0, line: 4, limit: 3 })).toMatchObject({ offset: 14, text: '', firstLine: 3 });
    expect(pageOf(run(), { stream: 'stderr', offset: 0, line: 1, limit: 3 })).toMatchObject({ offset: 0, text: 'no ', lines: 1 });
  });

  it('holds an ended run between pages (the history read once), never a live one', async () => {
    const ended = run({ id: 'e1' });
    const live = run({ id: 'l1', state: 'running' });
    const get = vi.fn(async (id: string) => (id === 'e1' ? ended : live));
    const api = { get } as unknown as WardenApi;
    for (let line = 1; line <= 3; line++) expect(await outputPage(api, 'e1', { stream: 'stdout', offset: 0, line, limit: 3 })).toMatchObject({ firstLine: line });
    expect(get).toHaveBeenCalledTimes(1);
    await outputPage(api, 'l1', { stream: 'stdout', offset: 0, limit: 3 });
    await outputPage(api, 'l1', { stream: 'stdout', offset: 0, limit: 3 });
    expect(get).toHaveBeenCalledTimes(3);
    await expect(outputPage({ get: async () => null } as unknown as WardenApi, 'zz9', { stream: 'stdout', offset: 0, limit: 1 })).rejects.toThrow('No run with id "zz9".');
    // Pages asked at the same moment read the run once.
    const once = vi.fn(async () => run({ id: 'o1' }));
    const many = { get: once } as unknown as WardenApi;
    await Promise.all([1, 2, 3].map((line) => outputPage(many, 'o1', { stream: 'stdout', offset: 0, line, limit: 3 })));
    expect(once).toHaveBeenCalledTimes(1);
  });
});

describe('a range at the IPC boundary', () => {
  it('takes an offset or a line, not both, and whole numbers in bounds', () => {
    expect(checkOutputRange({ stream: 'stdout' })).toEqual({ stream: 'stdout', offset: 0, limit: 65_536 });
    expect(checkOutputRange({ stream: 'stderr', line: 7, limit: 10 })).toEqual({ stream: 'stderr', offset: 0, line: 7, limit: 10 });
    for (const bad of [{ stream: 'stdout', offset: 1, line: 2 }, { stream: 'stdout', line: 0 }, { stream: 'stdout', line: 1.5 }, { stream: 'both' }, { stream: 'stdout', from: 1 }, null, []]) {
      expect(() => checkOutputRange(bad), JSON.stringify(bad)).toThrow(/./);
    }
  });
});
