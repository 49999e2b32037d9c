// Warden's one error type. Every error Warden means to say to someone is a
// WardenError with a kind; each boundary (the HTTP status, the CLI's exit and
// line, an MCP tool's isError answer, IPC) is chosen by the kind, never by the
// message, so a message can be reworded without changing the API. Anything
// else that reaches a boundary is a bug in Warden: kind 'internal'. The
// statuses are written here only (BOUNDARIES, HTTP_REFUSALS): code elsewhere
// names a kind and asks this table.

/**
 * - bad-input: the request cannot be done as asked (a value, a word, a file);
 * - not-found: no run, session, remote or route of that name;
 * - busy: something holds what was asked for (a session running a script, a host serving the state dir);
 * - shutting-down: the engine is ending and takes nothing new;
 * - unavailable: a resource or a host is not there now (a later try may work);
 * - denied: the caller is not one this end trusts (a token, an origin, a socket's owner);
 * - internal: Warden itself went wrong.
 */
export const ERROR_KINDS = ['bad-input', 'not-found', 'busy', 'shutting-down', 'unavailable', 'denied', 'internal'] as const;
export type ErrorKind = (typeof ERROR_KINDS)[number];

/**
 * The brand every WardenError carries, as execa brands its errors: a
 * registered symbol (Symbol.for), so an error made by another copy of this
 * module (the hook's own bundle, another realm) is known too, where
 * `instanceof` would not see it and a `kind` field alone could be anyone's.
 */
const WARDEN_ERROR = Symbol.for('warden.error');

export class WardenError extends Error {
  override name = 'WardenError';
  constructor(
    readonly kind: ErrorKind,
    message: string,
  ) {
    super(message);
    // Not enumerable: an error's JSON and its printed form stay as they were.
    Object.defineProperty(this, WARDEN_ERROR, { value: true });
  }
}

/** Bad input from a caller: one line for the user, never a stack trace. */
export class InputError extends WardenError {
  override name = 'InputError';
  constructor(message: string) {
    super('bad-input', message);
  }
}

export function isErrorKind(value: unknown): value is ErrorKind {
  return (ERROR_KINDS as readonly unknown[]).includes(value);
}

/**
 * Whether `error` is a WardenError: by its brand, not its class (a bundle
 * built on its own, the hook's, holds another copy of the class) and never
 * by a `kind` field alone (any library's error may have one).
 */
export function isWardenError(error: unknown): error is WardenError {
  return typeof error === 'object' && error !== null && (error as { [WARDEN_ERROR]?: unknown })[WARDEN_ERROR] === true && isErrorKind((error as { kind?: unknown }).kind);
}

export function kindOf(error: unknown): ErrorKind {
  return isWardenError(error) ? error.kind : 'internal';
}

/** What each boundary makes of a kind. */
export interface KindBoundaries {
  /** The host's HTTP status (an HTTP-only refusal may name a closer one: 405, 413, 415, 401). */
  httpStatus: number;
  /** The `warden` command's exit status. */
  cliExit: number;
  /** Whether an MCP tool call answers isError. */
  mcpIsError: boolean;
}

/** Warden's own errors exit 125 (as timeout(1) does), whatever their kind: a run's own statuses keep the rest. */
export const CLI_ERROR_EXIT = 125;

export const BOUNDARIES: Record<ErrorKind, KindBoundaries> = {
  'bad-input': { httpStatus: 400, cliExit: CLI_ERROR_EXIT, mcpIsError: true },
  'not-found': { httpStatus: 404, cliExit: CLI_ERROR_EXIT, mcpIsError: true },
  busy: { httpStatus: 409, cliExit: CLI_ERROR_EXIT, mcpIsError: true },
  'shutting-down': { httpStatus: 503, cliExit: CLI_ERROR_EXIT, mcpIsError: true },
  unavailable: { httpStatus: 503, cliExit: CLI_ERROR_EXIT, mcpIsError: true },
  denied: { httpStatus: 403, cliExit: CLI_ERROR_EXIT, mcpIsError: true },
  internal: { httpStatus: 500, cliExit: CLI_ERROR_EXIT, mcpIsError: true },
};

