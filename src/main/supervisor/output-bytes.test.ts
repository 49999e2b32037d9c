// CappedOutput.take keeps large ASCII chunks as bytes instead of strings (the
// engine uses it while nobody listens to a run's events): whatever it keeps
// must read back exactly as what push keeps.

import { describe, expect, it } from 'vitest';
import { CappedOutput, pieceText } from './output';
import { Supervisor } from './supervisor';

const enc = new TextEncoder();

/** Chunks of every kind: large ASCII ones (kept as bytes), small ones, split UTF-8, escape sequences, invalid bytes. */
function chunks(): Uint8Array[] {
  const out: Uint8Array[] = [];
  const ascii = (n: number, seed: number) => enc.encode(Array.from({ length: Math.ceil(n / 10) }, (_, i) => `${String((seed * 7919 + i) % 1e8).padStart(8, '0')}\x1b[`.slice(0, 9) + '\n').join('').slice(0, n));
  for (let i = 0; i < 40; i++) {
    out.push(ascii(33 * 1024 + i * 997, i)); // over the size kept as bytes
    if (i % 3 === 0) out.push(ascii(100 + i, i)); // small: a string
    if (i % 4 === 1) {
      const emoji = enc.encode(`é😀${'x'.repeat(i)}😀`);
      out.push(emoji.subarray(0, 3), emoji.subarray(3)); // a sequence split across chunks
    }
    if (i % 5 === 2) out.push(Uint8Array.of(0x61, 0xff, 0x62)); // invalid: U+FFFD
    if (i % 7 === 3) out.push(enc.encode('\x1b[4munderlined\x1b[0m'), ascii(70 * 1024, i)); // bigger than a pool buffer
  }
  return out;
}

/** push on one side; take on the other from one buffer reused for every chunk (as a reader with its own buffer would). */
function both(cap: number): { pushed: CappedOutput; taken: CappedOutput } {
  const pushed = new CappedOutput(cap);
  const taken = new CappedOutput(cap);
  const scratch = Buffer.alloc(128 * 1024);
  for (const chunk of chunks()) {
    const live = pushed.push(chunk);
    scratch.set(chunk);
    expect(pieceText(taken.take(scratch.subarray(0, chunk.length)))).toBe(live);
    scratch.fill(0x5a); // the next chunk overwrites it
  }
  expect(taken.end()).toBe(pushed.end());
  return { pushed, taken };
}

describe('CappedOutput.take', () => {
  for (const cap of [1, 2, 1000, 65_537, 300_001, 1_000_000, 10_000_000]) {
    it(`keeps exactly what push keeps (cap ${cap.toLocaleString('en-US')}), from any offset`, () => {
      const { pushed, taken } = both(cap);
      expect(taken.totalChars).toBe(pushed.totalChars);
      expect(taken.dropped).toBe(pushed.dropped);
      expect(taken.text()).toBe(pushed.text());
      const total = pushed.totalChars;
      for (let i = 0; i <= 200; i++) {
        const from = Math.floor((total * i) / 200) + (i % 3) - 1;
        expect(taken.slice(from)).toEqual(pushed.slice(from));
      }
    });
  }

  it('returns small chunks and text that is not ASCII as strings, large ASCII ones as their bytes', () => {
    const out = new CappedOutput(1000);
    expect(typeof out.take(Buffer.from('small'))).toBe('string');
    const big = out.take(Buffer.alloc(40_000, 0x61));
    expect(Buffer.isBuffer(big)).toBe(true);
    expect(pieceText(big)).toBe('a'.repeat(40_000));
    expect(typeof out.take(Buffer.from('é'.repeat(40_000)))).toBe('string');
  });
});

describe('a run nobody listens to', () => {
  // Lines of numbers written 64 KiB at a time: large ASCII chunks, over the cap.
  const code = "import sys\nout = ''.join('%09d\\n' % i for i in range(400000)).encode()\nfor i in range(0, len(out), 65536): sys.stdout.buffer.write(out[i:i+65536])\n";
  const full = Array.from({ length: 400_000 }, (_, i) => `${String(i).padStart(9, '0')}\n`).join('');

  it('keeps the same output as one with a listener, and what the cap says', async () => {
    const cap = 1_000_000;
    const quiet = new Supervisor();
    const heard = new Supervisor();
    let events = 0;
    heard.subscribe((event) => void (event.type === 'output' && events++));
    const [a, b] = await Promise.all([quiet, heard].map((s) => s.wait(s.start({ argv: ['python3', '-c', code], outputCapChars: cap }).id)));
    expect(events).toBeGreaterThan(0);
    expect(a!.stdoutTruncated).toBe(full.length - cap);
    expect(a!.stdout).toBe(`${full.slice(0, cap / 2)}\n[warden: ${(full.length - cap).toLocaleString('en-US')} characters dropped here]\n${full.slice(full.length - cap / 2)}`);
    expect(b!.stdout).toBe(a!.stdout);
    expect(b!.stdoutTruncated).toBe(a!.stdoutTruncated);
  });
});
