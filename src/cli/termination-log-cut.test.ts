// Table tests of the termination message's cut (termination-log.ts), in
// this process: the newest whole lines of each stream within Kubernetes'
// 4,096 bytes, a last line longer than that cut at a character as a reader
// sees it (never half a surrogate pair, never a combining mark without its
// base), the command's words, the advice, and the file rules of
// writeWholeFile. The runs through `warden run` are in termination-log.test.ts.

import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunResult } from '../shared/result';
import { ARGV_BYTES, argvWithin, DEFAULT_TERMINATION_LOG, terminationMessage, TERMINATION_LOG_BYTES, writeTerminationError, writeTerminationLog, writeWholeFile } from './termination-log';

const dir = mkdtempSync(join(tmpdir(), 'wtermcut-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const base = {
  id: 'abc123', kind: 'command', argv: ['x'], cwd: '/', state: 'ended', verdict: 'failed', exitCode: 1, signal: null,
  startedAt: '2026-01-01T00:00:00.000Z', endedAt: '2026-01-01T00:00:01.000Z', elapsedMs: 1000, limitMs: null, advice: null, notes: [],
  stdout: '', stderr: '', stdoutTruncated: 0, stderrTruncated: 0,
} as unknown as RunResult;

const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));
/** A lone surrogate anywhere: JSON.stringify writes it as an escape, a reader as U+FFFD. */
const loneSurrogate = (text: string) => /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text);

describe('the cut of a last line longer than the room', () => {
  it.each<[string, string, (kept: string) => void]>([
    ['ASCII', 'x', (kept) => expect(kept).toMatch(/^x+END$/)],
    ['two-byte characters', 'é', (kept) => expect(kept).toMatch(/^é+END$/)],
    ['three-byte characters', '€', (kept) => expect(kept).toMatch(/^€+END$/)],
    ['surrogate pairs (U+1F600)', '😀', (kept) => expect(kept).toMatch(/^(😀)+END$/u)],
    ['the last code point (U+10FFFF)', '\u{10FFFF}', (kept) => expect(kept).toMatch(/^(\u{10FFFF})+END$/u)],
    ['the first past the BMP (U+10000)', '\u{10000}', (kept) => expect(kept).toMatch(/^(\u{10000})+END$/u)],
    ['a surrogate pair after an ASCII character', 'a😀', (kept) => expect(kept).toMatch(/^(😀)?(a😀)+END$/u)],
    ['a base and its combining accent', 'e\u0301', (kept) => expect(kept).toMatch(/^(e\u0301)+END$/)],
    ['a base and two combining marks', 'a\u0308\u0301', (kept) => expect(kept).toMatch(/^(a\u0308\u0301)+END$/)],
    ['an emoji with a skin tone', '👍🏽', (kept) => expect(kept).toMatch(/^(👍🏽)+END$/u)],
    ['a flag (two regional indicators)', '🇫🇷', (kept) => expect(kept).toMatch(/^(🇫🇷)+END$/u)],
    ['a family (joined by ZWJ)', '👨‍👩‍👧', (kept) => expect(kept).toMatch(/^(👨‍👩‍👧)+END$/u)],
    ['a control character, six bytes in JSON', '\u0001', (kept) => expect(kept.replaceAll('\u0001', '')).toBe('END')],
  ])('%s', (_what, unit, check) => {
    // Every offset of the cut: a longer end moves it through the unit.
    for (let extra = 0; extra < 12; extra++) {
      const end = `${'-'.repeat(extra)}END`;
      const stdout = `${unit.repeat(5000)}${end}`;
      const message = terminationMessage({ ...base, stdout }, 1);
      expect(jsonBytes(message)).toBeLessThanOrEqual(TERMINATION_LOG_BYTES);
      expect(jsonBytes(message), 'the room is used').toBeGreaterThan(TERMINATION_LOG_BYTES - 60);
      expect(loneSurrogate(message.stdout)).toBe(false);
      expect(message.stdout.endsWith(end)).toBe(true);
      check(`${message.stdout.slice(0, -end.length)}END`);
      expect(stdout.endsWith(message.stdout)).toBe(true);
    }
  });

  it('stderr is cut the same way', () => {
    const message = terminationMessage({ ...base, stderr: `${'😀'.repeat(5000)}END`, stdout: 'ok\n' }, 1);
    expect(message.stderr).toMatch(/^(😀)+END$/u);
    expect(message.stdout).toBe('ok\n');
  });
});

