// Web mode: the same window.warden, over HTTP + SSE to the `warden serve`
// that served this page. The session cookie set by the one-time login link
// authenticates both (same origin, SameSite=Strict, HttpOnly: the page never
// sees a token). In the Electron window the preload's IPC bridge is used
// instead and this is never installed.

import { BATCH_EVENT, GAP_EVENT, HttpWardenApi, type HttpReply, type HttpTransport } from '../../shared/http-api';
import type { RunEvent } from '../../shared/events';

export class BrowserTransport implements HttpTransport {
  async request(method: 'GET' | 'POST', path: string, body?: unknown): Promise<HttpReply> {
    const response = await fetch(path, {
      method,
      credentials: 'same-origin',
      headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // Not JSON: kept as text for the error message.
    }
    return { status: response.status, body: parsed };
  }

  /** EventSource reconnects on its own and sends Last-Event-ID, so the host replays what it missed. */
  events(path: string, handlers: { onEvent(event: RunEvent, id: string): void; onGap?(): void }): () => void {
    // batch=1: the host sends one message per frame holding every event since the last (a page
    // showing 50 busy runs handles ~60 messages a second, not thousands).
    const source = new EventSource(`${path}${path.includes('?') ? '&' : '?'}batch=1`, { withCredentials: true });
    source.onmessage = (message: MessageEvent<string>) => {
      try {
        handlers.onEvent(JSON.parse(message.data) as RunEvent, message.lastEventId);
      } catch {
        // A frame that is not an event is skipped.
      }
    };
    source.addEventListener(BATCH_EVENT, (message: MessageEvent<string>) => {
      let events: RunEvent[];
      try {
        events = JSON.parse(message.data) as RunEvent[];
      } catch {
        return;
      }
      if (!Array.isArray(events)) return;
      for (const event of events) handlers.onEvent(event, message.lastEventId);
    });
    source.addEventListener(GAP_EVENT, () => handlers.onGap?.());
    return () => source.close();
  }
}

/** window.warden for a page served by `warden serve`, when no preload provided one. */
export function installWebApi(target: Window, onGap?: () => void): void {
  if (target.warden) return;
  target.warden = new HttpWardenApi(new BrowserTransport(), onGap ? { onGap } : {});
}
