import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { StoreOpenError } from './errors';
import { ensureStateDir, resolveStateDir } from './state-dir';
import { removeTempDirs, tempStateDir } from './store-testkit';

afterEach(removeTempDirs);

describe('resolveStateDir', () => {
  it('takes WARDEN_STATE_DIR first', () => {
    expect(resolveStateDir({ WARDEN_STATE_DIR: '/x/w', XDG_STATE_HOME: '/y' }, 'linux', '/home/u')).toBe('/x/w');
  });
  it('then $XDG_STATE_HOME/warden', () => {
    expect(resolveStateDir({ XDG_STATE_HOME: '/y' }, 'linux', '/home/u')).toBe('/y/warden');
  });
  it('ignores a relative XDG_STATE_HOME, as the spec says', () => {
    expect(resolveStateDir({ XDG_STATE_HOME: 'rel' }, 'linux', '/home/u')).toBe('/home/u/.local/state/warden');
  });
  it('defaults to ~/.local/state/warden on Linux', () => {
    expect(resolveStateDir({}, 'linux', '/home/u')).toBe('/home/u/.local/state/warden');
  });
  it("uses the platform's app-data dir elsewhere", () => {
    expect(resolveStateDir({}, 'darwin', '/Users/u')).toBe('/Users/u/Library/Application Support/warden');
    expect(resolveStateDir({ LOCALAPPDATA: 'C:\\Users\\u\\AppData\\Local' }, 'win32', 'C:\\Users\\u')).toMatch(/warden$/);
  });
});

describe('ensureStateDir', () => {
  it('creates missing parents with mode 0700', () => {
    const dir = join(tempStateDir(), 'a', 'b');
    ensureStateDir(dir);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });
  it('gives one clear line when a file is in the way', () => {
    const base = tempStateDir();
    writeFileSync(join(base, 'file'), '');
    expect(() => ensureStateDir(join(base, 'file', 'warden'))).toThrow(StoreOpenError);
    expect(() => ensureStateDir(join(base, 'file', 'warden'))).toThrow(/cannot create its state directory .*file\/warden: a file is in the way.*WARDEN_STATE_DIR/);
    expect(() => ensureStateDir(join(base, 'file'))).toThrow(/a file is in the way/);
  });
  it('leaves an existing dir as it is', () => {
    const dir = join(tempStateDir(), 'x');
    mkdirSync(dir, { mode: 0o755 });
    ensureStateDir(dir);
    expect(statSync(dir).mode & 0o777).toBe(0o755);
  });
});
