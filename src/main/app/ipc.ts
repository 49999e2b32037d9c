// IPC handlers for the renderer: every argument is checked here, at the
// boundary, with the same schemas the HTTP API uses (src/shared/schemas.ts),
// before it reaches the engine. Every call is answered with an IpcAnswer
// (src/shared/errors.ts): its value, or its error's kind and line, which the
// preload throws again. Plain Node (no electron import), so it is tested
// without Electron; index.ts passes in ipcMain.

import { IPC, type WardenApi } from '../../shared/api';
import type { RunEvent } from '../../shared/events';
import { hostChoice, splitRunId } from '../../shared/hosts';
import { createBatcher } from './event-batcher';
import { checkOutputRange, outputPage } from '../host/output-page';
import { originOf } from './window';
import { ipcAnswer, WardenError } from '../../shared/errors';
import { extendSchema, historyQuerySchema, inputSchema, settingsSchema, InputError, parse, parseRunRequest, parseWaitOptions, runIdSchema, sessionNameSchema, signalSchema, stopSchema } from '../../shared/schemas';

export interface IpcMainLike {
  handle(channel: string, listener: (event: { senderFrame?: { url: string } | null }, ...args: unknown[]) => unknown): void;
  removeHandler(channel: string): void;
}

/** Bad arguments from the page: the same one-line errors as the HTTP API's 400s. */
export { InputError as IpcInputError };

/**
 * Only the page Warden itself loaded may call in: its exact origin (app://warden,
 * or the dev server's when not packaged; see window.ts rendererEntry). No file://
 * page is trusted (every file:// page has the same origin), nor any URL whose
 * origin cannot be told ("null", about:blank, data:).
 */
export function trustedSender(url: string | undefined, allowedOrigins: readonly string[]): boolean {
  if (!url) return false;
  const origin = originOf(url);
  return origin !== null && allowedOrigins.includes(origin);
}

/** A run's id: the engine's, or ID@HOST for a remote's run (shared/hosts.ts). */
const runId = (value: unknown) => (typeof value === 'string' && splitRunId(value)?.host ? value : parse(runIdSchema, value));
const host = (value: unknown, all: boolean) => {
  try {
    return hostChoice(value, all);
  } catch (error) {
    throw new InputError((error as Error).message);
  }
};
const field = (value: unknown, key: string): unknown => (value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined);
const sessionName = (value: unknown) => parse(sessionNameSchema, value);

export function registerIpc(ipc: IpcMainLike, api: WardenApi, allowedOrigins: readonly string[]): () => void {
  const channels: string[] = [];
  const handle = <T>(channel: string, fn: (...args: unknown[]) => Promise<T>) => {
    channels.push(channel);
    ipc.handle(channel, (event, ...args) =>
      ipcAnswer(() => {
        if (!trustedSender(event.senderFrame?.url, allowedOrigins)) throw new WardenError('denied', "Calls are accepted from Warden's own window only.");
        return fn(...args);
      }),
    );
  };
  handle(IPC.start, (request, on) => {
    const target = host(field(on, 'host'), false);
    return api.start(parseRunRequest(request), ...(target !== undefined ? [{ host: target }] : []));
  });
  handle(IPC.stop, (id, options) => api.stop(runId(id), parse(stopSchema, options ?? {})));
  handle(IPC.wait, (id, options) => api.wait(runId(id), parseWaitOptions(options)));
  handle(IPC.extend, (id, byMs) => api.extend(runId(id), parse(extendSchema, { byMs }).byMs));
  handle(IPC.input, (id, input) => api.input(runId(id), parse(inputSchema, input)));
  handle(IPC.signal, (id, pid, signal) => {
    const checked = parse(signalSchema, { pid, signal });
    return api.signal(runId(id), checked.pid, checked.signal);
  });
  handle(IPC.get, (id, options) => {
    const output = field(options, 'output');
    if (output !== undefined && output !== 'none' && output !== 'all') throw new InputError(`output is none or all, not ${JSON.stringify(output)?.slice(0, 40)}.`);
    return api.get(runId(id), output === 'none' ? { output: 'none' } : {});
  });
  // A page of a run's output: the same code as GET /runs/ID/output (host/output-page.ts).
  handle(IPC.output, (id, range) => outputPage(api, runId(id), checkOutputRange(range)));
  handle(IPC.list, (options) => api.list({ ...(field(options, 'output') === 'none' ? { output: 'none' } : {}), ...(field(options, 'hosts') === 'all' ? { hosts: 'all' } : {}) }));
  handle(IPC.history, (query) => {
    const { host: scope, ...rest } = (query ?? {}) as Record<string, unknown>;
    const target = host(scope, true);
    const parsed = parse(historyQuerySchema, rest);
    return api.history(target !== undefined ? { ...parsed, host: target } : parsed);
  });
  handle(IPC.timeline, (id) => api.timeline(runId(id)));
  handle(IPC.sessions, () => api.sessions());
  handle(IPC.restartSession, (name) => api.restartSession(sessionName(name)));
  handle(IPC.closeSession, (name) => api.closeSession(sessionName(name)));
  handle(IPC.host, () => api.host());
  handle(IPC.hosts, async () => (api.hosts ? api.hosts() : []));
  handle(IPC.settings, () => api.settings());
  handle(IPC.saveSettings, (settings) => api.saveSettings(parse(settingsSchema, settings)));
  return () => {
    for (const channel of channels) ipc.removeHandler(channel);
  };
}

/**
 * Forwards engine events to a window in batches (event-batcher.ts): one
 * message per run per frame, an array of that run's events. Returns the
 * unsubscribe function, which sends what is pending first.
 */
export function forwardEvents(api: WardenApi, send: (channel: string, events: RunEvent[]) => void): () => void {
  const batcher = createBatcher((_runId, events) => send(IPC.event, events));
  const unsubscribe = api.subscribe((event) => batcher.push(event));
  return () => {
    unsubscribe();
    batcher.close();
  };
}
