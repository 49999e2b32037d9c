// The cut a model's answer makes (src/shared/model-answer.ts), on the edges a
// real run's output has: line breaks near the cut, characters outside the
// BMP, an answer whose place in the stream is not known, a tight budget.

import { describe, expect, it } from 'vitest';
import type { RunResult } from './result';
import {
  answerJson,
  answerText,
  cutMarker,
  cutStream,
  DEFAULT_STREAM_CHARS,
  elapsedText,
  envStreamChars,
  escapeText,
  fitAdvice,
  locate,
  MIN_STREAM_CHARS,
  modelAnswer,
  modelAnswerWithin,
  modelCrash,
  StreamCharsError,
  streamCharsFrom,
  type Pager,
} from './model-answer';

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

// Table tests reaching each branch of the cut, the marker and the totals, so
// a one-character slip (an offset, a bound, a swapped stream, a total named
// for a later answer) fails one of them. Expected texts are written out.

/** A marker that shows exactly what cutStream hands it. */
const raw = (from: number | null, cut: number) => `<${from}:${cut}>`;

describe('cutStream, case by case', () => {
  it.each([
    ['exactly the size: whole', 'abcdefghij', 10, 0, { text: 'abcdefghij', cut: 0, chars: 10 }],
    ['one over: a head of a quarter, the rest its tail', 'abcdefghij', 9, 0, { text: 'ab\n<2:1>\ndefghij', cut: 1, chars: 10 }],
    ['a size under 4: no head, no separator', 'abcdef', 3, 0, { text: '<0:3>\ndef', cut: 3, chars: 6 }],
    ['the head moves back to a line break', `xxxxx\n${'y'.repeat(94)}`, 40, 0, { text: `xxxxx\n<6:64>\n${'y'.repeat(30)}`, cut: 64, chars: 100 }],
    ['a later answer: offsets from where it starts', 'abcdefghij', 9, 100, { text: 'ab\n<102:1>\ndefghij', cut: 1, chars: 10 }],
    ['a place not known: no offset', 'abcdefghij', 9, null, { text: 'ab\n<null:1>\ndefghij', cut: 1, chars: 10 }],
  ] as const)('%s', (_what, text, max, base, expected) => {
    expect(cutStream(text, max, raw, base)).toEqual(expected);
  });

  it('looks for the head\'s line break before the cut only (one at the cut is the cut\'s), and from the very first character', () => {
    // The head would end at 250: a line break at 250 is the first character cut, not the head's last.
    expect(cutStream(`${'a'.repeat(250)}\n${'b'.repeat(1749)}`, 1000, raw)).toMatchObject({ cut: 1000, text: `${'a'.repeat(250)}\n<250:1000>\n${'b'.repeat(750)}` });
    expect(cutStream(`${'a'.repeat(249)}\n${'b'.repeat(1750)}`, 1000, raw)).toMatchObject({ cut: 1000, text: `${'a'.repeat(249)}\n<250:1000>\n${'b'.repeat(750)}` });
    // A line break that is the stream's first character is a place to cut too.
    expect(cutStream(`\n${'a'.repeat(99)}`, 40, raw)).toEqual({ cut: 69, chars: 100, text: `\n<1:69>\n${'a'.repeat(30)}` });
  });

  it('moves the head to a line break 200 characters back, not 201', () => {
    const tail = 'b'.repeat(1950);
    // A size of 1,000: the head would end at 250, the tail start at 1,250.
    expect(cutStream(`${'a'.repeat(49)}\n${tail}`, 1000, raw)).toMatchObject({ cut: 1200, text: `${'a'.repeat(49)}\n<50:1200>\n${'b'.repeat(750)}` });
    expect(cutStream(`${'a'.repeat(48)}\n${tail}b`, 1000, raw)).toMatchObject({ cut: 1000, text: `${'a'.repeat(48)}\n${'b'.repeat(201)}\n<250:1000>\n${'b'.repeat(750)}` });
  });

  it('moves the tail to after a line break 200 characters on, not 201, and never to the very end', () => {
    const at = (p: number) => `${'c'.repeat(p)}\n${'c'.repeat(1999 - p)}`;
    expect(cutStream(at(1449), 1000, raw)).toMatchObject({ cut: 1200, text: `${'c'.repeat(250)}\n<250:1200>\n${'c'.repeat(550)}` });
    expect(cutStream(at(1450), 1000, raw)).toMatchObject({ cut: 1000, text: `${'c'.repeat(250)}\n<250:1000>\n${'c'.repeat(200)}\n${'c'.repeat(549)}` });
    // A line break that ends the stream: the tail keeps its last line rather than nothing.
    expect(cutStream(`${'d'.repeat(999)}\n`, 200, raw)).toEqual({ cut: 800, chars: 1000, text: `${'d'.repeat(50)}\n<50:800>\n${'d'.repeat(149)}\n` });
  });

  it.each([
    // Each pair is two code units: a cut inside one moves the head back, the tail on.
    ['U+10000, whose low half is U+DC00 (the range\'s start)', '\u{10000}', 13, { text: `\u{10000}\n<2:8>\n${'\u{10000}'.repeat(5)}`, cut: 8, chars: 20 }],
    ['U+10FFFF, whose low half is U+DFFF (the range\'s end)', '\u{10FFFF}', 12, { text: `\u{10FFFF}\n<2:10>\n${'\u{10FFFF}'.repeat(4)}`, cut: 10, chars: 20 }],
    ['U+E000, past the range: a character of one unit, cut anywhere', '\ue000\ue000', 13, { text: `${'\ue000'.repeat(3)}\n<3:7>\n${'\ue000'.repeat(10)}`, cut: 7, chars: 20 }],
  ])('never splits %s', (_what, unit, max, expected) => {
    expect(cutStream(unit.repeat(20 / unit.length), max, raw)).toEqual(expected);
  });
});

