// The Electron shell: one window, the engine in this process, IPC to the page.
// Everything testable lives in ipc.ts, window.ts and the supervisor.

import { app, BrowserWindow, ipcMain, session, shell } from 'electron';
import { join } from 'node:path';
import { engineApi } from './supervisor/api';
import { Supervisor } from './supervisor/registry';
import { forwardEvents, registerIpc } from './ipc';
import { CONTENT_SECURITY_POLICY, windowOptions } from './window';

const supervisor = new Supervisor();
const api = engineApi(supervisor);
const devUrl = process.env.ELECTRON_RENDERER_URL;

function createWindow(): void {
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

void app.whenReady().then(() => {
  session.defaultSession.webRequest.onHeadersReceived((details, callback) => {
    callback({ responseHeaders: { ...details.responseHeaders, 'Content-Security-Policy': [CONTENT_SECURITY_POLICY] } });
  });
  session.defaultSession.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));
  registerIpc(ipcMain, api, devUrl ? [new URL(devUrl).origin] : ['file://']);
  createWindow();
  app.on('activate', () => {
    if (BrowserWindow.getAllWindows().length === 0) createWindow();
  });
});

let quitting = false;
app.on('before-quit', (event) => {
  if (quitting) return;
  // Live runs are stopped with the stop sequence and torn down before Warden exits.
  event.preventDefault();
  quitting = true;
  void supervisor.shutdown().finally(() => app.quit());
});

app.on('window-all-closed', () => {
  if (process.platform !== 'darwin') app.quit();
});
