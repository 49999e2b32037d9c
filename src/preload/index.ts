// Exposes window.warden (the WardenApi) to the sandboxed page. Nothing else of
// Electron or Node reaches the page.

import { contextBridge, ipcRenderer, type IpcRendererEvent } from 'electron';
import { IPC, type WardenApi } from '../shared/api';
import type { RunEvent } from '../shared/events';

export const wardenBridge: WardenApi = {
  start: (request, on) => (on?.host !== undefined ? ipcRenderer.invoke(IPC.start, request, { host: on.host }) : ipcRenderer.invoke(IPC.start, request)),
  stop: (id, options) => ipcRenderer.invoke(IPC.stop, id, options),
  wait: (id, options) => ipcRenderer.invoke(IPC.wait, id, options),
  extend: (id, byMs) => ipcRenderer.invoke(IPC.extend, id, byMs),
  signal: (id, pid, signal) => ipcRenderer.invoke(IPC.signal, id, pid, signal),
  get: (id) => ipcRenderer.invoke(IPC.get, id),
  list: (options) => ipcRenderer.invoke(IPC.list, options),
  history: (query) => ipcRenderer.invoke(IPC.history, query),
  timeline: (id) => ipcRenderer.invoke(IPC.timeline, id),
  host: () => ipcRenderer.invoke(IPC.host),
  hosts: () => ipcRenderer.invoke(IPC.hosts),
  settings: () => ipcRenderer.invoke(IPC.settings),
  saveSettings: (settings) => ipcRenderer.invoke(IPC.saveSettings, settings),
  sessions: () => ipcRenderer.invoke(IPC.sessions),
  restartSession: (name) => ipcRenderer.invoke(IPC.restartSession, name),
  closeSession: (name) => ipcRenderer.invoke(IPC.closeSession, name),
  subscribe: (listener, options) => {
    // The main process sends one run's events of a frame as one array (event-batcher.ts).
    const handler = (_event: IpcRendererEvent, batch: RunEvent[]) => {
      if (!Array.isArray(batch)) return;
      for (const runEvent of batch) listener(runEvent);
    };
    ipcRenderer.on(IPC.event, handler);
    // The main process forwards every event to the window: from here on, none is missed.
    options?.onOpen?.();
    return () => void ipcRenderer.removeListener(IPC.event, handler);
  },
};

contextBridge.exposeInMainWorld('warden', wardenBridge);
