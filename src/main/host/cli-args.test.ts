import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../shared/duration';
import { parseRunArgs } from './cli-args';

describe('durations', () => {
  it.each([
    ['500ms', 500], ['30s', 30_000], ['1.5s', 1500], ['2m', 120_000], ['1h', 3_600_000], ['10', 10_000], ['.5s', 500],
  ])('%s is %d ms', (text, ms) => expect(parseDuration(text)).toBe(ms));
  it.each(['', 's', '5x', '-1s', '1s2', 'abc', '1e3s'])('%j is not a duration', (text) => expect(parseDuration(text)).toBeUndefined());
});

describe('warden run arguments', () => {
  it('reads options up to -- and keeps the command words as given', () => {
    const { request, format } = parseRunArgs(['--limit', '30s', '--grace=2s', '--keep-descendants', '--json', '--', 'python3', '--limit', '-c', 'x']);
    expect(format).toBe('json');
    expect(request).toEqual({ argv: ['python3', '--limit', '-c', 'x'], limitMs: 30_000, graceMs: 2000, keepDescendants: true });
  });
  it('takes the first word that is not an option as the command without --', () => {
    expect(parseRunArgs(['--limit', '1s', 'sleep', '5']).request.argv).toEqual(['sleep', '5']);
  });
  it('joins words into one shell string with --shell', () => {
    expect(parseRunArgs(['--shell', '--', 'echo', 'a', '|', 'cat']).request).toMatchObject({ argv: ['echo a | cat'], shell: true });
  });
});
