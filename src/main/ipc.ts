// IPC handlers for the renderer: every argument is checked here, at the
// boundary, before it reaches the engine. Plain Node (no electron import), so
// it is tested without Electron; index.ts passes in ipcMain.

import { IPC, type WardenApi } from '../shared/api';
import type { RunEvent } from '../shared/events';
import type { RunRequest } from '../shared/request';

export interface IpcMainLike {
  handle(channel: string, listener: (event: { senderFrame?: { url: string } | null }, ...args: unknown[]) => unknown): void;
  removeHandler(channel: string): void;
}

export class IpcInputError extends Error {
  override name = 'IpcInputError';
}

const ID = /^[0-9a-f]{6,32}$/;

function runId(value: unknown): string {
  if (typeof value !== 'string' || !ID.test(value)) throw new IpcInputError('A run id is a string of 6 to 32 hex characters.');
  return value;
}

const REQUEST_KEYS = new Set([
  'argv', 'shell', 'cwd', 'env', 'stdin', 'limitMs', 'graceMs', 'terminateAfterMs', 'drainMs', 'teardownBudgetMs', 'keepDescendants', 'outputCapChars', 'memory',
]);
const PYTHON_REQUEST_KEYS = new Set(['code', 'session', 'onBusy', 'limitMs', 'graceMs', 'cwd', 'env', 'keepDescendants', 'outputCapChars', 'memory']);

function runRequest(value: unknown): RunRequest {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new IpcInputError('A run request is an object.');
  const python = 'code' in value;
  if (python && 'argv' in value) throw new IpcInputError('A run request has argv (a command) or code (a Python script), not both.');
  const keys = python ? PYTHON_REQUEST_KEYS : REQUEST_KEYS;
  for (const key of Object.keys(value)) {
    if (!keys.has(key)) throw new IpcInputError(`A ${python ? 'Python run' : 'run'} request has no field ${JSON.stringify(key)}.`);
  }
  // Field types and ranges are checked by the engine's normalizeRequest / normalizePythonRequest.
  return value as RunRequest;
}

const SESSION = /^[A-Za-z0-9_.-]{1,64}$/;

function sessionName(value: unknown): string {
  if (typeof value !== 'string' || !SESSION.test(value)) throw new IpcInputError('A session name is 1 to 64 letters, digits, \'_\', \'.\' or \'-\'.');
  return value;
}

function optionalMs(value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw new IpcInputError('A timeout is a number of milliseconds, 0 or more.');
  return value;
}

/** Only pages Warden itself loaded may call in. */
export function trustedSender(url: string | undefined, allowedOrigins: string[]): boolean {
  if (!url) return false;
  if (url.startsWith('file://')) return allowedOrigins.includes('file://');
  try {
    return allowedOrigins.includes(new URL(url).origin);
  } catch {
    return false;
  }
}

export function registerIpc(ipc: IpcMainLike, api: WardenApi, allowedOrigins: string[]): () => void {
  const guard = <T>(fn: (...args: unknown[]) => Promise<T>) =>
    (event: { senderFrame?: { url: string } | null }, ...args: unknown[]) => {
      if (!trustedSender(event.senderFrame?.url, allowedOrigins)) throw new IpcInputError('Calls are accepted from Warden\'s own window only.');
      return fn(...args);
    };
  ipc.handle(IPC.start, guard((request) => api.start(runRequest(request))));
  ipc.handle(IPC.stop, guard((id, options) => {
    const force = typeof options === 'object' && options !== null && (options as { force?: unknown }).force === true;
    return api.stop(runId(id), { force });
  }));
  ipc.handle(IPC.wait, guard((id, timeoutMs) => api.wait(runId(id), optionalMs(timeoutMs))));
  ipc.handle(IPC.get, guard((id) => api.get(runId(id))));
  ipc.handle(IPC.list, guard(() => api.list()));
  ipc.handle(IPC.sessions, guard(() => api.sessions()));
  ipc.handle(IPC.restartSession, guard((name) => api.restartSession(sessionName(name))));
  ipc.handle(IPC.closeSession, guard((name) => api.closeSession(sessionName(name))));
  return () => {
    for (const channel of [IPC.start, IPC.stop, IPC.wait, IPC.get, IPC.list, IPC.sessions, IPC.restartSession, IPC.closeSession]) ipc.removeHandler(channel);
  };
}

/** Forwards engine events to a window; returns the unsubscribe function. */
export function forwardEvents(api: WardenApi, send: (channel: string, event: RunEvent) => void): () => void {
  return api.subscribe((event) => send(IPC.event, event));
}
