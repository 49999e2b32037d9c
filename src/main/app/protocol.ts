// The app:// protocol the window loads Warden's page from, instead of file://
// (Electron's security checklist: a file:// page may read any file the user
// can, and every file:// page shares one origin). The handler serves only the
// files under out/renderer; nothing outside it, whatever the URL says (encoded
// slashes, .., symlinks). Plain Node (no electron import): index.ts registers
// the scheme and passes this handler to protocol.handle, and the test serves
// real files through it.

import { readFile, realpath } from 'node:fs/promises';
import { extname, isAbsolute, relative, resolve, sep } from 'node:path';
import { CONTENT_SECURITY_POLICY } from '../../shared/csp';
import { httpStatusOf, type ErrorKind, type HttpRefusal } from '../../shared/errors';

export const APP_SCHEME = 'app';
export const APP_HOST = 'warden';
/** The origin of Warden's page: the one origin IPC trusts in a packaged app. */
export const APP_ORIGIN = `${APP_SCHEME}://${APP_HOST}`;
export const APP_ENTRY = `${APP_ORIGIN}/index.html`;

/**
 * For protocol.registerSchemesAsPrivileged, before the app is ready. standard:
 * relative URLs resolve and the page has a real origin (app://warden), not
 * file://'s shared one; secure: a secure context, as https would be (the
 * clipboard needs one). Not bypassCSP (the page's CSP holds), not corsEnabled
 * (every load is same-origin), no service workers.
 */
export const APP_SCHEME_PRIVILEGES = {
  scheme: APP_SCHEME,
  privileges: { standard: true, secure: true, supportFetchAPI: true, codeCache: true },
};

// The file types electron-vite's build emits into out/renderer, written out
// rather than taken from a MIME database: the set is small and fixed, a wrong
// guess would be served with nosniff and fail loudly, and a module script must
// get exactly text/javascript (Chromium refuses a module with any other type).
const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

const COMMON_HEADERS = {
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-cache',
};

export type ProtocolHandler = (request: Request) => Promise<Response>;

/** A refusal, its status from the kind table (src/shared/errors.ts), as the host's. */
function refuse(refusal: ErrorKind | HttpRefusal, message: string): Response {
  return new Response(`${message}\n`, { status: httpStatusOf(refusal), headers: { ...COMMON_HEADERS, 'Content-Type': 'text/plain; charset=utf-8' } });
}

/** True when `path` is `root` or inside it (both absolute and resolved). */
function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/**
 * The handler for protocol.handle(APP_SCHEME, …): GET and HEAD of the files
 * under `root` ("/" is index.html), with their content type and the CSP.
 * A request that leads outside `root` gets 403 and is logged; a missing file
 * or a directory 404.
 */
export function appProtocolHandler(root: string, log: (line: string) => void = () => undefined): ProtocolHandler {
  const rootPath = resolve(root);
  // Resolved once and lazily: out/renderer may be built after the app starts (electron-vite preview).
  let realRoot: Promise<string> | null = null;
  return async (request) => {
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      return refuse('bad-input', 'Bad URL.');
    }
    if (url.protocol !== `${APP_SCHEME}:` || url.host !== APP_HOST) return refuse('not-found', `Only ${APP_ORIGIN} is served.`);
    if (request.method !== 'GET' && request.method !== 'HEAD') return refuse('wrong-method', `${request.method} is not served; only GET and HEAD.`);
    let path: string;
    try {
      // The URL parser already folded "." and ".." segments; decoding can make new ones ("..%2F"), checked below.
      path = decodeURIComponent(url.pathname);
    } catch {
      return refuse('bad-input', 'Bad percent-encoding in the path.');
    }
    if (path.includes('\0') || path.includes('\\')) {
      log(`app:// refused ${JSON.stringify(url.pathname)}: a NUL or a backslash in the path.`);
      return refuse('bad-input', 'Bad characters in the path.');
    }
    const file = resolve(rootPath, `.${path === '/' ? '/index.html' : path}`);
    if (!inside(rootPath, file)) {
      log(`app:// refused ${JSON.stringify(url.pathname)}: it leads outside ${rootPath}.`);
      return refuse('denied', 'Outside the app.');
    }
    let real: string;
    let body: Uint8Array<ArrayBuffer>;
    try {
      realRoot ??= realpath(rootPath);
      const [rootReal, fileReal] = await Promise.all([realRoot, realpath(file)]);
      // A symlink inside out/renderer that points elsewhere is outside too.
      if (!inside(rootReal, fileReal)) {
        log(`app:// refused ${JSON.stringify(url.pathname)}: a link to ${fileReal}, outside ${rootReal}.`);
        return refuse('denied', 'Outside the app.');
      }
      real = fileReal;
      // A directory fails here (EISDIR): no listings.
      body = await readFile(real);
    } catch {
      realRoot = null; // out/renderer itself may be missing now and built later
      return refuse('not-found', 'Not found.');
    }
    const headers = { ...COMMON_HEADERS, 'Content-Type': CONTENT_TYPES[extname(real).toLowerCase()] ?? 'application/octet-stream', 'Content-Length': String(body.length) };
    return new Response(request.method === 'HEAD' ? null : body, { status: 200, headers });
  };
}
