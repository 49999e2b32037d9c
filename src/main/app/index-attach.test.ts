// The Electron shell (electron mocked) when a host already runs for its state
// dir, a real `warden serve --no-tcp` in another process: the app attaches
// instead of refusing, its IPC handlers answer from that host, its window gets
// that host's events, and quitting it stops nothing. Then, with the main
// process loaded afresh for another state dir: when the attached host dies,
// the app takes over (hosts the engine itself), reloads the page and says so;
// quitting it with no live run asks nothing. The app is not packaged and runs
// on electron-vite's dev server: the window loads it and IPC trusts its origin
// (and no other: not app://warden, not file://).

import type { ResultPromise } from 'execa';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RunEvent } from '../../shared/events';
import { fromIpcAnswer } from '../../shared/errors';
import { connectToHost } from '../../client/transport';
import { serveFor } from '../../cli/testkit';
import { until as waitUntil } from '../../../test/kit/until';


const handlers = new Map<string, (event: unknown, ...args: unknown[]) => Promise<unknown>>();
const appHandlers = new Map<string, (...args: unknown[]) => void>();
const sent: { channel: string; events: RunEvent[] }[] = [];
const notices: { title: string; body: string }[] = [];
const messageBoxes: unknown[] = [];
const reloads = vi.fn();
const windows: { loadURL: ReturnType<typeof vi.fn> }[] = [];
const DEV_URL = 'http://localhost:5173/';
process.env.ELECTRON_RENDERER_URL = DEV_URL;

vi.mock('electron', () => {
  class BrowserWindow {
    webContents = {
      setWindowOpenHandler: () => undefined,
      on: () => undefined,
      send: (channel: string, events: RunEvent[]) => sent.push({ channel, events }),
      reload: reloads,
      executeJavaScript: async () => undefined,
    };
    constructor() {
      windows.push(this as unknown as (typeof windows)[number]);
    }
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
    loadFile = async () => undefined;
    loadURL = vi.fn(async () => undefined);
    static getAllWindows() {
      return windows;
    }
  }
  return {
    app: {
      isPackaged: false,
      enableSandbox: () => undefined,
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
      constructor(private readonly options: { title: string; body: string }) {}
      on() {}
      show() {
        notices.push(this.options);
      }
    },
    dialog: {
      showErrorBox: vi.fn(),
      showMessageBox: vi.fn(async (...args: unknown[]) => {
        messageBoxes.push(args.at(-1));
        return { response: 1, checkboxChecked: false };
      }),
    },
    BrowserWindow,
    // Each handler as the preload calls it: its IpcAnswer read back into the value, or its error thrown again.
    ipcMain: {
      handle: (channel: string, fn: (event: unknown, ...args: unknown[]) => Promise<unknown>) => handlers.set(channel, async (event: unknown, ...args: unknown[]) => fromIpcAnswer(await fn(event, ...args))),
      removeHandler: (c: string) => handlers.delete(c),
    },
    protocol: { registerSchemesAsPrivileged: () => undefined, handle: () => undefined },
    session: { defaultSession: { setPermissionRequestHandler: () => undefined, setPermissionCheckHandler: () => undefined } },
    shell: { openExternal: vi.fn(async () => undefined) },
  };
});

type Electron = { app: { quit: ReturnType<typeof vi.fn> }; dialog: { showErrorBox: ReturnType<typeof vi.fn> } };
const frame = { senderFrame: { url: `${DEV_URL}#/runs` } };
const servers: ResultPromise[] = [];

function call<T>(channel: string, ...args: unknown[]): Promise<T> {
  return handlers.get(channel)!(frame, ...args) as Promise<T>;
}

async function until(what: string, condition: () => boolean | Promise<boolean>): Promise<void> {
  await waitUntil(what, condition);
}

const serve = (dir: string) => serveFor(dir, servers);

/** Loads the main process afresh (vi.resetModules) for the state dir, once its window is open. */
async function launch(dir: string): Promise<void> {
  process.env.WARDEN_STATE_DIR = dir;
  handlers.clear();
  appHandlers.clear();
  windows.length = 0;
  const electron = (await import('electron')) as unknown as Electron;
  electron.app.quit.mockClear();
  vi.resetModules();
  await import('./index');
  await until('the window', () => windows.length > 0);
}

async function quit(): Promise<void> {
  const electron = (await import('electron')) as unknown as Electron;
  const preventDefault = vi.fn();
  appHandlers.get('before-quit')!({ preventDefault });
  await until('the quit', () => electron.app.quit.mock.calls.length > 0);
}

