// The Electron shell with 'electron' mocked (no Electron binary can run on the
// build machines): the window is isolated and sandboxed, the CSP is set, IPC
// handlers are registered, navigation and new windows are refused.

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
const windowHandlers = new Map<string, () => void>();
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
      executeJavaScript: async (code: string) => void executed.push(code),
    };
    constructor(options: Record<string, unknown>) {
      created.push({ options, window: this as unknown as Record<string, unknown> });
    }
    once() {}
    on(name: string, fn: () => void) {
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
    dialog: { showErrorBox: vi.fn() },
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

  it('a second launch focuses the window; the window remembers its bounds', async () => {
    const before = focused;
    appHandlers.get('second-instance')!();
    expect(focused).toBeGreaterThan(before);
    windowHandlers.get('close')!();
    const { loadWindowBounds } = await import('./window-state');
    expect(loadWindowBounds(STATE_DIR)).toEqual({ x: 12, y: 34, width: 1111, height: 777 });
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

  it('stops live runs, records them and closes the socket before quitting', async () => {
    const start = handlers.get('warden:start') as (event: unknown, request: unknown) => Promise<{ id: string }>;
    const live = await start({ senderFrame: { url: 'file:///app/out/renderer/index.html' } }, { argv: ['sleep', '60'] });
    const preventDefault = vi.fn();
    appHandlers.get('before-quit')!({ preventDefault });
    expect(preventDefault).toHaveBeenCalled();
    const electron = (await import('electron')) as unknown as { app: { quit: ReturnType<typeof vi.fn> } };
    for (let i = 0; i < 400 && electron.app.quit.mock.calls.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(electron.app.quit).toHaveBeenCalled();
    expect(existsSync(join(STATE_DIR, 'run', 'warden.sock'))).toBe(false);
    const { openStore } = await import('./store');
    const store = openStore({ dir: STATE_DIR });
    try {
      expect(store.get(live.id)).toMatchObject({ verdict: 'stopped', stop: { reason: 'shutdown' } });
    } finally {
      store.close();
    }
  });
});
