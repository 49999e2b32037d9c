import { describe, expect, it } from 'vitest';
import type { OutputMark } from '../../../../shared/output-times';
import { blankBeforeCut, buildRows, cutOf, markerLineOf, rowMatches, rowsText, streamLineNumber } from './log-rows';
import { EMPTY_INDEX, findMatches, indexLines, rawLine } from './lines';

const index = (text: string) => indexLines(EMPTY_INDEX, text);

describe('the merged log', () => {
  const stdout = 'out1\nout2\nout3\n';
  const stderr = 'err1\nerr2\n';
  // out1 at 0 ms, err1 at 100, out2+out3 at 200 (one chunk), err2 at 300.
  const marks: OutputMark[] = [
    [0, 0, 0],
    [1, 0, 100],
    [0, 5, 200],
    [1, 5, 300],
  ];
  const idx = [index(stdout), index(stderr)] as const;

  it('puts both streams in the order they were written, each line with its time', () => {
    const rows = buildRows('all', [idx[0], idx[1]], [null, null], marks);
    const text = rowsText(rows, (s, l) => rawLine(idx[s], l));
    expect(text).toBe('out1\nerr1\nout2\nout3\nerr2\n');
    expect(Array.from({ length: rows.count }, (_, r) => rows.atMs(r))).toEqual([0, 100, 200, 200, 300]);
    expect(rows.rowOf(1, 1)).toBe(4);
  });

  it('says where the order between the streams is approximate: a switch within one mark spacing', () => {
    // out1 at 0, err1 at 30 (the two pipes read within 100 ms), out2+out3 at 200, err2 at 300.
    const near: OutputMark[] = [
      [0, 0, 0],
      [1, 0, 30],
      [0, 5, 200],
      [1, 5, 300],
    ];
    const rows = buildRows('all', [idx[0], idx[1]], [null, null], near);
    expect(Array.from({ length: rows.count }, (_, r) => rows.approximate(r))).toEqual([false, true, false, false, false]);
    // 100 ms apart or more: in order.
    const apart = buildRows('all', [idx[0], idx[1]], [null, null], marks);
    expect(Array.from({ length: apart.count }, (_, r) => apart.approximate(r))).toEqual([false, false, false, false, false]);
    // One stream shown: nothing to order.
    expect(buildRows('stderr', [idx[0], idx[1]], [null, null], near).approximate(1)).toBe(false);
  });

  it('shows one stream when filtered, still timed', () => {
    const rows = buildRows('stderr', [idx[0], idx[1]], [null, null], marks);
    expect(rows.count).toBe(2);
    expect(rows.atMs(1)).toBe(300);
    expect(rows.rowOf(0, 0)).toBe(-1);
  });

  it('finds matches in both streams, on their rows', () => {
    const rows = buildRows('all', [idx[0], idx[1]], [null, null], marks);
    const matches = rowMatches(rows, [findMatches(idx[0], '2').matches, findMatches(idx[1], '2').matches]);
    expect(matches.map((m) => m.line)).toEqual([2, 4]);
  });

  it('times the lines after a cut from where they were in the stream', () => {
    const kept = 'head\n\n[warden: 1,000 characters dropped here]\ntail\n';
    const cut = cutOf(kept)!;
    expect(cut).toEqual({ at: 5, length: 41, dropped: 1000 });
    const i = index(kept);
    // "tail" starts at kept position cut.at + cut.length, stream offset 5 + 1000.
    const rows = buildRows('stdout', [i, index('')], [cut, null], [
      [0, 0, 0],
      [0, 1005, 5000],
    ]);
    expect(rows.atMs(0)).toBe(0);
    expect(rows.atMs(rows.count - 1)).toBe(5000);
  });

  it('has no times without marks, and merges stdout first', () => {
    const rows = buildRows('all', [idx[0], idx[1]], [null, null], null);
    expect(rows.atMs(0)).toBeNull();
    expect(rowsText(rows, (s, l) => rawLine(idx[s], l))).toBe('out1\nout2\nout3\nerr1\nerr2\n');
  });
});

