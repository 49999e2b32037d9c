// The scanner as a table: line numbers across stretches and calls, CRLF,
// replacement characters, escape sequences, a gap in the middle, context,
// cut lines; and the pages of a search put end to end equal one large call.
// Pure functions, run here in the test's own thread.

import { describe, expect, it } from 'vitest';
import { droppedMarker } from '../../../shared/stream-length';
import { gapIn, regionFor } from './plan';
import { searchScanner, type ScanJob, type ScanMatch } from './scan';

const { scan, visible, countLines, compile } = searchScanner();

/** A job over the whole text. */
function whole(text: string, pattern: string, options: Partial<ScanJob> = {}): ScanJob {
  return { region: text, base: 0, scanFrom: 0, scanTo: text.length, fromLine: 1, pattern, literal: false, ignoreCase: false, context: 0, maxMatches: 200, budgetMs: 60_000, gap: null, wantEndLine: true, ...options };
}

const lines = (...xs: string[]) => xs.map((x) => `${x}\n`).join('');
const found = (matches: ScanMatch[]) => matches.map((m) => [m.line, m.offset, m.text]);

describe('matching lines, their numbers and offsets', () => {
  it.each<[string, string, string, Partial<ScanJob>, (string | number)[][]]>([
    ['a literal, one match per line', lines('alpha', 'beta', 'alphabet alpha'), 'alpha', { literal: true }, [[1, 0, 'alpha'], [3, 11, 'alphabet alpha']]],
    ['a regex', lines('x1', 'y22', 'z333'), '\\d{2,}', {}, [[2, 4, 'y22'], [3, 8, 'z333']]],
    ['ignoreCase, literal', lines('Error', 'ERROR', 'error', 'err'), 'error', { literal: true, ignoreCase: true }, [[1, 0, 'Error'], [2, 6, 'ERROR'], [3, 12, 'error']]],
    ['ignoreCase, regex', lines('Warn: x', 'warn: y'), '^warn', { ignoreCase: true }, [[1, 0, 'Warn: x'], [2, 8, 'warn: y']]],
    ['a literal keeps regex characters as text', lines('a.b', 'axb', '(a+)+$'), '(a+)+$', { literal: true }, [[3, 8, '(a+)+$']]],
    ['a literal . matches only a dot', lines('a.b', 'axb'), 'a.b', { literal: true, ignoreCase: true }, [[1, 0, 'a.b']]],
    ['the last line without a line break', 'one\ntwo', 'two', {}, [[2, 4, 'two']]],
    ['a match at offset 0 of an empty first line', '\nx\n', '^$', {}, [[1, 0, ''], [3, 3, '']]],
    ['$ before a CRLF line break', 'ok\r\nnot ok!\r\nok\r\n', 'ok$', {}, [[1, 0, 'ok'], [3, 13, 'ok']]],
    ['a lone CR stays in its line', 'a\rb\n', 'a\rb', { literal: true }, [[1, 0, 'a\rb']]],
    ['colours are not in the way, and offsets are the kept text\'s', 'x\n\x1b[31mFAI\x1b[1mLED\x1b[0m now\n', 'FAILED now', { literal: true }, [[2, 7, 'FAILED now']]],
    ['an OSC title and a charset escape are taken out too', '\x1b]0;title\x07\x1b(Bdone\n', '^done$', {}, [[1, 13, 'done']]],
    ['replacement characters from invalid UTF-8 match as themselves', lines('ok', 'bad \uFFFD\uFFFD byte'), '\uFFFD+', {}, [[2, 7, 'bad \uFFFD\uFFFD byte']]],
    ['characters beyond the BMP, u flag', lines('a 😀 b', 'c'), '^a . b$', {}, [[1, 0, 'a 😀 b']]],
    ['\\s never takes the line break: the line is tried alone', lines('error', 'at x', 'error at y'), 'error\\s+at', {}, [[3, 11, 'error at y']]],
    ['[^x] across lines does not join them', lines('ab', 'c'), 'b[^x]c', {}, []],
    ['an empty match on every line', lines('a', 'b'), 'x*', {}, [[1, 0, 'a'], [2, 2, 'b']]],
    ['no match', lines('a', 'b'), 'zzz', {}, []],
  ])('%s', (_name, text, pattern, options, expected) => {
    expect(found(scan(whole(text, pattern, options)).matches)).toEqual(expected);
  });

  it('numbers lines the same across stretches of 256 Ki characters (no line is counted twice or missed)', () => {
    const text = Array.from({ length: 100_000 }, (_, i) => (i % 9973 === 0 ? `needle ${i}` : `line ${i}`)).join('\n');
    const { matches } = scan(whole(text, 'needle \\d+'));
    expect(matches.map((m) => m.line)).toEqual([1, 9974, 19_947, 29_920, 39_893, 49_866, 59_839, 69_812, 79_785, 89_758, 99_731]);
    for (const m of matches) expect(text.slice(m.offset, m.offset + m.text.length)).toBe(m.text);
    const literal = scan(whole(text, 'needle 9', { literal: true })).matches;
    expect(literal.map((m) => m.line)).toEqual([9974, 99_731]);
  });

  it('says the line after the end, and where it stopped at maxMatches', () => {
    const text = lines('m', 'x', 'm', 'x', 'm');
    expect(scan(whole(text, 'm')).endLine).toBe(6);
    expect(scan(whole('a\nb', 'z')).endLine).toBe(2);
    const two = scan(whole(text, 'm', { maxMatches: 2 }));
    expect(two).toMatchObject({ stoppedBy: 'matches', stoppedAt: { offset: 6, line: 4 }, endLine: null });
    // The last line matching as the last allowed: nothing is left, so it did not stop early.
    expect(scan(whole(text, 'm', { maxMatches: 3 }))).toMatchObject({ stoppedBy: null, stoppedAt: null, endLine: 6 });
  });

  it('stops at its time bound between stretches, saying where', () => {
    const text = 'x\n'.repeat(400_000);
    const result = scan(whole(text, 'y', { budgetMs: -1 }));
    // One stretch (256 Ki characters, to a line's end) is always scanned, so a search stopped by time moves on.
    expect(result).toMatchObject({ stoppedBy: 'time', stoppedAt: { offset: 262_144, line: 131_073 }, matches: [] });
  });
});

