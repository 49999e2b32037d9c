import { describe, expect, it, vi } from 'vitest';
import { EMPTY_INDEX, clipSpans, findMatches, foldedLine, indexLines, isDropMarker, lineSpans, markSpans, matchNear, rawLine } from './lines';
import { PLAIN } from './ansi';

const ESC = '\x1b';
const lines = (text: string) => {
  const index = indexLines(EMPTY_INDEX, text);
  return Array.from({ length: index.count }, (_, i) => rawLine(index, i));
};

describe('indexLines', () => {
  it('splits on newlines; a final newline ends the last line', () => {
    expect(lines('')).toEqual([]);
    expect(lines('a')).toEqual(['a']);
    expect(lines('a\nb\n')).toEqual(['a', 'b']);
    expect(lines('a\n\nb')).toEqual(['a', '', 'b']);
    expect(lines('\n')).toEqual(['']);
    expect(lines('a\r\nb\r\n')).toEqual(['a', 'b']);
  });

  it('extends incrementally and matches a full scan', () => {
    const chunks = ['one\ntw', 'o\nthr', 'ee', '\n', `${ESC}[31mred\nstill`, ` red${ESC}[0m\nplain\n`];
    let index = EMPTY_INDEX;
    let text = '';
    for (const chunk of chunks) {
      text += chunk;
      index = indexLines(index, text);
      const full = indexLines(EMPTY_INDEX, text);
      expect(index.starts).toEqual(full.starts);
      expect(index.styles).toEqual(full.styles);
      expect(index.count).toBe(full.count);
      expect(index.maxLength).toBe(full.maxLength);
    }
    expect(index.count).toBe(6);
    expect(lineSpans(index, 4)[0]!.style.fg).toBe(1);
    expect(index.styles[5]).toBe(PLAIN);
  });

  it('says from which line it changed', () => {
    const a = indexLines(EMPTY_INDEX, 'x\ny');
    const b = indexLines(a, 'x\nyz\n');
    expect(b.changedFrom).toBe(1);
    const c = indexLines(b, 'x\nyz\nw');
    expect(c.changedFrom).toBe(2);
  });

  it('starts over when the text is replaced rather than extended', () => {
    const a = indexLines(EMPTY_INDEX, 'abc\ndef\n');
    const b = indexLines(a, 'abc\n[warden: 3 characters dropped here]\nxyz\n');
    expect(b.count).toBe(3);
    expect(b.changedFrom).toBe(0);
  });

  it('indexes lines appended a frame at a time in linear time: twice the lines, twice the scanning', () => {
    // The work is counted, not timed: each search for a newline or an escape is one String#indexOf.
    const scans = vi.spyOn(String.prototype, 'indexOf');
    const scansFor = (lines: number): number => {
      let index = EMPTY_INDEX;
      let text = '';
      scans.mockClear();
      for (let frame = 0; frame < lines / 100; frame++) {
        for (let i = 0; i < 100; i++) text += `line ${frame * 100 + i} ${ESC}[31mred${ESC}[0m\n`;
        index = indexLines(index, text);
        if (scans.mock.calls.length > 10 * lines) return scans.mock.calls.length; // far past linear: the checks below fail
      }
      expect(index.count).toBe(lines);
      expect(rawLine(index, lines - 1)).toBe(`line ${lines - 1} ${ESC}[31mred${ESC}[0m`);
      return scans.mock.calls.length;
    };
    try {
      const half = scansFor(20_000);
      const whole = scansFor(40_000);
      // About three per line (a newline, an escape, the style after it) and a few per frame.
      expect(whole).toBeLessThanOrEqual(4 * 40_000);
      expect(whole / half).toBeLessThan(2.2);
    } finally {
      scans.mockRestore();
    }
  });
});

