// electron.vite.config.ts's renderer as `electron-vite dev` serves it (`npm
// start`): the page's policy allows inline styles there alone (Vite writes
// each stylesheet into a <style> element), scripts stay 'self', and the built
// page keeps the strict policy of src/shared/csp.ts.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfigFromFile } from 'electron-vite';
import { createServer, type ViteDevServer } from 'vite';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = join(__dirname, '..');

function metaPolicy(html: string): string {
  const meta = /http-equiv="Content-Security-Policy"\s+content="([^"]+)"/.exec(html);
  if (!meta) throw new Error('no Content-Security-Policy meta tag in the page');
  return meta[1]!;
}

describe('the renderer dev server', () => {
  let server: ViteDevServer | undefined;
  afterAll(async () => {
    await server?.close();
  });

  it('serves index.html with inline styles allowed, and scripts from itself only', async () => {
    const loaded = await loadConfigFromFile({ command: 'serve', mode: 'development' }, undefined, ROOT);
    const renderer = (loaded.config as { renderer: Record<string, unknown> }).renderer;
    server = await createServer({ ...renderer, configFile: false, logLevel: 'silent', server: { port: 0, host: '127.0.0.1', hmr: false }, optimizeDeps: { noDiscovery: true, include: [] } });
    await server.listen();
    const response = await fetch(`${server.resolvedUrls!.local[0]}index.html`);
    expect(response.status).toBe(200);
    const policy = metaPolicy(await response.text());
    expect(policy).toContain("style-src 'self' 'unsafe-inline';");
    expect(policy).toContain("script-src 'self';");
    expect(policy.match(/unsafe-inline/g)).toHaveLength(1);
  });

  it('leaves the source page strict: the relaxation is the dev server\'s alone', () => {
    const policy = metaPolicy(readFileSync(join(ROOT, 'src', 'renderer', 'index.html'), 'utf8'));
    expect(policy).not.toContain('unsafe-inline');
  });
});
