import { describe, expect, it } from 'vitest';
import { addMark, markAt, mergeLines, readMarks, splitMarks, streamOffset, type OutputMark } from './output-times';

describe('output marks', () => {
  it('takes a mark when the stream changes or 100 ms after the last of the same stream', () => {
    const marks: OutputMark[] = [];
    addMark(marks, 'stdout', 0, 0);
    addMark(marks, 'stdout', 10, 50); // same stream, soon: folded
    addMark(marks, 'stderr', 0, 60);
    addMark(marks, 'stdout', 20, 70);
    addMark(marks, 'stdout', 30, 200);
    expect(marks).toEqual([
      [0, 0, 0],
      [1, 0, 60],
      [0, 20, 70],
      [0, 30, 200],
    ]);
    expect(readMarks({ marks })).toEqual(marks);
    expect(readMarks({ marks: [[2, 0, 0]] })).toBeNull();
  });

  it('finds the mark of a character and maps kept positions past a cut into the stream', () => {
    const [out] = splitMarks([
      [0, 0, 0],
      [1, 0, 5],
      [0, 100, 10],
    ]);
    expect(markAt(out, 0)).toBe(0);
    expect(markAt(out, 99)).toBe(0);
    expect(markAt(out, 100)).toBe(1);
    expect(out.seqs).toEqual([0, 2]);
    const cut = { at: 50, length: 40, dropped: 1000 };
    expect(streamOffset(10, cut)).toBe(10);
    expect(streamOffset(60, cut)).toBe(50);
    expect(streamOffset(95, cut)).toBe(1055);
    expect(streamOffset(95, null)).toBe(95);
  });

  it('merges lines in arrival order, stdout first on a tie', () => {
    // stdout lines came with marks 0, 0, 2; stderr lines with marks 1, 3.
    const seq = [
      [0, 0, 2],
      [1, 3],
    ];
    const merged = mergeLines([3, 2], (s, l) => seq[s]![l]!);
    expect([...merged.streams]).toEqual([0, 0, 1, 0, 1]);
    expect([...merged.lines]).toEqual([0, 1, 0, 2, 1]);
  });
});
