import { chmodSync, existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { StoreOpenError } from './errors';
import { resolveStateDir } from '../../client/state-dir';
import { ensureStateDir } from './state-dir';
import { fakeResult, removeTempDirs, tempStateDir } from './store-testkit';
import { openStore } from './store';

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
});

describe('the state dir and the history are private', () => {
  it('tightens an existing state dir others can enter to 0700, and says so once', () => {
    const dir = join(tempStateDir(), 'wide');
    mkdirSync(dir, { mode: 0o755 });
    chmodSync(dir, 0o755);
    const notices: string[] = [];
    ensureStateDir(dir, (line) => notices.push(line));
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(notices).toEqual([`made the state directory ${dir} private (mode 0700; it was 0755): it holds your commands, their output and their environments.`]);
    ensureStateDir(dir, (line) => notices.push(line));
    expect(notices).toHaveLength(1);
  });

  it("creates history.db, its -wal and -shm 0600 whatever the umask, and tightens existing ones", () => {
    const dir = tempStateDir();
    const old = process.umask(0o022);
    try {
      const store = openStore({ dir });
      store.recordResult(fakeResult());
      const files = ['history.db', 'history.db-wal', 'history.db-shm'].filter((f) => existsSync(join(dir, f)));
      expect(files).toContain('history.db-wal');
      for (const f of files) expect([f, statSync(join(dir, f)).mode & 0o777]).toEqual([f, 0o600]);
      store.close();
      chmodSync(join(dir, 'history.db'), 0o644);
      openStore({ dir }).close();
      expect(statSync(join(dir, 'history.db')).mode & 0o777).toBe(0o600);
    } finally {
      process.umask(old);
    }
  });
});
