// The Electron shell: one window, and the host in this process (the engine,
// the history and the control socket, so agents' CLI runs appear live here).
// Everything testable lives in host/, ipc.ts, window.ts and the supervisor.

import { app, BrowserWindow, dialog, ipcMain, session, shell } from 'electron';
import { join } from 'node:path';
import type { WardenApi } from '../shared/api';
import { HostRunningError, startHost, type Host } from './host/host';
import { forwardEvents, registerIpc } from './ipc';
import { CONTENT_SECURITY_POLICY, windowOptions } from './window';

const devUrl = process.env.ELECTRON_RENDERER_URL;
let host: Host | null = null;

function createWindow(api: WardenApi): void {
  const window = new BrowserWindow(windowOptions(join(__dirname, '../preload/index.cjs')));
  window.once('ready-to-show', () => window.show());
  // No navigation away from Warden and no new windows; links open in the browser.
  window.webContents.setWindowOpenHandler(({ url }) => {
    if (url.startsWith('https://')) void shell.openExternal(url);
    return { action: 'deny' };
  });
  window.webContents.on('will-navigate', (event) => event.preventDefault());
  const unsubscribe = forwardEvents(api, (channel, event) => {
    if (!window.isDestroyed()) window.webContents.send(channel, event);
  });
  window.on('closed', unsubscribe);
  if (devUrl) void window.loadURL(devUrl);
  else void window.loadFile(join(__dirname, '../renderer/index.html'));
}

async function ready(): Promise<void> {
  session.defaultSession.webRequest.onHeadersReceived((details, callback) => {
    callback({ responseHeaders: { ...details.responseHeaders, 'Content-Security-Policy': [CONTENT_SECURITY_POLICY] } });
  });
  session.defaultSession.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));
  try {
    // The app is the host for its state dir; no TCP listener (the window talks over IPC).
    host = await startHost({ port: null, webRoot: null, version: app.getVersion(), log: (line) => console.error(`warden: ${line}`) });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    dialog.showErrorBox('Warden cannot start', error instanceof HostRunningError ? `${message}\n\nStop that host (warden serve) first, then open Warden again.` : message);
    app.quit();
    return;
  }
  const api = host.api;
  registerIpc(ipcMain, api, devUrl ? [new URL(devUrl).origin] : ['file://']);
  createWindow(api);
  app.on('activate', () => {
    if (BrowserWindow.getAllWindows().length === 0) createWindow(api);
  });
}

void app.whenReady().then(ready);

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
