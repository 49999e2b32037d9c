import { describe, expect, it } from 'vitest';
import { countField, durationField, durationText, parseSize, sizeField, sizeText } from './form-fields';

describe('sizes and durations as the forms write them', () => {
  it('reads sizes like the engine: powers of 1024 with or without i, a bare number is bytes', () => {
    expect(parseSize('512Mi')).toBe(512 * 1024 ** 2);
    expect(parseSize('512M')).toBe(512 * 1024 ** 2);
    expect(parseSize('1.5GiB')).toBe(1.5 * 1024 ** 3);
    expect(parseSize(' 64mb ')).toBe(64 * 1024 ** 2);
    expect(parseSize('1048576')).toBe(1048576);
    expect(parseSize('512m')).toBe(512 * 1024 ** 2);
    expect(parseSize('5iB')).toBeUndefined();
    expect(parseSize('2 GB x')).toBeUndefined();
    expect(parseSize('')).toBeUndefined();
  });

  it('writes the shortest exact text, which reads back to the same value', () => {
    for (const ms of [500, 1_500, 5_000, 90_000, 120_000, 7_200_000, 0]) expect(durationField(durationText(ms), { label: 'x' }).value).toBe(ms);
    expect(durationText(120_000)).toBe('2m');
    expect(durationText(1_500)).toBe('1500ms');
    for (const n of [2 * 1024 ** 3, 512 * 1024 ** 2, 1536, 3 * 1024, 2e9]) expect(parseSize(sizeText(n))).toBe(n);
    expect(sizeText(2 * 1024 ** 3)).toBe('2Gi');
    expect(sizeText(2e9)).toBe('1953125Ki');
  });

  it('says what is wrong with a field in one line', () => {
    expect(durationField('', { label: 'Limit', optional: true })).toEqual({ value: null, error: null });
    expect(durationField('', { label: 'Grace' }).error).toBe('Grace is required, e.g. 5s.');
    expect(durationField('soon', { label: 'Limit' }).error).toBe('Limit: "soon" is not a duration such as 500ms, 30s, 1.5m or 2h.');
    expect(durationField('0s', { label: 'Limit', positive: true }).error).toBe('Limit must be more than 0.');
    expect(sizeField('', { label: 'Output kept' }).error).toBe('Output kept is required, e.g. 2Gi.');
    expect(sizeField(' ', { label: 'Memory limit', optional: true })).toEqual({ value: null, error: null });
    expect(sizeField(' 2Gi ', { label: 'Memory limit', optional: true })).toEqual({ value: 2 * 1024 ** 3, error: null });
    expect(sizeField('lots', { label: 'Memory limit' }).error).toBe('Memory limit must be a size such as 512M, 2G or 1.5Gi (K, M, G, T, with or without i or B, are powers of 1024), or a number of bytes, not "lots".');
    expect(sizeField(' 512m ', { label: 'Memory limit' })).toEqual({ value: 512 * 1024 ** 2, error: null });
    expect(countField('50_000', { label: 'Runs kept' }).value).toBe(50_000);
    expect(countField('0', { label: 'Runs kept' }).error).toBe('Runs kept must be at least 1.');
    expect(countField('1.5', { label: 'Runs kept' }).error).toMatch(/whole number/);
  });
});