describe('cutMarker', () => {
  it.each([
    ['not known where: the call from the start', null, 4000, 10_000, '[warden: 4,000 characters of stdout cut here; show abc123 stdout 0 pages the whole stdout from its start]'],
    ['a later answer: no total', 250, 1000, null, '[warden: 1,000 characters of stdout cut here (characters 250 to 1,250); read them with show abc123 stdout 250]'],
    ['the whole stream: its total', 2500, 1_500_000, 2_000_000, '[warden: 1,500,000 characters of stdout cut here (characters 2,500 to 1,502,500 of 2,000,000); read them with show abc123 stdout 2500]'],
  ] as const)('%s', (_what, from, cut, total, text) => {
    expect(cutMarker(pager, 'abc123', 'stdout', from, cut, total)).toBe(text);
  });

  it('names the stream it cut', () => {
    expect(cutMarker(pager, 'abc123', 'stderr', 0, 5, 9)).toBe('[warden: 5 characters of stderr cut here (characters 0 to 5 of 9); read them with show abc123 stderr 0]');
  });
});

describe('the answer: markers and totals of first and later answers, both streams', () => {
  const big = { ...result('o'.repeat(10_000), 'e'.repeat(3000)) };
  const markerOf = (text: string) => /\[warden: [^\]]*\]/.exec(text)?.[0];

  it('a first answer (the whole output): each marker names its stream\'s total', () => {
    const answer = modelAnswer(big, { streamChars: 1000, pager });
    expect(markerOf(answer.stdout.text)).toBe('[warden: 9,000 characters of stdout cut here (characters 250 to 9,250 of 10,000); read them with show abc123 stdout 250]');
    expect(markerOf(answer.stderr.text)).toBe('[warden: 2,000 characters of stderr cut here (characters 250 to 2,250 of 3,000); read them with show abc123 stderr 250]');
    expect([answer.stdout.cut, answer.stdout.chars, answer.stderr.cut, answer.stderr.chars]).toEqual([9000, 10_000, 2000, 3000]);
  });

  it('a later answer (from where the last one ended): offsets from there, and no total (it is not the whole stream)', () => {
    const answer = modelAnswer(big, { streamChars: 1000, pager, base: { stdout: 20_000, stderr: 5000 } });
    expect(markerOf(answer.stdout.text)).toBe('[warden: 9,000 characters of stdout cut here (characters 20,250 to 29,250); read them with show abc123 stdout 20250]');
    expect(markerOf(answer.stderr.text)).toBe('[warden: 2,000 characters of stderr cut here (characters 5,250 to 7,250); read them with show abc123 stderr 5250]');
  });

  it('an answer not known where it starts names the call from the start; a base of 0 given is a first answer', () => {
    const answer = modelAnswer(big, { streamChars: 1000, pager, base: { stdout: null, stderr: 0 } });
    expect(markerOf(answer.stdout.text)).toBe('[warden: 9,000 characters of stdout cut here; show abc123 stdout 0 pages the whole stdout from its start]');
    expect(markerOf(answer.stderr.text)).toBe('[warden: 2,000 characters of stderr cut here (characters 250 to 2,250 of 3,000); read them with show abc123 stderr 250]');
  });

  it('a Codex-sized budget (12,000 characters of JSON) on 300,000 lines: within it, and every marker exact', () => {
    const stdout = Array.from({ length: 300_000 }, (_, i) => `${i + 1}\n`).join('');
    const stderr = `${'warn: slow disk\n'.repeat(2000)}boom: it broke\n`;
    const answer = modelAnswerWithin({ ...result(stdout, stderr), exitCode: 7 }, { streamChars: 8000, pager }, 12_000);
    expect(JSON.stringify(answerJson(answer)).length).toBeLessThanOrEqual(12_000);
    for (const [stream, whole] of [['stdout', stdout], ['stderr', stderr]] as const) {
      const shown = answer[stream];
      const at = shown.text.indexOf('[warden: ');
      const m = /^\[warden: ([\d,]+) characters of (\w+) cut here \(characters ([\d,]+) to ([\d,]+) of ([\d,]+)\); read them with show abc123 (\w+) (\d+)\]\n/.exec(shown.text.slice(at))!;
      expect(m, `${stream}: ${shown.text.slice(at, at + 200)}`).not.toBeNull();
      const n = (i: number) => Number(m[i]!.replace(/,/g, ''));
      const [cut, from, to, total, pageFrom] = [n(1), n(3), n(4), n(5), n(7)];
      expect([m[2], m[6]]).toEqual([stream, stream]);
      // The numbers are the stream's: its total, where the cut begins and ends, and the page call from there.
      expect(total).toBe(whole.length);
      expect(to - from).toBe(cut);
      expect(pageFrom).toBe(from);
      expect(shown.cut).toBe(cut);
      const head = whole.slice(0, from);
      expect(shown.text.slice(0, at)).toBe(head === '' || head.endsWith('\n') ? head : `${head}\n`);
      expect(shown.text.slice(at + m[0].length)).toBe(whole.slice(to));
    }
    // Most of the budget is used: each stream shows thousands of characters, not the 200 of its floor.
    expect(answer.stdout.chars - answer.stdout.cut).toBeGreaterThan(2500);
    expect(answer.stderr.chars - answer.stderr.cut).toBeGreaterThan(2500);
    // The error line at stderr's end survives the cut.
    expect(answer.stderr.text.endsWith('boom: it broke\n')).toBe(true);
  });
});

