// What the window's page may do, without Electron: which page it loads and
// which origins IPC then trusts (never the environment's in a packaged app),
// which links open in the browser, which permissions the page gets, and the
// CSP: the same in the header and in index.html's meta tag, no unsafe-inline.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { APP_ENTRY, APP_ORIGIN } from './protocol';
import { CONTENT_SECURITY_POLICY } from '../../shared/csp';
import { externalLinkAllowed, originOf, permissionAllowed, rendererEntry, windowOptions } from './window';

const app = { appEntry: APP_ENTRY, appOrigin: APP_ORIGIN };
const packaged = (devUrl: string | undefined) => rendererEntry({ ...app, isPackaged: true, devUrl });
const unpackaged = (devUrl: string | undefined) => rendererEntry({ ...app, isPackaged: false, devUrl });

/** A policy as a map from directive to its sources, to compare two policies directive by directive. */
function directives(policy: string): Map<string, string> {
  return new Map(policy.split(';').map((part) => part.trim()).filter(Boolean).map((part) => {
    const [name, ...sources] = part.split(/\s+/);
    return [name!, sources.join(' ')];
  }));
}

describe('the page the window loads', () => {
  it('is app://warden, trusted alone, when packaged, whatever ELECTRON_RENDERER_URL says', () => {
    expect(packaged(undefined)).toEqual({ url: 'app://warden/index.html', trustedOrigins: ['app://warden'] });
    expect(packaged('http://localhost:5173/')).toEqual({ url: 'app://warden/index.html', trustedOrigins: ['app://warden'], ignored: 'ELECTRON_RENDERER_URL is ignored in a packaged app.' });
    expect(packaged('https://evil.example/')).toMatchObject({ url: 'app://warden/index.html', trustedOrigins: ['app://warden'] });
  });

  it('is the dev server, trusted alone, when not packaged and it is http on loopback', () => {
    expect(unpackaged(undefined)).toEqual({ url: 'app://warden/index.html', trustedOrigins: ['app://warden'] });
    expect(unpackaged('http://localhost:5173/')).toEqual({ url: 'http://localhost:5173/', trustedOrigins: ['http://localhost:5173'] });
    expect(unpackaged('http://127.0.0.1:5174')).toEqual({ url: 'http://127.0.0.1:5174/', trustedOrigins: ['http://127.0.0.1:5174'] });
    expect(unpackaged('http://[::1]:5173/')).toEqual({ url: 'http://[::1]:5173/', trustedOrigins: ['http://[::1]:5173'] });
  });

  it.each([
    ['https://evil.example/', /must be an http URL on localhost, not https:\/\/evil.example/],
    ['http://evil.example:5173/', /must be an http URL on localhost, not http:\/\/evil.example:5173/],
    ['http://localhost.evil.example/', /must be an http URL on localhost/],
    ['file:///tmp/index.html', /must be an http URL on localhost/],
    ['not a url', /is not a URL \("not a url"\)/],
  ])('falls back to app:// when not packaged and ELECTRON_RENDERER_URL is %s, and says why', (devUrl, why) => {
    const entry = unpackaged(devUrl);
    expect(entry).toMatchObject({ url: 'app://warden/index.html', trustedOrigins: ['app://warden'] });
    expect(entry.ignored).toMatch(why);
  });
});

describe('links the page opens', () => {
  it.each(['https://github.com/', 'https://github.com/warden/warden#readme', 'https://github.com/warden/warden/blob/main/README.md?plain=1'])('opens %s (the docs) in the browser', (url) => {
    expect(externalLinkAllowed(url)).toBe(true);
  });

  it.each(['http://localhost:5173/', 'http://127.0.0.1:8080/admin', 'http://[::1]:3000/'])("opens %s (a service's page on this machine) in the browser", (url) => {
    expect(externalLinkAllowed(url)).toBe(true);
  });

  it.each([
    'http://github.com/',
    'https://github.com.evil.example/',
    'https://evil.example/?https://github.com/',
    'https://user:pass@github.com/',
    'https://github.com@evil.example/',
    'https://github.com:8443/',
    'https://gist.github.com/',
    'file:///etc/passwd',
    'smb://evil.example/share',
    'javascript:alert(1)',
    'ms-msdt:/id PCWDiagnostic',
    'app://warden/index.html',
    'not a url',
    '',
    'http://localhost/',
    'http://user:pw@localhost:5173/',
    'http://localhost.evil.example:5173/',
    'http://10.0.0.2:5173/',
    'https://localhost:5173/',
    'ftp://localhost:21/',
  ])('refuses %s', (url) => {
    expect(externalLinkAllowed(url)).toBe(false);
  });
});

describe('permissions', () => {
  it('grants the clipboard write to Warden\'s page only, and nothing else to anyone', () => {
    expect(permissionAllowed('clipboard-sanitized-write', 'app://warden/index.html', ['app://warden'])).toBe(true);
    expect(permissionAllowed('clipboard-sanitized-write', 'app://warden', ['app://warden'])).toBe(true);
    expect(permissionAllowed('clipboard-sanitized-write', 'http://localhost:5173/', ['app://warden'])).toBe(false);
    expect(permissionAllowed('clipboard-sanitized-write', 'file:///tmp/x.html', ['app://warden', 'file://'])).toBe(false);
    expect(permissionAllowed('clipboard-sanitized-write', undefined, ['app://warden'])).toBe(false);
    for (const permission of ['clipboard-read', 'media', 'geolocation', 'notifications', 'fullscreen', 'pointerLock', 'hid', 'serial', 'usb', 'midi', 'openExternal', 'fileSystem', 'display-capture', 'unknown']) {
      expect(permissionAllowed(permission, 'app://warden/index.html', ['app://warden'])).toBe(false);
    }
  });

  it('tells origins apart: app:// by host, http by host and port, none for file:, data: and about:', () => {
    expect(originOf('app://warden/index.html#/x')).toBe('app://warden');
    expect(originOf('http://localhost:5173/a?b')).toBe('http://localhost:5173');
    expect(originOf('file:///app/index.html')).toBeNull();
    expect(originOf('data:text/html,x')).toBeNull();
    expect(originOf('about:blank')).toBeNull();
    expect(originOf('')).toBeNull();
  });
});

describe('the Content-Security-Policy', () => {
  it('allows no inline script or style, no eval, nothing but its own files', () => {
    const policy = directives(CONTENT_SECURITY_POLICY);
    expect(policy.get('default-src')).toBe("'none'");
    expect(policy.get('script-src')).toBe("'self'");
    expect(policy.get('style-src')).toBe("'self'");
    expect(policy.get('object-src')).toBe("'none'");
    expect(policy.get('base-uri')).toBe("'none'");
    expect(policy.get('frame-ancestors')).toBe("'none'");
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/unsafe-|\*|https?:|blob:/);
  });

  it('is the same in src/renderer/index.html\'s meta tag, but frame-ancestors (a meta tag cannot carry it)', () => {
    const html = readFileSync(join(__dirname, '../../renderer/index.html'), 'utf8');
    const meta = /<meta\s+http-equiv="Content-Security-Policy"\s+content="([^"]+)"/.exec(html);
    expect(meta).not.toBeNull();
    const header = directives(CONTENT_SECURITY_POLICY);
    header.delete('frame-ancestors');
    expect(directives(meta![1]!)).toEqual(header);
  });
});

describe('the window', () => {
  it('is isolated and sandboxed, without Node, webviews or drag-and-drop navigation', () => {
    expect(windowOptions('/p/index.cjs').webPreferences).toMatchObject({
      preload: '/p/index.cjs',
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      navigateOnDragDrop: false,
    });
  });
});
