// The Electron shell: one window (a second launch focuses it), and the host of
// its state dir: in this process (the engine, the history and the control
// socket, so agents' CLI runs appear live here), or, when one already runs
// (`warden serve`, a CLI's background host), that one over its socket.
// Everything testable lives in app-host.ts, quit.ts, host/, ipc.ts, window.ts,
// protocol.ts, window-state.ts, notify.ts, event-batcher.ts and the supervisor.

import { app, BrowserWindow, clipboard, dialog, ipcMain, Notification, protocol, session, shell, type MessageBoxOptions, type WebContents } from 'electron';
import { join } from 'node:path';
import type { WardenApi } from '../../shared/api';
import { startOrAttach, type AppHost, type AppHostChange } from './app-host';
import { HostRunningError } from '../host/host';
import { forwardEvents, registerIpc } from './ipc';
import { noticeFor } from './notify';
import { quitPrompt } from './quit';
import { APP_ENTRY, APP_ORIGIN, APP_SCHEME, APP_SCHEME_PRIVILEGES, appProtocolHandler } from './protocol';
import { setUpUpdates, type UpdateNotice, type Updates, type UpdaterLike } from './updates';
import { externalLinkAllowed, permissionAllowed, rendererEntry, windowOptions } from './window';
import { loadWindowBounds, saveWindowBounds } from './window-state';

// Before ready, as Electron requires: app:// gets a real origin and a secure context (protocol.ts).
protocol.registerSchemesAsPrivileged([APP_SCHEME_PRIVILEGES]);
// Every renderer sandboxed, whatever a window's options say.
app.enableSandbox();

/** The page the window loads and the one origin IPC trusts (the dev server's only when not packaged). */
const entry = rendererEntry({ isPackaged: app.isPackaged, devUrl: process.env.ELECTRON_RENDERER_URL, appEntry: APP_ENTRY, appOrigin: APP_ORIGIN });
let appHost: AppHost | null = null;
let mainWindow: BrowserWindow | null = null;
/** Set once quitting is decided: the next before-quit and window close go through. */
let quitting = false;
let quitAsked: Promise<void> | null = null;
/** The app's updates (updates.ts), where this install has them. */
let updates: Updates | null = null;
/** The open "lost its host" dialog, closed when a host is found again. */
let lostDialog: AbortController | null = null;
const log = (line: string) => console.error(`warden: ${line}`);
if (entry.ignored) log(entry.ignored);

/** A link the page asked to open: in the browser when its host is on the list (window.ts), else refused and logged. */
function openExternal(url: string): void {
  if (externalLinkAllowed(url)) void shell.openExternal(url).catch((error: unknown) => log(`opening ${url}: ${error instanceof Error ? error.message : String(error)}`));
  else log(`refused to open ${JSON.stringify(url.slice(0, 200))}: not a link to Warden's documentation.`);
}

/** No navigation away from Warden's page, no new windows, no webviews; allowed links open in the browser. */
function guardContents(contents: WebContents): void {
  contents.setWindowOpenHandler(({ url }) => {
    openExternal(url);
    return { action: 'deny' };
  });
  // In-page navigations (the hash routes) and reloads from the main process do not come here.
  contents.on('will-navigate', (event) => {
    event.preventDefault();
    openExternal(event.url);
  });
  contents.on('will-redirect', (event) => event.preventDefault());
  contents.on('will-attach-webview', (event) => event.preventDefault());
}

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
  window.on('close', (event) => {
    saveWindowBounds(stateDir, { ...window.getNormalBounds(), maximized: window.isMaximized() });
    // Closing the last window quits (not on macOS): ask first, with the window still there to go back to.
    if (quitting || process.platform === 'darwin' || BrowserWindow.getAllWindows().length > 1) return;
    event.preventDefault();
    requestQuit();
  });
  guardContents(window.webContents);
  const unsubscribe = forwardEvents(api, (channel, events) => {
    if (!window.isDestroyed()) window.webContents.send(channel, events);
  });
  window.on('closed', () => {
    unsubscribe();
    if (mainWindow === window) mainWindow = null;
  });
  void window.loadURL(entry.url);
}

