// A readiness probe as text (`warden run --ready`, MCP `ready.probes`, the API's
// `ready.probes`) to what it checks. Parsed once, at the boundary: every
// mistake is one line naming the probe and the forms there are.

import { WardenInputError } from '../errors';

export type ProbeSpec =
  | { kind: 'tcp'; text: string; host: string | null; port: number }
  | { kind: 'http'; text: string; url: URL }
  | { kind: 'log'; text: string; regex: RegExp }
  | { kind: 'exec'; text: string; command: string }
  | { kind: 'file'; text: string; path: string }
  | { kind: 'port'; text: string; port: number | null };

/** The longest probe text taken (a regex or a command line). */
export const MAX_PROBE_CHARS = 4096;
/** The most probes one run may have. */
export const MAX_PROBES = 16;

const FORMS = 'tcp:[HOST:]PORT, http://... or https://..., log:/REGEX/[flags], exec:CMD, file:PATH, port or port:PORT';

/** Flags a log pattern may take: g and y would make RegExp.test keep state between lines. */
const LOG_FLAGS = /^[imsu]*$/;

function refuse(text: string, why: string): never {
  const shown = text.length > 80 ? `${text.slice(0, 77)}...` : text;
  throw new WardenInputError(`The readiness probe ${JSON.stringify(shown)} ${why}`);
}

/** A TCP port number from its text: 1 to 65535, digits only. */
export function portNumber(text: string): number | null {
  if (!/^\d{1,5}$/.test(text)) return null;
  const port = Number(text);
  return port >= 1 && port <= 65535 ? port : null;
}

function tcpProbe(text: string, rest: string): ProbeSpec {
  // [v6]:PORT, HOST:PORT, or PORT alone (localhost, either family).
  const bracketed = /^\[([0-9A-Fa-f:.]+)\]:([^:]*)$/.exec(rest);
  if (!bracketed && rest.startsWith('[')) refuse(text, 'needs an IPv6 address in brackets, then a colon and the port: tcp:[::1]:PORT.');
  const colon = rest.lastIndexOf(':');
  const host = bracketed ? bracketed[1]! : colon >= 0 ? rest.slice(0, colon) : null;
  const portText = bracketed ? bracketed[2]! : rest.slice(colon + 1);
  if (host !== null && !bracketed && host.includes(':')) refuse(text, 'needs brackets around an IPv6 address: tcp:[::1]:PORT.');
  if (host === '' || (host !== null && /[\s/[\]]/.test(host))) refuse(text, 'names no host before the port: tcp:PORT or tcp:HOST:PORT.');
  const port = portNumber(portText);
  if (port === null) refuse(text, `needs a port from 1 to 65535, not ${JSON.stringify(portText)}: tcp:[HOST:]PORT.`);
  return { kind: 'tcp', text, host, port };
}

function httpProbe(text: string): ProbeSpec {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    refuse(text, 'is not a URL: http://HOST[:PORT]/PATH.');
  }
  if (url.hostname === '') refuse(text, 'names no host: http://HOST[:PORT]/PATH.');
  if (url.username !== '' || url.password !== '') refuse(text, 'carries a user or password, which a probe never sends: give the URL without them.');
  return { kind: 'http', text, url };
}

function logProbe(text: string, rest: string): ProbeSpec {
  const end = rest.lastIndexOf('/');
  if (!rest.startsWith('/') || end <= 0) refuse(text, 'needs a pattern between slashes: log:/REGEX/ or log:/REGEX/i.');
  const source = rest.slice(1, end);
  const flags = rest.slice(end + 1);
  if (source === '') refuse(text, 'has an empty pattern, which every line matches: give what the ready line says.');
  if (!LOG_FLAGS.test(flags) || new Set(flags).size !== flags.length) refuse(text, `takes the flags i, m, s and u (each once), not ${JSON.stringify(flags)}.`);
  try {
    return { kind: 'log', text, regex: new RegExp(source, flags) };
  } catch (error) {
    refuse(text, `is not a valid regular expression (${error instanceof Error ? error.message.replace(/^Invalid regular expression: /, '') : String(error)}).`);
  }
}

/** One probe from its text; a WardenInputError (one line) when it is none of the forms. */
export function parseProbe(text: unknown): ProbeSpec {
  if (typeof text !== 'string') throw new WardenInputError(`A readiness probe is text such as "tcp:5173" or "log:/ready/", not ${JSON.stringify(text)}.`);
  if (text.length > MAX_PROBE_CHARS) refuse(text, `is over ${MAX_PROBE_CHARS} characters.`);
  if (text.includes('\0')) refuse(text, 'holds a NUL character.');
  if (text === 'port') return { kind: 'port', text, port: null };
  if (text.startsWith('port:')) {
    const port = portNumber(text.slice(5));
    if (port === null) refuse(text, `needs a port from 1 to 65535 after port:, not ${JSON.stringify(text.slice(5))}.`);
    return { kind: 'port', text, port };
  }
  if (text.startsWith('tcp:')) return tcpProbe(text, text.slice(4));
  if (text.startsWith('http://') || text.startsWith('https://')) return httpProbe(text);
  if (text.startsWith('log:')) return logProbe(text, text.slice(4));
  if (text.startsWith('exec:')) {
    const command = text.slice(5).trim();
    if (command === '') refuse(text, 'names no command: exec:CMD (run through /bin/sh -c; ready when it exits 0).');
    return { kind: 'exec', text, command };
  }
  if (text.startsWith('file:')) {
    const path = text.slice(5);
    if (path.trim() === '') refuse(text, 'names no file: file:PATH.');
    return { kind: 'file', text, path };
  }
  refuse(text, `is not one Warden knows: ${FORMS}.`);
}

/** The probes of a request: 1 to MAX_PROBES, each parsed. */
export function parseProbes(probes: unknown): ProbeSpec[] {
  if (!Array.isArray(probes) || probes.length === 0) throw new WardenInputError(`ready.probes must be a list of 1 to ${MAX_PROBES} probes (${FORMS}).`);
  if (probes.length > MAX_PROBES) throw new WardenInputError(`A run takes at most ${MAX_PROBES} readiness probes, not ${probes.length}.`);
  return probes.map(parseProbe);
}

/** HTTP statuses that pass an http probe: "200-399" (the default), "200-499", or one status "204". */
export function parseStatusRange(text: unknown): { min: number; max: number } {
  const match = typeof text === 'string' ? /^\s*(\d{3})\s*(?:-\s*(\d{3}))?\s*$/.exec(text) : null;
  if (!match) throw new WardenInputError(`The ready status takes a range of HTTP statuses such as 200-399 or 200-499, not ${JSON.stringify(text)}.`);
  const min = Number(match[1]);
  const max = match[2] === undefined ? min : Number(match[2]);
  if (min < 100 || max > 599 || min > max) throw new WardenInputError(`The ready status range must lie within 100-599 with its low end first, not ${JSON.stringify(text)}.`);
  return { min, max };
}
