import { describe, expect, it } from 'vitest';
import { CappedOutput, sliceOfKept } from './output';

const enc = new TextEncoder();

function markerFor(dropped: number): string {
  return `\n[warden: ${dropped.toLocaleString('en-US')} characters dropped here]\n`;
}

/** What the contract says is kept: the first ceil(cap/2) and the last floor(cap/2) characters. */
function expectedText(s: string, cap: number): string {
  if (s.length <= cap) return s;
  const head = Math.ceil(cap / 2);
  const tail = cap - head;
  return s.slice(0, head) + markerFor(s.length - cap) + s.slice(s.length - tail);
}

/** Feeds `bytes` in chunks of `size` and ends the stream; returns the live texts too. */
function feed(out: CappedOutput, bytes: Uint8Array, size: number): string {
  let live = '';
  for (let i = 0; i < bytes.length; i += size) live += out.push(bytes.subarray(i, i + size));
  live += out.end();
  return live;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Splits text() at its one marker; asserts there is at most one. */
function parts(text: string): { head: string; dropped: number; tail: string } {
  const re = /\n\[warden: ([\d,]+) characters dropped here\]\n/g;
  const found = [...text.matchAll(re)];
  expect(found.length).toBeLessThanOrEqual(1);
  if (found.length === 0) return { head: text, dropped: 0, tail: '' };
  const m = found[0]!;
  return { head: text.slice(0, m.index), dropped: Number(m[1]!.replace(/,/g, '')), tail: text.slice(m.index! + m[0].length) };
}

describe('CappedOutput', () => {
  it('keeps everything exactly under the cap, across chunks', () => {
    const out = new CappedOutput(100);
    expect(out.push(enc.encode('hello '))).toBe('hello ');
    expect(out.push(enc.encode('world\n'))).toBe('world\n');
    expect(out.end()).toBe('');
    expect(out.text()).toBe('hello world\n');
    expect(out.dropped).toBe(0);
    expect(out.totalChars).toBe(12);
  });

  it('keeps everything at exactly the cap with no marker', () => {
    const out = new CappedOutput(10);
    feed(out, enc.encode('0123456789'), 3);
    expect(out.text()).toBe('0123456789');
    expect(out.dropped).toBe(0);
  });

  it('over the cap keeps head and tail, the marker once, and counts dropped exactly', () => {
    const s = Array.from({ length: 1000 }, (_, i) => String.fromCharCode(97 + (i % 26))).join('');
    const out = new CappedOutput(10);
    feed(out, enc.encode(s), 64);
    expect(out.text()).toBe(`abcde${markerFor(990)}hijkl`);
    expect(out.dropped).toBe(990);
    expect(out.totalChars).toBe(1000);
    expect(out.text().match(/characters dropped here/g)).toHaveLength(1);
  });

  it('the marker groups thousands', () => {
    const out = new CappedOutput(4);
    feed(out, enc.encode('x'.repeat(12_349)), 1000);
    expect(out.text()).toBe(`xx\n[warden: 12,345 characters dropped here]\nxx`);
  });

  it.each([
    [2, 1],
    [2, 5],
    [3, 1],
    [3, 2],
    [3, 4096],
    [10, 1],
    [11, 7],
    [1000, 3],
    [1000, 1000],
  ])('cap %i, chunks of %i bytes: matches head + marker + tail for every length', (cap, size) => {
    const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
    for (const length of [0, 1, 2, 3, 4, cap - 1, cap, cap + 1, cap + 2, 2 * cap, 2 * cap + 1, 5 * cap + 3, 3000]) {
      if (length < 0) continue;
      const s = Array.from({ length }, (_, i) => alphabet[i % alphabet.length]).join('');
      const out = new CappedOutput(cap);
      const live = feed(out, enc.encode(s), size);
      expect(live, `length ${length}`).toBe(s);
      expect(out.text(), `length ${length}`).toBe(expectedText(s, cap));
      expect(out.dropped, `length ${length}`).toBe(Math.max(0, length - cap));
      expect(out.totalChars).toBe(length);
    }
  });

  it('many tiny chunks: one byte at a time, 200,000 of them', () => {
    const s = Array.from({ length: 200_000 }, (_, i) => String(i % 10)).join('');
    const bytes = enc.encode(s);
    const out = new CappedOutput(1000);
    for (let i = 0; i < bytes.length; i += 1) out.push(bytes.subarray(i, i + 1));
    out.end();
    expect(out.text()).toBe(expectedText(s, 1000));
    expect(out.dropped).toBe(199_000);
  });

  it('decodes multi-byte UTF-8 split across chunk boundaries at every split point', () => {
    const s = 'aé€😀z ü漢字🎉!';
    const bytes = enc.encode(s);
    for (let size = 1; size <= bytes.length; size += 1) {
      const out = new CappedOutput(1000);
      const live = feed(out, bytes, size);
      expect(out.text(), `chunk size ${size}`).toBe(s);
      expect(live, `chunk size ${size}`).toBe(s);
    }
    // Two chunks cut inside the emoji's four bytes, at each offset.
    const at = enc.encode('aé€').length;
    for (let cut = at + 1; cut < at + 4; cut += 1) {
      const out = new CappedOutput(1000);
      out.push(bytes.subarray(0, cut));
      out.push(bytes.subarray(cut));
      out.end();
      expect(out.text()).toBe(s);
    }
  });

  it('turns invalid bytes into U+FFFD and keeps going', () => {
    const out = new CappedOutput(100);
    out.push(Uint8Array.from([0x61, 0xff, 0x62]));
    out.push(Uint8Array.from([0xc3, 0x28])); // a lead byte followed by ASCII
    out.push(Uint8Array.from([0xed, 0xa0, 0x80])); // an encoded surrogate is invalid UTF-8
    out.end();
    expect(out.text()).toBe('a\uFFFDb\uFFFD(\uFFFD\uFFFD\uFFFD');
    expect(out.text()).not.toMatch(LONE_SURROGATE);
  });

  it('holds a partial sequence until more bytes come, and end() flushes it as U+FFFD', () => {
    const out = new CappedOutput(100);
    expect(out.push(Uint8Array.from([0x78, 0xe2, 0x82]))).toBe('x');
    expect(out.text()).toBe('x');
    expect(out.end()).toBe('\uFFFD');
    expect(out.text()).toBe('x\uFFFD');
    expect(out.totalChars).toBe(2);
  });

  it('a partial sequence cut short by an ASCII chunk becomes U+FFFD before that chunk, not after it', () => {
    for (const partial of [[0xe2, 0x82], [0xe2, 0x80], [0xf0, 0x9f, 0x98]]) {
      const out = new CappedOutput(100);
      let live = out.push(Uint8Array.from([0x78, ...partial]));
      live += out.push(enc.encode('abc'));
      live += out.end();
      expect(live, `${partial}`).toBe('x\uFFFDabc');
      expect(out.text(), `${partial}`).toBe('x\uFFFDabc');
    }
  });

  it('strips a BOM that starts the stream, even after an empty chunk, and keeps one that follows text', () => {
    const bom = [0xef, 0xbb, 0xbf];
    const first = new CappedOutput(100);
    expect(first.push(new Uint8Array(0))).toBe('');
    expect(first.push(Uint8Array.from([...bom, 0x78]))).toBe('x');
    expect(first.text()).toBe('x');
    const later = new CappedOutput(100);
    expect(later.push(enc.encode('ab'))).toBe('ab');
    expect(later.push(Uint8Array.from([...bom, 0x63]))).toBe('\uFEFFc');
    expect(later.push(Uint8Array.from([...bom]))).toBe('\uFEFF');
    expect(later.text()).toBe('ab\uFEFFc\uFEFF');
  });

  it('a partial sequence flushed by end() still lands in the tail past the cap', () => {
    const out = new CappedOutput(4);
    out.push(enc.encode('abcdefgh'));
    out.push(Uint8Array.from([0xf0, 0x9f]));
    out.end();
    expect(out.text()).toBe(`ab${markerFor(5)}h\uFFFD`);
    expect(out.dropped).toBe(5);
  });

  it.each([
    ['at the head boundary', 'a😀bcdefgh', 4],
    ['at the tail boundary', 'abcdefg😀h', 4],
    ['at both', 'a😀bcdefg😀h', 4],
    ['cap of 2', '😀😀😀', 2],
    ['cap of 3', '😀😀😀', 3],
    ['emoji only, odd cap', '😀'.repeat(50), 7],
  ])('a surrogate pair %s is never split into a lone surrogate (%s, cap %i)', (_where, s, cap) => {
    const bytes = enc.encode(s);
    for (let size = 1; size <= bytes.length; size += 1) {
      const out = new CappedOutput(cap);
      feed(out, bytes, size);
      const text = out.text();
      expect(text, `chunk size ${size}: ${JSON.stringify(text)}`).not.toMatch(LONE_SURROGATE);
      expect(Buffer.from(text, 'utf8').toString('utf8')).toBe(text);
      const { head, dropped, tail } = parts(text);
      // Nothing is lost silently: what is shown plus what the marker counts is all of it.
      expect(head.length + dropped + tail.length).toBe(s.length);
      expect(out.dropped).toBe(dropped);
      expect(s.startsWith(head)).toBe(true);
      expect(s.endsWith(tail)).toBe(true);
      // Never more than the cap, and at most one character short of each half.
      expect(head.length + tail.length).toBeLessThanOrEqual(cap);
      expect(head.length).toBeGreaterThanOrEqual(Math.ceil(cap / 2) - 1);
      expect(tail.length).toBeGreaterThanOrEqual(cap - Math.ceil(cap / 2) - 1);
    }
  });

  it('the emoji at the boundaries: exact kept text', () => {
    const out = new CappedOutput(4);
    feed(out, enc.encode('a😀bcdefg😀h'), 1);
    expect(out.text()).toBe(`a${markerFor(10)}h`);
    expect(out.dropped).toBe(10);
  });

  it('an emoji that fits whole in the head and the tail is kept', () => {
    const out = new CappedOutput(6);
    feed(out, enc.encode('😀a' + 'x'.repeat(20) + 'b😀'), 2);
    expect(out.text()).toBe(`😀a${markerFor(20)}b😀`);
  });
});

describe('CappedOutput: an escape sequence the cut splits', () => {
  const run = (text: string, cap: number, size: number) => {
    const out = new CappedOutput(cap);
    feed(out, enc.encode(text), size);
    return out;
  };

  it('drops the rest of a sequence whose ESC went with the middle: no "[4m" after the marker, counted exactly', () => {
    const text = `HEAD!${'z'.repeat(40)}\x1b[4mOK`;
    for (const size of [1, 3, 7, text.length]) {
      const out = run(text, 10, size);
      // Head "HEAD!", the tail window "[4mOK" starts inside ESC [ 4 m: only "OK" is kept.
      expect(out.dropped, `chunks of ${size}`).toBe(text.length - 5 - 2);
      expect(out.text(), `chunks of ${size}`).toBe(`HEAD!${markerFor(text.length - 7)}OK`);
    }
  });

  it('drops the start of a sequence the head ends in', () => {
    const text = `ab\x1b[1m${'y'.repeat(30)}tail!`;
    const out = run(text, 10, 4);
    expect(out.text()).toBe(`ab${markerFor(text.length - 7)}tail!`);
    expect(out.dropped).toBe(text.length - 7);
  });

  it('drops both ends of one sequence the cut falls inside, its ESC in the head and its final byte in the tail', () => {
    // Head "abc\x1b[", middle "1;2 ", tail "qWORL": the ESC that begins the tail's "q" is in the head, not the middle.
    const text = 'abc\x1b[1;2 qWORL';
    for (const size of [1, 4, text.length]) {
      const out = run(text, 10, size);
      expect(out.text(), `chunks of ${size}`).toBe(`abc${markerFor(7)}WORL`);
      expect(out.dropped, `chunks of ${size}`).toBe(7);
    }
  });

  it('keeps a whole sequence at either edge, and text that only looks like one', () => {
    const text = `\x1b[31mR${'q'.repeat(30)}\x1b[0m`;
    const out = run(text, 12, 5);
    expect(out.text()).toBe(`\x1b[31mR${markerFor(text.length - 12)}qq\x1b[0m`);
    // "[4m" written as text, after a plain character: kept as written.
    const plain = run(`HEAD!${'z'.repeat(40)}x[4mOK`, 10, 3);
    expect(plain.text().endsWith('[4mOK')).toBe(true);
  });

  it('keeps text after a lone ESC at the tail\'s start as written: only a sequence\'s own rest is dropped', () => {
    const text = `HEAD!${'z'.repeat(40)}\x1b\nOK!!`;
    for (const size of [1, 7, text.length]) {
      const out = run(text, 10, size);
      expect(out.text(), `chunks of ${size}`).toBe(`HEAD!${markerFor(41)}\nOK!!`);
      expect(out.dropped).toBe(41);
    }
  });

  it('the head never ends in the start of a sequence, even one an emoji cut in half follows', () => {
    const text = `ab\x1b[\u{1F600}${'y'.repeat(30)}tail!`;
    const out = run(text, 10, 3);
    expect(out.text()).toBe(`ab${markerFor(34)}tail!`);
    expect(out.dropped).toBe(34);
  });

  it('slices from any offset in agreement with the count', () => {
    const text = `HEAD!${'z'.repeat(40)}\x1b[4mOK`;
    const out = run(text, 10, 6);
    for (let from = 0; from <= text.length; from++) {
      const { text: shown, dropped } = out.slice(from);
      const body = shown.replace(/\n\[warden: [\d,]+ characters dropped here\]\n/, '');
      expect(body.length + dropped, `from ${from}`).toBe(Math.max(0, text.length - from));
    }
  });
});

describe('CappedOutput.slice: the kept text from a character offset of the whole stream', () => {
  /** 26 letters through a cap of 10: head abcde (0-4), dropped 5-20, tail vwxyz (21-25). */
  function letters(): CappedOutput {
    const out = new CappedOutput(10);
    feed(out, enc.encode('abcdefghijklmnopqrstuvwxyz'), 3);
    return out;
  }

  it('from 0 is text() with all that was dropped', () => {
    const out = letters();
    expect(out.slice(0)).toEqual({ text: `abcde${markerFor(16)}vwxyz`, dropped: 16 });
    expect(out.slice(0).text).toBe(out.text());
  });

  it('inside the head: the rest of the head, the marker, the tail', () => {
    expect(letters().slice(3)).toEqual({ text: `de${markerFor(16)}vwxyz`, dropped: 16 });
    expect(letters().slice(4)).toEqual({ text: `e${markerFor(16)}vwxyz`, dropped: 16 });
  });

  it('inside the dropped middle: a marker for what was dropped from there, then the tail', () => {
    expect(letters().slice(5)).toEqual({ text: `${markerFor(16)}vwxyz`, dropped: 16 });
    expect(letters().slice(12)).toEqual({ text: `${markerFor(9)}vwxyz`, dropped: 9 });
    expect(letters().slice(20)).toEqual({ text: `${markerFor(1)}vwxyz`, dropped: 1 });
  });

  it('inside the tail: the tail from there; at or past the end: nothing', () => {
    expect(letters().slice(21)).toEqual({ text: 'vwxyz', dropped: 0 });
    expect(letters().slice(23)).toEqual({ text: 'xyz', dropped: 0 });
    expect(letters().slice(26)).toEqual({ text: '', dropped: 0 });
    expect(letters().slice(1000)).toEqual({ text: '', dropped: 0 });
  });

  it('under the cap: plain text from the offset', () => {
    const out = new CappedOutput(100);
    feed(out, enc.encode('hello world\n'), 4);
    expect(out.slice(6)).toEqual({ text: 'world\n', dropped: 0 });
    expect(out.slice(12)).toEqual({ text: '', dropped: 0 });
    expect(new CappedOutput(100).slice(0)).toEqual({ text: '', dropped: 0 });
  });

  it('a surrogate pair cut at the head or the tail goes with the dropped middle, as in text()', () => {
    // a 😀(1-2) b c d e f g 😀(9-10) h: the head keeps "a", the tail "h".
    const out = new CappedOutput(4);
    feed(out, enc.encode('a😀bcdefg😀h'), 1);
    expect(out.slice(0)).toEqual({ text: `a${markerFor(10)}h`, dropped: 10 });
    expect(out.slice(1)).toEqual({ text: `${markerFor(10)}h`, dropped: 10 });
    expect(out.slice(3)).toEqual({ text: `${markerFor(8)}h`, dropped: 8 });
    expect(out.slice(9)).toEqual({ text: `${markerFor(2)}h`, dropped: 2 });
    expect(out.slice(10)).toEqual({ text: `${markerFor(1)}h`, dropped: 1 });
    expect(out.slice(11)).toEqual({ text: 'h', dropped: 0 });
  });

  it('whole pairs at the edges are kept whole from any offset before them', () => {
    const out = new CappedOutput(6);
    feed(out, enc.encode('😀a' + 'x'.repeat(20) + 'b😀'), 2);
    expect(out.slice(0)).toEqual({ text: `😀a${markerFor(20)}b😀`, dropped: 20 });
    expect(out.slice(2)).toEqual({ text: `a${markerFor(20)}b😀`, dropped: 20 });
    expect(out.slice(22)).toEqual({ text: `${markerFor(1)}b😀`, dropped: 1 });
    expect(out.slice(23)).toEqual({ text: 'b😀', dropped: 0 });
    expect(out.slice(24)).toEqual({ text: '😀', dropped: 0 });
  });

  it('shown characters plus dropped are exactly what lies past the offset, at every offset and cap', () => {
    const s = 'ab😀cdé' + 'xyz'.repeat(7) + '😀😀tail';
    const bytes = enc.encode(s);
    for (const cap of [2, 3, 5, 8, 13, 100]) {
      const out = new CappedOutput(cap);
      feed(out, bytes, 5);
      for (let from = 0; from <= s.length; from++) {
        const { text, dropped } = out.slice(from);
        const shown = text.replace(/\n\[warden: [\d,]+ characters dropped here\]\n/g, '');
        expect(shown.length + dropped, `cap ${cap}, from ${from}`).toBe(s.length - from);
        expect(s.endsWith(parts(text).tail || shown)).toBe(true);
        if (out.dropped === 0) expect(text).toBe(s.slice(from));
      }
    }
  });
});


describe('sliceOfKept: the same slices from the kept text alone', () => {
  // A result read back from the history has only its text and dropped count: every offset must slice as the engine did.
  const streams: [string, string, number][] = [
    ['ASCII, no cut', 'x'.repeat(500), 1000],
    ['ASCII, cut', Array.from({ length: 3000 }, (_, i) => String.fromCharCode(97 + (i % 26))).join(''), 1000],
    ['surrogate pairs at the edges', '\u{1F600}'.repeat(2000), 1001],
    ['an escape sequence split by the cut', `${'a'.repeat(498)}\x1b[31mred${'b'.repeat(3000)}\x1b[0m${'c'.repeat(497)}`, 1000],
    // It prints the very marker its cut makes (4,000 dropped), in the kept head and in the kept tail.
    ['the marker text printed by the stream itself', `${markerFor(4000)}${'d'.repeat(4918)}${markerFor(4000)}`, 1000],
  ];
  for (const [what, text, cap] of streams) {
    it(what, () => {
      const out = new CappedOutput(cap);
      feed(out, enc.encode(text), 97);
      const kept = out.text();
      for (let from = 0; from <= out.totalChars + 2; from += 7) {
        const { total, ...slice } = sliceOfKept(kept, out.dropped, from);
        expect(slice, `from ${from}`).toEqual(out.slice(from));
        expect(total).toBe(out.totalChars);
      }
    });
  }
});

describe('slice(from) at every offset, against a model of head, marker and tail', () => {
  /** The contract's answer for an ASCII stream: no pair or escape to move the cut. */
  function model(stream: string, cap: number, from: number): { text: string; dropped: number } {
    const total = stream.length;
    if (from >= total) return { text: '', dropped: 0 };
    if (total <= cap) return { text: stream.slice(from), dropped: 0 };
    const headEnd = Math.ceil(cap / 2);
    const tailStart = total - (cap - headEnd);
    const tail = stream.slice(tailStart);
    if (from >= tailStart) return { text: stream.slice(from), dropped: 0 };
    if (from >= headEnd) return { text: markerFor(tailStart - from) + tail, dropped: tailStart - from };
    return { text: stream.slice(from, headEnd) + markerFor(tailStart - headEnd) + tail, dropped: tailStart - headEnd };
  }

  it.each([
    [10, 26, 1],
    [10, 26, 7],
    [11, 40, 3],
    [10, 10, 4],
    [10, 9, 2],
  ])('cap %i, %i characters in chunks of %i: CappedOutput and sliceOfKept both give the model', (cap, length, chunk) => {
    const stream = Array.from({ length }, (_, i) => String.fromCharCode(97 + (i % 26))).join('');
    const out = new CappedOutput(cap);
    for (let at = 0; at < length; at += chunk) out.push(enc.encode(stream.slice(at, at + chunk)));
    out.end();
    const kept = out.slice(0);
    for (let from = 0; from <= length + 1; from++) {
      const want = model(stream, cap, from);
      expect(out.slice(from), `CappedOutput from ${from}`).toEqual(want);
      expect(sliceOfKept(kept.text, out.dropped, from), `sliceOfKept from ${from}`).toEqual({ ...want, total: length });
    }
  });
});

describe('a cut never splits a surrogate pair or an escape sequence: random streams against a model', () => {
  // Streams built of tokens (a character, a surrogate pair, a whole escape sequence): the model knows
  // where each token starts and ends, so it keeps the head up to the last token that fits whole and the
  // tail from the first token that starts in it, and counts the rest as dropped. No regex is shared with output.ts.
  const TOKENS = ['a', 'b', 'é', '\u{1F600}', '\u{1F44D}', '\x1b[31m', '\x1b[0m', '\x1b[38;5;208m', '\x1b[?25l', '\x1b[1;2 q', '\x1bc', '[', '4', 'm', ';', '\u{10000}', '\u{10FFFF}', '\uFFFD', '\uE000'];
  // U+10000 and U+10FFFF are the first and last pairs (D800 DC00, DBFF DFFF); U+FFFD and U+E000 lie past the low surrogates.

  function random(seed: number): () => number {
    let x = seed >>> 0 || 1;
    return () => {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      return (x >>> 0) / 2 ** 32;
    };
  }

  function stream(rand: () => number, n: number): { text: string; starts: Set<number> } {
    let text = '';
    const starts = new Set<number>([0]);
    for (let i = 0; i < n; i++) {
      text += TOKENS[Math.floor(rand() * TOKENS.length)]!;
      starts.add(text.length);
    }
    return { text, starts };
  }

  function model(text: string, starts: Set<number>, cap: number): { text: string; dropped: number } {
    if (text.length <= cap) return { text, dropped: 0 };
    let headEnd = Math.ceil(cap / 2);
    while (!starts.has(headEnd)) headEnd--;
    let tailStart = text.length - (cap - Math.ceil(cap / 2));
    while (!starts.has(tailStart)) tailStart++;
    return { text: text.slice(0, headEnd) + markerFor(tailStart - headEnd) + text.slice(tailStart), dropped: tailStart - headEnd };
  }

  it('text() and dropped for 400 streams, caps and chunkings, bytes split anywhere', () => {
    const rand = random(20);
    for (let i = 0; i < 400; i++) {
      const { text, starts } = stream(rand, 5 + Math.floor(rand() * 120));
      const cap = 1 + Math.floor(rand() * 60);
      const bytes = enc.encode(text);
      const out = new CappedOutput(cap);
      let live = '';
      for (let at = 0; at < bytes.length; ) {
        const size = [1, 2, 3, 5, 8, 40, 200][Math.floor(rand() * 7)]!;
        live += out.push(bytes.subarray(at, at + size));
        at += size;
      }
      live += out.end();
      const want = model(text, starts, cap);
      const what = `stream ${i}, cap ${cap}: ${JSON.stringify(text)}`;
      expect(live, what).toBe(text);
      expect(out.totalChars, what).toBe(text.length);
      expect(out.text(), what).toBe(want.text);
      expect(out.dropped, what).toBe(want.dropped);
      expect(out.slice(0), what).toEqual(want);
      expect(sliceOfKept(want.text, want.dropped, 0), what).toEqual({ ...want, total: text.length });
    }
  });
});

describe('sliceOfKept: the marker nearest the middle is Warden\'s, wherever the stream prints its text', () => {
  // Cap 200: head 100, tail 100, 1,000 dropped between. The stream prints the very marker the cut
  // makes (markerFor(1000), 41 characters) once in the head and once in the tail, at every place from
  // the edges of the text to right beside Warden's own: only the middle one may be taken as the cut.
  const marker = markerFor(1000);
  const m = marker.length;
  const places = [0, 1, 2, 29, 100 - m - 1, 100 - m];

  it('every offset slices as the engine did, for printed markers at either end or next to the cut', () => {
    for (const a of places) {
      for (const b of places) {
        const head = 'h'.repeat(a) + marker + 'h'.repeat(100 - m - a);
        const tail = 't'.repeat(b) + marker + 't'.repeat(100 - m - b);
        const stream = head + 'x'.repeat(1000) + tail;
        const out = new CappedOutput(200);
        out.push(enc.encode(stream));
        out.end();
        const kept = out.text();
        expect(kept).toBe(head + marker + tail);
        for (let from = 0; from <= stream.length + 1; from++) {
          const { total, ...slice } = sliceOfKept(kept, 1000, from);
          const what = `printed at ${a} and ${b}, from ${from}`;
          expect(slice, what).toEqual(out.slice(from));
          expect(total, what).toBe(stream.length);
        }
      }
    }
  });

  it('a head cut short by an escape sequence does not hand the cut to a marker printed at the tail\'s start', () => {
    // "\x1b[31" ends the 100-character head and goes with the middle: the head keeps 96, the tail 100, so
    // the marker the stream prints first in its tail lies nearly as close to the middle as Warden's.
    const tail = marker + 't'.repeat(100 - m);
    const stream = 'h'.repeat(96) + '\x1b[31m' + 'x'.repeat(995) + tail;
    const out = new CappedOutput(200);
    out.push(enc.encode(stream));
    const kept = out.text();
    expect(kept).toBe('h'.repeat(96) + marker + tail);
    for (let from = 0; from <= stream.length; from++) {
      const { total, ...slice } = sliceOfKept(kept, 1000, from);
      expect(slice, `from ${from}`).toEqual(out.slice(from));
      expect(total).toBe(stream.length);
    }
  });

  it('a kept text with a count but no marker (not one Warden wrote) is plain text', () => {
    for (let from = -1; from <= 12; from++) {
      expect(sliceOfKept('plain text', 5, from), `from ${from}`).toEqual({ text: 'plain text'.slice(Math.max(0, from)), dropped: 0, total: 10 });
    }
  });

  it('a stream under the cap that prints a zero marker is plain text', () => {
    const stream = `ab${markerFor(0)}cd`;
    for (let from = 0; from <= stream.length; from++) {
      expect(sliceOfKept(stream, 0, from), `from ${from}`).toEqual({ text: stream.slice(from), dropped: 0, total: stream.length });
    }
  });

  it('a negative offset reads from the start, as CappedOutput.slice does', () => {
    for (const stream of ['short', 'a'.repeat(50) + 'b'.repeat(50)]) {
      const out = new CappedOutput(20);
      out.push(enc.encode(stream));
      const kept = out.slice(0);
      for (const from of [-1, -7, -1000]) {
        expect(out.slice(from), `${stream.length} characters, from ${from}`).toEqual(kept);
        expect(sliceOfKept(kept.text, kept.dropped, from), `${stream.length} characters, from ${from}`).toEqual({ ...kept, total: stream.length });
      }
    }
  });
});