describe('context lines', () => {
  const text = lines('one', 'two', 'three', 'FOUR', 'five', 'six');
  it.each<[number, string[], string[]]>([
    [0, [], []],
    [1, ['three'], ['five']],
    [2, ['two', 'three'], ['five', 'six']],
    [5, ['one', 'two', 'three'], ['five', 'six']],
  ])('context %d', (context, before, after) => {
    const [m] = scan(whole(text, 'FOUR', { context })).matches;
    expect(m).toMatchObject({ line: 4, before, after });
  });

  it('gives an empty line before as context, the first line of the text too', () => {
    expect(scan(whole('\nX\n', 'X', { context: 2 })).matches).toEqual([{ line: 2, offset: 1, text: 'X', before: [''], after: [] }]);
    expect(scan(whole('\n\nX\n\n', 'X', { context: 1 })).matches[0]).toMatchObject({ line: 3, before: [''], after: [''] });
  });

  it('shows context lines as read (no colours, no CR) and a very long line cut around its match', () => {
    const long = `${'a'.repeat(10_000)}TARGET${'b'.repeat(10_000)}`;
    const [m] = scan(whole(`\x1b[2mctx\x1b[0m\r\n${long}\r\n${'c'.repeat(1000)}\n`, 'TARGET', { context: 1 })).matches;
    expect(m!.before).toEqual(['ctx']);
    expect(m!.after).toEqual([`${'c'.repeat(300)}…`]);
    expect(m!.text).toMatch(/^…a{200}TARGETb{294}…$/);
    // After the first line's 13 characters (its colours and CR counted: offsets are the kept text's).
    expect(m!.offset).toBe(13 + 10_000);
  });
});

