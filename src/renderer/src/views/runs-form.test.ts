import { describe, expect, it } from 'vitest';
import { SESSION_NAME as SCHEMA_SESSION_NAME } from '../../../shared/schemas';
import { DEFAULT_SETTINGS } from '../../../shared/settings';
import { countField, durationField, durationText, parseSize, sizeText } from './runs-form';
import { checkDraft, defaultsFor, EMPTY_DRAFT, restoreDraft, SESSION_NAME, settingsDefaults } from './runs-newrun';
import { readSettingsDraft, settingsDraft } from './runs-settings';

describe('sizes and durations as the forms write them', () => {
  it('reads sizes like the engine: powers of 1024, B/iB optional, bare number is bytes', () => {
    expect(parseSize('512M')).toBe(512 * 1024 ** 2);
    expect(parseSize('1.5GiB')).toBe(1.5 * 1024 ** 3);
    expect(parseSize(' 64mb ')).toBe(64 * 1024 ** 2);
    expect(parseSize('1048576')).toBe(1048576);
    expect(parseSize('5iB')).toBeUndefined();
    expect(parseSize('2 GB x')).toBeUndefined();
    expect(parseSize('')).toBeUndefined();
  });

  it('writes the shortest exact text, which reads back to the same value', () => {
    for (const ms of [500, 1_500, 5_000, 90_000, 120_000, 7_200_000, 0]) expect(durationField(durationText(ms), { label: 'x' }).value).toBe(ms);
    expect(durationText(120_000)).toBe('2m');
    expect(durationText(1_500)).toBe('1500ms');
    for (const n of [2 * 1024 ** 3, 512 * 1024 ** 2, 1536, 3 * 1024]) expect(parseSize(sizeText(n))).toBe(n);
    expect(sizeText(2 * 1024 ** 3)).toBe('2G');
  });

  it('says what is wrong with a field in one line', () => {
    expect(durationField('', { label: 'Limit', optional: true })).toEqual({ value: null, error: null });
    expect(durationField('', { label: 'Grace' }).error).toBe('Grace is required, e.g. 5s.');
    expect(durationField('soon', { label: 'Limit' }).error).toBe('Limit: "soon" is not a duration such as 500ms, 30s, 1.5m or 2h.');
    expect(durationField('0s', { label: 'Limit', positive: true }).error).toBe('Limit must be more than 0.');
    expect(countField('50_000', { label: 'Runs kept' }).value).toBe(50_000);
    expect(countField('0', { label: 'Runs kept' }).error).toBe('Runs kept must be at least 1.');
    expect(countField('1.5', { label: 'Runs kept' }).error).toMatch(/whole number/);
  });
});

describe('the New run form', () => {
  it('uses the schema rule for session names', () => {
    expect(SESSION_NAME.source).toBe(SCHEMA_SESSION_NAME.source);
  });

  it('makes a command request from the split words, limits and Settings extras', () => {
    const checked = checkDraft({ ...EMPTY_DRAFT, command: `python3 -c 'print("hi")'`, limit: '30s', grace: '3s', memory: '512M', cwd: ' /tmp ' }, { drainMs: 1000, teardownBudgetMs: 4000 });
    expect(checked.request).toEqual({ argv: ['python3', '-c', 'print("hi")'], limitMs: 30_000, graceMs: 3_000, memory: '512M', cwd: '/tmp', drainMs: 1000, teardownBudgetMs: 4000 });
    expect(checked.graceMs).toBe(3_000);
  });

  it('sends a shell line as one word with shell: true', () => {
    expect(checkDraft({ ...EMPTY_DRAFT, command: ' ls | wc -l ', shell: true }).request).toEqual({ argv: ['ls | wc -l'], shell: true });
  });

  it('makes a Python request without command-only fields', () => {
    const checked = checkDraft({ ...EMPTY_DRAFT, kind: 'python', code: 'print(1)\n', session: 'work', limit: '' }, { drainMs: 1000 });
    expect(checked.request).toEqual({ code: 'print(1)\n', session: 'work' });
  });

  it('has no request while something is missing or wrong, and says what is wrong', () => {
    expect(checkDraft(EMPTY_DRAFT)).toMatchObject({ request: null, errors: {} });
    expect(checkDraft({ ...EMPTY_DRAFT, command: `echo 'x` }).errors.command).toMatch(/never closed/);
    expect(checkDraft({ ...EMPTY_DRAFT, command: 'true', limit: '5 years' })).toMatchObject({ request: null, errors: { limit: expect.stringMatching(/not a duration/) } });
    expect(checkDraft({ ...EMPTY_DRAFT, command: 'true', memory: 'lots' }).errors.memory).toMatch(/not a size/);
    expect(checkDraft({ ...EMPTY_DRAFT, kind: 'python', code: 'x', session: 'bad name' }).errors.session).toMatch(/session name/);
  });

  it('restores only well-typed remembered fields, and fills defaults from Settings', () => {
    expect(restoreDraft({ kind: 'ruby', command: 'ls', shell: 'yes', limit: 30 })).toEqual({ command: 'ls' });
    expect(settingsDefaults({ ...DEFAULT_SETTINGS, defaultLimitMs: 30_000, memory: '1G' })).toEqual({ limit: '30s', grace: '5s', memory: '1G' });
  });
});

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

describe('defaults by kind', () => {
  it("leaves a Python script's grace to the engine", () => {
    const d = { limit: '30s', grace: '5s', memory: '' };
    expect(defaultsFor('command', d)).toEqual(d);
    expect(defaultsFor('python', d)).toEqual({ limit: '30s', grace: '', memory: '' });
  });
});
