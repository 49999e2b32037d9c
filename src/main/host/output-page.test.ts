// A page of a run's output (output-page.ts), case by case: where a range
// starts and ends, past the end, each stream; a page loop over the whole
// stream that asserts every page moves it forward (a page that does not
// would loop until a timeout); the range a caller gives, checked.

import { describe, expect, it } from 'vitest';
import type { WardenApi } from '../../shared/api';
import { isWardenError } from '../../shared/errors';
import { OUTPUT_PAGE_DEFAULT_CHARS, OUTPUT_PAGE_MAX_CHARS, type OutputPage } from '../../shared/http-api';
import type { RunResult } from '../../shared/result';
import { checkOutputRange, lineAt, lineStarts, outputPage, pageOf } from './output-page';

const run = (stdout: string, stderr = '', state: RunResult['state'] = 'ended'): RunResult => ({
  id: 'run123abc',
  kind: 'command',
  argv: ['x'],
  cwd: '/',
  state,
  verdict: state === 'ended' ? 'completed' : undefined,
  exitCode: 0,
  signal: null,
  startedAt: '2026-01-01T00:00:00.000Z',
  elapsedMs: 1,
  limitMs: null,
  advice: null,
  notes: [],
  stdout,
  stderr,
  stdoutTruncated: 0,
  stderrTruncated: 0,
});

describe('pageOf', () => {
  const r = run('0123456789', 'ab', 'running');
  it.each([
    ['from the start, all of it', 'stdout', 0, 100, { offset: 0, text: '0123456789', next: 10 }],
    ['from the start, a part', 'stdout', 0, 4, { offset: 0, text: '0123', next: 4 }],
    ['from the middle', 'stdout', 3, 4, { offset: 3, text: '3456', next: 7 }],
    ['the last character', 'stdout', 9, 4, { offset: 9, text: '9', next: 10 }],
    ['one character at a time', 'stdout', 5, 1, { offset: 5, text: '5', next: 6 }],
    ['at the end: empty, at the end', 'stdout', 10, 4, { offset: 10, text: '', next: 10 }],
    ['past the end: empty, at the end', 'stdout', 500, 4, { offset: 10, text: '', next: 10 }],
    ['the other stream', 'stderr', 1, 5, { offset: 1, text: 'b', next: 2 }],
  ] as const)('%s', (_what, stream, offset, limit, expected) => {
    // One line each stream: every page starts on line 1 of 1.
    expect(pageOf(r, { stream, offset, limit })).toEqual({ id: 'run123abc', stream, state: 'running', total: stream === 'stdout' ? 10 : 2, firstLine: 1, lines: 1, ...expected });
  });

  it.each([[1], [3], [7], [10], [11], [OUTPUT_PAGE_DEFAULT_CHARS]])('pages of %i put together are the stream, each moving it forward', (limit) => {
    const text = Array.from({ length: 1000 }, (_, i) => `${i}\n`).join('');
    const whole = run(text);
    let offset = 0;
    let joined = '';
    for (let pages = 0; ; pages++) {
      expect(pages, 'more pages than the stream has characters').toBeLessThanOrEqual(text.length);
      const page = pageOf(whole, { stream: 'stdout', offset, limit });
      expect(page.offset).toBe(offset);
      expect(page.text.length).toBeLessThanOrEqual(limit);
      expect(page.next).toBe(offset + page.text.length);
      joined += page.text;
      if (page.next >= page.total) break;
      expect(page.next, 'a page that is not the last moves forward').toBeGreaterThan(offset);
      offset = page.next;
    }
    expect(joined).toBe(text);
  });
});

describe('outputPage', () => {
  it('asks the API\'s own page call when it has one', async () => {
    const asked: unknown[] = [];
    const page: OutputPage = { id: 'x', stream: 'stderr', offset: 2, text: 'zz', next: 4, total: 9, state: 'ended' };
    const api = { output: async (id: string, range: unknown) => (asked.push([id, range]), page), get: async () => null } as unknown as WardenApi;
    expect(await outputPage(api, 'x', { stream: 'stderr', offset: 2, limit: 2 })).toBe(page);
    expect(asked).toEqual([['x', { stream: 'stderr', offset: 2, limit: 2 }]]);
  });

  it('else slices the run the API answers, or says there is no such run', async () => {
    const api = { get: async (id: string) => (id === 'run123abc' ? run('hello world') : null) } as unknown as WardenApi;
    expect(await outputPage(api, 'run123abc', { stream: 'stdout', offset: 6, limit: 5 })).toMatchObject({ offset: 6, text: 'world', next: 11, total: 11 });
    const missing = await outputPage(api, 'nosuchrun1', { stream: 'stdout', offset: 0, limit: 5 }).catch((error: unknown) => error);
    expect(isWardenError(missing)).toBe(true);
    expect(missing).toMatchObject({ kind: 'not-found', message: 'No run with id "nosuchrun1".' });
  });
});

