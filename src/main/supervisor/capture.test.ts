// Output capture from real pipes (docs/architecture.md, "The result contract",
// Output): UTF-8 with replacement, at most outputCapChars per stream kept as
// head + marker + tail, everything past the cap still drained and counted.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULTS } from '../../shared/request';
import type { RunResult } from '../../shared/result';
import { Harness } from './proc-testkit';

let h: Harness;
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'warden-capture-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
beforeEach(() => {
  h = new Harness();
});
afterEach(async () => {
  await h.cleanup();
});

const MARKER = /\n\[warden: ([\d,]+) characters dropped here\]\n/g;

/**
 * Splits kept text at the one marker and checks it against the full output:
 * head is the real start, tail the real end, the count is what was dropped.
 */
function expectCapped(kept: string, truncated: number, full: { length: number; head: string; tail: string }, cap: number): void {
  const markers = [...kept.matchAll(MARKER)];
  expect(markers.length, 'the marker appears exactly once').toBe(1);
  const m = markers[0]!;
  expect(Number(m[1]!.replace(/,/g, ''))).toBe(truncated);
  expect(truncated).toBe(full.length - cap);
  const head = kept.slice(0, m.index);
  const tail = kept.slice(m.index! + m[0].length);
  expect(head.length + tail.length).toBe(cap);
  expect(head.length).toBe(Math.ceil(cap / 2));
  // Compare without printing megabytes on failure.
  expect(head === full.head.slice(0, head.length), 'kept head is the real start').toBe(true);
  expect(tail === full.tail.slice(full.tail.length - tail.length), 'kept tail is the real end').toBe(true);
}

/** Deterministic noise (xorshift32), so a failure reproduces byte for byte. */
function pseudoRandomBytes(length: number, seed: number): Buffer {
  const out = Buffer.alloc(length);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out[i] = x & 0xff;
  }
  return out;
}

function noteAbout(r: RunResult, stream: 'stdout' | 'stderr'): string | undefined {
  return r.notes.find((n) => n.includes(stream) && /dropped/.test(n));
}

describe('large and hostile output', () => {
  it('10 MB of invalid UTF-8 (0xFF bytes): replacement chars, capped at the default cap, count exact', async () => {
    const total = 10_000_000;
    const r = await h.run({ argv: ['bash', '-c', `head -c ${total} /dev/zero | tr '\\0' '\\377'`] });
    expect(r.verdict).toBe('completed');
    const cap = DEFAULTS.outputCapChars;
    // Each invalid byte decodes to one U+FFFD.
    const all = '\uFFFD'.repeat(cap);
    expect(r.stdoutTruncated).toBe(total - cap);
    expectCapped(r.stdout, r.stdoutTruncated, { length: total, head: all, tail: all }, cap);
    expect(r.stderrTruncated).toBe(0);
    expect(noteAbout(r, 'stdout')).toMatch(/10,000,000[^]*8,000,000/);
  });

  it('10 MB of random bytes decode exactly as a one-shot decode does, whatever the pipe chunking', async () => {
    const bytes = pseudoRandomBytes(10_000_000, 0x5eed);
    const file = join(dir, 'random.bin');
    writeFileSync(file, bytes);
    const expected = new TextDecoder('utf-8').decode(bytes);
    expect(expected).toContain('\uFFFD');
    const r = await h.run({ argv: ['cat', file] });
    expect(r.verdict).toBe('completed');
    const cap = DEFAULTS.outputCapChars;
    expect(r.stdoutTruncated).toBe(expected.length - cap);
    expectCapped(r.stdout, r.stdoutTruncated, { length: expected.length, head: expected, tail: expected }, cap);
  });

  it('a 50 MB line with no newline is drained and capped: head, one marker, the real tail', async () => {
    const total = 50_000_000;
    const r = await h.run({ argv: ['bash', '-c', `head -c ${total} /dev/zero | tr '\\0' a; printf END`] });
    expect(r.verdict).toBe('completed');
    const cap = DEFAULTS.outputCapChars;
    const real = { length: total + 3, head: 'a'.repeat(cap), tail: `${'a'.repeat(cap)}END` };
    expect(r.stdoutTruncated).toBe(total + 3 - cap);
    expectCapped(r.stdout, r.stdoutTruncated, real, cap);
    expect(r.stdout.endsWith('aEND')).toBe(true);
  });

  it('a 48 MB line of varying text (seq digits, no newline): kept head and tail are exactly the real start and end', async () => {
    const n = 7_000_000;
    const r = await h.run({ argv: ['bash', '-c', `seq 1 ${n} | tr -d '\\n'`] });
    expect(r.verdict).toBe('completed');
    const cap = DEFAULTS.outputCapChars;
    let length = 0;
    for (let i = 1; i <= n; i *= 10) length += (Math.min(n, i * 10 - 1) - i + 1) * String(i).length;
    const headParts: string[] = [];
    for (let i = 1, size = 0; size < cap; i++) {
      headParts.push(String(i));
      size += String(i).length;
    }
    const tailParts: string[] = [];
    for (let i = n, size = 0; size < cap; i--) {
      tailParts.push(String(i));
      size += String(i).length;
    }
    tailParts.reverse();
    expect(r.stdoutTruncated).toBe(length - cap);
    expectCapped(r.stdout, r.stdoutTruncated, { length, head: headParts.join(''), tail: tailParts.join('') }, cap);
    expect(r.stdout.endsWith('699999869999997000000')).toBe(true);
  });
});

