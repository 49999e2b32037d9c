// The cut a model's answer makes (src/cli/model-answer.ts), on the edges a
// real run's output has: line breaks near the cut, characters outside the
// BMP, an answer whose place in the stream is not known, a tight budget.

import { describe, expect, it } from 'vitest';
import type { RunResult } from '../shared/result';
import { answerJson, cutMarker, cutStream, escapeText, fitAdvice, locate, modelAnswerWithin, type Pager } from './model-answer';

const pager: Pager = {
  page: (id, stream, offset) => `show ${id} ${stream} ${offset}`,
  next: (id) => `wait ${id}`,
  stop: (id) => `stop ${id}`,
  waitFor: (id) => `wait ${id} until`,
  send: (id) => `send ${id}`,
};

const marker = (from: number | null, cut: number) => cutMarker(pager, 'abc123', 'stdout', from, cut, null);

function result(stdout: string, stderr = ''): RunResult {
  return {
    id: 'abc123',
    kind: 'command',
    argv: ['x'],
    cwd: '/',
    state: 'ended',
    verdict: 'failed',
    exitCode: 1,
    signal: null,
    startedAt: '2026-01-01T00:00:00.000Z',
    endedAt: '2026-01-01T00:00:01.000Z',
    elapsedMs: 1000,
    limitMs: null,
    advice: 'Read stderr for the error the command reported.',
    notes: [],
    stdout,
    stderr,
    stdoutTruncated: 0,
    stderrTruncated: 0,
  };
}

describe('cutStream', () => {
  it('keeps a stream within the size whole', () => {
    expect(cutStream('abc\n', 10, marker)).toEqual({ text: 'abc\n', cut: 0, chars: 4 });
  });

  it('cuts at line breaks near the cut, and the marker counts exactly what is left out', () => {
    const text = Array.from({ length: 1000 }, (_, i) => `line ${i}\n`).join('');
    const cut = cutStream(text, 1000, marker);
    const [head, tail] = cut.text.split(/\[warden: [^\]]*\]\n/);
    expect(head!.endsWith('\n')).toBe(true);
    expect(tail!.startsWith('line ')).toBe(true);
    expect(text.startsWith(head!)).toBe(true);
    expect(text.endsWith(tail!)).toBe(true);
    expect(head!.length + cut.cut + tail!.length).toBe(text.length);
    expect(cut.text).toContain(`[warden: ${cut.cut.toLocaleString('en-US')} characters of stdout cut here (characters ${head!.length.toLocaleString('en-US')} to ${(head!.length + cut.cut).toLocaleString('en-US')}); read them with show abc123 stdout ${head!.length}]`);
  });

  it('never splits a character outside the BMP', () => {
    const text = '😀'.repeat(5000);
    const cut = cutStream(text, 1004, marker); // head 251 and tail 753 characters: both cuts fall inside a pair
    const [head, tail] = cut.text.split(/\n?\[warden: [^\]]*\]\n/);
    expect(head!.length % 2).toBe(0);
    expect(tail!.length % 2).toBe(0);
    expect(head!.length + cut.cut + tail!.length).toBe(text.length);
  });

  it('an answer whose place in the stream is not known names the call from the start', () => {
    const cut = cutStream('x'.repeat(5000), 1000, marker, null);
    expect(cut.text).toContain('[warden: 4,000 characters of stdout cut here; show abc123 stdout 0 pages the whole stdout from its start]');
  });

  it('offsets of a later answer start where it starts in the stream', () => {
    const cut = cutStream('y'.repeat(5000), 1000, marker, 7000);
    expect(cut.text).toContain('(characters 7,250 to 11,250); read them with show abc123 stdout 7250]');
  });
});

describe('the answer', () => {
  it('fits a budget of JSON by cutting the streams shorter', () => {
    const big = result('z'.repeat(100_000), '\u001b'.repeat(100_000));
    const answer = modelAnswerWithin(big, { streamChars: 8000, pager }, 10_000);
    expect(JSON.stringify(answerJson(answer)).length).toBeLessThanOrEqual(10_000);
    expect(answer.stdout.cut + answer.stderr.cut).toBeGreaterThan(180_000);
  });

  it('escapes & and < only, and control characters as \\xNN', () => {
    expect(escapeText(`<a href="x">'&'</a>\u0000\t`)).toBe(`&lt;a href="x">'&amp;'&lt;/a>\\x00\t`);
  });

  it('gives no stderr advice for a run that printed none', () => {
    expect(fitAdvice('Read stderr for the error the command reported.', false, true)).toBe('It wrote nothing on stderr; the end of stdout may say why.');
    expect(fitAdvice('Read stderr for the error the command reported.', true, true)).toBe('Read stderr for the error the command reported.');
    expect(fitAdvice('Read stderr for why it exited with 3; if a process it ran died of SIGTERM, check what sent that signal.', false, false)).toBe(
      'It exited with 3 and wrote nothing on stderr (it printed nothing on stdout either, so its exit code is all it said); if a process it ran died of SIGTERM, check what sent that signal.',
    );
  });

  it('finds where an answer starts in the kept output only when that is certain', () => {
    expect(locate('abcdef', 'def')).toBe(3);
    expect(locate('abcdef', '')).toBe(6);
    expect(locate('abXabY', 'ab')).toBeNull();
    expect(locate('abcdef', 'zz')).toBeNull();
  });
});
