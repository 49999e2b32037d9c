import { describe, expect, it } from 'vitest';
import { bytes } from '../src/shared/bytes';
import { bytes as supervisorBytes } from '../src/shared/format';
import { bytes as viewBytes } from '../src/renderer/src/format';

describe('bytes: one formatter for notes, the CLI and the app', () => {
  it('writes whole units without decimals, small ones with two and large ones with one', () => {
    expect([100, 512 * 1024, 64 * 1024 ** 2, 5_000_000, 268_000_000, 1.5 * 1024 ** 3, 1.02 * 1024 ** 3].map(bytes)).toEqual([
      '100 B',
      '512 KiB',
      '64 MiB',
      '4.77 MiB',
      '255.6 MiB',
      '1.5 GiB',
      '1.02 GiB',
    ]);
  });

  it('is the same function in the engine and the views (which add a dash for no figure)', () => {
    for (const n of [0, 1023, 1024, 64 * 1024 ** 2, 47.7 * 1024 ** 2, 3 * 1024 ** 4]) {
      expect(supervisorBytes(n)).toBe(bytes(n));
      expect(viewBytes(n)).toBe(bytes(n));
    }
    expect(viewBytes(null)).toBe('–');
  });
});
