// The Electron shell with 'electron' mocked (no Electron binary can run on the
// build machines): the window is isolated and sandboxed and loads app://
// (served from disk by the real handler, with its CSP), IPC handlers are
// registered and trust only app://warden, navigation, new windows, links off
// the list and permissions are refused, and quitting (or closing the window)
// with live runs asks first. Here the app is packaged and hosts the engine;
// index-attach.test.ts has it unpackaged on a dev server, attached to a host.

import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { fromIpcAnswer } from '../../shared/errors';
import { until as waitUntil } from '../../../test/kit/until';

// The app hosts the control socket of this state dir, not the user's.
const STATE_DIR = mkdtempSync(join(tmpdir(), 'wi-'));
process.env.WARDEN_STATE_DIR = STATE_DIR;
// A packaged app ignores it: its page and its IPC trust never come from the environment.
process.env.ELECTRON_RENDERER_URL = 'http://localhost:5173/';

const created: { options: Record<string, unknown>; window: Record<string, unknown> }[] = [];
const handlers = new Map<string, unknown>();
const appHandlers = new Map<string, (...args: unknown[]) => void>();
let permissionHook: ((c: unknown, p: string, cb: (ok: boolean) => void, details: { requestingUrl?: string }) => void) | undefined;
let permissionCheck: ((c: unknown, p: string, origin: string) => boolean) | undefined;
/** What happened before the app was ready, in order (schemes must be registered before). */
const order: string[] = [];
const protocols = new Map<string, (request: Request) => Promise<Response>>();
const navigationHandlers = new Map<string, (event: { preventDefault: () => void; url?: string }) => void>();
const windowHandlers = new Map<string, (event?: { preventDefault: () => void }) => void>();
/** What the next dialog.showMessageBox answers (its button index), and the options it was shown with. */
let nextAnswer = 1;
const messageBoxes: { message: string; detail?: string; buttons: string[] }[] = [];
const notices: { options: { title: string; body: string }; click?: () => void; shown: boolean }[] = [];
const executed: string[] = [];
let focused = 0;
let openHandler: ((details: { url: string }) => { action: string }) | undefined;

/** The roots index.ts hands the app:// handler. */
const protocolRoots: string[] = [];
// The real handler, from src/renderer's real files: under vitest main's dir is
// src/main/app, whose ../renderer does not exist (the bundle's is out/main,
// beside out/renderer); the root index.ts asks for is recorded and checked.
vi.mock('./protocol', async (importOriginal) => {
  const actual = await importOriginal<typeof import('./protocol')>();
  return {
    ...actual,
    appProtocolHandler: (root: string, log: (line: string) => void) => {
      protocolRoots.push(root);
      return actual.appProtocolHandler(join(__dirname, '../../renderer'), log);
    },
  };
});

vi.mock('electron', () => {
  class BrowserWindow {
    webContents = {
      setWindowOpenHandler: (fn: typeof openHandler) => (openHandler = fn),
      on: (name: string, fn: (event: { preventDefault: () => void; url?: string }) => void) => navigationHandlers.set(name, fn),
      getURL: () => 'app://warden/index.html',
      send: vi.fn(),
      reload: vi.fn(),
      executeJavaScript: async (code: string) => void executed.push(code),
    };
    constructor(options: Record<string, unknown>) {
      created.push({ options, window: this as unknown as Record<string, unknown> });
    }
    once() {}
    on(name: string, fn: (event?: { preventDefault: () => void }) => void) {
      windowHandlers.set(name, fn);
    }
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
      return { x: 12, y: 34, width: 1111, height: 777 };
    }
    maximize() {}
    restore() {}
    show() {}
    focus() {
      focused += 1;
    }
    loadFile = vi.fn(async () => undefined);
    loadURL = vi.fn(async () => undefined);
    static getAllWindows() {
      return created;
    }
  }
  return {
    app: {
      isPackaged: true,
      enableSandbox: () => order.push('enableSandbox'),
      whenReady: () => (order.push('whenReady'), Promise.resolve()),
      on: (name: string, fn: (...args: unknown[]) => void) => appHandlers.set(name, fn),
      quit: vi.fn(),
      getVersion: () => '0.0.0-test',
      requestSingleInstanceLock: () => true,
    },
    Notification: class {
      static isSupported() {
        return true;
      }
      entry: (typeof notices)[number];
      constructor(options: { title: string; body: string }) {
        this.entry = { options, shown: false };
        notices.push(this.entry);
      }
      on(name: string, fn: () => void) {
        if (name === 'click') this.entry.click = fn;
      }
      show() {
        this.entry.shown = true;
      }
    },
    dialog: {
      showErrorBox: vi.fn(),
      showMessageBox: vi.fn(async (...args: unknown[]) => {
        messageBoxes.push(args.at(-1) as (typeof messageBoxes)[number]);
        return { response: nextAnswer, checkboxChecked: false };
      }),
    },
    BrowserWindow,
    // Each handler as the preload calls it: its IpcAnswer read back into the value, or its error thrown again.
    ipcMain: {
      handle: (channel: string, fn: (...args: unknown[]) => unknown) => handlers.set(channel, async (...args: unknown[]) => fromIpcAnswer(await fn(...args))),
      removeHandler: (c: string) => handlers.delete(c),
    },
    protocol: {
      registerSchemesAsPrivileged: (schemes: { scheme: string }[]) => order.push(`registerSchemesAsPrivileged:${schemes.map((s) => s.scheme)}`),
      handle: (scheme: string, fn: (request: Request) => Promise<Response>) => protocols.set(scheme, fn),
    },
    session: {
      defaultSession: {
        setPermissionRequestHandler: (fn: typeof permissionHook) => (permissionHook = fn),
        setPermissionCheckHandler: (fn: typeof permissionCheck) => (permissionCheck = fn),
      },
    },
    shell: { openExternal: vi.fn(async () => undefined) },
  };
});

