import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { environHas, isAliveInProc, listPids, parseStat, readStat } from './procfs';

/** A /proc/PID/stat line: fields 3..22 after comm, starttime (field 22) last. */
function statLine(pid: number, comm: string, o: { state?: string; ppid?: number; pgid?: number; sid?: number; start?: number } = {}): string {
  const after = [
    o.state ?? 'S', // 3 state
    o.ppid ?? 1, // 4 ppid
    o.pgid ?? pid, // 5 pgrp
    o.sid ?? pid, // 6 session
    0, // 7 tty_nr
    -1, // 8 tpgid
    4194304, // 9 flags
    120, 0, 0, 0, // 10-13 faults
    3, 1, 0, 0, // 14-17 times
    20, 0, 1, 0, // 18-21 priority, nice, threads, itrealvalue
    o.start ?? 987654, // 22 starttime
    12345678, 345, // vsize, rss: fields past 22 must not matter
  ];
  return `${pid} (${comm}) ${after.join(' ')}\n`;
}

describe('parseStat', () => {
  it.each([
    ['a plain name', 'bash'],
    ['a space', 'my prog'],
    ['spaces and a closing paren', 'a) b c'],
    ['only a closing paren', ')'],
    ['an opening paren', '('],
    ['something that looks like fields', ') R 7 7 7 ('],
    ['parens both ways', '((x)) y)'],
  ])('reads every field when comm holds %s', (_what, comm) => {
    const stat = parseStat(statLine(4242, comm, { state: 'R', ppid: 17, pgid: 4240, sid: 4100, start: 5550001 }));
    expect(stat).toEqual({ pid: 4242, comm, state: 'R', ppid: 17, pgid: 4240, sid: 4100, startTicks: 5550001 });
  });

  it('reads a zombie state', () => {
    expect(parseStat(statLine(9, 'sleep', { state: 'Z' }))?.state).toBe('Z');
  });

  it('rejects text that is not a stat line', () => {
    expect(parseStat('')).toBeUndefined();
    expect(parseStat('no parens here')).toBeUndefined();
    expect(parseStat('12 ) S 1 (')).toBeUndefined();
  });

  it.runIf(existsSync('/proc/self/stat'))('reads this process from the real /proc', () => {
    const stat = parseStat(readFileSync('/proc/self/stat', 'latin1'));
    expect(stat?.pid).toBe(process.pid);
    expect(stat?.ppid).toBe(process.ppid);
    expect(stat?.state).toBe('R');
    expect(stat?.startTicks).toBeGreaterThan(0);
  });
});

describe('readStat, isAliveInProc and listPids on a fake proc root', () => {
  const root = mkdtempSync(join(tmpdir(), 'warden-procfs-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  for (const [pid, state] of [[10, 'S'], [11, 'Z'], [12, 'X']] as const) {
    mkdirSync(join(root, String(pid)));
    writeFileSync(join(root, String(pid), 'stat'), statLine(pid, 'worker one', { state }));
  }
  mkdirSync(join(root, 'self'));
  mkdirSync(join(root, 'sys'));

  it('lists numeric entries only', () => {
    expect(listPids(root).sort((a, b) => a - b)).toEqual([10, 11, 12]);
  });

  it('reads a stat file and treats a missing one as gone', () => {
    expect(readStat(root, 10)?.comm).toBe('worker one');
    expect(readStat(root, 99)).toBeUndefined();
  });

  it('counts zombies and dead entries as not alive', () => {
    expect(isAliveInProc(root, 10)).toBe(true);
    expect(isAliveInProc(root, 11)).toBe(false);
    expect(isAliveInProc(root, 12)).toBe(false);
    expect(isAliveInProc(root, 99)).toBe(false);
  });
});

describe('environHas', () => {
  const entry = 'WARDEN_SCOPE=ab';
  const env = (text: string) => Buffer.from(text, 'latin1');

  it.each([
    ['first', `${entry}\0PATH=/bin\0HOME=/root\0`],
    ['middle', `PATH=/bin\0${entry}\0HOME=/root\0`],
    ['last, with its trailing NUL', `PATH=/bin\0HOME=/root\0${entry}\0`],
    ['last, without a trailing NUL', `PATH=/bin\0HOME=/root\0${entry}`],
    ['the only entry, with a NUL', `${entry}\0`],
    ['the only entry, without a NUL', entry],
    ['after a near miss', `X${entry}\0${entry}abc\0${entry}\0`],
    ['after a near miss, last without NUL', `X${entry}\0${entry}`],
  ])('finds the entry %s', (_where, text) => {
    expect(environHas(env(text), entry)).toBe(true);
  });

  it.each([
    ['a longer value (prefix of the value)', `PATH=/bin\0${entry}c\0HOME=/root\0`],
    ['a longer value, first', `${entry}c\0PATH=/bin\0`],
    ['a longer value, last without NUL', `PATH=/bin\0${entry}c`],
    ['a longer name (suffix of the name)', `PATH=/bin\0X${entry}\0HOME=/root\0`],
    ['a longer name, first', `X${entry}\0PATH=/bin\0`],
    ['a longer name, last without NUL', `PATH=/bin\0X${entry}`],
    ['a longer name, the only entry', `X${entry}`],
    ['inside another value', `FOO=${entry}\0BAR=1\0`],
    ['inside another value, last without NUL', `FOO=${entry}`],
    ['a shorter value', `PATH=/bin\0WARDEN_SCOPE=a\0`],
    ['a shorter value, last without NUL', `PATH=/bin\0WARDEN_SCOPE=a`],
    ['an empty environment', ''],
    ['only NULs', '\0\0'],
  ])('does not match %s', (_what, text) => {
    expect(environHas(env(text), entry)).toBe(false);
  });

  it('matches a real scope marker next to look-alikes', () => {
    const marker = 'WARDEN_SCOPE=h1.r12';
    const text = `WARDEN_SCOPE=h1.r123\0XWARDEN_SCOPE=h1.r12\0WARDEN_SCOPE=h1.r1\0`;
    expect(environHas(env(text), marker)).toBe(false);
    expect(environHas(env(`${text}${marker}\0`), marker)).toBe(true);
  });
});