/**
 * The refusals HTTP names more closely than a kind's status: each keeps its
 * kind (the body says it), with a status of its own.
 */
export const HTTP_REFUSALS = {
  /** No token, or a wrong one (a login link, a bearer token). */
  'no-token': { kind: 'denied', httpStatus: 401 },
  /** A route asked with a method it does not take (with an Allow header). */
  'wrong-method': { kind: 'bad-input', httpStatus: 405 },
  /** A request body over the route's limit. */
  'too-large': { kind: 'bad-input', httpStatus: 413 },
  /** A request body that is not JSON. */
  'not-json': { kind: 'bad-input', httpStatus: 415 },
} as const satisfies Record<string, { kind: ErrorKind; httpStatus: number }>;
export type HttpRefusal = keyof typeof HTTP_REFUSALS;

/** The HTTP status of a kind, or of one of HTTP's own refusals. */
export function httpStatusOf(kind: ErrorKind | HttpRefusal): number {
  return Object.hasOwn(HTTP_REFUSALS, kind) ? HTTP_REFUSALS[kind as HttpRefusal].httpStatus : BOUNDARIES[kind as ErrorKind].httpStatus;
}

/** The kind of one of HTTP's own refusals, or the kind itself. */
export function kindOfRefusal(kind: ErrorKind | HttpRefusal): ErrorKind {
  return Object.hasOwn(HTTP_REFUSALS, kind) ? HTTP_REFUSALS[kind as HttpRefusal].kind : (kind as ErrorKind);
}

/**
 * The kind of an HTTP answer that names none (a host from before kinds were
 * on the wire, or something else answering): the tables read back (a kind's
 * own status, HTTP's refusals'), else by its class (any other 4xx is bad
 * input, the rest internal). Where two kinds share a status (503:
 * shutting-down, unavailable) the later in ERROR_KINDS reads it: an answer
 * that names no kind is only "not now". Read at each call, not built once
 * at load: a table read at load would break the module, not a test.
 */
export function kindOfHttpStatus(status: number): ErrorKind {
  let kind: ErrorKind | undefined;
  for (const each of ERROR_KINDS) if (BOUNDARIES[each].httpStatus === status) kind = each;
  for (const refusal of Object.values(HTTP_REFUSALS)) if (refusal.httpStatus === status) kind = refusal.kind;
  return kind ?? (Math.trunc(status / 100) === 4 ? 'bad-input' : 'internal');
}

/** The `warden` command's exit status for an error of this kind. */
export function cliExitOf(kind: ErrorKind): number {
  return BOUNDARIES[kind].cliExit;
}

/**
 * What a person or a model reads: a WardenError's message as it is (it was
 * written for them, whatever its kind); anything else is Warden's own bug,
 * said as such with `internalPrefix`.
 */
export function errorText(error: unknown, internalPrefix: string): string {
  const message = error instanceof Error ? error.message : String(error);
  return isWardenError(error) ? message : `${internalPrefix}${message}`;
}

/**
 * An IPC call's answer. Electron hands the page only a thrown error's text
 * ("Error invoking remote method ..."), so the main process answers every
 * call with a value: the result, or the error's kind and line, which the
 * preload throws again as a WardenError.
 */
export type IpcAnswer<T> = { ok: true; value: T } | { ok: false; kind: ErrorKind; error: string };

/** The answer of an IPC handler's work: its value, or its error by kind. */
export async function ipcAnswer<T>(work: () => T | Promise<T>): Promise<IpcAnswer<T>> {
  try {
    return { ok: true, value: await work() };
  } catch (error) {
    return { ok: false, kind: kindOf(error), error: errorText(error, 'Internal error: ') };
  }
}

/** The preload's side: the value, or the error thrown again with its kind. */
export function fromIpcAnswer<T>(answer: unknown): T {
  const a = answer as Partial<{ ok: boolean; value: T; kind: unknown; error: unknown }> | null;
  if (a !== null && typeof a === 'object' && a.ok === true) return a.value as T;
  if (a !== null && typeof a === 'object' && a.ok === false && typeof a.error === 'string') throw new WardenError(isErrorKind(a.kind) ? a.kind : 'internal', a.error);
  throw new WardenError('internal', 'The Warden main process answered a call with something that is not an answer.');
}