describe('the merged log while pages still come', () => {
  // out1 at 0 ms, err1 at 100, out2+out3 at 200, err2 at 300, out4 at 400: the whole output.
  const marks: OutputMark[] = [
    [0, 0, 0],
    [1, 0, 100],
    [0, 5, 200],
    [1, 5, 300],
    [0, 15, 400],
  ];
  const whole = ['out1\nout2\nout3\nout4\n', 'err1\nerr2\n'] as const;
  const text = (rows: ReturnType<typeof buildRows>, idx: readonly [ReturnType<typeof index>, ReturnType<typeof index>]) => rowsText(rows, (s, l) => rawLine(idx[s], l));

  it('shows only the rows no line still to come can go before: each a row of the whole, in its place', () => {
    const wholeRows = text(buildRows('all', [index(whole[0]), index(whole[1])], [null, null], marks), [index(whole[0]), index(whole[1])]);
    expect(wholeRows).toBe('out1\nerr1\nout2\nout3\nerr2\nout4\n');
    // Held so far, whether each stream is all here, the rows shown: err2 (300) waits for stdout past out3 (200).
    const cases: [string, string, boolean, boolean, string][] = [
      ['out1\nout2\n', whole[1], false, true, 'out1\nerr1\nout2\n'],
      ['out1\n', whole[1], false, true, 'out1\n'],
      [whole[0], 'err1\n', true, false, 'out1\nerr1\n'],
      [whole[0], '', true, false, ''],
      ['out1\nout2\nout3\n', 'err1\n', false, false, 'out1\nerr1\n'],
      [whole[0], whole[1], true, true, wholeRows],
    ];
    for (const [out, err, outDone, errDone, expected] of cases) {
      const idx = [index(out), index(err)] as const;
      const rows = buildRows('all', [idx[0], idx[1]], [null, null], marks, [outDone, errDone]);
      expect(text(rows, idx), `${JSON.stringify(out)} ${JSON.stringify(err)}`).toBe(expected);
      // Each row shown is where the whole output has it.
      expect(wholeRows.startsWith(expected)).toBe(true);
    }
  });

  it('without times, shows stderr only once stdout is all here (stdout, then stderr), and finds matches only on rows shown', () => {
    const idx = [index('a\nb\n'), index('x\n')] as const;
    const partial = buildRows('all', [idx[0], idx[1]], [null, null], null, [false, true]);
    expect(partial.count).toBe(2);
    expect(partial.rowOf(1, 0)).toBe(-1);
    const found = rowMatches(partial, [findMatches(idx[0], 'b').matches, findMatches(idx[1], 'x').matches]);
    expect(found.map((m) => m.line)).toEqual([1]);
    expect(buildRows('all', [idx[0], idx[1]], [null, null], null, [true, true]).count).toBe(3);
    // One stream shown: its lines are its own, whatever is still to come.
    expect(buildRows('stdout', [idx[0], idx[1]], [null, null], null, [false, false]).count).toBe(2);
  });
});

describe('line numbers after a cut', () => {
  it('number the lines after the marker as they were in the stream, when its total is known', () => {
    // Ten lines, lines 3-8 dropped: kept "1 2" + marker + "9 10".
    const kept = 'l1\nl2\n\n[warden: 18 characters dropped here]\nl9\nl10\n';
    const i = index(kept);
    const marker = markerLineOf(i, cutOf(kept));
    expect(marker).toBe(3);
    const blank = blankBeforeCut(kept, cutOf(kept));
    expect(blank).toBe(true);
    const numbers = Array.from({ length: i.count }, (_, l) => streamLineNumber(l, i.count, marker, 10, blank));
    // "l1", "l2", the empty line the marker's own newline makes (never in the stream), the marker, "l9", "l10".
    expect(numbers).toEqual([1, 2, null, null, 9, 10]);
    expect(streamLineNumber(4, i.count, marker, null)).toBeNull();
    expect(streamLineNumber(1, i.count, -1, null)).toBe(2);
  });
});
