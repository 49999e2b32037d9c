// Exposes window.warden (the WardenApi) to the sandboxed page. Nothing else of
// Electron or Node reaches the page.

import { contextBridge, ipcRenderer, type IpcRendererEvent } from 'electron';
import { IPC, type WardenApi } from '../shared/api';
import { fromIpcAnswer } from '../shared/errors';
import type { RunEvent } from '../shared/events';

/** One call: the main process answers with an IpcAnswer; its error is thrown here again, with its kind and line. */
const call = <T>(channel: string, ...args: unknown[]): Promise<T> => ipcRenderer.invoke(channel, ...args).then((answer: unknown) => fromIpcAnswer<T>(answer));

export const wardenBridge: WardenApi = {
  start: (request, on) => (on?.host !== undefined ? call(IPC.start, request, { host: on.host }) : call(IPC.start, request)),
  stop: (id, options) => call(IPC.stop, id, options),
  wait: (id, options) => call(IPC.wait, id, options),
  extend: (id, byMs) => call(IPC.extend, id, byMs),
  input: (id, input) => call(IPC.input, id, input),
  signal: (id, pid, signal) => call(IPC.signal, id, pid, signal),
  get: (id, options) => (options?.output === 'none' ? call(IPC.get, id, { output: 'none' }) : call(IPC.get, id)),
  output: (id, range) => call(IPC.output, id, range),
  list: (options) => call(IPC.list, options),
  history: (query) => call(IPC.history, query),
  timeline: (id) => call(IPC.timeline, id),
  host: () => call(IPC.host),
  hosts: () => call(IPC.hosts),
  settings: () => call(IPC.settings),
  saveSettings: (settings) => call(IPC.saveSettings, settings),
  sessions: () => call(IPC.sessions),
  restartSession: (name) => call(IPC.restartSession, name),
  closeSession: (name) => call(IPC.closeSession, name),
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
