// The engine as a WardenApi: the in-process implementation the CLI, the
// Electron IPC handlers and tests share.

import type { WardenApi } from '../../shared/api';
import type { Supervisor } from './registry';

export function engineApi(supervisor: Supervisor): WardenApi {
  return {
    start: async (request) => supervisor.start(request),
    stop: async (id, options) => supervisor.stop(id, options),
    wait: (id, timeoutMs) => supervisor.wait(id, timeoutMs),
    get: async (id) => supervisor.get(id) ?? null,
    list: async () => supervisor.list(),
    subscribe: (listener) => supervisor.subscribe(listener),
    sessions: async () => supervisor.sessions(),
    restartSession: (name) => supervisor.restartSession(name),
    closeSession: (name) => supervisor.closeSession(name),
  };
}
