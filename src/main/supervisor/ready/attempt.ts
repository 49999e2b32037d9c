// What one attempt of a readiness probe says: it passed (with a port or a
// line it found), or one line on why not.

export type Attempt = { ok: true; port?: number; line?: string } | { ok: false; why: string };

export const passed = (found: { port?: number; line?: string } = {}): Attempt => ({ ok: true, ...found });
export const failed = (why: string): Attempt => ({ ok: false, why });

/** A socket error as a reader says it: "connection refused" rather than ECONNREFUSED. */
export function socketWhy(error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
      return 'connection reset';
    case 'ETIMEDOUT':
      return 'timed out';
    case 'EHOSTUNREACH':
      return 'host unreachable';
    case 'ENOTFOUND':
      return 'host not found';
    case 'EAI_AGAIN':
      return 'host name could not be resolved now';
    default:
      return error.code ?? error.message;
  }
}
