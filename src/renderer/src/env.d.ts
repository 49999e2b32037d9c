import type { WardenApi } from '../../shared/api';

declare global {
  interface Window {
    /** Present in the Electron window (preload) and, later, in web mode. */
    warden?: WardenApi;
  }
}

export {};
