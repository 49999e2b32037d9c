// The end-marker splitter (runtime/PROTOCOL.md): a marker is found and stripped
// however the reads cut it, and nothing else is ever held back for long or lost.

import { describe, expect, it } from 'vitest';
import { MarkerSplitter } from './marker';

const NONCE = '9f2c01ab';
const marker = (id: string, nonce = NONCE) => `\0warden-end:${nonce}:${id}\0\n`;

/** Feeds `chunks` and returns the pieces: output text, and `<id>` for each marker. */
function split(chunks: (string | Buffer)[], flush = true): string[] {
  const pieces: string[] = [];
  const s = new MarkerSplitter(
    NONCE,
    (data) => pieces.push(data.toString('utf8')),
    (id) => pieces.push(`<${id}>`),
  );
  for (const c of chunks) s.push(Buffer.isBuffer(c) ? c : Buffer.from(c, 'utf8'));
  if (flush) s.flush();
  // Adjacent output pieces are one stream: join them so the cut points do not matter.
  const joined: string[] = [];
  for (const p of pieces) {
    if (!p.startsWith('<') && joined.length > 0 && !joined[joined.length - 1]!.startsWith('<')) joined[joined.length - 1] += p;
    else joined.push(p);
  }
  return joined;
}

describe('MarkerSplitter', () => {
  it('strips a whole marker and splits the output at it', () => {
    expect(split([`before${marker('abc123')}after`])).toEqual(['before', '<abc123>', 'after']);
  });

  it('finds a marker cut at every possible point, and one fed byte by byte', () => {
    const text = `out put${marker('0123456789ab')}next`;
    for (let cut = 1; cut < text.length; cut++) {
      expect(split([text.slice(0, cut), text.slice(cut)]), `cut at ${cut}`).toEqual(['out put', '<0123456789ab>', 'next']);
    }
    expect(split([...Buffer.from(text)].map((b) => Buffer.of(b)))).toEqual(['out put', '<0123456789ab>', 'next']);
  });

  it('holds back only a possible marker beginning, and gives it back when it is not one', () => {
    const pieces: string[] = [];
    const s = new MarkerSplitter(NONCE, (d) => pieces.push(d.toString('latin1')), (id) => pieces.push(`<${id}>`));
    s.push(Buffer.from('progress\0war'));
    expect(pieces).toEqual(['progress']);
    s.push(Buffer.from('ning: plain text'));
    expect(pieces.join('')).toBe('progress\0warning: plain text');
  });

  it('leaves a marker with another nonce (a script printing a fake one) in the output', () => {
    const fake = marker('abc', 'fake');
    expect(split([`x${fake}y`])).toEqual([`x${fake}y`]);
  });

  it('treats an over-long id as output, not a marker', () => {
    const long = `\0warden-end:${NONCE}:${'a'.repeat(200)}\0\n`;
    expect(split([long])).toEqual([long]);
  });

  it('handles two markers and multi-byte text around them', () => {
    expect(split([`é${marker('a1')}`, `ü${marker('b2')}日本`])).toEqual(['é', '<a1>', 'ü', '<b2>', '日本']);
  });

  it('flushes a held-back partial marker at the end of the stream', () => {
    expect(split(['tail\0warden-en'])).toEqual(['tail\0warden-en']);
  });
});
