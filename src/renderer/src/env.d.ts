import type { WardenApi } from '../../shared/api';

declare global {
  interface Window {
    /** The preload's IPC bridge in the Electron window; HTTP + SSE in web mode (web-api.ts). */
    warden?: WardenApi;
  }
}

export {};
