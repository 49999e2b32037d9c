// Hosts as the app and the web UI see them: this machine's host ("local")
// and each configured remote (warden remote add), reached by the local host
// over its own link (src/main/host/remote-hosts.ts). A remote's run is named
// `ID@HOST` everywhere above the local host (its store, routes, the page's
// URLs), so ids stay unambiguous across hosts: two machines may hand out the
// same 12 hex characters, never the same id with the same host name.

/** A remote's name: a word, so it is never an option or a path (the same rule `warden remote add` holds names to). */
export const HOST_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$/;
/** The name this machine's host goes by beside remotes. */
export const LOCAL_HOST = 'local';
/** A history query's host for every host at once (no remote's name can be it). */
export const ALL_HOSTS = '*';

/** connected: it answers and its events arrive; connecting: first try or reconnecting; disconnected: the last try failed (lastError says why), another is due. */
export type HostLinkState = 'connected' | 'connecting' | 'disconnected';

export interface HostStatus {
  name: string;
  /** The local host is always connected to itself. */
  local: boolean;
  state: HostLinkState;
  /** Why the last connection failed or dropped, one line; null when it never failed. */
  lastError: string | null;
  /** ISO 8601: when the state last changed. */
  since: string;
  /** How the remote is reached (ssh://user@host:port or its command); null for the local host. */
  target: string | null;
  /** How many times the link has connected: a client that sees it grow knows events may have been missed meanwhile (a drop shorter than its polling) and fetches what it shows again. */
  connections: number;
}

/** A run's id as the app names it: the remote's own id, `@`, the remote's name; a local run keeps its id. */
export function hostRunId(id: string, host: string | null | undefined): string {
  return host && host !== LOCAL_HOST ? `${id}@${host}` : id;
}

/** The remote's own id and its host (null: the local host) from an app-wide id; null when the text is neither. */
export function splitRunId(ref: string): { id: string; host: string | null } | null {
  const at = ref.indexOf('@');
  if (at < 0) return /^[0-9a-f]{6,32}$/.test(ref) ? { id: ref, host: null } : null;
  const id = ref.slice(0, at);
  const host = ref.slice(at + 1);
  if (!/^[0-9a-f]{6,32}$/.test(id) || !HOST_NAME.test(host) || host === LOCAL_HOST) return null;
  return { id, host };
}

/** The host a run belongs to, by its app-wide id. */
export function hostOf(ref: string): string {
  return splitRunId(ref)?.host ?? LOCAL_HOST;
}

/**
 * A host a caller names (a run's target, a history's scope), checked at the
 * boundary: 'local', a remote's name, or '*' (every host) where `all` allows
 * it; absent stays absent. Whether the name is configured is the host's to
 * say (it knows its remotes). Throws the message for a bad one.
 */
export function hostChoice(value: unknown, all: boolean): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string' && (value === LOCAL_HOST || HOST_NAME.test(value) || (all && value === ALL_HOSTS))) return value;
  throw new Error(`host is 'local'${all ? ", '*'" : ''} or a remote's name (1 to 32 letters, digits, '_', '.' or '-'), not ${JSON.stringify(String(value).slice(0, 40))}.`);
}
