import { describe, expect, it } from 'vitest';
import { readSize, SIZE_FORMS, sizeText } from './size';

const Ki = 1024;
const Mi = 1024 ** 2;
const Gi = 1024 ** 3;

describe('readSize', () => {
  it.each([
    // Kubernetes' binary suffixes, and the same with B, in any case.
    ['2Gi', 2 * Gi],
    ['512Mi', 512 * Mi],
    ['2Ki', 2 * Ki],
    ['1Ti', 1024 * Gi],
    ['1Pi', 1024 ** 5],
    ['1.5Gi', 1.5 * Gi],
    ['1.5GiB', 1.5 * Gi],
    ['512MiB', 512 * Mi],
    ['512mib', 512 * Mi],
    ['2gi', 2 * Gi],
    ['.5Gi', Gi / 2],
    // K, M, G, T, P without i: powers of 1024 too (as Warden always read them, and docker does), in any case, with B.
    ['1G', Gi],
    ['500M', 500 * Mi],
    ['512m', 512 * Mi],
    ['2k', 2 * Ki],
    ['2K', 2 * Ki],
    ['1T', 1024 * Gi],
    ['1P', 1024 ** 5],
    ['1g', Gi],
    ['500MB', 500 * Mi],
    ['64mb', 64 * Mi],
    ['2048kb', 2048 * Ki],
    ['1E-0', 1], // an exponent, not exa
    // Exact: floating point would give 4561305 for 4.35M.
    ['4.35M', 4_561_305],
    ['0.1G', 107_374_182],
    ['1.9', 1],
    // Bytes: a plain number, a B, an exponent.
    ['1048576', Mi],
    ['1048576B', Mi],
    ['1048576b', Mi],
    ['128974848', 128_974_848],
    ['129e6', 129_000_000],
    ['1.5e3', 1500],
    ['1E6', 1e6],
    ['1e+6', 1e6],
    ['5e-1', 0],
    [' 64Mi ', 64 * Mi],
    ['64 Mi', 64 * Mi],
    ['0', 0],
    ['9007199254740991', Number.MAX_SAFE_INTEGER],
  ])('%j is %i bytes', (text, bytes) => {
    expect(readSize(text)).toEqual({ ok: true, bytes });
  });

  it.each(['', ' ', 'abc', 'G', 'Gi', 'B', '-1G', '+1G', '256X', '256 M B', '256iB', '5iB', '2Gi x', '1.', '1..5', '0x10', '1e3Mi', '1e3G', '1e1000', '1 e3', 'Mi512', '512Mii', '512MiBB', '2 0Mi'])('%j is no size', (text) => {
    expect(readSize(text)).toEqual({ ok: false, why: `must be ${SIZE_FORMS}, not ${JSON.stringify(text)}` });
  });

  it.each([
    ['9007199254740992', '9007199254740992'],
    ['8Pi', '8Pi'], // 2^53: one past the safe integers
    ['1E', '1E'], // exa
    ['1Ei', '1Ei'],
    ['1e', '1e'], // exa, in any case
    ['1e16', '1e16'],
  ])('%j is too large', (text) => {
    expect(readSize(text)).toEqual({ ok: false, why: `must be at most 9007199254740991 bytes (8 PiB), not ${JSON.stringify(text)}` });
  });

  it('says what a size is in one line', () => {
    expect(SIZE_FORMS).toBe('a size such as 512M, 2G or 1.5Gi (K, M, G, T, with or without i or B, are powers of 1024), or a number of bytes');
  });
});

describe('sizeText', () => {
  it.each([
    [2 * Gi, '2Gi'],
    [2e9, '1953125Ki'],
    [Mi, '1Mi'],
    [1e6, '1000000'],
    [1000 * Mi, '1000Mi'],
    [Ki, '1Ki'],
    [1000, '1000'],
    [3 * Ki, '3Ki'],
    [1000 * Ki, '1000Ki'],
    [1536, '1536'],
    [999, '999'],
    [1, '1'],
    [0, '0'],
    [1024 ** 5, '1Pi'],
    [1024 ** 4, '1Ti'],
    [1.5, '1.5'],
  ])('%i is %j', (bytes, text) => {
    expect(sizeText(bytes)).toBe(text);
    if (Number.isSafeInteger(bytes)) expect(readSize(text)).toEqual({ ok: true, bytes });
  });
});