describe('a gap in the middle (the cap kept head and tail)', () => {
  const dropped = 123_456;
  const head = lines('h1', 'error in head', 'h3');
  const tail = lines('t1', 'error in tail');
  const text = `${head.slice(0, -1)}${droppedMarker(dropped)}${tail}`;
  const gap = gapIn(text, dropped)!;

  it('is found where the marker is, and its marker line never matches', () => {
    expect(gap.start).toBe(head.length - 1);
    expect(text.slice(gap.start, gap.end)).toBe(droppedMarker(dropped));
    const { matches } = scan(whole(text, 'error|dropped|warden', { gap }));
    // The marker line is line 4: lines after it are numbered in the kept text.
    expect(found(matches)).toEqual([
      [2, 3, 'error in head'],
      [6, text.indexOf('error in tail'), 'error in tail'],
    ]);
    expect(countLines(text, 0, gap.start + 1) + 1).toBe(4);
    expect(text.split('\n')[3]).toBe(`[warden: ${(123_456).toLocaleString('en-US')} characters dropped here]`);
  });

  it("keeps the lines on either side of the marker: the head's last line end and the tail's first line start", () => {
    // `$` matches (empty) at the end of each line: the head's last one ends where the marker's line break is.
    expect(scan(whole(text, '$', { gap })).matches.map((m) => m.line)).toEqual([1, 2, 3, 5, 6]);
    expect(found(scan(whole(text, '^t1', { gap })).matches)).toEqual([[5, gap.end, 't1']]);
  });

  it('is none when nothing was dropped, or the marker is not there', () => {
    expect(gapIn(text, 0)).toBeNull();
    expect(gapIn(text, 99)).toBeNull();
  });
});

describe('visible text and its map back to the kept text', () => {
  it.each<[string, string, number[]]>([
    ['plain', 'plain', [0, 1, 5]],
    ['\x1b[1mB\x1b[0m', 'B', [4, 9]],
    ['a\r\nb', 'a\nb', [0, 2, 3, 4]],
    ['\x1b[31m\x1b[1mX', 'X', [9, 10]],
  ])('%j reads %j', (raw, shown, rawAt) => {
    const v = visible(raw);
    expect(v.text).toBe(shown);
    const indexes = shown === 'plain' ? [0, 1, 5] : Array.from({ length: shown.length + 1 }, (_, i) => i);
    expect(indexes.map((i) => v.raw(i))).toEqual(rawAt);
  });

  it('refuses a bad regular expression at compile, and escapes a literal for the u flag', () => {
    expect(() => compile('(a', false, false)).toThrow(SyntaxError);
    expect(compile('a-b/c.d', true, false).test('a-b/c.d')).toBe(true);
    expect(compile('a-b/c.d', true, false).source).toBe('a-b\\/c\\.d');
  });
});

describe('the pages of a search put end to end equal one large call', () => {
  // What the host does between calls (search.ts): a region of about `budget` characters with context lines
  // around it, matching from the line the last call stopped at.
  function paged(text: string, pattern: string, options: { budget: number; maxMatches: number; context: number; literal?: boolean }): ScanMatch[] {
    const all: ScanMatch[] = [];
    let from = 0;
    let line = 1;
    for (let calls = 0; from < text.length; calls++) {
      if (calls > 10_000) throw new Error('no progress');
      const r = regionFor(text, from, options.budget, options.context);
      const result = scan({ ...whole(text.slice(r.base, r.end), pattern, { literal: options.literal ?? false, context: options.context, maxMatches: options.maxMatches }), base: r.base, scanFrom: r.scanFrom, scanTo: r.scanTo, fromLine: line });
      all.push(...result.matches);
      if (result.stoppedAt) ({ offset: from, line } = result.stoppedAt);
      else {
        from = r.scanTo;
        line = result.endLine!;
      }
    }
    return all;
  }

  const text = Array.from({ length: 5000 }, (_, i) => {
    if (i % 97 === 0) return `\x1b[31mERROR\x1b[0m ${i}\r`;
    if (i % 131 === 0) return `warn \uFFFD ${i}`;
    return `info ${i} ${'.'.repeat(i % 50)}`;
  }).join('\n');

  it.each([
    { budget: 1, maxMatches: 200, context: 2 },
    { budget: 777, maxMatches: 3, context: 2 },
    { budget: 10_000, maxMatches: 1, context: 0 },
    { budget: 50_000_000, maxMatches: 7, context: 20 },
    { budget: 4096, maxMatches: 200, context: 5, literal: true },
  ])('budget $budget, maxMatches $maxMatches, context $context', (options) => {
    const pattern = options.literal ? 'ERROR' : 'ERROR|warn';
    const one = scan(whole(text, pattern, { context: options.context, literal: options.literal ?? false })).matches;
    expect(one.length).toBeGreaterThan(options.literal ? 50 : 80);
    expect(paged(text, pattern, options)).toEqual(one);
  });
});
