// The live output merge as tables: a snapshot's base (nothing cut, stdout
// cut, stderr cut, both cut), a chunk onto it (held already, overlapping, at
// the end, past it: a gap), a run of chunks, the base a fresh snapshot gets,
// the ended run's exact output, line counts and the page's cap. The store
// applying them to real events is store.test.ts.

import { describe, expect, it } from 'vitest';
import type { RunResult } from '../../../shared/result';
import { droppedMarker } from '../../../shared/stream-length';
import { appendAt, baseOf, capLive, endOf, exactOutput, LIVE_HEAD, LIVE_OUTPUT_CAP, lineCount, mergeChunks, snapshotBase, type Chunk, type LiveOutput, type Snapshot } from './live-output';

const snap = (stdout: string, stderr: string, stdoutTruncated = 0, stderrTruncated = 0): Snapshot => ({ stdout, stderr, stdoutTruncated, stderrTruncated });
const live = (stdout: string, stderr: string, stdoutEnd = stdout.length, stderrEnd = stderr.length, extra: Partial<LiveOutput> = {}): LiveOutput => ({
  stdout,
  stderr,
  stdoutLines: lineCount(stdout),
  stderrLines: lineCount(stderr),
  stdoutEnd,
  stderrEnd,
  ...extra,
});
const cutText = (head: string, dropped: number, tail: string) => `${head}${droppedMarker(dropped)}${tail}`;
// stdout cut by the engine: 1,000 characters dropped between "head" and "tail" (4 + 1000 + 4 = 1008).
const CUT_OUT = cutText('head', 1000, 'tail');
// stderr cut: 2,000 dropped between "H" and "T\n" (1 + 2000 + 2 = 2003).
const CUT_ERR = cutText('H', 2000, 'T\n');

describe('a snapshot as the base', () => {
  it.each<[string, Snapshot, Pick<LiveOutput, 'stdoutEnd' | 'stderrEnd' | 'stdoutLines' | 'stderrLines'>]>([
    ['nothing cut', snap('a\nb', ''), { stdoutEnd: 3, stderrEnd: 0, stdoutLines: 2, stderrLines: 0 }],
    ['stdout cut: its end counts the dropped characters, stderr ends at its text', snap(CUT_OUT, 'E1\n', 1000), { stdoutEnd: 1008, stderrEnd: 3, stdoutLines: 3, stderrLines: 1 }],
    ['stderr cut: its end counts the dropped characters, stdout ends at its text', snap('o\n', CUT_ERR, 0, 2000), { stdoutEnd: 2, stderrEnd: 2003, stdoutLines: 1, stderrLines: 3 }],
    ['both cut, each by its own count', snap(CUT_OUT, CUT_ERR, 1000, 2000), { stdoutEnd: 1008, stderrEnd: 2003, stdoutLines: 3, stderrLines: 3 }],
    ['a cut whose marker the text does not hold (the head alone kept): the text and the count', snap('tail', 'x', 5, 7), { stdoutEnd: 9, stderrEnd: 8, stdoutLines: 1, stderrLines: 1 }],
    ['no truncation fields (an older host): nothing cut', { stdout: 'ab', stderr: 'c' } as Snapshot, { stdoutEnd: 2, stderrEnd: 1, stdoutLines: 1, stderrLines: 1 }],
  ])('%s', (_name, run, want) => {
    expect(baseOf(run)).toStrictEqual({ stdout: run.stdout, stderr: run.stderr, ...want });
  });
});

describe('where a stream ends', () => {
  it.each<[Chunk['stream'], number]>([
    ['stdout', 5],
    ['stderr', 9],
  ])('%s', (stream, end) => {
    expect(endOf(live('', '', 5, 9), stream)).toBe(end);
  });
});

