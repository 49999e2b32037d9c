// What the control socket does with a connection when the host is near its
// descriptor limit: it answers 503 with the one-line reason, as it refuses a
// run then, instead of taking the connection in. Without it a burst of
// clients past the limit met libuv's own answer to EMFILE (accept, close at
// once): their writes failed with EPIPE and the CLI said the host was lost.
// The connection is answered here only while its own descriptor is still
// had: the threshold sits inside the host's reserve (supervisor/descriptors.ts).

import type { Socket } from 'node:net';
import { descriptorLimit, openDescriptors, reserveFor } from '../supervisor/descriptors';

/**
 * The control socket's listen backlog: a quarter of the descriptor reserve
 * (16 to 511). libuv accepts every pending connection in one turn, before
 * any is answered; past the limit it accepts and closes each (EPIPE to the
 * client). A backlog inside the guard's margin keeps one turn's accepts
 * within the descriptors left; a client past it gets EAGAIN, which the
 * client library tries again (client/wire.ts).
 */
export function socketBacklog(limit: number | null = descriptorLimit()): number {
  return limit === null ? 511 : Math.min(511, Math.max(16, Math.floor(reserveFor(limit) / 4)));
}

/** How often the open descriptors are counted; between two counts each connection taken counts one. */
const COUNT_EVERY_MS = 25;

/** The 503 a refused connection gets: what the host's HTTP layer would say, kind included. */
export function busyAnswer(open: number, limit: number): string {
  const body = JSON.stringify({
    error: `The Warden host is low on file descriptors: about ${open} of its ${limit} (RLIMIT_NOFILE) are open, so it takes no new connection now; its runs go on. Try again in a moment, or raise the host's limit (ulimit -n).`,
    kind: 'unavailable',
  });
  return `HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\nRetry-After: 1\r\n\r\n${body}`;
}

/**
 * A check for each new connection: true when it was answered 503 and is
 * being closed (the caller hands it to nobody), false to take it in. It
 * refuses while fewer than half the reserve would be left, so runs (which
 * stop at the whole reserve) are refused first, with their own 503.
 */
export function connectionGuard(options: { limit?: number | null; count?: () => number | null; onLow?: () => void } = {}): (socket: Socket) => boolean {
  const limit = options.limit === undefined ? descriptorLimit() : options.limit;
  const count = options.count ?? openDescriptors;
  let countedAt = -Infinity;
  let open = 0;
  let since = 0;
  return (socket) => {
    if (limit === null) return false;
    const now = performance.now();
    if (now - countedAt >= COUNT_EVERY_MS) {
      const counted = count();
      if (counted === null) return false;
      open = counted;
      since = 0;
      countedAt = now;
    }
    since += 1;
    if (open + since <= limit - Math.floor(reserveFor(limit) / 2)) return false;
    // Idle keep-alive connections hold descriptors nobody uses now: given back, the next ones get in.
    options.onLow?.();
    // Read and dropped, so the close is an orderly end after the answer, never a reset.
    socket.on('error', () => undefined);
    socket.resume();
    socket.end(busyAnswer(open + since, limit));
    setTimeout(() => socket.destroy(), 2000).unref();
    return true;
  };
}