describe('modelAnswerWithin', () => {
  const wide = result('w'.repeat(50_000), 'v'.repeat(50_000));

  it('no budget, or one the answer fits: the answer at the size asked', () => {
    const plain = modelAnswer(wide, { streamChars: 2000, pager });
    expect(modelAnswerWithin(wide, { streamChars: 2000, pager }, null)).toEqual(plain);
    expect(modelAnswerWithin(wide, { streamChars: 2000, pager }, 1_000_000)).toEqual(plain);
    const size = JSON.stringify(answerJson(plain)).length;
    expect(modelAnswerWithin(wide, { streamChars: 2000, pager }, size)).toEqual(plain);
    expect(modelAnswerWithin(wide, { streamChars: 2000, pager }, size - 1).stdout.text.length).toBeLessThan(plain.stdout.text.length);
  });

  it('a budget too small for anything: the streams at their floor (200 characters each), never below', () => {
    const tiny = modelAnswerWithin(wide, { streamChars: 8000, pager }, 10);
    expect(tiny.stdout.chars - tiny.stdout.cut).toBe(MIN_STREAM_CHARS);
    expect(tiny.stderr.chars - tiny.stderr.cut).toBe(MIN_STREAM_CHARS);
  });
});

describe('what the answer says besides the streams', () => {
  const live = (over: Partial<RunResult>): RunResult => ({ ...result('out\n'), state: 'running', verdict: undefined, exitCode: null, advice: null, endedAt: undefined, ...over });

  it.each([
    ['running', live({}), 'It is still running, and keeps going in Warden. Call wait abc123 for more output and how it ends (or stop abc123 to end it).'],
    ['stopping', live({ state: 'stopping' }), 'It is being stopped, and keeps going in Warden. Call wait abc123 for more output and how it ends (or stop abc123 to end it).'],
    ['queued, with its place', live({ state: 'queued', queuePosition: 2, session: 'work' }), 'It is queued (position 2 in session work), and keeps going in Warden. Call wait abc123 for more output and how it ends (or stop abc123 to end it).'],
    ['queued in the default session', live({ state: 'queued', queuePosition: 1 }), 'It is queued (position 1 in session default), and keeps going in Warden. Call wait abc123 for more output and how it ends (or stop abc123 to end it).'],
    ['queued, place unknown', live({ state: 'queued' }), 'It is queued, and keeps going in Warden. Call wait abc123 for more output and how it ends (or stop abc123 to end it).'],
    ['live with advice of its own', live({ advice: 'Its own.' }), 'Its own.'],
  ])('a %s run: its advice, its next call, its verdict', (_what, run, advice) => {
    const answer = modelAnswer(run, { streamChars: 1000, pager });
    expect(answer.advice).toBe(advice);
    expect(answer.next).toBe('wait abc123');
    expect(answer.verdict).toBe(run.state);
  });

  it('an ended run: no next call, its verdict, its advice fitted to what it printed, and earlier answers count as printed', () => {
    const ended = modelAnswer(result('', ''), { streamChars: 1000, pager });
    expect(ended).toMatchObject({ next: null, verdict: 'failed', advice: 'It wrote nothing on stderr; it printed nothing on stdout either, so its exit code is all it said.' });
    expect(modelAnswer(result('x\n', ''), { streamChars: 1000, pager }).advice).toBe('It wrote nothing on stderr; the end of stdout may say why.');
    expect(modelAnswer(result('', ''), { streamChars: 1000, pager, base: { stdout: 0, stderr: 40 } }).advice).toBe('Read stderr for the error the command reported.');
    expect(modelAnswer(result('', ''), { streamChars: 1000, pager, base: { stdout: 12, stderr: 0 } }).advice).toBe('It wrote nothing on stderr; the end of stdout may say why.');
    expect(modelAnswer(result('', 'err\n'), { streamChars: 1000, pager }).advice).toBe('Read stderr for the error the command reported.');
  });

  it('notes what Warden itself did not keep, per stream, after the run\'s own notes', () => {
    const answer = modelAnswer({ ...result('a'), notes: ['Own note.'], stdoutTruncated: 1234, stderrTruncated: 5 }, { streamChars: 1000, pager });
    expect(answer.notes).toEqual([
      'Own note.',
      'Warden kept the head and tail of stdout: 1,234 characters in its middle were not kept.',
      'Warden kept the head and tail of stderr: 5 characters in its middle were not kept.',
    ]);
    expect(modelAnswer({ ...result('a'), stderrTruncated: 7 }, { streamChars: 1000, pager }).notes).toEqual(['Warden kept the head and tail of stderr: 7 characters in its middle were not kept.']);
  });

  it.each([
    [{ elapsedMs: 3500, limitMs: null }, '3.5 s (no limit)'],
    [{ elapsedMs: 12_000, limitMs: 600_000 }, '12 s of a 10 min limit'],
    [{ elapsedMs: 0, limitMs: 0 }, '0 s of a 0 s limit'],
  ])('elapsed %j reads %s', (times, text) => {
    expect(elapsedText(times)).toBe(text);
  });

  it.each([
    [null, true, true, null],
    ['Read stderr for the error the command reported.', true, false, 'Read stderr for the error the command reported.'],
    ['Exit code 2 often means a usage error: check the arguments, then read stderr.', false, true, 'Exit code 2 often means a usage error: check the arguments (nothing was written on stderr; the end of stdout may say why).'],
    ['Raise the limit, or read stderr and the output so far.', false, false, 'Raise the limit, or check its output and the output so far.'],
    ['Nothing about the streams.', false, false, 'Nothing about the streams.'],
    [null, false, false, null],
    // Each rewrite takes its advice whole, not a sentence that only contains its words.
    ['First: Read stderr for the error the command reported.', false, true, 'First: Read stderr for the error the command reported.'],
    ['Read stderr for the error the command reported. Then retry.', false, true, 'Read stderr for the error the command reported. Then retry.'],
    ['So: Exit code 2 often means a usage error: check the arguments, then read stderr.', false, true, 'So: Exit code 2 often means a usage error: check the arguments, then check its output.'],
    ['Exit code 2 often means a usage error: check the arguments, then read stderr. Or not.', false, true, 'Exit code 2 often means a usage error: check the arguments, then check its output. Or not.'],
    ['Also: Read stderr for why it exited with 3; then fix it.', false, true, 'Also: Read stderr for why it exited with 3; then fix it.'],
    ['Read stderr for why it exited with 12; then fix it.', false, true, 'It exited with 12 and wrote nothing on stderr (the end of stdout may say why); then fix it.'],
  ])('fitAdvice(%j, stderr seen %s, stdout seen %s)', (advice, stderrSeen, stdoutSeen, fitted) => {
    expect(fitAdvice(advice, stderrSeen, stdoutSeen)).toBe(fitted);
  });
});