describe('exact caps', () => {
  it('a small cap keeps exactly head + marker + tail, per stream, with exact counts', async () => {
    const cap = 11;
    const r = await h.run({ argv: ['bash', '-c', 'seq 1 20000; seq 50001 80000 >&2'], outputCapChars: cap });
    const out = Array.from({ length: 20_000 }, (_, i) => `${i + 1}\n`).join('');
    const err = Array.from({ length: 30_000 }, (_, i) => `${i + 50_001}\n`).join('');
    expect(r.stdoutTruncated).toBe(out.length - cap);
    expect(r.stderrTruncated).toBe(err.length - cap);
    expect(r.stdout).toBe(`${out.slice(0, 6)}\n[warden: ${(out.length - cap).toLocaleString('en-US')} characters dropped here]\n${out.slice(-5)}`);
    expectCapped(r.stderr, r.stderrTruncated, { length: err.length, head: err, tail: err }, cap);
    expect(r.stderr.slice(-5)).toBe('0000\n');
  });

  it('output exactly at the cap is kept whole; one character more drops exactly one', async () => {
    const atCap = await h.run({ argv: ['bash', '-c', 'printf "%0100d" 0'], outputCapChars: 100 });
    expect(atCap.stdout).toBe('0'.repeat(100));
    expect(atCap.stdoutTruncated).toBe(0);
    expect(noteAbout(atCap, 'stdout')).toBeUndefined();

    const over = await h.run({ argv: ['bash', '-c', 'printf "%0100d" 1; printf x'], outputCapChars: 100 });
    expect(over.stdoutTruncated).toBe(1);
    expectCapped(over.stdout, 1, { length: 101, head: `${'0'.repeat(99)}1x`, tail: `${'0'.repeat(99)}1x` }, 100);
    expect(over.stdout.endsWith('1x')).toBe(true);
  });

  it('multi-byte characters split across pipe reads decode without replacement chars', async () => {
    // 3-byte characters: the pipe's chunk boundaries (powers of two) fall inside them.
    const text = '€'.repeat(700_000) + 'ü'.repeat(300_001);
    const file = join(dir, 'multibyte.txt');
    writeFileSync(file, text, 'utf8');
    const r = await h.run({ argv: ['cat', file] });
    expect(r.stdoutTruncated).toBe(0);
    expect(r.stdout.includes('\uFFFD'), 'no replacement characters').toBe(false);
    expect(r.stdout === text, 'stdout equals the file').toBe(true);
  });

  it('a truncated multi-byte character at the very end becomes one replacement char', async () => {
    const r = await h.run({ argv: ['bash', '-c', "printf 'ok \\xe2\\x82'"] });
    expect(r.stdout).toBe('ok \uFFFD');
  });

  it('both streams flooding at once are drained fully without blocking each other', async () => {
    const n = 3_000_000;
    const script = `head -c ${n} /dev/zero | tr '\\0' o & head -c ${n} /dev/zero | tr '\\0' e >&2; wait`;
    const r = await h.run({ argv: ['bash', '-c', script], outputCapChars: 1_000 });
    expect(r.verdict).toBe('completed');
    expect(r.stdoutTruncated).toBe(n - 1_000);
    expect(r.stderrTruncated).toBe(n - 1_000);
    expect(r.stdout.replace(MARKER, '')).toBe('o'.repeat(1_000));
    expect(r.stderr.replace(MARKER, '')).toBe('e'.repeat(1_000));
  });
});
