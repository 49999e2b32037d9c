// The engine's fast paths (found by bench/) must not change what it does:
// the ASCII shortcut in CappedOutput decodes exactly as TextDecoder does, the
// callback file reader returns whole files, and the teardown shortcut only
// applies when no process was started after the main process.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CappedOutput } from './output';
import { readBounded, readLastPid, TIMED_OUT } from './procfs';
import { teardown } from './teardown';

describe('CappedOutput ASCII fast path', () => {
  // Bytes that exercise BOMs, split and invalid sequences, lone continuations and surrogates.
  const alphabet = [0x61, 0x0a, 0x20, 0xef, 0xbb, 0xbf, 0x80, 0xc3, 0xa9, 0xf0, 0x9f, 0x98, 0x80, 0xe2, 0x9c, 0x93, 0xff, 0xc0, 0xed, 0xa0];
  let seed = 20240611;
  const rnd = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };

  it('returns, keeps and counts exactly what a streaming TextDecoder gives, for any chunking', () => {
    for (let iter = 0; iter < 5000; iter++) {
      const bytes = new Uint8Array(rnd(48));
      const asciiHeavy = rnd(2) === 0;
      for (let i = 0; i < bytes.length; i++) bytes[i] = asciiHeavy && rnd(3) > 0 ? 0x61 + rnd(3) : alphabet[rnd(alphabet.length)]!;
      const reference = new TextDecoder('utf-8');
      const capped = new CappedOutput(1_000);
      let expected = '';
      let got = '';
      for (let at = 0; at < bytes.length; ) {
        const chunk = bytes.subarray(at, at + rnd(7));
        at += chunk.length;
        expected += reference.decode(chunk, { stream: true });
        got += capped.push(Buffer.from(chunk));
      }
      expected += reference.decode();
      got += capped.end();
      expect(got).toBe(expected);
      expect(capped.text()).toBe(expected);
      expect(capped.totalChars).toBe(expected.length);
    }
  });

  it('strips a BOM only at the very start, as TextDecoder does', () => {
    const first = new CappedOutput(100);
    expect(first.push(Buffer.from([0xef, 0xbb, 0xbf, 0x61]))).toBe('a');
    const later = new CappedOutput(100);
    expect(later.push(Buffer.from('ab'))).toBe('ab');
    expect(later.push(Buffer.from([0xef, 0xbb, 0xbf, 0x63]))).toBe('\ufeffc');
  });
});

describe('procfs readers', () => {
  const root = mkdtempSync(join(tmpdir(), 'warden-fast-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('readBounded returns a file larger than its first read whole, and undefined for a missing one', async () => {
    const big = Buffer.alloc(100_000, 'x');
    big.write('end', big.length - 3);
    writeFileSync(join(root, 'big'), big);
    writeFileSync(join(root, 'empty'), '');
    const read = await readBounded(join(root, 'big'), 5_000);
    expect(read).not.toBe(TIMED_OUT);
    expect(Buffer.compare(read as Buffer, big)).toBe(0);
    expect((await readBounded(join(root, 'empty'), 5_000)) as Buffer).toHaveLength(0);
    expect(await readBounded(join(root, 'missing'), 5_000)).toBeUndefined();
  });

  it('readLastPid reads ns_last_pid, and is undefined without it', () => {
    expect(readLastPid(root)).toBeUndefined();
    mkdirSync(join(root, 'sys', 'kernel'), { recursive: true });
    writeFileSync(join(root, 'sys', 'kernel', 'ns_last_pid'), '4242\n');
    expect(readLastPid(root)).toBe(4242);
  });

  it('teardown skips the scan only when nothing was started after the main process and its pid is free', async () => {
    const fake = mkdtempSync(join(tmpdir(), 'warden-fast-proc-'));
    try {
      mkdirSync(join(fake, 'sys', 'kernel'), { recursive: true });
      // A leftover in the main process's group, in a fake /proc. Pids above 2^22
      // (the kernel's PID_MAX_LIMIT) cannot exist, so the signals sent reach nothing.
      mkdirSync(join(fake, '4194401'));
      writeFileSync(join(fake, '4194401', 'stat'), '4194401 (sleep) S 1 4194400 4194400 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99\n');
      writeFileSync(join(fake, '4194401', 'cmdline'), 'sleep\u0000300\u0000');
      const target = { scope: 'h.r', pgid: 4_194_400, procRoot: fake, budgetMs: 300, passGapMs: 10 };

      // Something was started after the main process: the scan runs and finds the leftover.
      writeFileSync(join(fake, 'sys', 'kernel', 'ns_last_pid'), '4194401\n');
      const scanned = await teardown(target);
      expect([...scanned.killed, ...scanned.survivors].map((p) => p.pid)).toEqual([4194401]);

      // The last pid handed out is the main process's and it is gone: nothing to look for.
      writeFileSync(join(fake, 'sys', 'kernel', 'ns_last_pid'), '4194400\n');
      const skipped = await teardown(target);
      expect(skipped).toMatchObject({ killed: [], survivors: [], complete: true });

      // ...but not while a process holds that pid.
      mkdirSync(join(fake, '4194400'));
      const held = await teardown(target);
      expect([...held.killed, ...held.survivors].map((p) => p.pid)).toEqual([4194401]);
    } finally {
      rmSync(fake, { recursive: true, force: true });
    }
  });
});
