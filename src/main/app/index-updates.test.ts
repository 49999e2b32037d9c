// The app's update glue (src/main/app/index.ts), with `electron` mocked as in
// index.test.ts and electron-updater's autoUpdater replaced by a stand-in
// whose events the test sends (updates.test.ts runs the real updaters
// against a loopback feed). A packaged AppImage with WARDEN_UPDATE_URL: the
// notices, "Restart now" refused while a run is live, and the install done
// by the quit path only after its runs were stopped and its socket closed,
// then the new AppImage relaunched.

import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { fromIpcAnswer } from '../../shared/errors';

const STATE_DIR = mkdtempSync(join(tmpdir(), 'wiu-'));
process.env.WARDEN_STATE_DIR = STATE_DIR;
process.env.APPIMAGE = join(STATE_DIR, 'Warden.AppImage');
writeFileSync(process.env.APPIMAGE, 'old');
process.env.WARDEN_UPDATE_URL = 'http://127.0.0.1:9/releases';
const SOCKET = join(STATE_DIR, 'run', 'warden.sock');

const state = vi.hoisted(() => ({
  handlers: new Map<string, (...args: unknown[]) => Promise<unknown>>(),
  appHandlers: new Map<string, (...args: unknown[]) => void>(),
  notices: [] as { title: string; body: string; click?: () => void }[],
  boxes: [] as { message: string; buttons: string[] }[],
  answers: [] as number[],
  calls: [] as string[],
  clipboard: [] as string[],
}));

vi.mock('electron', () => {
  class BrowserWindow {
    webContents = { setWindowOpenHandler: () => undefined, on: () => undefined, getURL: () => 'app://warden/index.html', send: () => undefined, reload: () => undefined, executeJavaScript: async () => undefined };
    once() {}
    on() {}
    isDestroyed() {
      return false;
    }
    isMinimized() {
      return false;
    }
    isMaximized() {
      return false;
    }
    getNormalBounds() {
      return { x: 0, y: 0, width: 800, height: 600 };
    }
    show() {}
    focus() {}
    loadURL = async () => undefined;
    static getAllWindows() {
      return [];
    }
  }
  return {
    app: {
      isPackaged: true,
      enableSandbox: () => undefined,
      whenReady: () => Promise.resolve(),
      on: (name: string, fn: (...args: unknown[]) => void) => state.appHandlers.set(name, fn),
      quit: () => state.calls.push('quit'),
      relaunch: (options: { execPath: string }) => state.calls.push(`relaunch ${options.execPath}`),
      getVersion: () => '0.1.0',
      getPath: () => join(STATE_DIR, 'user-data'),
      requestSingleInstanceLock: () => true,
    },
    Notification: class {
      static isSupported() {
        return true;
      }
      entry: (typeof state.notices)[number];
      constructor(options: { title: string; body: string }) {
        this.entry = { ...options };
        state.notices.push(this.entry);
      }
      on(name: string, fn: () => void) {
        if (name === 'click') this.entry.click = fn;
      }
      show() {}
    },
    dialog: {
      showErrorBox: () => undefined,
      showMessageBox: async (...args: unknown[]) => {
        state.boxes.push(args.at(-1) as (typeof state.boxes)[number]);
        return { response: state.answers.shift() ?? 1, checkboxChecked: false };
      },
    },
    clipboard: { writeText: (text: string) => state.clipboard.push(text) },
    BrowserWindow,
    ipcMain: {
      handle: (channel: string, fn: (...args: unknown[]) => unknown) => state.handlers.set(channel, async (...args: unknown[]) => fromIpcAnswer(await fn(...args))),
      removeHandler: () => undefined,
    },
    protocol: { registerSchemesAsPrivileged: () => undefined, handle: () => undefined },
    session: { defaultSession: { setPermissionRequestHandler: () => undefined, setPermissionCheckHandler: () => undefined } },
    shell: { openExternal: async () => undefined },
  };
});

