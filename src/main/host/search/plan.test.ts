// The plain parts of a search as tables: the stretch one scan takes and the
// context around it, and the cursor, read back or refused in one line.

import { describe, expect, it } from 'vitest';
import { InputError } from '../../../shared/errors';
import { decodeCursor, encodeCursor, regionFor, type SearchCursor } from './plan';

describe('regionFor', () => {
  const text = 'l1\nl2\nl3\nl4\nl5\nl6\n'; // line n starts at 3 * (n - 1)
  it.each<[number, number, number, { base: number; scanFrom: number; scanTo: number; end: number }]>([
    // from, budget, context
    [0, 100, 0, { base: 0, scanFrom: 0, scanTo: 18, end: 18 }],
    [0, 1, 0, { base: 0, scanFrom: 0, scanTo: 3, end: 3 }],
    [0, 3, 0, { base: 0, scanFrom: 0, scanTo: 3, end: 3 }],
    [0, 4, 0, { base: 0, scanFrom: 0, scanTo: 6, end: 6 }],
    [6, 3, 1, { base: 3, scanFrom: 6, scanTo: 9, end: 12 }],
    [6, 3, 2, { base: 0, scanFrom: 6, scanTo: 9, end: 15 }],
    [6, 3, 9, { base: 0, scanFrom: 6, scanTo: 9, end: 18 }],
    [12, 1000, 1, { base: 9, scanFrom: 12, scanTo: 18, end: 18 }],
  ])('from %d, budget %d, context %d', (from, budget, context, expected) => {
    expect(regionFor(text, from, budget, context)).toEqual(expected);
  });

  it('takes the rest of a text whose last line has no line break', () => {
    expect(regionFor('aaaa\nbbbb', 0, 6, 0)).toEqual({ base: 0, scanFrom: 0, scanTo: 9, end: 9 });
    expect(regionFor('aaaa\nbbbb', 5, 1, 1)).toEqual({ base: 0, scanFrom: 5, scanTo: 9, end: 9 });
  });
});

describe('the cursor', () => {
  const cursor: SearchCursor = {
    spec: { pattern: 'Trace(back)? \\d+ "x"', literal: false, ignoreCase: true, stream: 'stderr', context: 3 },
    runs: ['0123456789ab', 'abcdef012345'],
    single: false,
    index: 1,
    at: { stdout: [0, 1], stderr: [4096, 77] },
  };

  it('reads back what it was, and is opaque URL-safe text', () => {
    const text = encodeCursor(cursor);
    expect(text).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(text)).toEqual(cursor);
    const single = { ...cursor, spec: { ...cursor.spec, literal: true, ignoreCase: false, stream: 'both' as const }, runs: ['0123456789ab'], single: true, index: 0 };
    expect(decodeCursor(encodeCursor(single))).toEqual(single);
  });

  const packed = (over: Record<number, unknown>) => {
    const base: unknown[] = [1, 'x', 0, 'both', 2, ['0123456789ab'], 0, [0, 1], [0, 1]];
    for (const [i, v] of Object.entries(over)) base[Number(i)] = v;
    return Buffer.from(JSON.stringify(base)).toString('base64url');
  };

  it.each<[string, string]>([
    ['empty', ''],
    ['not base64url', 'a b'],
    ['not JSON', Buffer.from('{nope').toString('base64url')],
    ['an object', Buffer.from('{}').toString('base64url')],
    ['another version', packed({ 0: 2 })],
    ['an empty pattern', packed({ 1: '' })],
    ['a pattern too long', packed({ 1: 'x'.repeat(1001) })],
    ['unknown flags', packed({ 2: 8 })],
    ['a bad stream', packed({ 3: 'all' })],
    ['context past 20', packed({ 4: 21 })],
    ['no runs', packed({ 5: [] })],
    ['more runs than a search takes', packed({ 5: Array.from({ length: 1001 }, () => '0123456789ab') })],
    ['a run id that is none', packed({ 5: ['../etc'] })],
    ['an index past the runs', packed({ 6: 1 })],
    ['a negative offset', packed({ 7: [-1, 1] })],
    ['line 0', packed({ 8: [0, 0] })],
    ['a fractional offset', packed({ 7: [1.5, 1] })],
  ])('refuses %s in one line', (_name, text) => {
    expect(() => decodeCursor(text)).toThrow(InputError);
    expect(() => decodeCursor(text)).toThrow(/^cursor is not one a search answered: pass it back exactly as an answer gave it/);
  });
});