describe('the cut to an exact room', () => {
  // The room the streams get is the limit less the message with both empty: cut(text, room) is what stdout keeps.
  // (Measured inside each test: a mutant that throws there must fail a test, not the file's load.)
  const cut = (stdout: string, room: number) => terminationMessage({ ...base, stdout }, 1, jsonBytes(terminationMessage(base, 1)) + room).stdout;
  it.each<[string, number, string]>([
    // Whole lines up to the room, not one byte over it.
    ['ab\ncd\nef\n', 8, 'cd\nef\n'],
    ['ab\ncd\nef\n', 7, 'ef\n'],
    ['ab\ncd\nef\n', 12, 'ab\ncd\nef\n'],
    // Empty lines first: each is a line of its own (a newline is 2 bytes in JSON).
    ['\n\nabc\n', 7, '\nabc\n'],
    ['\n\nabc\n', 6, 'abc\n'],
    // One line longer than the room: its end, exactly the room, its newline kept.
    [`${'x'.repeat(100)}\n`, 10, 'xxxxxxxx\n'],
    [`old\n${'x'.repeat(100)}`, 10, 'x'.repeat(10)],
    [`old\n${'é'.repeat(100)}\n`, 9, 'ééé\n'],
    // After an odd number of code units of earlier lines, an accent stays with its letter.
    [`ol\n${'e\u0301'.repeat(50)}`, 9, 'e\u0301'.repeat(3)],
    ['abc', 0, ''],
  ])('%j in %d bytes', (text, room, kept) => {
    expect(cut(text, room)).toBe(kept);
    expect(jsonBytes(kept) - 2).toBeLessThanOrEqual(room);
  });

  it('keeps the advice while the message fits exactly, drops it one byte over', () => {
    const withAdvice = jsonBytes(terminationMessage({ ...base, advice: 'raise the limit' }, 1));
    expect(terminationMessage({ ...base, advice: 'raise the limit' }, 1, withAdvice).advice).toBe('raise the limit');
    expect(terminationMessage({ ...base, advice: 'raise the limit' }, 1, withAdvice - 1)).not.toHaveProperty('advice');
  });

  it('names the command\'s words, cut to their own budget', () => {
    expect(terminationMessage({ ...base, argv: ['bash', '-c', 'exit 3'] }, 1).argv).toEqual(['bash', '-c', 'exit 3']);
    const long = Array.from({ length: 300 }, (_, i) => `w${i}`);
    expect(terminationMessage({ ...base, argv: long }, 1).argv).toEqual(argvWithin(long));
  });
});

describe('whole lines', () => {
  it.each<[string, string, string]>([
    ['the newest lines that fit, from a line\'s start', Array.from({ length: 2000 }, (_, i) => `line ${i}\n`).join(''), 'line 1999\n'],
    ['lines of surrogate pairs', Array.from({ length: 2000 }, (_, i) => `😀 ${i}\n`).join(''), '😀 1999\n'],
    ['lines of combining characters', Array.from({ length: 2000 }, (_, i) => `e\u0301 ${i}\n`).join(''), 'e\u0301 1999\n'],
    ['a last line without a newline', `${'old\n'.repeat(3000)}last`, 'old\nlast'],
  ])('%s', (_what, stdout, end) => {
    const message = terminationMessage({ ...base, stdout }, 1);
    expect(jsonBytes(message)).toBeLessThanOrEqual(TERMINATION_LOG_BYTES);
    expect(jsonBytes(message)).toBeGreaterThan(TERMINATION_LOG_BYTES - 40);
    expect(message.stdout.endsWith(end)).toBe(true);
    expect(stdout.endsWith(message.stdout)).toBe(true);
    // It starts where a line starts.
    expect(stdout[stdout.length - message.stdout.length - 1]).toBe('\n');
  });

  it('a text that fits is whole, however it ends', () => {
    for (const text of ['', '\n', '\n\n', 'a', 'a\n', '😀', 'e\u0301']) expect(terminationMessage({ ...base, stdout: text, stderr: text }, 1)).toMatchObject({ stdout: text, stderr: text });
  });
});

