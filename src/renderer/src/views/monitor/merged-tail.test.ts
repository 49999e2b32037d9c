import { describe, expect, it } from 'vitest';
import { EMPTY_TAIL, readInto, tagOf, type HeldOutput } from './merged-tail';

const held = (id: string, stdout: string, stderr = '', ends?: [number, number]): HeldOutput => ({ id, stdout, stderr, stdoutEnd: ends?.[0] ?? stdout.length, stderrEnd: ends?.[1] ?? stderr.length });
const texts = (state: ReturnType<typeof readInto>) => state.lines.map((l) => `${l.runId}/${l.stream}:${l.text}`);

describe('a merged tail', () => {
  it('opens on the last few whole lines of each run, then takes what each prints, in the order read, each tagged', () => {
    let tail = readInto(EMPTY_TAIL, [held('a', 'a1\na2\na3\npart'), held('b', '', 'b1\n')], 2);
    expect(texts(tail)).toEqual(['a/stdout:a2', 'a/stdout:a3', 'b/stderr:b1']);
    // The unfinished line waits for its end; a run's new line comes after the other's.
    tail = readInto(tail, [held('a', 'a1\na2\na3\npartial end\na5\n'), held('b', 'b-out\n', 'b1\n')], 2);
    expect(texts(tail).slice(3)).toEqual(['a/stdout:partial end', 'a/stdout:a5', 'b/stdout:b-out']);
    expect(tail.lines.map((l) => l.seq)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('is the same object when nothing was printed', () => {
    const tail = readInto(EMPTY_TAIL, [held('a', 'x\n')]);
    expect(readInto(tail, [held('a', 'x\n')])).toBe(tail);
  });

  it("reads from where the stream ends, past the page's own cut of a long run", () => {
    let tail = readInto(EMPTY_TAIL, [held('a', 'one\n', '', [4, 0])]);
    // The page keeps the head and the tail: the text held is shorter than the stream, its end says where it is.
    tail = readInto(tail, [held('a', 'one\n[cut]\nnine\nten\n', '', [100, 0])]);
    expect(texts(tail)).toEqual(['a/stdout:one', 'a/stdout:[cut]', 'a/stdout:nine', 'a/stdout:ten']);
  });

  it('keeps the newest lines only, past its bound', () => {
    const many = Array.from({ length: 30 }, (_, i) => `l${i}\n`).join('');
    const tail = readInto(readInto(EMPTY_TAIL, [held('a', '')]), [held('a', many)], 10, 5);
    expect(texts(tail)).toEqual(['a/stdout:l25', 'a/stdout:l26', 'a/stdout:l27', 'a/stdout:l28', 'a/stdout:l29']);
  });

  it("tags a run by its program's name and its id's start", () => {
    expect(tagOf({ id: '3f2a99', argv: ['/usr/bin/pytest', '-x'] })).toBe('pytest·3f2a');
    expect(tagOf({ id: 'abcdef', code: 'x' })).toBe('python·abcd');
    expect(tagOf({ id: 'abcdef' })).toBe('run·abcd');
  });
});