afterAll(async () => {
  for (const child of servers.splice(0)) {
    child.kill('SIGTERM');
    await child;
  }
});

describe('the Electron main process with a host already running', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wj-'));
  let server: ResultPromise;

  beforeAll(async () => {
    server = (await serve(dir)).child;
    await launch(dir);
  });

  it('loads the dev server\'s page and trusts its origin only: not packaged', async () => {
    expect(windows[0]!.loadURL.mock.calls).toEqual([[DEV_URL]]);
    for (const url of ['app://warden/index.html', 'file:///app/out/renderer/index.html', 'http://localhost:5174/', 'http://127.0.0.1:5173/']) {
      await expect(async () => handlers.get('warden:host')!({ senderFrame: { url } })).rejects.toThrow(/own window/);
    }
  });

  it('attaches to it instead of refusing: no error dialog, the IPC answers from that host', async () => {
    const electron = (await import('electron')) as unknown as Electron;
    expect(electron.dialog.showErrorBox).not.toHaveBeenCalled();
    expect(await call<{ pid: number }>('warden:host')).toMatchObject({ pid: server.pid });
    const started = await call<{ id: string }>('warden:start', { argv: ['bash', '-c', 'echo from-the-app'] });
    expect(await call('warden:wait', started.id)).toMatchObject({ verdict: 'completed', stdout: 'from-the-app\n' });
    const other = await connectToHost(dir);
    expect((await other!.list()).map((r) => r.id)).toContain(started.id);
    // Its events reach the window, batched per run, as from a host in this process.
    await until('the ended event in the window', () => sent.some((s) => s.channel === 'warden:event' && s.events.some((e) => e.type === 'ended' && e.runId === started.id)));
  });

  it('shows runs other clients start in that host, and notifies when one fails', async () => {
    const other = await connectToHost(dir);
    const failed = await other!.start({ argv: ['bash', '-c', 'exit 4'] });
    await other!.wait(failed.id);
    expect((await call<{ id: string }[]>('warden:list')).map((r) => r.id)).toContain(failed.id);
    await until('the notice', () => notices.some((n) => n.title === 'Run failed' && n.body.includes('exit 4')));
  });

  it('quits without asking and without stopping the runs, which are that host\'s', async () => {
    const live = await call<{ id: string }>('warden:start', { argv: ['sleep', '30'] });
    await quit();
    expect(messageBoxes).toHaveLength(0);
    const other = await connectToHost(dir);
    expect((await other!.get(live.id))?.state).toBe('running');
    expect((await other!.host()).pid).toBe(server.pid);
    await other!.stop(live.id, { force: true });
  });
});

describe('the Electron main process when the host it attached to dies', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wk-'));
  let server: ResultPromise;

  beforeAll(async () => {
    server = (await serve(dir)).child;
    await launch(dir);
  });

  it('takes over: hosts the engine itself, reloads the page and says so; the dead host\'s run is lost', async () => {
    expect(await call<{ pid: number }>('warden:host')).toMatchObject({ pid: server.pid });
    const doomed = await call<{ id: string }>('warden:start', { argv: ['sleep', '30'] });
    await until('the run in the window', () => sent.some((s) => s.events.some((e) => e.type === 'started' && e.runId === doomed.id)));
    server.kill('SIGKILL');
    await server;
    await until('the reload', () => reloads.mock.calls.length > 0);
    expect(notices.at(-1)).toMatchObject({ title: 'Warden hosts its runs now' });
    expect(notices.at(-1)!.body).toContain(`pid ${server.pid}`);
    expect(notices.at(-1)!.body).toContain('The run it held ended with it');
    // The same handlers now answer from this process's host.
    expect(await call<{ pid: number }>('warden:host')).toMatchObject({ pid: process.pid });
    expect(await call('warden:get', doomed.id)).toMatchObject({ verdict: 'lost' });
    const next = await call<{ id: string }>('warden:start', { argv: ['bash', '-c', 'echo hosted'] });
    expect(await call('warden:wait', next.id)).toMatchObject({ stdout: 'hosted\n' });
    await until('the new host\'s events in the window', () => sent.some((s) => s.events.some((e) => e.type === 'ended' && e.runId === next.id)));
    expect((await (await connectToHost(dir))!.host()).pid).toBe(process.pid);
  });

  it('then quits without asking when no run is live, closing its socket', async () => {
    await quit();
    expect(messageBoxes).toHaveLength(0);
    expect(existsSync(join(dir, 'run', 'warden.sock'))).toBe(false);
  });
});
