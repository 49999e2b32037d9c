// Updates against a loopback HTTP server serving latest-linux.yml, with
// electron-updater's own AppImageUpdater and DebUpdater and the `electron`
// module mocked (electron-updater requires it at run time: `app` for the
// version, `net` for its requests, here carried by node:http to the
// loopback server). The AppImage is downloaded, checked against its sha512,
// and installed at quit, never while runs are live; the .deb is announced
// with the command that installs it and never fetched.

import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { EventEmitter } from 'node:events';
import { createServer, request, type Server } from 'node:http';
import Module, { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { debCommand, feedFrom, packageKind, setUpUpdates, Updates, type UpdateNotice, type UpdaterLike } from './updates';

const dir = mkdtempSync(join(tmpdir(), 'wupdates-'));
const require = createRequire(import.meta.url);

/** The mocked `electron`: what electron-updater's AppImageUpdater and DebUpdater reach for. */
const quitHandlers: (() => void)[] = [];
const electron = {
  app: Object.assign(new EventEmitter(), {
    isPackaged: true,
    whenReady: () => Promise.resolve(),
    getVersion: () => '0.1.0',
    getName: () => 'Warden',
    getAppPath: () => dir,
    getPath: () => join(dir, 'user-data'),
    quit: () => quitHandlers.forEach((fn) => fn()),
    relaunch: () => undefined,
  }),
  autoUpdater: new EventEmitter(),
  session: { fromPartition: () => ({}) },
  // Electron's net.request, carried by node:http: the options electron-updater builds are node's, plus session and redirect.
  net: {
    request: (options: { protocol?: string; hostname?: string; port?: string | number; path?: string; method?: string; headers?: Record<string, string> }) =>
      request({ protocol: options.protocol, hostname: options.hostname, port: options.port, path: options.path, method: options.method ?? 'GET', headers: options.headers }),
  },
  Notification: class {
    show() {}
  },
};
const electronPath = require.resolve('electron');
const mocked = new Module(electronPath);
mocked.filename = electronPath;
mocked.loaded = true;
mocked.exports = electron;
require.cache[electronPath] = mocked;
process.env.XDG_CACHE_HOME = join(dir, 'cache');

const { AppImageUpdater, DebUpdater } = require('electron-updater') as { AppImageUpdater: new () => UpdaterLike; DebUpdater: new () => UpdaterLike };

/** The release being offered: an "AppImage" (a script that leaves a mark when run to finish its install) and a .deb. */
const NEW_APPIMAGE = `#!/bin/sh\necho "$APPIMAGE_EXIT_AFTER_INSTALL" > ${join(dir, 'new-appimage-ran')}\n`;
const sha512 = (text: string | Buffer) => createHash('sha512').update(text).digest('base64');
let server: Server;
let feedUrl = '';
const served: string[] = [];
let feedVersion = '0.2.0';

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname; // electron-updater adds ?noCache=...
    served.push(path);
    if (path === '/releases/latest-linux.yml') {
      const yml = [
        `version: ${feedVersion}`,
        'files:',
        `  - url: Warden-${feedVersion}-x86_64.AppImage`,
        `    sha512: ${sha512(NEW_APPIMAGE)}`,
        `    size: ${Buffer.byteLength(NEW_APPIMAGE)}`,
        `  - url: warden_${feedVersion}_amd64.deb`,
        `    sha512: ${sha512('deb')}`,
        '    size: 3',
        `path: Warden-${feedVersion}-x86_64.AppImage`,
        `sha512: ${sha512(NEW_APPIMAGE)}`,
        "releaseDate: '2026-12-01T00:00:00.000Z'",
        '',
      ].join('\n');
      res.writeHead(200, { 'content-type': 'text/yaml', 'content-length': Buffer.byteLength(yml) });
      res.end(yml);
    } else if (path === `/releases/Warden-${feedVersion}-x86_64.AppImage`) {
      res.writeHead(200, { 'content-length': Buffer.byteLength(NEW_APPIMAGE) });
      res.end(NEW_APPIMAGE);
    } else {
      res.writeHead(404);
      res.end('no');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  feedUrl = `http://127.0.0.1:${address.port}/releases`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  delete require.cache[electronPath];
  rmSync(dir, { recursive: true, force: true });
});