function showDialog(options: MessageBoxOptions) {
  return mainWindow && !mainWindow.isDestroyed() ? dialog.showMessageBox(mainWindow, options) : dialog.showMessageBox(options);
}

/** A desktop notification; where there are none, `important` ones become a dialog. */
function notify(title: string, body: string, options: { onClick?: () => void; important?: boolean } = {}): void {
  if (!Notification.isSupported()) {
    if (options.important) void showDialog({ type: 'info', title, message: title, detail: body, buttons: ['OK'] });
    return;
  }
  const shown = new Notification({ title, body });
  if (options.onClick) shown.on('click', options.onClick);
  shown.show();
}

/** The page refetches everything it shows (it keeps its route, in the hash). */
function reloadWindows(): void {
  for (const window of BrowserWindow.getAllWindows()) if (!window.isDestroyed()) window.webContents.reload();
}

/**
 * The host changed under the window (see app-host.ts): the IPC already goes to
 * the new one; the page is reloaded so that nothing it shows is the dead
 * host's, and a notification says what happened.
 */
function hostChanged(change: AppHostChange): void {
  if (change.kind === 'lost') {
    void askLost(change);
    return;
  }
  lostDialog?.abort();
  reloadWindows();
  const ended = change.lostRuns.length === 0 ? '' : ` ${change.lostRuns.length === 1 ? 'The run it held ended' : `The ${change.lostRuns.length} runs it held ended`} with it (History: lost).`;
  if (change.kind === 'took-over') {
    notify('Warden hosts its runs now', `The Warden host (pid ${change.from.pid}) went away; this app hosts the engine for the CLI and agents now.${ended}`, { important: true });
  } else if (change.to.hostId !== change.from.hostId) {
    notify('Warden switched hosts', `The Warden host (pid ${change.from.pid}) went away; showing the host that replaced it (pid ${change.to.pid}).${ended}`, { important: true });
  }
}

async function askLost(change: Extract<AppHostChange, { kind: 'lost' }>): Promise<void> {
  if (lostDialog || quitting) return;
  const controller = new AbortController();
  lostDialog = controller;
  const answer = await showDialog({
    type: 'error',
    title: 'Warden lost its host',
    message: `The Warden host this window showed (pid ${change.from.pid}) went away, and Warden cannot host in its place.`,
    detail: `${change.error.message}\n\nWhat the window shows is no longer live. Retry (once that host is stopped), or quit.`,
    buttons: ['Retry', 'Quit'],
    defaultId: 0,
    cancelId: 1,
    noLink: true,
    signal: controller.signal,
  });
  if (lostDialog === controller) lostDialog = null;
  if (controller.signal.aborted) return;
  if (answer.response === 0) await appHost?.reconnect();
  else requestQuit();
}

/**
 * Quitting: an app that hosts live runs asks first (they would be stopped);
 * Cancel keeps it open. An attached app quits without asking or stopping
 * anything: the runs are the other host's and go on.
 */
async function decideQuit(): Promise<void> {
  const current = appHost;
  if (current?.mode === 'host') {
    const prompt = quitPrompt(await current.liveRuns().catch(() => []));
    if (prompt) {
      const { confirmId, ...options } = prompt;
      const answer = await showDialog(options);
      if (answer.response !== confirmId) return;
    }
  }
  quitting = true;
  lostDialog?.abort();
  // Attached: the other host's runs go on after this app quits; a downloaded update waits until none is live.
  const stillLive = updates && current?.mode === 'attached' ? await liveCount(current.api) : 0;
  // Hosting: live runs are stopped with the stop sequence, recorded, and torn down before Warden exits.
  await current?.close().catch((error: unknown) => log(`closing: ${error instanceof Error ? error.message : String(error)}`));
  const update = updates?.installOnQuit(stillLive);
  if (update?.relaunch) app.relaunch({ execPath: update.relaunch });
  app.quit();
}

async function liveCount(api: WardenApi): Promise<number> {
  return (await api.list().catch(() => [])).filter((run) => run.state !== 'ended').length;
}

