import { describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS } from '../../../../shared/settings';
import { readSettingsDraft, settingsDraft } from './model';

describe('the Settings form', () => {
  it('round-trips the stored settings', () => {
    const settings = { ...DEFAULT_SETTINGS, defaultLimitMs: 90_000, memory: '512M' };
    expect(readSettingsDraft(settingsDraft(settings))).toEqual({ settings, errors: null });
    expect(settingsDraft(DEFAULT_SETTINGS)).toMatchObject({ limit: '', maxBytes: '2G', maxRuns: '50000' });
  });

  it('leaves ranges to the host but refuses text that does not read', () => {
    const draft = settingsDraft(DEFAULT_SETTINGS);
    expect(readSettingsDraft({ ...draft, maxBytes: '1K' }).settings?.retention.maxBytes).toBe(1024);
    expect(readSettingsDraft({ ...draft, grace: '', maxBytes: 'big' }).errors).toEqual({ grace: 'Grace is required, e.g. 5s.', maxBytes: 'Output kept: "big" is not a size such as 512M, 2G or 1.5GiB.' });
  });
});