/** Until `done` holds, or a generous deadline. */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 600 && !done(); i++) await new Promise((r) => setTimeout(r, 50));
}

function installed(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  chmodSync(path, 0o755);
  return path;
}

describe('an AppImage', () => {
  it('says "update available", downloads it, and installs it at quit only once no run is live', async () => {
    const appImage = installed('Warden.AppImage', '#!/bin/sh\necho old\n');
    process.env.APPIMAGE = appImage;
    const notices: UpdateNotice[] = [];
    const logs: string[] = [];
    let runs = 2;
    const updates = new Updates({ updater: new AppImageUpdater(), kind: 'appimage', feed: { url: feedUrl, source: 'env' }, liveRuns: async () => runs, notify: (n) => notices.push(n), log: (l) => logs.push(l), configDir: join(dir, 'config') });
    await updates.check();
    await until(() => updates.state === 'ready' || updates.state === 'failed');
    expect(updates.state, logs.join('\n')).toBe('ready');
    expect(notices).toEqual([
      { title: 'Warden 0.2.0 is available', body: 'It is downloading, and installs when you quit Warden.' },
      { title: 'Warden 0.2.0 is ready', body: 'It installs when you quit Warden (2 runs are live now: Warden restarts for it only once none is).' },
    ]);
    expect(served).toContain('/releases/Warden-0.2.0-x86_64.AppImage');

    // Runs live: no restart, no install at quit; the installed AppImage is as it was.
    expect(await updates.restartToUpdate()).toBe('Not now: 2 runs are live, and restarting would stop them. The update installs when you quit Warden.');
    runs = 1;
    expect(await updates.restartToUpdate()).toBe('Not now: a run is live, and restarting would stop it. The update installs when you quit Warden.');
    expect(updates.installOnQuit(1)).toEqual({ installed: false, relaunch: null });
    expect(logs.at(-1)).toBe('updates: Warden 0.2.0 not installed at quit: a run is live.');
    expect(readFileSync(appImage, 'utf8')).toBe('#!/bin/sh\necho old\n');
    expect(existsSync(join(dir, 'new-appimage-ran'))).toBe(false);
    // electron-updater's own install on quit is off: the app's quit installs, after its runs.
    electron.app.emit('quit', {}, 0);

    // None live: "Restart now" is taken (the quit installs); installed over the old file (its name has no
    // version), run once to finish its install, and named for the app to start once it has exited.
    runs = 0;
    expect(await updates.restartToUpdate()).toBeNull();
    expect(updates.installOnQuit(0)).toEqual({ installed: true, relaunch: appImage });
    expect(readFileSync(appImage, 'utf8')).toBe(NEW_APPIMAGE);
    expect(readFileSync(join(dir, 'new-appimage-ran'), 'utf8')).toBe('true\n');
    expect(logs.at(-1)).toBe('updates: installed Warden 0.2.0.');
  }, 60_000);

  it('an AppImage whose name has its version: the new one goes beside it, and is the one started after "Restart now"', async () => {
    const appImage = installed('Warden-0.1.0-x86_64.AppImage', 'old');
    process.env.APPIMAGE = appImage;
    const updates = new Updates({ updater: new AppImageUpdater(), kind: 'appimage', feed: { url: feedUrl, source: 'env' }, liveRuns: async () => 0, notify: () => undefined, log: () => undefined, configDir: join(dir, 'config') });
    await updates.check();
    await until(() => updates.state === 'ready' || updates.state === 'failed');
    expect(await updates.restartToUpdate()).toBeNull();
    const next = join(dir, 'Warden-0.2.0-x86_64.AppImage');
    expect(updates.installOnQuit(0)).toEqual({ installed: true, relaunch: next });
    expect(existsSync(appImage)).toBe(false);
    expect(readFileSync(next, 'utf8')).toBe(NEW_APPIMAGE);
  }, 60_000);

  it('a feed with nothing newer says nothing; one that fails is one log line, never a throw', async () => {
    process.env.APPIMAGE = installed('Warden2.AppImage', 'old');
    const notices: UpdateNotice[] = [];
    const logs: string[] = [];
    feedVersion = '0.1.0';
    try {
      const same = new Updates({ updater: new AppImageUpdater(), kind: 'appimage', feed: { url: feedUrl, source: 'env' }, liveRuns: async () => 0, notify: (n) => notices.push(n), log: (l) => logs.push(l), configDir: join(dir, 'config') });
      await same.check();
      expect(same.state).toBe('idle');
      expect(notices).toEqual([]);
    } finally {
      feedVersion = '0.2.0';
    }
    const gone = new Updates({ updater: new AppImageUpdater(), kind: 'appimage', feed: { url: `${feedUrl}/nowhere`, source: 'env' }, liveRuns: async () => 0, notify: (n) => notices.push(n), log: (l) => logs.push(l), configDir: join(dir, 'config') });
    await gone.check();
    expect(gone.state).toBe('failed');
    expect(notices).toEqual([]);
    expect(logs.length).toBeGreaterThanOrEqual(1);
    expect(logs.every((l) => l.startsWith('updates: ') && !l.includes('\n'))).toBe(true);
    expect(await gone.restartToUpdate()).toBe('No update is ready to install.');
    expect(gone.installOnQuit(0)).toEqual({ installed: false, relaunch: null });
  }, 60_000);
});

