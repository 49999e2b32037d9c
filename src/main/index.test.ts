// The Electron shell with 'electron' mocked (no Electron binary can run on the
// build machines): the window is isolated and sandboxed, the CSP is set, IPC
// handlers are registered, navigation and new windows are refused, and
// quitting (or closing the window) with live runs asks first. Here the app
// hosts the engine; index-attach.test.ts has it attach to a running host.

import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';

// The app hosts the control socket of this state dir, not the user's.
const STATE_DIR = mkdtempSync(join(tmpdir(), 'wi-'));
process.env.WARDEN_STATE_DIR = STATE_DIR;

const created: { options: Record<string, unknown>; window: Record<string, unknown> }[] = [];
const handlers = new Map<string, unknown>();
const appHandlers = new Map<string, (...args: unknown[]) => void>();
let headersHook: ((details: unknown, callback: (r: unknown) => void) => void) | undefined;
let permissionHook: ((c: unknown, p: string, cb: (ok: boolean) => void) => void) | undefined;
const navigationHandlers = new Map<string, (event: { preventDefault: () => void }) => void>();
const windowHandlers = new Map<string, (event?: { preventDefault: () => void }) => void>();
/** What the next dialog.showMessageBox answers (its button index), and the options it was shown with. */
let nextAnswer = 1;
const messageBoxes: { message: string; detail?: string; buttons: string[] }[] = [];
const notices: { options: { title: string; body: string }; click?: () => void; shown: boolean }[] = [];
const executed: string[] = [];
let focused = 0;
let openHandler: ((details: { url: string }) => { action: string }) | undefined;

vi.mock('electron', () => {
  class BrowserWindow {
    webContents = {
      setWindowOpenHandler: (fn: typeof openHandler) => (openHandler = fn),
      on: (name: string, fn: (event: { preventDefault: () => void }) => void) => navigationHandlers.set(name, fn),
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
      whenReady: () => Promise.resolve(),
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
    ipcMain: { handle: (channel: string, fn: unknown) => handlers.set(channel, fn), removeHandler: (c: string) => handlers.delete(c) },
    session: {
      defaultSession: {
        webRequest: { onHeadersReceived: (fn: typeof headersHook) => (headersHook = fn) },
        setPermissionRequestHandler: (fn: typeof permissionHook) => (permissionHook = fn),
      },
    },
    shell: { openExternal: vi.fn() },
  };
});

const frame = { senderFrame: { url: 'file:///app/out/renderer/index.html' } };
let liveId = '';

async function until(what: string, condition: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 25));
  if (!condition()) throw new Error(`timed out waiting for ${what}`);
}

/** Lets what follows an answered dialog run (a few turns of the event loop). */
const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

describe('the Electron main process', () => {
  beforeAll(async () => {
    await import('./index');
    for (let i = 0; i < 200 && created.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 25));
  });

  it('hosts the control socket of its state dir, so CLI runs appear in the app', async () => {
    expect(existsSync(join(STATE_DIR, 'run', 'warden.sock'))).toBe(true);
    const { connectToHost } = await import('../client/transport');
    const api = await connectToHost(STATE_DIR);
    expect(api).not.toBeNull();
    const started = await api!.start({ argv: ['echo', 'from-cli'] });
    expect((await api!.wait(started.id)).stdout).toBe('from-cli\n');
    const list = handlers.get('warden:list') as (event: unknown) => Promise<{ id: string }[]>;
    expect((await list({ senderFrame: { url: 'file:///app/out/renderer/index.html' } })).map((r) => r.id)).toContain(started.id);
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
    const frame = { senderFrame: { url: 'file:///app/out/renderer/index.html' } };
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

  it('sets a strict Content-Security-Policy on every response', () => {
    let headers: Record<string, string[]> = {};
    headersHook!({ responseHeaders: { 'X-Other': ['1'] } }, (r) => (headers = (r as { responseHeaders: Record<string, string[]> }).responseHeaders));
    const csp = headers['Content-Security-Policy']![0]!;
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-eval');
    expect(headers['X-Other']).toEqual(['1']);
  });

  it('refuses permission requests, navigation and new windows', () => {
    let granted: boolean | undefined;
    permissionHook!(null, 'media', (ok) => (granted = ok));
    expect(granted).toBe(false);
    const preventDefault = vi.fn();
    navigationHandlers.get('will-navigate')!({ preventDefault });
    expect(preventDefault).toHaveBeenCalled();
    expect(openHandler!({ url: 'javascript:alert(1)' }).action).toBe('deny');
  });

  it('registers the API handlers and refuses calls from pages it did not load', async () => {
    for (const channel of ['warden:start', 'warden:stop', 'warden:wait', 'warden:extend', 'warden:get', 'warden:list', 'warden:history', 'warden:timeline', 'warden:sessions', 'warden:restart-session', 'warden:close-session', 'warden:host']) {
      expect(handlers.has(channel)).toBe(true);
    }
    const list = handlers.get('warden:list') as (event: unknown) => Promise<unknown>;
    await expect(async () => list({ senderFrame: { url: 'https://evil.example/' } })).rejects.toThrow(/own window/);
    await expect(list({ senderFrame: { url: 'file:///app/out/renderer/index.html' } })).resolves.toBeInstanceOf(Array);
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
    const { openStore } = await import('./store');
    const store = openStore({ dir: STATE_DIR });
    try {
      expect(store.get(liveId)).toMatchObject({ verdict: 'stopped', stop: { reason: 'shutdown' } });
    } finally {
      store.close();
    }
  });
});
