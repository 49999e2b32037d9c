// The one marker for dropped output (engine, history and clients alike), and
// how long a stream was from the text a result keeps of it.

import { describe, expect, it } from 'vitest';
import { droppedMarker, streamLength } from './stream-length';

describe('the dropped-output marker', () => {
  it.each([
    [1, '\n[warden: 1 characters dropped here]\n'],
    [999, '\n[warden: 999 characters dropped here]\n'],
    [1_000, '\n[warden: 1,000 characters dropped here]\n'],
    [1_234_567, '\n[warden: 1,234,567 characters dropped here]\n'],
  ])('for %i', (chars, text) => {
    expect(droppedMarker(chars)).toBe(text);
  });
});

describe('a stream\'s length from its kept text', () => {
  it.each<[string, string, number, number]>([
    ['nothing dropped', 'abc', 0, 3],
    ['a negative count is nothing dropped', 'abc', -5, 3],
    ['the marker in the text stands for what it counts', `head${droppedMarker(1000)}tail`, 1000, 1008],
    ['a marker for another count is text', `head${droppedMarker(999)}tail`, 1000, 4 + droppedMarker(999).length + 4 + 1000],
    ['no marker in the text: the text and the count', 'tail', 5, 9],
  ])('%s', (_name, text, dropped, length) => {
    expect(streamLength(text, dropped)).toBe(length);
  });
});