describe('a .deb', () => {
  it('says "update available" with the apt command, and fetches nothing', async () => {
    delete process.env.APPIMAGE;
    const notices: UpdateNotice[] = [];
    const before = served.length;
    const updates = new Updates({ updater: new DebUpdater(), kind: 'deb', feed: { url: feedUrl, source: 'env' }, liveRuns: async () => 0, notify: (n) => notices.push(n), log: () => undefined, configDir: join(dir, 'config') });
    await updates.check();
    await until(() => notices.length > 0 || updates.state === 'failed');
    const command = `curl -fL -o /tmp/warden_0.2.0_amd64.deb '${feedUrl}/warden_0.2.0_amd64.deb' && sudo apt install /tmp/warden_0.2.0_amd64.deb`;
    expect(notices).toEqual([{ title: 'Warden 0.2.0 is available', body: `Install it with: ${command}`, command }]);
    expect(updates.state).toBe('available');
    expect(served.slice(before)).toEqual(['/releases/latest-linux.yml']);
    expect(updates.installOnQuit(0)).toEqual({ installed: false, relaunch: null });
    expect(await updates.restartToUpdate()).toBe('No update is ready to install.');
  }, 60_000);

  it('debCommand: the .deb of the feed, resolved against it; none, or a name that is not plain, gives none', () => {
    const info = (url: string) => ({ version: '1', files: [{ url: 'Warden.AppImage' }, { url }] });
    expect(debCommand(info('warden_1_amd64.deb'), 'https://example.com/r')).toBe("curl -fL -o /tmp/warden_1_amd64.deb 'https://example.com/r/warden_1_amd64.deb' && sudo apt install /tmp/warden_1_amd64.deb");
    expect(debCommand(info('warden_1_amd64.deb'), 'https://example.com/r/')).toMatch(/'https:\/\/example\.com\/r\/warden_1_amd64\.deb'/);
    expect(debCommand(info('https://cdn.example.com/x/warden_1_amd64.deb'), 'https://example.com/r')).toMatch(/'https:\/\/cdn\.example\.com\/x\/warden_1_amd64\.deb'/);
    expect(debCommand({ version: '1', files: [{ url: 'Warden.AppImage' }] }, 'https://example.com')).toBeNull();
    expect(debCommand(info('w;rm -rf ~.deb'), 'https://example.com')).toBeNull();
    expect(debCommand(info("x'y.deb"), 'https://example.com')).toBeNull();
    expect(debCommand(info('ftp://example.com/w.deb'), 'https://example.com')).toBeNull();
  });
});