/** electron-updater's autoUpdater as the app uses it: the events are the test's to send. */
const updater = vi.hoisted(() => {
  const listeners = new Map<string, ((...args: unknown[]) => void)[]>();
  return {
    autoDownload: true,
    autoInstallOnAppQuit: true,
    updateConfigPath: null as string | null,
    logger: {} as unknown,
    feeds: [] as string[],
    installs: [] as { socketThere: boolean }[],
    on(event: string, fn: (...args: unknown[]) => void) {
      listeners.set(event, [...(listeners.get(event) ?? []), fn]);
      return this;
    },
    emit(event: string, ...args: unknown[]) {
      for (const fn of listeners.get(event) ?? []) fn(...args);
    },
    setFeedURL(options: { url: string }) {
      this.feeds.push(options.url);
    },
    async checkForUpdates() {
      return null;
    },
    install(): boolean {
      this.installs.push({ socketThere: existsSync(join(process.env.WARDEN_STATE_DIR!, 'run', 'warden.sock')) });
      state.calls.push('install');
      return true;
    },
  };
});
vi.mock('electron-updater', () => ({ autoUpdater: updater }));

const frame = { senderFrame: { url: 'app://warden/index.html' } };
async function until(what: string, condition: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 25));
  if (!condition()) throw new Error(`timed out waiting for ${what}`);
}
const info = { version: '0.2.0', files: [{ url: 'Warden-0.2.0-x86_64.AppImage' }] };

describe('the app\'s updates (an AppImage with WARDEN_UPDATE_URL)', () => {
  const errors: string[] = [];
  beforeAll(async () => {
    vi.spyOn(console, 'error').mockImplementation((line: unknown) => void errors.push(String(line)));
    await import('./index');
    await until('the updater', () => updater.feeds.length > 0);
  });

  it('takes the feed, downloads the AppImage itself, installs nothing on its own', () => {
    expect(updater.feeds).toEqual(['http://127.0.0.1:9/releases']);
    expect(updater.autoDownload).toBe(true);
    expect(updater.autoInstallOnAppQuit).toBe(false);
    expect(errors).toContain('warden: updates: downloaded and installed at quit, from http://127.0.0.1:9/releases (WARDEN_UPDATE_URL).');
  });

  it('says "update available", then "ready"; "Restart now" is refused while a run is live', async () => {
    const start = state.handlers.get('warden:start')!;
    const live = (await start(frame, { argv: ['sleep', '60'] })) as { id: string };
    updater.emit('update-available', info);
    updater.emit('update-downloaded', info);
    await until('the ready notice', () => state.notices.length === 2);
    expect(state.notices.map((n) => n.title)).toEqual(['Warden 0.2.0 is available', 'Warden 0.2.0 is ready']);
    expect(state.notices[1]!.body).toBe('It installs when you quit Warden (a run is live now: Warden restarts for it only once none is).');
    state.answers.push(0); // Restart now
    state.notices[1]!.click!();
    await until('the refusal', () => state.boxes.length === 2);
    expect(state.boxes[0]!.buttons).toEqual(['Restart now', 'Later']);
    expect(state.boxes[1]!.message).toBe('Not now: a run is live, and restarting would stop it. The update installs when you quit Warden.');
    expect(state.calls).toEqual([]);
    // Quitting with it live asks; Cancel: nothing installed.
    state.answers.push(1);
    state.appHandlers.get('before-quit')!({ preventDefault: () => undefined });
    await until('the quit question', () => state.boxes.length === 3);
    await new Promise((r) => setTimeout(r, 100));
    expect(state.calls).toEqual([]);
    expect(existsSync(SOCKET)).toBe(true);
    await state.handlers.get('warden:stop')!(frame, live.id, { force: true });
    await state.handlers.get('warden:wait')!(frame, live.id);
  });

  it('with no run live, "Restart now" quits: the host closes, then the update installs, then the new AppImage is started', async () => {
    state.answers.push(0);
    state.notices[1]!.click!();
    await until('the quit', () => state.calls.includes('quit'));
    expect(state.calls).toEqual(['install', `relaunch ${process.env.APPIMAGE}`, 'quit']);
    expect(updater.installs).toEqual([{ socketThere: false }]);
  });
});