describe('the text block and the JSON', () => {
  const full: RunResult = {
    ...result('out & <b>\n', 'err\n'),
    state: 'ended',
    verdict: 'timed-out',
    exitCode: null,
    signal: 'SIGINT',
    notes: ['A note.'],
    session: 'work',
    queuePosition: 3,
    limitMs: 1000,
    stop: { reason: 'deadline', requestedAtMs: 1000, endedBy: 'interrupt', signals: [{ signal: 'SIGINT', atMs: 1000 }, { signal: 'SIGCONT', atMs: 1000 }] },
    oom: { confirmed: false, limitBytes: 1024 },
    peak: { rssBytes: 2048, processes: 2 },
    teardown: { killed: [{ pid: 5, ppid: 4, pgid: 5, command: 'sleep 9' }], survivors: [], elapsedMs: 12, complete: true },
  };

  it('a <shell_results> block: what decides first, then lines given, then the streams', () => {
    const text = answerText(modelAnswer(full, { streamChars: 1000, pager }), ['<page>p</page>']);
    expect(text.split('\n')).toEqual([
      '<shell_results>',
      '<verdict>timed-out</verdict>',
      '<signal>SIGINT</signal>',
      '<elapsed>1 s of a 1 s limit</elapsed>',
      '<advice>Read stderr for the error the command reported.</advice>',
      '<note>A note.</note>',
      '<page>p</page>',
      '<stdout>out &amp; &lt;b>',
      '</stdout>',
      '<stderr>err',
      '</stderr>',
      '</shell_results>',
    ]);
    const live = answerText(modelAnswer({ ...result('', ''), state: 'running', verdict: undefined, exitCode: 0, advice: null }, { streamChars: 1000, pager }));
    expect(live.split('\n')).toEqual([
      '<shell_results>',
      '<verdict>running</verdict>',
      '<exit_code>0</exit_code>',
      '<elapsed>1 s (no limit)</elapsed>',
      '<advice>It is still running, and keeps going in Warden. Call wait abc123 for more output and how it ends (or stop abc123 to end it).</advice>',
      '<next>wait abc123</next>',
      '<stdout></stdout>',
      '<stderr></stderr>',
      '</shell_results>',
    ]);
    // No advice at all: no line for it.
    const quiet = answerText(modelAnswer({ ...result('ok\n'), verdict: 'completed', exitCode: 0, advice: null }, { streamChars: 1000, pager }));
    expect(quiet).not.toContain('<advice>');
    expect(quiet.split('\n').slice(0, 4)).toEqual(['<shell_results>', '<verdict>completed</verdict>', '<exit_code>0</exit_code>', '<elapsed>1 s (no limit)</elapsed>']);
  });

  it('the JSON: the same, with counts, and the record without what a model does not need', () => {
    const json = answerJson(modelAnswer(full, { streamChars: 1000, pager }));
    expect(json).toEqual({
      id: 'abc123',
      state: 'ended',
      verdict: 'timed-out',
      exitCode: null,
      signal: 'SIGINT',
      elapsed: '1 s of a 1 s limit',
      advice: 'Read stderr for the error the command reported.',
      notes: ['A note.'],
      stdout: 'out & <b>\n',
      stderr: 'err\n',
      stdoutCut: 0,
      stderrCut: 0,
      stdoutChars: 10,
      stderrChars: 4,
      kind: 'command',
      session: 'work',
      cwd: '/',
      startedAt: '2026-01-01T00:00:00.000Z',
      endedAt: '2026-01-01T00:00:01.000Z',
      elapsedMs: 1000,
      limitMs: 1000,
      queuePosition: 3,
      stop: { reason: 'deadline', endedBy: 'interrupt', signals: ['SIGINT', 'SIGCONT'] },
      oom: { confirmed: false, limitBytes: 1024 },
      peak: { rssBytes: 2048, processes: 2 },
      teardown: { killed: 1, survivors: 0, complete: true },
      stdoutTruncated: 0,
      stderrTruncated: 0,
    });
    const bare = answerJson(modelAnswer({ ...result('', ''), state: 'running', verdict: undefined, endedAt: undefined }, { streamChars: 1000, pager }));
    expect(Object.keys(bare)).not.toEqual(expect.arrayContaining(['session']));
    for (const key of ['session', 'endedAt', 'queuePosition', 'stop', 'oom', 'peak', 'teardown']) expect(bare, key).not.toHaveProperty(key);
    expect(bare.next).toBe('wait abc123');
  });

  it.each([
    ['\u0000\u0001\u0008', '\\x00\\x01\\x08'],
    ['\t\n\r', '\t\n\r'],
    ['\u000b\u000c', '\\x0b\\x0c'],
    ['\u000e\u001f', '\\x0e\\x1f'],
    ['\u007f', '\\x7f'],
    ['\u0080 >', '\u0080 >'],
    ['&&<<', '&amp;&amp;&lt;&lt;'],
  ])('escapeText(%j)', (text, escaped) => {
    expect(escapeText(text)).toBe(escaped);
  });
});