describe('the room between the streams', () => {
  const lines = (tag: string, count: number) => Array.from({ length: count }, (_, i) => `${tag} ${i}\n`).join('');

  it('stderr gets half when both are long, stdout the rest', () => {
    const message = terminationMessage({ ...base, stdout: lines('out', 2000), stderr: lines('err', 2000) }, 1);
    const size = jsonBytes(message);
    expect(size).toBeLessThanOrEqual(TERMINATION_LOG_BYTES);
    expect(size).toBeGreaterThan(TERMINATION_LOG_BYTES - 30);
    // Each holds about half of the room: neither is far from the other.
    expect(Math.abs(message.stdout.length - message.stderr.length)).toBeLessThan(40);
  });

  it('a short stdout leaves the rest to stderr, a short stderr the rest to stdout', () => {
    const shortOut = terminationMessage({ ...base, stdout: 'done\n', stderr: lines('err', 2000) }, 1);
    expect(shortOut.stdout).toBe('done\n');
    expect(jsonBytes(shortOut)).toBeGreaterThan(TERMINATION_LOG_BYTES - 30);
    const shortErr = terminationMessage({ ...base, stdout: lines('out', 2000), stderr: 'oops\n' }, 1);
    expect(shortErr.stderr).toBe('oops\n');
    expect(jsonBytes(shortErr)).toBeGreaterThan(TERMINATION_LOG_BYTES - 30);
  });

  it('a smaller limit is kept too', () => {
    for (const limit of [600, 1000, 2048]) {
      const message = terminationMessage({ ...base, stdout: lines('out', 500), stderr: lines('err', 500) }, 1, limit);
      expect(jsonBytes(message)).toBeLessThanOrEqual(limit);
      expect(jsonBytes(message)).toBeGreaterThan(limit - 30);
    }
  });
});

describe('the other fields', () => {
  it('advice is cut at 400 characters, never inside a surrogate pair, and dropped when nothing else fits', () => {
    expect(terminationMessage({ ...base, advice: 'a'.repeat(1000) }, 1).advice).toBe('a'.repeat(400));
    expect(terminationMessage({ ...base, advice: 'short' }, 1).advice).toBe('short');
    expect(terminationMessage({ ...base, advice: null }, 1)).not.toHaveProperty('advice');
    const emoji = terminationMessage({ ...base, advice: `a${'😀'.repeat(300)}` }, 1).advice!;
    expect(loneSurrogate(emoji)).toBe(false);
    expect(emoji).toBe(`a${'😀'.repeat(199)}`);
    // A limit the advice alone would fill: it goes, the output stays.
    const small = terminationMessage({ ...base, advice: 'a'.repeat(400), stdout: 'x\n' }, 1, 500);
    expect(small).not.toHaveProperty('advice');
    expect(small.stdout).toBe('x\n');
  });

  it('names the contract only when given, the argv only when the run has one, and oom from the kernel\'s word', () => {
    expect(terminationMessage(base, 1)).not.toHaveProperty('exitCodes');
    expect(terminationMessage(base, 3, TERMINATION_LOG_BYTES, 'k8s/v1')).toMatchObject({ exit: 3, exitCodes: 'k8s/v1' });
    expect(terminationMessage({ ...base, argv: undefined } as unknown as RunResult, 1)).not.toHaveProperty('argv');
    expect(terminationMessage({ ...base, verdict: undefined } as unknown as RunResult, 1).verdict).toBeNull();
    expect(terminationMessage({ ...base, oom: { confirmed: true } } as unknown as RunResult, 137).oom).toBe(true);
    expect(terminationMessage({ ...base, oom: { confirmed: false } } as unknown as RunResult, 137).oom).toBe(false);
    expect(terminationMessage(base, 1).oom).toBeNull();
  });
});

