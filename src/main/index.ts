// The Electron shell: one window (a second launch focuses it), and the host in
// this process (the engine, the history and the control socket, so agents'
// CLI runs appear live here). Everything testable lives in host/, ipc.ts,
// window.ts, window-state.ts, notify.ts, event-batcher.ts and the supervisor.

import { app, BrowserWindow, dialog, ipcMain, Notification, session, shell } from 'electron';
import { join } from 'node:path';
import type { WardenApi } from '../shared/api';
import { HostRunningError, startHost, type Host } from './host/host';
import { forwardEvents, registerIpc } from './ipc';
import { noticeFor } from './notify';
import { CONTENT_SECURITY_POLICY, windowOptions } from './window';
import { loadWindowBounds, saveWindowBounds } from './window-state';

const devUrl = process.env.ELECTRON_RENDERER_URL;
let host: Host | null = null;
let mainWindow: BrowserWindow | null = null;

function focusWindow(): void {
  if (!mainWindow || mainWindow.isDestroyed()) return;
  if (mainWindow.isMinimized()) mainWindow.restore();
  mainWindow.show();
  mainWindow.focus();
}

/** Opens a run in the window: the page routes by its hash (the id is checked hex). */
function openRun(runId: string): void {
  focusWindow();
  if (!mainWindow || !/^[0-9a-f]{6,32}$/.test(runId)) return;
  void mainWindow.webContents.executeJavaScript(`location.hash = '#/runs/${runId}/verdict'`).catch(() => undefined);
}

function createWindow(api: WardenApi, stateDir: string): void {
  const bounds = loadWindowBounds(stateDir);
  const window = new BrowserWindow(windowOptions(join(__dirname, '../preload/index.cjs'), bounds));
  mainWindow = window;
  window.once('ready-to-show', () => {
    if (bounds.maximized) window.maximize();
    window.show();
  });
  window.on('close', () => saveWindowBounds(stateDir, { ...window.getNormalBounds(), maximized: window.isMaximized() }));
  // No navigation away from Warden and no new windows; links open in the browser.
  window.webContents.setWindowOpenHandler(({ url }) => {
    if (url.startsWith('https://')) void shell.openExternal(url);
    return { action: 'deny' };
  });
  window.webContents.on('will-navigate', (event) => event.preventDefault());
  const unsubscribe = forwardEvents(api, (channel, events) => {
    if (!window.isDestroyed()) window.webContents.send(channel, events);
  });
  window.on('closed', () => {
    unsubscribe();
    if (mainWindow === window) mainWindow = null;
  });
  if (devUrl) void window.loadURL(devUrl);
  else void window.loadFile(join(__dirname, '../renderer/index.html'));
}

async function ready(): Promise<void> {
  session.defaultSession.webRequest.onHeadersReceived((details, callback) => {
    callback({ responseHeaders: { ...details.responseHeaders, 'Content-Security-Policy': [CONTENT_SECURITY_POLICY] } });
  });
  session.defaultSession.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));
  let started: Host;
  try {
    // The app is the host for its state dir; no TCP listener (the window talks over IPC).
    started = await startHost({ port: null, webRoot: null, version: app.getVersion(), log: (line) => console.error(`warden: ${line}`) });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    dialog.showErrorBox('Warden cannot start', error instanceof HostRunningError ? `${message}\n\nStop that host (warden serve) first, then open Warden again.` : message);
    app.quit();
    return;
  }
  host = started;
  const api = started.api;
  registerIpc(ipcMain, api, devUrl ? [new URL(devUrl).origin] : ['file://']);
  // A run that ends in anything but completed is worth a look: clicking the notice opens it.
  api.subscribe((event) => {
    const notice = noticeFor(event);
    if (!notice || !Notification.isSupported()) return;
    const shown = new Notification({ title: notice.title, body: notice.body });
    shown.on('click', () => openRun(notice.runId));
    shown.show();
  });
  createWindow(api, started.stateDir);
  app.on('activate', () => {
    if (BrowserWindow.getAllWindows().length === 0) createWindow(api, started.stateDir);
  });
}

if (!app.requestSingleInstanceLock()) {
  // Another Warden window is open: it is focused (second-instance there), this one leaves.
  app.quit();
} else {
  app.on('second-instance', focusWindow);
  void app.whenReady().then(ready);
}

let quitting = false;
app.on('before-quit', (event) => {
  if (quitting || !host) return;
  // Live runs are stopped with the stop sequence, recorded, and torn down before Warden exits.
  event.preventDefault();
  quitting = true;
  void host.shutdown().finally(() => app.quit());
});

app.on('window-all-closed', () => {
  if (process.platform !== 'darwin') app.quit();
});