describe('search', () => {
  const index = indexLines(EMPTY_INDEX, `Alpha beta\n${ESC}[31mALPHA${ESC}[0m alpha\nnone\n`);

  it('finds case-insensitive matches in the plain text, in order', () => {
    expect(foldedLine(index, 1)).toBe('alpha alpha');
    expect(findMatches(index, 'alpha').matches).toEqual([
      { line: 0, start: 0, end: 5 },
      { line: 1, start: 0, end: 5 },
      { line: 1, start: 6, end: 11 },
    ]);
    expect(findMatches(index, '').matches).toEqual([]);
  });

  it('caps the matches it keeps', () => {
    expect(findMatches(index, 'a', 2)).toMatchObject({ capped: true, matches: [{ line: 0 }, { line: 0 }] });
  });

  it('finds the first match at or after a line, wrapping', () => {
    const { matches } = findMatches(index, 'alpha');
    expect(matchNear(matches, 0)).toBe(0);
    expect(matchNear(matches, 1)).toBe(1);
    expect(matchNear(matches, 2)).toBe(0);
    expect(matchNear([], 2)).toBe(-1);
  });
});

describe('markSpans', () => {
  const red = { fg: 1, bg: null, bold: false };
  const spans = [
    { text: 'hello ', style: PLAIN },
    { text: 'world', style: red },
  ];

  it('splits spans at range edges and marks the inside', () => {
    expect(markSpans(spans, [{ start: 4, end: 8, mark: 2 }])).toEqual([
      { text: 'hell', style: PLAIN, mark: 0 },
      { text: 'o ', style: PLAIN, mark: 2 },
      { text: 'wo', style: red, mark: 2 },
      { text: 'rld', style: red, mark: 0 },
    ]);
  });

  it('handles several ranges and none', () => {
    expect(markSpans(spans, []).every((s) => s.mark === 0)).toBe(true);
    const marked = markSpans(spans, [
      { start: 0, end: 1, mark: 1 },
      { start: 6, end: 11, mark: 2 },
    ]);
    expect(marked.map((s) => [s.text, s.mark])).toEqual([
      ['h', 1],
      ['ello ', 0],
      ['world', 2],
    ]);
  });
});

describe('clipSpans and markers', () => {
  it('clips long lines and counts what it left out', () => {
    const { spans, omitted } = clipSpans([{ text: 'abcdef', style: PLAIN }, { text: 'ghij', style: PLAIN }], 7);
    expect(spans.map((s) => s.text)).toEqual(['abcdef', 'g']);
    expect(omitted).toBe(3);
  });

  it('knows the truncation marker', () => {
    expect(isDropMarker('[warden: 940 characters dropped here]')).toBe(true);
    expect(isDropMarker('[warden: 1,234,567 characters dropped here]')).toBe(true);
    expect(isDropMarker('say [warden: 940 characters dropped here]')).toBe(false);
  });
});

describe('search options', () => {
  const index = indexLines(EMPTY_INDEX, 'Error: disk\nerror: net\n\x1b[31mERROR\x1b[0m 42\n');
  it('ignores case by default, matches it when asked', () => {
    expect(findMatches(index, 'error').matches.map((m) => m.line)).toEqual([0, 1, 2]);
    expect(findMatches(index, 'error', 100, { caseSensitive: true }).matches.map((m) => m.line)).toEqual([1]);
  });

  it('takes a regular expression, in the plain text (colours stripped), and says when it does not compile', () => {
    expect(findMatches(index, '^e\\w+:', 100, { regex: true }).matches).toEqual([
      { line: 0, start: 0, end: 6 },
      { line: 1, start: 0, end: 6 },
    ]);
    expect(findMatches(index, 'R \\d+$', 100, { regex: true, caseSensitive: true }).matches).toEqual([{ line: 2, start: 4, end: 8 }]);
    expect(findMatches(index, 'x*', 100, { regex: true }).matches).toEqual([]);
    const bad = findMatches(index, '(', 100, { regex: true });
    expect(bad.matches).toEqual([]);
    expect(bad.error).toMatch(/unterminated|Invalid/i);
  });
});

describe('styles at a cut', () => {
  it('start plain at the marker and after it, whatever the head left open', () => {
    const i = indexLines(EMPTY_INDEX, '\x1b[4mline 7\n[warden: 1,394 characters dropped here]\nline 95\n');
    expect(i.styles[0]).toBe(PLAIN);
    expect(i.styles[1]).toBe(PLAIN);
    expect(i.styles[2]).toBe(PLAIN);
  });
});