const frame = { senderFrame: { url: 'app://warden/index.html' } };
let liveId = '';

async function until(what: string, condition: () => boolean): Promise<void> {
  await waitUntil(what, condition);
}

/** Lets what follows an answered dialog run (a few turns of the event loop). */
const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

describe('the Electron main process', () => {
  const errors: string[] = [];
  beforeAll(async () => {
    vi.spyOn(console, 'error').mockImplementation((line: unknown) => void errors.push(String(line)));
    await import('./index');
    await until('the window to be created', () => created.length > 0);
  });

  it('hosts the control socket of its state dir, so CLI runs appear in the app', async () => {
    expect(existsSync(join(STATE_DIR, 'run', 'warden.sock'))).toBe(true);
    const { connectToHost } = await import('../../client/transport');
    const api = await connectToHost(STATE_DIR);
    expect(api).not.toBeNull();
    const started = await api!.start({ argv: ['echo', 'from-cli'] });
    expect((await api!.wait(started.id)).stdout).toBe('from-cli\n');
    const list = handlers.get('warden:list') as (event: unknown) => Promise<{ id: string }[]>;
    expect((await list(frame)).map((r) => r.id)).toContain(started.id);
  });

  it('opens one window that is isolated, sandboxed and without Node', () => {
    expect(created).toHaveLength(1);
    const prefs = created[0]!.options.webPreferences as Record<string, unknown>;
    expect(prefs.contextIsolation).toBe(true);
    expect(prefs.sandbox).toBe(true);
    expect(prefs.nodeIntegration).toBe(false);
    expect(String(prefs.preload)).toMatch(/preload[/\\]index\.cjs$/);
  });

  it('notifies when a run ends in anything but completed; clicking opens that run', async () => {
    const start = handlers.get('warden:start') as (event: unknown, request: unknown) => Promise<{ id: string }>;
    const wait = handlers.get('warden:wait') as (event: unknown, id: string) => Promise<unknown>;
    const frame = { senderFrame: { url: 'app://warden/index.html' } };
    const ok = await start(frame, { argv: ['true'] });
    const bad = await start(frame, { argv: ['bash', '-c', 'exit 3'] });
    await wait(frame, ok.id);
    await wait(frame, bad.id);
    expect(notices.map((n) => n.options.title)).toEqual(['Run failed']);
    expect(notices[0]!.options.body).toContain('bash -c exit 3');
    expect(notices[0]!.shown).toBe(true);
    const before = focused;
    notices[0]!.click!();
    expect(focused).toBeGreaterThan(before);
    expect(executed.at(-1)).toBe(`location.hash = '#/runs/${bad.id}/verdict'`);
  });

  it('a second launch focuses the window', () => {
    const before = focused;
    appHandlers.get('second-instance')!();
    expect(focused).toBeGreaterThan(before);
  });

  it('registers app:// as privileged before ready, sandboxes every renderer, and loads the page from app://warden', async () => {
    expect(order.slice(0, 3)).toEqual(['registerSchemesAsPrivileged:app', 'enableSandbox', 'whenReady']);
    const window = created[0]!.window as unknown as { loadURL: ReturnType<typeof vi.fn>; loadFile: ReturnType<typeof vi.fn> };
    // ELECTRON_RENDERER_URL is set, and ignored: the app is packaged.
    expect(window.loadURL.mock.calls).toEqual([['app://warden/index.html']]);
    expect(window.loadFile).not.toHaveBeenCalled();
    expect(errors).toContain('warden: ELECTRON_RENDERER_URL is ignored in a packaged app.');
  });

  it('serves its page over app:// from the renderer dir beside it, with the CSP as a header, and nothing outside', async () => {
    const handler = protocols.get('app')!;
    // Main's dir is this one (here src/main/app, in the bundle out/main): the renderer dir beside it.
    expect(protocolRoots).toEqual([join(__dirname, '../renderer')]);
    const page = await handler(new Request('app://warden/index.html'));
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(await page.text()).toContain('<div id="root"></div>');
    const outside = await handler(new Request('app://warden/..%2Fmain%2Findex.ts'));
    expect(outside.status).toBe(403);
    expect(await outside.text()).not.toContain('electron');
  });

  it('refuses permissions but the clipboard for its own page, navigation, new windows and links off the list', async () => {
    const electron = (await import('electron')) as unknown as { shell: { openExternal: ReturnType<typeof vi.fn> } };
    const asked = (permission: string, requestingUrl: string) => {
      let granted: boolean | undefined;
      permissionHook!({ getURL: () => requestingUrl }, permission, (ok) => (granted = ok), { requestingUrl });
      return granted;
    };
    expect(asked('media', 'app://warden/index.html')).toBe(false);
    expect(asked('notifications', 'app://warden/index.html')).toBe(false);
    expect(asked('geolocation', 'app://warden/index.html')).toBe(false);
    expect(asked('clipboard-sanitized-write', 'app://warden/index.html')).toBe(true);
    expect(asked('clipboard-sanitized-write', 'http://localhost:5173/')).toBe(false);
    expect(asked('clipboard-sanitized-write', 'file:///tmp/x.html')).toBe(false);
    expect(permissionCheck!(null, 'clipboard-sanitized-write', 'app://warden')).toBe(true);
    expect(permissionCheck!(null, 'hid', 'app://warden')).toBe(false);
    expect(permissionCheck!(null, 'clipboard-read', 'app://warden')).toBe(false);
    expect(permissionCheck!(null, 'clipboard-sanitized-write', 'https://evil.example')).toBe(false);

    const preventDefault = vi.fn();
    navigationHandlers.get('will-navigate')!({ preventDefault, url: 'https://evil.example/phish' });
    expect(preventDefault).toHaveBeenCalledTimes(1);
    navigationHandlers.get('will-redirect')!({ preventDefault, url: 'https://evil.example/' });
    navigationHandlers.get('will-attach-webview')!({ preventDefault });
    expect(preventDefault).toHaveBeenCalledTimes(3);
    for (const url of ['javascript:alert(1)', 'https://evil.example/', 'http://github.com/x', 'file:///etc/passwd', 'smb://host/share', 'https://github.com.evil.example/', 'https://user@github.com/']) {
      expect(openHandler!({ url }).action).toBe('deny');
    }
    expect(electron.shell.openExternal).not.toHaveBeenCalled();
    expect(errors).toContain('warden: refused to open "https://evil.example/phish": not a link to Warden\'s documentation.');
    expect(errors).toContain('warden: refused to open "file:///etc/passwd": not a link to Warden\'s documentation.');
    expect(errors).toContain('warden: refused the page\'s request for the media permission (app://warden/index.html).');
    // A link to the docs opens in the browser, from window.open or a plain link; the window stays.
    expect(openHandler!({ url: 'https://github.com/warden/warden#readme' }).action).toBe('deny');
    navigationHandlers.get('will-navigate')!({ preventDefault, url: 'https://github.com/warden/warden/issues' });
    expect(electron.shell.openExternal.mock.calls).toEqual([['https://github.com/warden/warden#readme'], ['https://github.com/warden/warden/issues']]);
  });

  it('registers the API handlers and refuses calls from pages it did not load', async () => {
    for (const channel of ['warden:start', 'warden:stop', 'warden:wait', 'warden:extend', 'warden:get', 'warden:list', 'warden:history', 'warden:timeline', 'warden:sessions', 'warden:restart-session', 'warden:close-session', 'warden:host']) {
      expect(handlers.has(channel)).toBe(true);
    }
    const list = handlers.get('warden:list') as (event: unknown) => Promise<unknown>;
    await expect(async () => list({ senderFrame: { url: 'https://evil.example/' } })).rejects.toThrow(/own window/);
    // Not a file:// page (any such page shares one origin), nor the dev server a packaged app ignores.
    await expect(async () => list({ senderFrame: { url: 'file:///app/out/renderer/index.html' } })).rejects.toThrow(/own window/);
    await expect(async () => list({ senderFrame: { url: 'http://localhost:5173/' } })).rejects.toThrow(/own window/);
    await expect(list(frame)).resolves.toBeInstanceOf(Array);
  });

  it('quitting with a live run asks first, listing it; Cancel keeps the app, its host and the run', async () => {
    const electron = (await import('electron')) as unknown as { app: { quit: ReturnType<typeof vi.fn> }; dialog: { showErrorBox: ReturnType<typeof vi.fn> } };
    const start = handlers.get('warden:start') as (event: unknown, request: unknown) => Promise<{ id: string }>;
    const get = handlers.get('warden:get') as (event: unknown, id: string) => Promise<{ state: string }>;
    const live = await start(frame, { argv: ['sleep', '60'] });
    liveId = live.id;
    nextAnswer = 1;
    const preventDefault = vi.fn();
    appHandlers.get('before-quit')!({ preventDefault });
    expect(preventDefault).toHaveBeenCalled();
    await until('the question', () => messageBoxes.length === 1);
    await settle();
    const asked = messageBoxes[0]!;
    expect(asked.message).toBe('A run is live in this Warden. Stop it and quit?');
    expect(asked.detail).toContain(`${live.id}  sleep 60 — `);
    expect(asked.detail).toMatch(/stopped with the stop sequence .* recorded in the history/);
    expect(asked.buttons).toEqual(['Stop runs and quit', 'Cancel']);
    expect(electron.app.quit).not.toHaveBeenCalled();
    expect((await get(frame, live.id)).state).toBe('running');
    expect(existsSync(join(STATE_DIR, 'run', 'warden.sock'))).toBe(true);
    expect(electron.dialog.showErrorBox).not.toHaveBeenCalled();
  });

  it('closing the window asks the same (it quits the app); Cancel keeps the window open; the window remembers its bounds', async () => {
    const electron = (await import('electron')) as unknown as { app: { quit: ReturnType<typeof vi.fn> } };
    const preventDefault = vi.fn();
    windowHandlers.get('close')!({ preventDefault });
    expect(preventDefault).toHaveBeenCalled();
    await until('the question', () => messageBoxes.length === 2);
    await settle();
    expect(messageBoxes[1]!.detail).toContain(liveId);
    expect(electron.app.quit).not.toHaveBeenCalled();
    const { loadWindowBounds } = await import('./window-state');
    expect(loadWindowBounds(STATE_DIR)).toEqual({ x: 12, y: 34, width: 1111, height: 777 });
  });

  it('confirming stops the live run, records it and closes the socket before quitting', async () => {
    nextAnswer = 0;
    const preventDefault = vi.fn();
    appHandlers.get('before-quit')!({ preventDefault });
    expect(preventDefault).toHaveBeenCalled();
    const electron = (await import('electron')) as unknown as { app: { quit: ReturnType<typeof vi.fn> } };
    await until('the quit', () => electron.app.quit.mock.calls.length > 0);
    expect(messageBoxes).toHaveLength(3);
    expect(existsSync(join(STATE_DIR, 'run', 'warden.sock'))).toBe(false);
    // Once decided, the quit goes through: the next before-quit is not held.
    const again = vi.fn();
    appHandlers.get('before-quit')!({ preventDefault: again });
    expect(again).not.toHaveBeenCalled();
    const { openStore } = await import('../store');
    const store = openStore({ dir: STATE_DIR });
    try {
      expect(store.get(liveId)).toMatchObject({ verdict: 'stopped', stop: { reason: 'shutdown' } });
    } finally {
      store.close();
    }
  });
});
