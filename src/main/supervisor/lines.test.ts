// Output to lines: each way a line ends, ANSI escapes removed, an open line
// offered only once its stream is quiet, long lines bounded.

import { describe, expect, it } from 'vitest';
import { LineFeed, MAX_LINE_CHARS, PARTIAL_QUIET_MS, stripAnsi } from './lines';

const ESC = '\x1b';

describe('stripAnsi', () => {
  it.each([
    ['plain', 'plain'],
    [`${ESC}[32mgreen${ESC}[0m`, 'green'],
    [`  ${ESC}[1m${ESC}[36mLocal${ESC}[39m${ESC}[22m:   http://localhost:${ESC}[1m5173${ESC}[22m/`, '  Local:   http://localhost:5173/'],
    [`${ESC}[2K${ESC}[1Gdone`, 'done'],
    [`${ESC}[?25lhidden${ESC}[?25h`, 'hidden'],
    [`${ESC}]0;title\x07after`, 'after'],
    [`${ESC}]8;;http://x${ESC}\\link${ESC}]8;;${ESC}\\`, 'link'],
    [`\x9b31mred`, 'red'],
    [`${ESC}Mup`, 'up'],
    [`${ESC}(Bx`, 'x'],
    [`a${ESC}`, `a${ESC}`],
  ])('%j', (text, plain) => expect(stripAnsi(text)).toBe(plain));
});

function feed() {
  const lines = new LineFeed();
  const seen: [string, string][] = [];
  lines.subscribe((line, stream) => seen.push([stream, line]));
  return { lines, seen };
}

const quiet = () => new Promise((r) => setTimeout(r, PARTIAL_QUIET_MS * 3));

describe('LineFeed', () => {
  it('ends lines at \\n, \\r\\n and a lone \\r, per stream', () => {
    const { lines, seen } = feed();
    lines.push('stdout', 'a\nb\r\nc\rd');
    lines.push('stderr', 'x\n');
    lines.push('stdout', 'e\n');
    expect(seen).toEqual([
      ['stdout', 'a'],
      ['stdout', 'b'],
      ['stdout', 'c'],
      ['stderr', 'x'],
      ['stdout', 'de'],
    ]);
  });

  it('joins a line split across chunks, and removes escapes from the whole line', () => {
    const { lines, seen } = feed();
    lines.push('stdout', `Local: http://localhost:${ESC}[1`);
    lines.push('stdout', 'm5173/\n');
    expect(seen).toEqual([['stdout', 'Local: http://localhost:5173/']]);
  });

  it('offers an open line once the stream is quiet, once, and again when it grows', async () => {
    const { lines, seen } = feed();
    lines.push('stdout', 'Continue? [y/N] ');
    expect(seen).toEqual([]);
    await quiet();
    expect(seen).toEqual([['stdout', 'Continue? [y/N] ']]);
    await quiet();
    expect(seen).toHaveLength(1);
    lines.push('stdout', 'y');
    await quiet();
    expect(seen).toEqual([['stdout', 'Continue? [y/N] '], ['stdout', 'Continue? [y/N] y']]);
    lines.push('stdout', '\n');
    expect(seen.at(-1)).toEqual(['stdout', 'Continue? [y/N] y']);
    expect(seen).toHaveLength(3);
  });

  it('does not offer a banner whose end comes within the quiet time', async () => {
    const { lines, seen } = feed();
    lines.push('stdout', 'Local: http://localhost:51');
    await new Promise((r) => setTimeout(r, PARTIAL_QUIET_MS / 4));
    lines.push('stdout', '73/\n');
    await quiet();
    expect(seen).toEqual([['stdout', 'Local: http://localhost:5173/']]);
  });

  it('reads the open line back from the stream when a listener comes after output nobody listened to', () => {
    let kept = '';
    const lines = new LineFeed(() => kept);
    kept += 'first\nsecond ha';
    lines.push('stdout', 'first\nsecond ha');
    const seen: string[] = [];
    lines.subscribe((line) => seen.push(line));
    lines.push('stdout', 'lf\n');
    expect(seen).toEqual(['second half']);
  });

  it('offers a line left open before anyone listened (a prompt) once the stream is quiet', async () => {
    const lines = new LineFeed((stream) => (stream === 'stdout' ? 'Password: ' : ''), true);
    const seen: string[] = [];
    lines.subscribe((line) => seen.push(line));
    expect(seen).toEqual([]);
    await quiet();
    expect(seen).toEqual(['Password: ']);
  });

  it('reads nothing back when the stream ended its line, or had no output', () => {
    const lines = new LineFeed(() => 'done\r');
    lines.push('stdout', 'done\r');
    const seen: string[] = [];
    lines.subscribe((line) => seen.push(line));
    lines.push('stdout', 'next\n');
    lines.push('stderr', 'err\n');
    expect(seen).toEqual(['next', 'err']);
  });

  it('offers the open lines at the end, and nothing after unsubscribing', () => {
    const { lines, seen } = feed();
    lines.push('stderr', 'no newline');
    lines.end();
    expect(seen).toEqual([['stderr', 'no newline']]);
    const later = new LineFeed();
    const got: string[] = [];
    const off = later.subscribe((line) => got.push(line));
    off();
    expect(later.listening).toBe(false);
    later.push('stdout', 'a\n');
    expect(got).toEqual([]);
  });

  it('keeps at most MAX_LINE_CHARS of a line', () => {
    const { lines, seen } = feed();
    lines.push('stdout', 'x'.repeat(MAX_LINE_CHARS + 10));
    lines.push('stdout', 'yyy\n');
    expect(seen[0]![1]).toHaveLength(MAX_LINE_CHARS);
  });

  it('a listener that throws does not stop the others', () => {
    const lines = new LineFeed();
    const seen: string[] = [];
    lines.subscribe(() => {
      throw new Error('boom');
    });
    lines.subscribe((line) => seen.push(line));
    lines.push('stdout', 'a\n');
    expect(seen).toEqual(['a']);
  });
});