describe('what the app says', () => {
  /** An updater that only keeps its listeners: the words, not the fetching, are under test here. */
  function stubUpdater() {
    const listeners = new Map<string, (value: never) => void>();
    const updater = { autoDownload: true, autoInstallOnAppQuit: true, updateConfigPath: null, logger: {}, setFeedURL: () => undefined, checkForUpdates: async () => null, install: () => true, on: (event: string, fn: (value: never) => void) => listeners.set(event, fn) };
    return { updater: updater as unknown as UpdaterLike, emit: (event: string, value: unknown) => listeners.get(event)!(value as never) };
  }
  const info = (files: string[]) => ({ version: '3.0.0', files: files.map((url) => ({ url })) });

  it('a .deb feed without a .deb points at the feed; an AppImage says it downloads', () => {
    const deb = new Updates({ updater: stubUpdater().updater, kind: 'deb', feed: { url: 'https://r.example/w', source: 'config' }, liveRuns: async () => 0, notify: () => undefined, log: () => undefined, configDir: join(dir, 'c2') });
    expect(deb.noticeFor(info(['Warden-3.0.0.AppImage']))).toEqual({ title: 'Warden 3.0.0 is available', body: 'Download its .deb from https://r.example/w and install it with apt.' });
    const image = new Updates({ updater: stubUpdater().updater, kind: 'appimage', feed: { url: 'https://r.example/w', source: 'config' }, liveRuns: async () => 0, notify: () => undefined, log: () => undefined, configDir: join(dir, 'c2') });
    expect(image.noticeFor(info(['warden_3.0.0_amd64.deb']))).toEqual({ title: 'Warden 3.0.0 is available', body: 'It is downloading, and installs when you quit Warden.' });
    // A feed from the build's app-update.yml is the updater's own to read: nothing written, no URL set.
    expect(existsSync(join(dir, 'c2', 'app-update.yml'))).toBe(false);
  });

  it('"ready" says how many runs are live, or nothing when none is', async () => {
    for (const [runs, body] of [[0, 'It installs when you quit Warden.'], [1, 'It installs when you quit Warden (a run is live now: Warden restarts for it only once none is).'], [3, 'It installs when you quit Warden (3 runs are live now: Warden restarts for it only once none is).']] as const) {
      const { updater, emit } = stubUpdater();
      const notices: UpdateNotice[] = [];
      const updates = new Updates({ updater, kind: 'appimage', feed: { url: 'https://r.example/w', source: 'config' }, liveRuns: async () => runs, notify: (n) => notices.push(n), log: () => undefined, configDir: join(dir, 'c3') });
      emit('update-downloaded', info([]));
      await until(() => notices.length > 0);
      expect(notices).toEqual([{ title: 'Warden 3.0.0 is ready', body }]);
      expect(updates.state).toBe('ready');
    }
  });
});