describe('settings and places', () => {
  it.each([
    [undefined, undefined],
    ['', undefined],
    ['   ', undefined],
    ['200', 200],
    [' 300 ', 300],
    ['200000', 200_000],
  ])('streamCharsFrom(%j) is %j', (text, n) => {
    expect(streamCharsFrom(text, 'X')).toBe(n);
  });

  it.each([['199'], ['200001'], ['1e3'], ['-5'], ['3.5'], ['ten'], ['0x100']])('streamCharsFrom(%j) is refused in one line', (text) => {
    let error: unknown;
    try {
      streamCharsFrom(text, 'WARDEN_MODEL_STREAM_CHARS');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(StreamCharsError);
    expect((error as StreamCharsError).kind).toBe('bad-input');
    expect((error as Error).message).toBe(`WARDEN_MODEL_STREAM_CHARS takes a number of characters from 200 to 200000, not ${JSON.stringify(text)}.`);
  });

  it('the environment\'s setting, or 8,000', () => {
    expect(envStreamChars({})).toBe(DEFAULT_STREAM_CHARS);
    expect(DEFAULT_STREAM_CHARS).toBe(8000);
    expect(envStreamChars({ WARDEN_MODEL_STREAM_CHARS: '4000' })).toBe(4000);
    expect(() => envStreamChars({ WARDEN_MODEL_STREAM_CHARS: '5' })).toThrow(new StreamCharsError('WARDEN_MODEL_STREAM_CHARS takes a number of characters from 200 to 200000, not "5".'));
    expect(new StreamCharsError('x').name).toBe('StreamCharsError');
  });

  it.each([
    ['abcdef', 'def', 3],
    ['abcdef', 'abcdef', 0],
    ['abcdef', '', 6],
    ['', '', 0],
    ['abcdefab', 'ab', 6],
    ['abXabY', 'ab', null],
    ['abcdef', 'bcd', 1],
    ['abcdef', 'abc', 0],
    ['abcdef', 'zz', null],
    ['ab', 'abc', null],
  ])('locate(%j, %j) is %j', (kept, text, at) => {
    expect(locate(kept, text)).toBe(at);
  });
});

describe('the crash a model is told of', () => {
  const traceback = 'Traceback (most recent call last):\n  File "/app/crash_keyerror.py", line 5, in load\n    return config["database_url"]\nKeyError: \'database_url\'\n';
  const failed = { ...result('', traceback), cwd: '/app' };

  it('is read from the end of stderr, relative to the run\'s directory, with its function', () => {
    expect(modelCrash(failed)).toEqual({ text: "raised KeyError: 'database_url' at crash_keyerror.py:5 (in load)", error: "KeyError: 'database_url'", at: 'crash_keyerror.py:5', function: 'load', stream: 'stderr' });
  });

  it('leads the text answer before the advice, and is a field of the JSON one', () => {
    const answer = modelAnswer(failed, { streamChars: 8000, pager });
    const text = answerText(answer);
    expect(text).toContain("<crash>raised KeyError: 'database_url' at crash_keyerror.py:5 (in load)</crash>\n<advice>");
    expect(answerJson(answer).crash).toEqual({ error: "KeyError: 'database_url'", at: 'crash_keyerror.py:5', function: 'load', stream: 'stderr' });
  });

  it('is none for a run that completed, one still running, or one without a report', () => {
    expect(modelCrash({ ...failed, verdict: 'completed' })).toBeNull();
    expect(modelCrash({ ...failed, state: 'running', verdict: undefined })).toBeNull();
    expect(modelCrash(result('', 'error: no config\n'))).toBeNull();
    const answer = modelAnswer(result('', 'error: no config\n'), { streamChars: 8000, pager });
    expect(answerText(answer)).not.toContain('<crash>');
    expect(answerJson(answer)).not.toHaveProperty('crash');
  });

  it('names no place when no frame is of its own files, and no function at module level', () => {
    const lib = { ...result('', 'Traceback (most recent call last):\n  File "/usr/lib/python3.11/runpy.py", line 1, in run\nImportError: x\n'), cwd: '/app' };
    expect(modelCrash(lib)).toEqual({ text: 'raised ImportError: x', error: 'ImportError: x', at: null, stream: 'stderr' });
    const top = { ...result('', 'Traceback (most recent call last):\n  File "/app/a.py", line 2, in <module>\nValueError: v\n'), cwd: '/app' };
    expect(modelCrash(top)).toEqual({ text: 'raised ValueError: v at a.py:2', error: 'ValueError: v', at: 'a.py:2', stream: 'stderr' });
  });
});
