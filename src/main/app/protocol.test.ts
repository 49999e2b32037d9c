// The app:// handler against real files in a real temp dir: what it serves
// (bytes, content types, the CSP and nosniff on every answer) and what it
// refuses (other hosts and methods, every way out of the root: encoded
// slashes, backslashes, NUL, a symlink, a sibling dir that shares the root's
// name as a prefix), without ever returning the secret beside the root.

import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { APP_ENTRY, APP_ORIGIN, APP_SCHEME_PRIVILEGES, appProtocolHandler } from './protocol';
import { CONTENT_SECURITY_POLICY } from '../../shared/csp';

const SECRET = 'the secret beside out/renderer';

function fixture() {
  const dir = mkdtempSync(join(tmpdir(), 'wproto-'));
  const root = join(dir, 'renderer');
  mkdirSync(join(root, 'assets'), { recursive: true });
  writeFileSync(join(root, 'index.html'), '<!doctype html><title>Warden</title>');
  writeFileSync(join(root, 'assets', 'index-abc.js'), 'console.log("app")');
  writeFileSync(join(root, 'assets', 'index-abc.css'), 'body{margin:0}');
  writeFileSync(join(root, 'assets', 'blob.bin'), Buffer.from(Array.from({ length: 256 }, (_, i) => i)));
  writeFileSync(join(root, 'assets', 'UPPER.JS'), 'x');
  writeFileSync(join(dir, 'secret.txt'), SECRET);
  mkdirSync(join(dir, 'renderer-evil'));
  writeFileSync(join(dir, 'renderer-evil', 'secret.txt'), SECRET);
  symlinkSync(join(dir, 'secret.txt'), join(root, 'assets', 'link.txt'));
  symlinkSync(dir, join(root, 'up'));
  const logged: string[] = [];
  const handle = appProtocolHandler(root, (line) => logged.push(line));
  const get = (url: string, init?: RequestInit) => handle(new Request(url, init));
  return { root, logged, get };
}

describe('the app:// protocol', () => {
  it('is registered as a standard, secure scheme without CSP bypass', () => {
    expect(APP_SCHEME_PRIVILEGES.scheme).toBe('app');
    expect(APP_SCHEME_PRIVILEGES.privileges).toMatchObject({ standard: true, secure: true });
    expect(APP_SCHEME_PRIVILEGES.privileges).not.toHaveProperty('bypassCSP');
    expect(APP_SCHEME_PRIVILEGES.privileges).not.toHaveProperty('corsEnabled');
    expect(APP_ENTRY).toBe(`${APP_ORIGIN}/index.html`);
  });

  it.each([
    ['app://warden/', 'index.html', 'text/html; charset=utf-8'],
    ['app://warden/index.html', 'index.html', 'text/html; charset=utf-8'],
    ['app://warden/index.html#/runs/abc/output', 'index.html', 'text/html; charset=utf-8'],
    ['app://warden/index.html?x=1', 'index.html', 'text/html; charset=utf-8'],
    ['app://warden/assets/index-abc.js', 'assets/index-abc.js', 'text/javascript; charset=utf-8'],
    ['app://warden/assets/UPPER.JS', 'assets/UPPER.JS', 'text/javascript; charset=utf-8'],
    ['app://warden/assets/index-abc.css', 'assets/index-abc.css', 'text/css; charset=utf-8'],
    ['app://warden/assets/blob.bin', 'assets/blob.bin', 'application/octet-stream'],
    ['app://warden/./assets/../assets/index-abc.js', 'assets/index-abc.js', 'text/javascript; charset=utf-8'],
    ['app://warden/assets%2Findex-abc.js', 'assets/index-abc.js', 'text/javascript; charset=utf-8'],
  ])('serves %s: the file, its content type, the CSP and nosniff', async (url, file, type) => {
    const { root, get } = fixture();
    const response = await get(url);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(type);
    expect(response.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    const body = Buffer.from(await response.arrayBuffer());
    expect(body.equals(readFileSync(join(root, file)))).toBe(true);
    expect(response.headers.get('content-length')).toBe(String(body.length));
  });

  it('answers HEAD without a body, and refuses other methods', async () => {
    const { get } = fixture();
    const head = await get('app://warden/index.html', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe('36');
    expect(await head.text()).toBe('');
    const post = await get('app://warden/index.html', { method: 'POST', body: 'x' });
    expect(post.status).toBe(405);
    expect(await post.text()).toBe('POST is not served; only GET and HEAD.\n');
  });

  it.each([
    ['another host', 'app://evil/index.html', 404],
    ['the host with a port', 'app://warden:8080/index.html', 404],
    ['another scheme', 'file:///etc/passwd', 404],
    ['a directory', 'app://warden/assets', 404],
    ['a directory with a slash', 'app://warden/assets/', 404],
    ['a missing file', 'app://warden/nope.js', 404],
    ['.. that the URL parser folds back inside', 'app://warden/%2e%2e/%2e%2e/secret.txt', 404],
    ['an encoded slash out of the root', 'app://warden/..%2Fsecret.txt', 403],
    ['encoded slashes from a subdir', 'app://warden/assets/..%2F..%2Fsecret.txt', 403],
    ['far out', 'app://warden/..%2F..%2F..%2F..%2F..%2F..%2Fetc%2Fpasswd', 403],
    ['a sibling dir sharing the name as a prefix', 'app://warden/..%2Frenderer-evil%2Fsecret.txt', 403],
    ['an encoded backslash', 'app://warden/..%5Csecret.txt', 400],
    ['a NUL', 'app://warden/index.html%00.js', 400],
    ['bad percent-encoding', 'app://warden/%E0%A4%A', 400],
    ['a symlink to a file outside', 'app://warden/assets/link.txt', 403],
    ['a symlink to a dir outside', 'app://warden/up/secret.txt', 403],
  ])('refuses %s (%s): %i, never the secret', async (_what, url, status) => {
    const { get } = fixture();
    const response = await get(url);
    expect(response.status).toBe(status);
    const text = await response.text();
    expect(text).not.toContain(SECRET);
    expect(text.split('\n').filter(Boolean)).toHaveLength(1);
    expect(response.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
  });

  it('logs each request that tries to leave the root, in one line', async () => {
    const { get, logged } = fixture();
    await get('app://warden/..%2Fsecret.txt');
    await get('app://warden/assets/link.txt');
    await get('app://warden/nope.js');
    expect(logged).toHaveLength(2);
    expect(logged[0]).toMatch(/^app:\/\/ refused "\/..%2Fsecret.txt": it leads outside .*renderer\.$/);
    expect(logged[1]).toMatch(/^app:\/\/ refused "\/assets\/link.txt": a link to .*secret\.txt, outside .*renderer\.$/);
  });

  it('serves a root built after it started, and 404s while it is missing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wproto-late-'));
    const root = join(dir, 'renderer');
    const handle = appProtocolHandler(root);
    expect((await handle(new Request('app://warden/index.html'))).status).toBe(404);
    mkdirSync(root);
    writeFileSync(join(root, 'index.html'), 'late');
    const response = await handle(new Request('app://warden/index.html'));
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('late');
  });
});