describe('where updates come from', () => {
  it('packageKind: the AppImage by APPIMAGE, the .deb by resources/package-type, else none', () => {
    const resources = join(dir, 'resources');
    mkdirSync(resources, { recursive: true });
    expect(packageKind({ APPIMAGE: '/x.AppImage' }, resources, false)).toEqual({ kind: null, why: 'the app is not packaged (a checkout)' });
    expect(packageKind({ APPIMAGE: '/x.AppImage' }, resources, true)).toEqual({ kind: 'appimage', why: 'the AppImage /x.AppImage' });
    expect(packageKind({}, resources, true)).toEqual({ kind: null, why: 'neither an AppImage nor a .deb' });
    writeFileSync(join(resources, 'package-type'), 'deb\n');
    expect(packageKind({}, resources, true)).toEqual({ kind: 'deb', why: 'the .deb' });
    writeFileSync(join(resources, 'package-type'), 'rpm');
    expect(packageKind({}, resources, true)).toEqual({ kind: null, why: 'a rpm package, which Warden does not update' });
    expect(packageKind({}, undefined, true).kind).toBeNull();
  });

  it('feedFrom: WARDEN_UPDATES=0, WARDEN_UPDATE_URL (checked), else the build\'s app-update.yml', () => {
    const resources = join(dir, 'feed-resources');
    mkdirSync(resources, { recursive: true });
    expect(feedFrom({ WARDEN_UPDATES: '0', WARDEN_UPDATE_URL: 'https://a.example' }, resources)).toEqual({ feed: null, why: 'WARDEN_UPDATES=0' });
    expect(feedFrom({ WARDEN_UPDATE_URL: 'https://a.example/r' }, resources)).toEqual({ feed: { url: 'https://a.example/r', source: 'env' }, why: 'WARDEN_UPDATE_URL' });
    for (const bad of ['file:///etc', 'not a url', "https://a.example/'x"]) expect(feedFrom({ WARDEN_UPDATE_URL: bad }, resources).feed, bad).toBeNull();
    expect(feedFrom({}, resources)).toEqual({ feed: null, why: 'no update URL (built without WARDEN_UPDATE_URL, and none set now)' });
    writeFileSync(join(resources, 'app-update.yml'), 'provider: generic\nurl: https://releases.example.com/warden\nupdaterCacheDirName: warden-updater\n');
    expect(feedFrom({}, resources)).toEqual({ feed: { url: 'https://releases.example.com/warden', source: 'config' }, why: 'app-update.yml' });
    writeFileSync(join(resources, 'app-update.yml'), "provider: generic\nurl: 'https://q.example/w'\n");
    expect(feedFrom({}, resources).feed?.url).toBe('https://q.example/w');
    writeFileSync(join(resources, 'app-update.yml'), 'provider: github\nowner: x\n');
    expect(feedFrom({}, resources).feed).toBeNull();
  });

  it('setUpUpdates: none, with one line, unless packaged with a feed; the env URL is given to the updater', async () => {
    const logs: string[] = [];
    const base = { liveRuns: async () => 0, notify: () => undefined, log: (l: string) => logs.push(l), resourcesPath: join(dir, 'nothing'), firstCheckMs: 60_000, everyMs: 60_000, configDir: () => join(dir, 'config') };
    let loaded = 0;
    const loadUpdater = async () => {
      loaded++;
      return new AppImageUpdater();
    };
    expect(await setUpUpdates({ ...base, env: { WARDEN_UPDATE_URL: feedUrl }, isPackaged: false, loadUpdater })).toBeNull();
    expect(await setUpUpdates({ ...base, env: { APPIMAGE: '/x.AppImage' }, isPackaged: true, loadUpdater })).toBeNull();
    expect(loaded).toBe(0);
    expect(logs).toEqual(['updates: off: the app is not packaged (a checkout).', 'updates: off: no update URL (built without WARDEN_UPDATE_URL, and none set now).']);
    const set = await setUpUpdates({ ...base, env: { APPIMAGE: '/x.AppImage', WARDEN_UPDATE_URL: feedUrl }, isPackaged: true, loadUpdater });
    expect(set).not.toBeNull();
    expect(loaded).toBe(1);
    expect(logs.at(-1)).toBe(`updates: downloaded and installed at quit, from ${feedUrl} (WARDEN_UPDATE_URL).`);
    set!.stop();
  });
});