describe('argvWithin', () => {
  it.each<[string[], number, string[]]>([
    [['a', 'b'], ARGV_BYTES, ['a', 'b']],
    [[], ARGV_BYTES, []],
    // ["a","b"] is 9 bytes: it fits 9, not 8.
    [['a', 'b'], 9, ['a', 'b']],
    [['a', 'b'], 8, ['…']],
    // ["a","bbbb"] is 12 bytes, ["a","…"] 11 (… is 3): the first word fits 11, not 10.
    [['a', 'bbbb'], 12, ['a', 'bbbb']],
    [['a', 'bbbb'], 11, ['a', '…']],
    [['a', 'bbbb'], 10, ['…']],
    [['x'.repeat(600), 'y'], ARGV_BYTES, ['…']],
    [['😀', '😀', '😀'], 16, ['😀', '…']],
  ])('%j in %d bytes', (argv, budget, kept) => {
    expect(argvWithin(argv, budget)).toEqual(kept);
    if (kept.at(-1) === '…') expect(jsonBytes(kept)).toBeLessThanOrEqual(budget);
  });

  it('keeps the first words of a long command line within 512 bytes', () => {
    const argv = Array.from({ length: 200 }, (_, i) => `word${i}`);
    const kept = argvWithin(argv);
    expect(kept.at(-1)).toBe('…');
    expect(kept.slice(0, -1)).toEqual(argv.slice(0, kept.length - 1));
    expect(jsonBytes(kept)).toBeLessThanOrEqual(ARGV_BYTES);
    // One more word would not have fit.
    expect(jsonBytes([...argv.slice(0, kept.length), '…'])).toBeGreaterThan(ARGV_BYTES);
  });
});