describe('checkOutputRange', () => {
  it.each([
    [{ stream: 'stdout' }, { stream: 'stdout', offset: 0, limit: OUTPUT_PAGE_DEFAULT_CHARS }],
    [{ stream: 'stderr', offset: 7 }, { stream: 'stderr', offset: 7, limit: OUTPUT_PAGE_DEFAULT_CHARS }],
    [{ stream: 'stdout', offset: 0, limit: 1 }, { stream: 'stdout', offset: 0, limit: 1 }],
    [{ stream: 'stdout', limit: OUTPUT_PAGE_MAX_CHARS }, { stream: 'stdout', offset: 0, limit: OUTPUT_PAGE_MAX_CHARS }],
    [{ stream: 'stdout', offset: Number.MAX_SAFE_INTEGER }, { stream: 'stdout', offset: Number.MAX_SAFE_INTEGER, limit: OUTPUT_PAGE_DEFAULT_CHARS }],
  ])('takes %j', (given, range) => {
    expect(checkOutputRange(given)).toEqual(range);
  });

  it.each([
    [null, 'A page of output takes { stream, offset?, line?, limit? }.'],
    ['stdout', 'A page of output takes { stream, offset?, line?, limit? }.'],
    [['stdout'], 'A page of output takes { stream, offset?, line?, limit? }.'],
    [{ stream: 'stdout', from: 3 }, 'A page of output takes stream, offset or line, and limit, not from.'],
    [{ stream: 'both' }, 'stream is stdout or stderr, not "both".'],
    [{}, 'stream is stdout or stderr, not "undefined".'],
    [{ stream: 'stdout', offset: -1 }, 'offset takes a whole number from 0 to 9007199254740991, not -1.'],
    [{ stream: 'stdout', offset: 1.5 }, 'offset takes a whole number from 0 to 9007199254740991, not 1.5.'],
    [{ stream: 'stdout', offset: '3' }, 'offset takes a whole number from 0 to 9007199254740991, not "3".'],
    [{ stream: 'stdout', offset: null }, 'offset takes a whole number from 0 to 9007199254740991, not null.'],
    [{ stream: 'stdout', offset: 2 ** 53 }, 'offset takes a whole number from 0 to 9007199254740991, not 9007199254740992.'],
    [{ stream: 'stdout', limit: 0 }, 'limit takes a whole number from 1 to 1000000, not 0.'],
    [{ stream: 'stdout', limit: OUTPUT_PAGE_MAX_CHARS + 1 }, 'limit takes a whole number from 1 to 1000000, not 1000001.'],
    [{ stream: 'stdout', limit: Number.NaN }, 'limit takes a whole number from 1 to 1000000, not null.'],
    // What a caller gave is echoed cut to 40 characters: a line, never a flood.
    [{ stream: 'stdout', [`k${'e'.repeat(59)}`]: 1 }, `A page of output takes stream, offset or line, and limit, not k${'e'.repeat(39)}.`],
    [{ stream: 'x'.repeat(60) }, `stream is stdout or stderr, not "${'x'.repeat(39)}.`],
    [{ stream: 'stdout', offset: '9'.repeat(60) }, `offset takes a whole number from 0 to 9007199254740991, not "${'9'.repeat(39)}.`],
  ])('refuses %j in one line', (given, message) => {
    let error: unknown;
    try {
      checkOutputRange(given);
    } catch (e) {
      error = e;
    }
    expect(isWardenError(error)).toBe(true);
    expect(error).toMatchObject({ kind: 'bad-input', message });
  });
});

describe('the line a character is on', () => {
  // "ab\ncd\n\nef": lines start at 0, 3, 6 and 7.
  const starts = lineStarts('ab\ncd\n\nef');
  it.each<[number, number]>([
    [0, 1],
    [2, 1],
    [3, 2],
    [5, 2],
    [6, 3],
    [7, 4],
    [9, 4],
    [99, 4],
  ])('offset %i is on line %i', (offset, line) => {
    expect(lineAt(starts, offset)).toBe(line);
  });

  it('an empty text is line 1', () => {
    expect(lineAt(lineStarts(''), 0)).toBe(1);
  });
});
