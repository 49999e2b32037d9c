import { describe, expect, it } from 'vitest';
import { SESSION_NAME as SCHEMA_SESSION_NAME } from '../../../../shared/schemas';
import { DEFAULT_SETTINGS } from '../../../../shared/settings';
import { checkDraft, defaultsFor, EMPTY_DRAFT, restoreDraft, SESSION_NAME, settingsDefaults } from './model';

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
    expect(checkDraft({ ...EMPTY_DRAFT, command: 'true', memory: 'lots' }).errors.memory).toMatch(/^Memory limit must be a size such as .*, not "lots"\.$/);
    expect(checkDraft({ ...EMPTY_DRAFT, kind: 'python', code: 'x', session: 'bad name' }).errors.session).toMatch(/session name/);
  });

  it('restores only well-typed remembered fields, and fills defaults from Settings', () => {
    expect(restoreDraft({ kind: 'ruby', command: 'ls', shell: 'yes', limit: 30 })).toEqual({ command: 'ls' });
    expect(settingsDefaults({ ...DEFAULT_SETTINGS, defaultLimitMs: 30_000, memory: '1G' })).toEqual({ limit: '30s', grace: '5s', memory: '1G' });
  });
});

describe('defaults by kind', () => {
  it("leaves a Python script's grace to the engine", () => {
    const d = { limit: '30s', grace: '5s', memory: '' };
    expect(defaultsFor('command', d)).toEqual(d);
    expect(defaultsFor('python', d)).toEqual({ limit: '30s', grace: '', memory: '' });
  });

  it("asks for core dumps only when the box is ticked, for a command, not a script", () => {
    expect(checkDraft({ ...EMPTY_DRAFT, command: 'python3 x.py', core: true }).request).toMatchObject({ argv: ['python3', 'x.py'], core: true });
    expect(checkDraft({ ...EMPTY_DRAFT, command: 'make | tee log', shell: true, core: true }).request).toMatchObject({ shell: true, core: true });
    expect(checkDraft({ ...EMPTY_DRAFT, command: 'python3 x.py' }).request).not.toHaveProperty('core');
    expect(checkDraft({ ...EMPTY_DRAFT, kind: 'python', code: 'x = 1', core: true }).request).not.toHaveProperty('core');
    expect(restoreDraft({ core: true })).toEqual({ core: true });
    expect(restoreDraft({ core: 'yes' })).toEqual({});
  });
});
