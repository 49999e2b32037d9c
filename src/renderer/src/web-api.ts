// Web mode: the same window.warden, over HTTP + SSE to the `warden serve`
// that served this page. The session cookie set by the one-time login link
// authenticates both (same origin, SameSite=Strict, HttpOnly: the page never
// sees a token). In the Electron window the preload's IPC bridge is used
// instead and this is never installed.
//
// The transport also says whether the host can be reached: the event stream
// is the page's heartbeat. A dropped stream is "offline" after a moment (so a
// host killed with SIGKILL shows within 2 s); EventSource reconnects by itself
// and resumes with Last-Event-ID. A stream the host refuses (HTTP 401: the
// login ended, as when the host restarted) is not retried by EventSource: it
// is reopened here every couple of seconds, so a login in another tab brings
// this page back without a reload.

import { API_PREFIX, BATCH_EVENT, GAP_EVENT, HttpWardenApi, type HttpReply, type HttpTransport } from '../../shared/http-api';
import type { RunEvent } from '../../shared/events';

export type ConnectionState = 'online' | 'offline' | 'unauthorised';

export interface ConnectionHandlers {
  /** The host answered again, went away, or no longer accepts this page's login. */
  onConnection?(state: ConnectionState): void;
  /** Events were missed (a gap in the host's buffer, or a host that restarted): reload what the page shows. */
  onGap?(): void;
}

/** A dropped stream that has not reopened after this long is shown as offline. */
export const OFFLINE_AFTER_MS = 600;
/** How often a stream the host refused (or that gave up) is tried again. */
export const REOPEN_EVERY_MS = 2000;

/** The words for a fetch that never reached the host (the browser's own, "Failed to fetch", say nothing). */
export const UNREACHABLE = 'The Warden host cannot be reached: it may have stopped. This page reconnects by itself when it is back.';

export class BrowserTransport implements HttpTransport {
  private state: ConnectionState | null = null;

  constructor(private readonly handlers: ConnectionHandlers = {}) {}

  private report(state: ConnectionState): void {
    if (state === this.state) return;
    this.state = state;
    this.handlers.onConnection?.(state);
  }

  async request(method: 'GET' | 'POST', path: string, body?: unknown): Promise<HttpReply> {
    let response: Response;
    try {
      response = await fetch(path, {
        method,
        credentials: 'same-origin',
        headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch {
      throw new Error(UNREACHABLE);
    }
    if (response.status === 401) this.report('unauthorised');
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // Not JSON: kept as text for the error message.
    }
    return { status: response.status, body: parsed };
  }

  events(path: string, handlers: { onEvent(event: RunEvent, id: string): void; onGap?(): void; onOpen?(): void }): () => void {
    let source: EventSource | null = null;
    let lastId = '';
    let closed = false;
    let everOpen = false;
    let offlineTimer: ReturnType<typeof setTimeout> | undefined;
    let reopenTimer: ReturnType<typeof setTimeout> | undefined;

    const seen = (id: string) => {
      if (id) lastId = id;
    };

    const open = () => {
      if (closed) return;
      // batch=1: the host sends one message per frame holding every event since the last (a page
      // showing 50 busy runs handles ~60 messages a second, not thousands). A new EventSource sends
      // no Last-Event-ID header, so the id it resumes from goes in the query. ended=summary: a run's
      // output is not sent with its end (the page fetches it in pages for the run it shows).
      const query = `batch=1&ended=summary${lastId ? `&lastEventId=${encodeURIComponent(lastId)}` : ''}`;
      const es = new EventSource(`${path}${path.includes('?') ? '&' : '?'}${query}`, { withCredentials: true });
      source = es;
      let openedOnce = false;
      es.onopen = () => {
        clearTimeout(offlineTimer);
        offlineTimer = undefined;
        // Back after a time away with nothing to resume from: the page reloads what it shows.
        if (everOpen && !openedOnce && !lastId) handlers.onGap?.();
        openedOnce = true;
        everOpen = true;
        this.report('online');
        // The host added this stream to its clients before it sent the headers: nothing from now on is missed.
        handlers.onOpen?.();
      };
      es.onerror = () => {
        if (closed || source !== es) return;
        if (offlineTimer === undefined && this.state !== 'offline' && this.state !== 'unauthorised') {
          offlineTimer = setTimeout(() => {
            offlineTimer = undefined;
            if (es.readyState !== EventSource.OPEN) this.report('offline');
          }, OFFLINE_AFTER_MS);
        }
        // EventSource retries a dropped connection itself (CONNECTING); an HTTP error (401, 5xx) makes it give up.
        if (es.readyState === EventSource.CLOSED) {
          es.close();
          source = null;
          void this.whyRefused();
          clearTimeout(reopenTimer);
          reopenTimer = setTimeout(open, REOPEN_EVERY_MS);
        }
      };
      es.onmessage = (message: MessageEvent<string>) => {
        try {
          handlers.onEvent(JSON.parse(message.data) as RunEvent, message.lastEventId);
        } catch {
          // A frame that is not an event is skipped.
        }
        seen(message.lastEventId);
      };
      es.addEventListener(BATCH_EVENT, (message: MessageEvent<string>) => {
        let events: RunEvent[];
        try {
          events = JSON.parse(message.data) as RunEvent[];
        } catch {
          return;
        }
        if (Array.isArray(events)) for (const event of events) handlers.onEvent(event, message.lastEventId);
        seen(message.lastEventId);
      });
      es.addEventListener(GAP_EVENT, () => handlers.onGap?.());
    };

    open();
    return () => {
      closed = true;
      clearTimeout(offlineTimer);
      clearTimeout(reopenTimer);
      source?.close();
      source = null;
    };
  }

  /** A stream the host refused: a 401 means the login ended; no answer means it is gone. */
  private async whyRefused(): Promise<void> {
    try {
      const response = await fetch(`${API_PREFIX}/host`, { credentials: 'same-origin' });
      this.report(response.status === 401 ? 'unauthorised' : 'offline');
    } catch {
      this.report('offline');
    }
  }
}

let webMode = false;

/** Whether this page is in a browser, served by `warden serve` (not the desktop window). */
export function isWebMode(): boolean {
  return webMode;
}

/** window.warden for a page served by `warden serve`, when no preload provided one. */
export function installWebApi(target: Window, handlers: ConnectionHandlers = {}): void {
  if (target.warden) return;
  webMode = true;
  target.warden = new HttpWardenApi(new BrowserTransport(handlers), handlers.onGap ? { onGap: () => handlers.onGap?.() } : {});
}