/** A click on an update's notice: the .deb's command to copy, or the AppImage's "Restart now" (refused while runs are live). */
async function showUpdate(notice: UpdateNotice): Promise<void> {
  if (notice.command) {
    const answer = await showDialog({ type: 'info', title: notice.title, message: notice.title, detail: `Install it with:\n\n${notice.command}`, buttons: ['Copy command', 'Close'], defaultId: 0, cancelId: 1, noLink: true });
    if (answer.response === 0) clipboard.writeText(notice.command);
    return;
  }
  if (updates?.state !== 'ready') return;
  const answer = await showDialog({ type: 'info', title: notice.title, message: notice.title, detail: 'Restart Warden now to use it, or it installs when you quit.', buttons: ['Restart now', 'Later'], defaultId: 0, cancelId: 1, noLink: true });
  if (answer.response !== 0) return;
  const refused = await updates.restartToUpdate();
  if (refused) void showDialog({ type: 'info', title: notice.title, message: refused, buttons: ['OK'] });
  else requestQuit();
}

async function startUpdates(api: WardenApi): Promise<void> {
  try {
    const set = await setUpUpdates({
      env: process.env,
      resourcesPath: process.resourcesPath,
      isPackaged: app.isPackaged,
      configDir: () => app.getPath('userData'),
      // electron-updater picks the AppImage's or the .deb's updater (resources/package-type) itself.
      loadUpdater: async () => (await import('electron-updater')).autoUpdater as unknown as UpdaterLike,
      liveRuns: () => liveCount(api),
      notify: (notice) => notify(notice.title, notice.body, { important: true, onClick: () => void showUpdate(notice) }),
      log,
    });
    updates = set?.updates ?? null;
  } catch (error) {
    log(`updates: off: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function requestQuit(): void {
  quitAsked ??= decideQuit().finally(() => (quitAsked = null));
}

async function ready(): Promise<void> {
  // Warden's page from out/renderer only, with its CSP as a header (protocol.ts).
  protocol.handle(APP_SCHEME, appProtocolHandler(join(__dirname, '../renderer'), log));
  // Only what the page uses (the clipboard, for Copy command), only for Warden's page; the rest is refused.
  session.defaultSession.setPermissionRequestHandler((contents, permission, callback, details) => {
    const allowed = permissionAllowed(permission, details.requestingUrl, entry.trustedOrigins);
    if (!allowed) log(`refused the page's request for the ${permission} permission (${contents.getURL().slice(0, 200)}).`);
    callback(allowed);
  });
  session.defaultSession.setPermissionCheckHandler((_contents, permission, requestingOrigin) => permissionAllowed(permission, requestingOrigin, entry.trustedOrigins));
  let started: AppHost;
  try {
    // Host the engine (no TCP listener: the window talks over IPC), or attach to the host already running.
    started = await startOrAttach({ host: { port: null, webRoot: null, version: app.getVersion(), log }, log, onChange: hostChanged, onGap: reloadWindows });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    dialog.showErrorBox('Warden cannot start', error instanceof HostRunningError ? `${message}\n\nStop that host (warden serve) first, then open Warden again.` : message);
    quitting = true;
    app.quit();
    return;
  }
  if (quitting) {
    // Quit while it started: nothing was shown, nothing is left behind.
    await started.close();
    return;
  }
  appHost = started;
  if (started.mode === 'attached') log(`attached to the Warden host of ${started.stateDir} (pid ${started.attachedTo?.pid}).`);
  // The same API object across a takeover (app-host.ts): the handlers and subscriptions below stay valid.
  const api = started.api;
  registerIpc(ipcMain, api, entry.trustedOrigins);
  // A run that ends in anything but completed is worth a look: clicking the notice opens it.
  api.subscribe((event) => {
    const notice = noticeFor(event);
    if (notice) notify(notice.title, notice.body, { onClick: () => openRun(notice.runId) });
  });
  createWindow(api, started.stateDir);
  void startUpdates(api);
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

app.on('before-quit', (event) => {
  if (quitting) return;
  event.preventDefault();
  requestQuit();
});

app.on('window-all-closed', () => {
  if (process.platform !== 'darwin') app.quit();
});
