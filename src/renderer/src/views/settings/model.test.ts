import { describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS } from '../../../../shared/settings';
import { settingsSchema } from '../../../../shared/schemas';
import { parseSize } from '../../components/form-fields';
import { readSettingsDraft, settingsDraft, type SettingsDraft } from './model';

describe('the Settings form', () => {
  it('round-trips the stored settings', () => {
    const settings = { ...DEFAULT_SETTINGS, defaultLimitMs: 90_000, memory: '512M' };
    expect(readSettingsDraft(settingsDraft(settings))).toEqual({ settings, errors: null });
    expect(settingsDraft(DEFAULT_SETTINGS)).toMatchObject({ limit: '', maxBytes: '2Gi', maxRuns: '50000' });
  });

  it('refuses, on its field, what the host would refuse, and text that does not read', () => {
    const draft = settingsDraft(DEFAULT_SETTINGS);
    expect(readSettingsDraft({ ...draft, maxBytes: '10K' }).errors).toEqual({ maxBytes: 'Output kept must be at least 1Mi (1 MiB).' });
    expect(readSettingsDraft({ ...draft, maxBytes: '1023K' }).errors).toEqual({ maxBytes: 'Output kept must be at least 1Mi (1 MiB).' });
    expect(readSettingsDraft({ ...draft, maxBytes: '1M' }).settings?.retention.maxBytes).toBe(1024 * 1024);
    expect(readSettingsDraft({ ...draft, maxBytes: '1Mi' }).settings?.retention.maxBytes).toBe(1024 * 1024);
    expect(readSettingsDraft({ ...draft, grace: '', maxBytes: 'big' }).errors).toEqual({ grace: 'Grace is required, e.g. 5s.', maxBytes: 'Output kept must be a size such as 512M, 2G or 1.5Gi (K, M, G, T, with or without i or B, are powers of 1024), or a number of bytes, not "big".' });
  });
});

describe('the form and the host agree', () => {
  const draft = settingsDraft(DEFAULT_SETTINGS);
  const cases: Partial<SettingsDraft>[] = [
    {},
    { maxBytes: '10K' },
    { maxBytes: '1M' },
    { maxBytes: '1Mi' },
    { maxBytes: '1.5G' },
    { maxRuns: '0' },
    { maxRuns: '1' },
    { limit: '0s' },
    { limit: '500ms' },
    { grace: '0s' },
    { drain: '0ms' },
    { teardown: '1h' },
  ];
  it.each(cases)('takes %o exactly when the host schema does', (patch) => {
    const read = readSettingsDraft({ ...draft, ...patch });
    // Only what reads as settings can be put to the host's schema; what the form refuses must be refused there too.
    if (read.settings) expect(settingsSchema.safeParse(read.settings).success).toBe(true);
    else {
      const key = Object.keys(read.errors)[0] as keyof SettingsDraft;
      const raw = { ...DEFAULT_SETTINGS, retention: { ...DEFAULT_SETTINGS.retention } };
      if (key === 'maxBytes') raw.retention.maxBytes = parseSize(patch.maxBytes!)!;
      if (key === 'maxRuns') raw.retention.maxRuns = Number(patch.maxRuns);
      if (key === 'limit') raw.defaultLimitMs = 0;
      expect(settingsSchema.safeParse(raw).success).toBe(false);
    }
  });
});