describe('a chunk onto what the page holds', () => {
  const cutOut = baseOf(snap(CUT_OUT, 'E1\n', 1000));
  const cutErr = baseOf(snap('o\n', CUT_ERR, 0, 2000));
  const cutBoth = baseOf(snap(CUT_OUT, CUT_ERR, 1000, 2000));
  // 'same': the very object back (nothing new); 'gap': something before the chunk is missing.
  it.each<[string, LiveOutput, Chunk, LiveOutput | 'same' | 'gap']>([
    ['appended at the end of an empty stdout', live('', ''), { stream: 'stdout', offset: 0, text: 'ab\n' }, { ...live('ab\n', ''), stdoutOpen: false }],
    ['appended at the end of an empty stderr, stdout untouched', live('o\n', ''), { stream: 'stderr', offset: 0, text: 'x' }, { ...live('o\n', 'x'), stderrOpen: true }],
    ['held whole already (sent before the snapshot was taken)', live('abc', ''), { stream: 'stdout', offset: 0, text: 'ab' }, 'same'],
    ['held to its last character', live('abc', ''), { stream: 'stdout', offset: 1, text: 'bc' }, 'same'],
    ['overlapping: only the new part', live('abc', ''), { stream: 'stdout', offset: 1, text: 'bcde' }, { ...live('abcde', ''), stdoutOpen: true }],
    ['starting exactly at the end', live('abc', ''), { stream: 'stdout', offset: 3, text: 'd' }, { ...live('abcd', ''), stdoutOpen: true }],
    ['past the end: a gap', live('abc', ''), { stream: 'stdout', offset: 4, text: 'e' }, 'gap'],
    ['empty, at the end: nothing', live('abc', ''), { stream: 'stdout', offset: 3, text: '' }, 'same'],
    ['empty, past the end: still a gap', live('abc', ''), { stream: 'stdout', offset: 5, text: '' }, 'gap'],
    // Each stream by its own end: stdout ends at 6, stderr at 1.
    ['stderr past its own end (stdout is longer): a gap', live('abcdef', 'x'), { stream: 'stderr', offset: 3, text: 'yz' }, 'gap'],
    ['stdout overlapping by its own end, not stderr\'s', live('abcdef', 'x'), { stream: 'stdout', offset: 1, text: 'bcdefg' }, { ...live('abcdefg', 'x'), stdoutOpen: true }],
    ['stderr overlapping by its own end, not stdout\'s', live('x', 'abcdef'), { stream: 'stderr', offset: 4, text: 'efg\n' }, { ...live('x', 'abcdefg\n'), stderrOpen: false }],
    // The engine cut stdout: stderr's offsets are its own and still meet its text.
    ['stdout cut: a stderr chunk at stderr\'s end is appended', cutOut, { stream: 'stderr', offset: 3, text: 'E2\n' }, { ...cutOut, stderr: 'E1\nE2\n', stderrLines: 2, stderrOpen: false, stderrEnd: 6 }],
    ['stdout cut: a stdout chunk at its end (dropped ones counted) is appended', cutOut, { stream: 'stdout', offset: 1008, text: '!\n' }, { ...cutOut, stdout: `${CUT_OUT}!\n`, stdoutLines: 3, stdoutOpen: false, stdoutEnd: 1010 }],
    ['stdout cut: a stdout chunk the snapshot partly holds adds the rest', cutOut, { stream: 'stdout', offset: 1006, text: 'il+' }, { ...cutOut, stdout: `${CUT_OUT}+`, stdoutOpen: true, stdoutEnd: 1009 }],
    ['stdout cut: a stdout chunk at its kept length is held already', cutOut, { stream: 'stdout', offset: CUT_OUT.length - 4, text: 'tail' }, 'same'],
    ['stderr cut: a stdout chunk at stdout\'s end is appended', cutErr, { stream: 'stdout', offset: 2, text: 'p\n' }, { ...cutErr, stdout: 'o\np\n', stdoutLines: 2, stdoutOpen: false, stdoutEnd: 4 }],
    ['stderr cut: a stderr chunk at its end is appended', cutErr, { stream: 'stderr', offset: 2003, text: 'U' }, { ...cutErr, stderr: `${CUT_ERR}U`, stderrLines: 4, stderrOpen: true, stderrEnd: 2004 }],
    ['stderr cut: a stderr chunk past its end is a gap', cutErr, { stream: 'stderr', offset: 2004, text: 'U' }, 'gap'],
    ['both cut: a stderr chunk at its end is appended', cutBoth, { stream: 'stderr', offset: 2003, text: 'U\n' }, { ...cutBoth, stderr: `${CUT_ERR}U\n`, stderrLines: 4, stderrOpen: false, stderrEnd: 2005 }],
    ['both cut: a stdout chunk at its end is appended', cutBoth, { stream: 'stdout', offset: 1008, text: '\n' }, { ...cutBoth, stdout: `${CUT_OUT}\n`, stdoutLines: 3, stdoutOpen: false, stdoutEnd: 1009 }],
    ['both cut: a stdout chunk at stderr\'s end is a gap', cutBoth, { stream: 'stdout', offset: 2003, text: 'x' }, 'gap'],
    // Line counts: an unfinished last line is counted once, whichever chunk finishes it.
    ['a line finished by the chunk is counted once', live('a', ''), { stream: 'stdout', offset: 1, text: 'b\nc' }, { ...live('ab\nc', ''), stdoutOpen: true }],
    ['a new line after a finished one', live('a\n', ''), { stream: 'stdout', offset: 2, text: 'b' }, { ...live('a\nb', ''), stdoutOpen: true }],
    ['the first line of an empty stream', live('', ''), { stream: 'stdout', offset: 0, text: 'b' }, { ...live('b', ''), stdoutOpen: true }],
    ['stdout: what the chunks said of the last line wins over the text', live('a\n', '', 2, 0, { stdoutOpen: true, stdoutLines: 1 }), { stream: 'stdout', offset: 2, text: 'b\n' }, { ...live('a\nb\n', '', 4, 0, { stdoutLines: 1 }), stdoutOpen: false }],
    ['stderr: what the chunks said of the last line wins over the text', live('', 'a\n', 0, 2, { stderrOpen: true, stderrLines: 1 }), { stream: 'stderr', offset: 2, text: 'b\n' }, { ...live('', 'a\nb\n', 0, 4, { stderrLines: 1 }), stderrOpen: false }],
    ['stderr: an open line the chunks saw, finished', live('', 'a', 0, 1, { stderrOpen: false, stderrLines: 5 }), { stream: 'stderr', offset: 1, text: 'b' }, { ...live('', 'ab', 0, 2, { stderrLines: 6 }), stderrOpen: true }],
  ])('%s', (_name, current, chunk, want) => {
    const got = appendAt(current, chunk.stream, chunk.offset, chunk.text);
    if (want === 'same') expect(got).toBe(current);
    else if (want === 'gap') expect(got).toBe('gap');
    else expect(got).toStrictEqual(want);
  });

  it('caps the stream it grows past the page\'s cap, keeping the count of lines and the end', () => {
    const full = live('x'.repeat(LIVE_OUTPUT_CAP), 'e');
    const got = appendAt(full, 'stdout', LIVE_OUTPUT_CAP, 'y\n');
    expect(got).not.toBe('gap');
    const next = got as LiveOutput;
    expect(next.stdout.length).toBeLessThan(LIVE_OUTPUT_CAP);
    expect(next.stdout.endsWith('xy\n')).toBe(true);
    expect(next).toMatchObject({ stdoutLines: 1, stdoutOpen: false, stdoutEnd: LIVE_OUTPUT_CAP + 2, stderr: 'e', stderrEnd: 1 });
  });
});