describe('writeWholeFile and the writers', () => {
  let n = 0;
  const path = () => join(dir, `f${n++}`);

  it('writes the whole text, private when new, over a longer file it truncates first', () => {
    const p = path();
    writeWholeFile(p, 'a much longer first text\n');
    writeWholeFile(p, 'short');
    expect(readFileSync(p, 'utf8')).toBe('short');
    expect(statSync(p).mode & 0o777).toBe(0o600);
  });

  it('refuses a symbolic link, a FIFO, a directory and a missing directory in one line each', () => {
    const target = path();
    writeFileSync(target, 'keep\n');
    const link = path();
    symlinkSync(target, link);
    const fifo = path();
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const sub = path();
    mkdirSync(sub);
    const lines: string[] = [];
    const err = (text: string) => void lines.push(text);
    writeTerminationLog(link, base, 1, err);
    writeTerminationLog(fifo, base, 1, err);
    writeTerminationError(sub, 'why', 125, err);
    writeTerminationError(join(dir, 'no', 'such'), 'why', 125, err);
    expect(lines).toEqual([
      `warden: cannot write the termination log ${link}: it is a symbolic link, which Warden never writes through\n`,
      `warden: cannot write the termination log ${fifo}: it is a FIFO or socket, not a file\n`,
      `warden: cannot write the termination log ${sub}: EISDIR\n`,
      `warden: cannot write the termination log ${join(dir, 'no', 'such')}: ENOENT\n`,
    ]);
    expect(readFileSync(target, 'utf8')).toBe('keep\n');
  });

  it('closes what it opened, written or refused', () => {
    const open = () => readdirSync('/proc/self/fd').length;
    const before = open();
    const p = path();
    for (let i = 0; i < 10; i++) {
      writeWholeFile(p, 'x');
      expect(() => writeWholeFile('/dev/null', 'x')).toThrow('it is not a regular file');
    }
    expect(open()).toBe(before);
  });

  it('as root, refuses a file another user left in a sticky directory all may write, and writes one elsewhere', (context) => {
    if (process.getuid?.() !== 0) return context.skip('needs root, to own files as another user');
    const NOBODY = 65534;
    const sticky = join(dir, 'sticky');
    mkdirSync(sticky);
    chmodSync(sticky, 0o1777);
    const theirs = join(sticky, 'theirs.log');
    writeFileSync(theirs, 'their file\n');
    chownSync(theirs, NOBODY, NOBODY);
    expect(() => writeWholeFile(theirs, 'x')).toThrow(`it belongs to uid ${NOBODY} and sits in the sticky directory ${sticky} that every user may write, so it may have been planted`);
    expect(readFileSync(theirs, 'utf8')).toBe('their file\n');
    // Root's own file there is written.
    const mine = join(sticky, 'mine.log');
    writeWholeFile(mine, 'mine');
    expect(readFileSync(mine, 'utf8')).toBe('mine');
    // Sticky but not world-writable, or world-writable but not sticky: theirs is written.
    for (const mode of [0o1755, 0o777]) {
      const other = join(dir, `mode-${mode.toString(8)}`);
      mkdirSync(other);
      chmodSync(other, mode);
      const file = join(other, 'theirs.log');
      writeFileSync(file, 'old');
      chownSync(file, NOBODY, NOBODY);
      writeWholeFile(file, 'new');
      expect(readFileSync(file, 'utf8'), mode.toString(8)).toBe('new');
    }
    // The directory's owner's own file in it is theirs to give: written.
    const owned = join(dir, 'owned');
    mkdirSync(owned);
    chmodSync(owned, 0o1777);
    chownSync(owned, NOBODY, NOBODY);
    const file = join(owned, 'log');
    writeFileSync(file, 'old');
    chownSync(file, NOBODY, NOBODY);
    writeWholeFile(file, 'new');
    expect(readFileSync(file, 'utf8')).toBe('new');
    // Root's own file in that user's sticky directory is root's: written.
    const rootsOwn = join(owned, 'roots.log');
    writeFileSync(rootsOwn, 'old');
    writeWholeFile(rootsOwn, 'new');
    expect(readFileSync(rootsOwn, 'utf8')).toBe('new');
  });

  it('a device is written only at Kubernetes\' own path', () => {
    const lines: string[] = [];
    writeTerminationError('/dev/null', 'why', 125, (text) => void lines.push(text));
    expect(lines).toEqual(['warden: cannot write the termination log /dev/null: it is not a regular file\n']);
    expect(DEFAULT_TERMINATION_LOG).toBe('/dev/termination-log');
  });

  it('writeTerminationLog writes the message; writeTerminationError why the run never started, cut to fit', () => {
    const log = path();
    writeTerminationLog(log, { ...base, stdout: 'hi\n' }, 1, () => undefined, 'standard/v1');
    expect(JSON.parse(readFileSync(log, 'utf8'))).toMatchObject({ id: 'abc123', exit: 1, exitCodes: 'standard/v1', stdout: 'hi\n' });
    const error = path();
    writeTerminationError(error, 'x'.repeat(2000), 125, () => undefined);
    expect(JSON.parse(readFileSync(error, 'utf8'))).toEqual({ verdict: null, state: 'not-started', exit: 125, error: 'x'.repeat(900) });
    const emoji = path();
    writeTerminationError(emoji, `a${'😀'.repeat(1000)}`, 125, () => undefined, 'k8s/v1');
    const written = JSON.parse(readFileSync(emoji, 'utf8')) as { error: string; exitCodes: string };
    expect(written.exitCodes).toBe('k8s/v1');
    expect(loneSurrogate(written.error)).toBe(false);
    expect(written.error).toBe(`a${'😀'.repeat(449)}`);
    expect(Buffer.byteLength(readFileSync(emoji))).toBeLessThanOrEqual(TERMINATION_LOG_BYTES);
  });
});
