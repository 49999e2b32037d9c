// The BrowserWindow's settings and what its page may do, kept apart from
// index.ts so a test can check them without Electron: isolated, sandboxed, no
// Node in the page; which page it loads and which origins IPC trusts; which
// links open in the browser; which permissions the page gets.

export function windowOptions(preloadPath: string, bounds: { x?: number; y?: number; width: number; height: number } = { width: 1200, height: 800 }) {
  return {
    ...(bounds.x !== undefined && bounds.y !== undefined ? { x: bounds.x, y: bounds.y } : {}),
    width: bounds.width,
    height: bounds.height,
    minWidth: 720,
    minHeight: 480,
    show: false,
    title: 'Warden',
    autoHideMenuBar: true,
    webPreferences: {
      preload: preloadPath,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      navigateOnDragDrop: false,
      spellcheck: false,
    },
  };
}

export interface RendererEntry {
  /** What the window loads. */
  url: string;
  /** The origins IPC accepts calls from (ipc.ts trustedSender): the one the window loads. */
  trustedOrigins: string[];
  /** Why ELECTRON_RENDERER_URL was not used, when it was set. */
  ignored?: string;
}

/**
 * The page the window loads: Warden's own over app:// (appEntry, appOrigin),
 * or electron-vite's dev server when ELECTRON_RENDERER_URL names one and the
 * app is not packaged. A packaged app never takes its page, and so never its
 * IPC trust, from the environment; the dev server must be http on loopback.
 */
export function rendererEntry(options: { isPackaged: boolean; devUrl: string | undefined; appEntry: string; appOrigin: string }): RendererEntry {
  const app: RendererEntry = { url: options.appEntry, trustedOrigins: [options.appOrigin] };
  const devUrl = options.devUrl;
  if (!devUrl) return app;
  if (options.isPackaged) return { ...app, ignored: 'ELECTRON_RENDERER_URL is ignored in a packaged app.' };
  let url: URL;
  try {
    url = new URL(devUrl);
  } catch {
    return { ...app, ignored: `ELECTRON_RENDERER_URL is not a URL (${JSON.stringify(devUrl)}); loading the built page.` };
  }
  const loopback = url.hostname === 'localhost' || url.hostname === '127.0.0.1' || url.hostname === '[::1]';
  if (url.protocol !== 'http:' || !loopback) {
    return { ...app, ignored: `ELECTRON_RENDERER_URL must be an http URL on localhost, not ${url.origin}; loading the built page.` };
  }
  return { url: url.href, trustedOrigins: [url.origin] };
}

/**
 * The hosts a link in Warden's page may open in the browser: where Warden's
 * own documentation lives, and a run's own page on this machine (a service's
 * port that answers HTTP: http://localhost:PORT/ with its port named). Every
 * other URL (another host, http elsewhere, file:, smb:, custom schemes that
 * start local programs) is refused and logged.
 */
export const EXTERNAL_LINK_HOSTS: readonly string[] = ['github.com'];

const LOOPBACK_NAMES: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];

export function externalLinkAllowed(url: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  // A service's page: plain http on loopback, its port explicit, no credentials.
  if (parsed.protocol === 'http:' && LOOPBACK_NAMES.includes(parsed.hostname) && parsed.port !== '' && !parsed.username && !parsed.password) return true;
  // No credentials or port tricks: https://github.com@evil.example/ parses with host evil.example anyway, but say no to any userinfo.
  if (parsed.protocol !== 'https:' || parsed.username || parsed.password || parsed.port) return false;
  return EXTERNAL_LINK_HOSTS.includes(parsed.hostname);
}

/**
 * The permissions the page may have: writing the clipboard (Copy command),
 * asked by Warden's own page. Everything else (camera, microphone,
 * geolocation, notifications — the main process shows those —, HID, serial,
 * USB, MIDI, fullscreen, pointer lock, openExternal…) is refused.
 */
export const PAGE_PERMISSIONS: readonly string[] = ['clipboard-sanitized-write'];

export function permissionAllowed(permission: string, requestingUrl: string | undefined, trustedOrigins: readonly string[]): boolean {
  if (!PAGE_PERMISSIONS.includes(permission) || !requestingUrl) return false;
  const origin = originOf(requestingUrl);
  return origin !== null && trustedOrigins.includes(origin);
}

/**
 * A URL's origin as a string, or null when it has none that can be trusted.
 * Node's URL gives "null" as the origin of any scheme it does not know, app://
 * among them, so a standard custom scheme's origin is built here from its host.
 */
export function originOf(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (parsed.protocol === 'http:' || parsed.protocol === 'https:') return parsed.origin;
  if (parsed.protocol === 'app:' && parsed.host) return `app://${parsed.host}`;
  return null;
}