describe('chunks onto a base in order', () => {
  const base = live('ab', 'E');
  it.each<[string, Chunk[], LiveOutput, number]>([
    ['none: the base itself', [], base, -1],
    ['both streams in turn', [{ stream: 'stdout', offset: 2, text: 'c\n' }, { stream: 'stderr', offset: 1, text: 'F' }], { ...live('abc\n', 'EF'), stdoutOpen: false, stderrOpen: true }, -1],
    ['those the base holds skipped', [{ stream: 'stdout', offset: 0, text: 'ab' }, { stream: 'stdout', offset: 2, text: 'c' }], { ...live('abc', 'E'), stdoutOpen: true }, -1],
    ['stopped at the first gap, the ones after it left to wait even where they would fit', [{ stream: 'stdout', offset: 2, text: 'c' }, { stream: 'stdout', offset: 9, text: 'z' }, { stream: 'stderr', offset: 1, text: 'F' }], { ...live('abc', 'E'), stdoutOpen: true }, 1],
    ['a gap first: nothing merged', [{ stream: 'stderr', offset: 2, text: 'G' }], base, 0],
  ])('%s', (_name, chunks, output, gapAt) => {
    const got = mergeChunks(base, chunks);
    expect(got.gapAt).toBe(gapAt);
    expect(got.output).toStrictEqual(output);
    if (output === base) expect(got.output).toBe(base);
  });

  it('stdout cut: stderr chunks after it are all merged, none dropped', () => {
    const cut = baseOf(snap(CUT_OUT, '', 1000));
    const got = mergeChunks(cut, [
      { stream: 'stdout', offset: 1008, text: 'o1\n' },
      { stream: 'stderr', offset: 0, text: 'e1\n' },
      { stream: 'stderr', offset: 3, text: 'e2\n' },
    ]);
    expect(got.gapAt).toBe(-1);
    expect(got.output.stderr).toBe('e1\ne2\n');
    expect(got.output.stdout).toBe(`${CUT_OUT}o1\n`);
  });
});

describe('the base a fresh snapshot gets', () => {
  const run = snap('abc', 'de');
  it.each<[string, LiveOutput | undefined, 'held' | 'fresh']>([
    ['nothing held: the snapshot', undefined, 'fresh'],
    ['held further on both streams: what is held', live('abcd', 'def'), 'held'],
    ['held exactly as far: what is held', live('abc', 'de'), 'held'],
    ['held less of stdout: the snapshot', live('ab', 'def'), 'fresh'],
    ['held less of stderr: the snapshot', live('abcd', 'd'), 'fresh'],
  ])('%s', (_name, current, want) => {
    const got = snapshotBase(current, run);
    if (want === 'held') expect(got).toBe(current);
    else expect(got).toStrictEqual(baseOf(run));
  });

  it('stdout cut: the ends count what was dropped', () => {
    const cut = snap(CUT_OUT, 'e', 1000);
    expect(snapshotBase(live('x', 'e', 1008, 1), cut)).toStrictEqual(live('x', 'e', 1008, 1));
    expect(snapshotBase(live('x', 'e', 1007, 1), cut)).toStrictEqual(baseOf(cut));
  });
});

describe("an ended run's output, exact or not", () => {
  const ended = (fields: Partial<RunResult>): RunResult => ({ stdoutTruncated: 0, stderrTruncated: 0, ...fields }) as RunResult;
  it.each<[string, LiveOutput | undefined, RunResult, { stdout: string; stderr: string } | null]>([
    ['a whole result (no outputChars)', live('a', 'b'), ended({}), null],
    ['stdout cut by the engine', live('a', 'b'), ended({ outputChars: { stdout: 1, stderr: 1 }, stdoutTruncated: 1 }), null],
    ['stderr cut by the engine', live('a', 'b'), ended({ outputChars: { stdout: 1, stderr: 1 }, stderrTruncated: 1 }), null],
    ['nothing streamed here, nothing printed', undefined, ended({ outputChars: { stdout: 0, stderr: 0 } }), { stdout: '', stderr: '' }],
    ['nothing streamed here, stdout printed', undefined, ended({ outputChars: { stdout: 1, stderr: 0 } }), null],
    ['nothing streamed here, stderr printed', undefined, ended({ outputChars: { stdout: 0, stderr: 1 } }), null],
    ['streamed to the end of both', live('ab', 'c'), ended({ outputChars: { stdout: 2, stderr: 1 } }), { stdout: 'ab', stderr: 'c' }],
    ['stdout streamed short of its end', live('a', 'c'), ended({ outputChars: { stdout: 2, stderr: 1 } }), null],
    ['stderr streamed short of its end', live('ab', ''), ended({ outputChars: { stdout: 2, stderr: 1 } }), null],
    ['stdout cut by the page (text shorter than its end)', live('a', 'c', 2, 1), ended({ outputChars: { stdout: 2, stderr: 1 } }), null],
    ['stderr cut by the page (text shorter than its end)', live('ab', 'c', 2, 3), ended({ outputChars: { stdout: 2, stderr: 3 } }), null],
  ])('%s', (_name, held, result, want) => {
    expect(exactOutput(held, result)).toStrictEqual(want);
  });
});

describe('lines a text holds', () => {
  it.each<[string, number]>([
    ['', 0],
    ['a', 1],
    ['\n', 1],
    ['a\nb\n', 2],
    ['a\nb', 2],
    ['\n\n\n', 3],
  ])('%j', (text, n) => {
    expect(lineCount(text)).toBe(n);
  });
});

describe("the page's cap on a live stream", () => {
  const dropped = (text: string) => Number(/\[warden: ([\d,]+) characters not shown while live\]/.exec(text)![1]!.replace(/,/g, ''));
  const marker = (n: number) => `\n[warden: ${n.toLocaleString('en-US')} characters not shown while live]\n`;

  it.each<[string, string, number, number, string]>([
    ['under the cap: whole', 'abc', 10, 2, 'abc'],
    ['at the cap exactly: whole', 'abcdefghij', 10, 2, 'abcdefghij'],
    // Room 300 - 100: the newest 100 kept after the head and the marker.
    ['past the cap: the head, a marker counting what was dropped, the newest half of the room', 'H'.repeat(100) + 'x'.repeat(200) + 'T'.repeat(100), 300, 100, 'H'.repeat(100) + marker(200) + 'T'.repeat(100)],
    ['an odd room: its half rounded down', 'H'.repeat(10) + 'x'.repeat(30), 21, 10, 'H'.repeat(10) + marker(25) + 'x'.repeat(5)],
    ['cut again: the count adds up, one marker', 'H'.repeat(10) + marker(1234) + 'y'.repeat(50), 40, 10, 'H'.repeat(10) + marker(1234 + 35) + 'y'.repeat(15)],
    ['a marker the run printed itself, not where the cap puts it, is text', 'H'.repeat(10) + 'z' + marker(7) + 'y'.repeat(50), 40, 10, 'H'.repeat(10) + marker(1 + marker(7).length + 35) + 'y'.repeat(15)],
  ])('%s', (_name, text, cap, head, want) => {
    expect(capLive(text, cap, head)).toBe(want);
  });

  it('a room smaller than the marker: the count never goes down', () => {
    const once = 'H'.repeat(10) + marker(5000) + 'y';
    const got = capLive(once, 20, 10);
    expect(dropped(got)).toBe(5000);
    expect(got.startsWith('H'.repeat(10) + '\n[warden: 5,000 ')).toBe(true);
  });

  it('by default: four million characters whole, one more cut after a head of a million', () => {
    const full = 'x'.repeat(LIVE_OUTPUT_CAP);
    expect(capLive(full)).toBe(full);
    const over = capLive(`${full}y`);
    expect(LIVE_OUTPUT_CAP).toBe(4_000_000);
    expect(LIVE_HEAD).toBe(1_000_000);
    expect(over.indexOf('\n[warden: ')).toBe(1_000_000);
    expect(dropped(over)).toBe(4_000_001 - 1_000_000 - 1_500_000);
    expect(over.endsWith('x'.repeat(1_499_999) + 'y')).toBe(true);
  });
});
