// `npm start` where Electron's binary cannot be downloaded (no internet; here a
// mirror on a closed loopback port): one line says so, and the same UI is
// served in web mode with its login link, instead of stopping.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { ROOT, SETUP_TIMEOUT_MS, ensureBuilt, waitFor } from './harness';

const require = createRequire(import.meta.url);
function electronPresent(): boolean {
  try {
    require('electron');
    return true;
  } catch {
    return false;
  }
}

const present = electronPresent();
if (present) console.log('e2e/start: skipped: the Electron binary is here, so npm start opens the app');
const dirs: string[] = [];
test.afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

test.describe('npm start without an Electron binary', () => {
  test.skip(present, 'the Electron binary is here, so npm start opens the app');
  test('says why in one line, then serves the web UI and prints its login link', async () => {
    test.setTimeout(SETUP_TIMEOUT_MS);
    await ensureBuilt();
    const dir = mkdtempSync('/tmp/we-');
    dirs.push(dir);
    const child = spawn(process.execPath, [join(ROOT, 'scripts', 'electron.mjs'), 'dev'], {
      cwd: ROOT,
      env: { ...process.env, WARDEN_STATE_DIR: join(dir, 's'), WARDEN_PORT: '0', ELECTRON_MIRROR: 'http://127.0.0.1:9/', electron_config_cache: join(dir, 'cache') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout!.setEncoding('utf8').on('data', (t: string) => (out += t));
    child.stderr!.setEncoding('utf8').on('data', (t: string) => (err += t));
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    try {
      const login = await waitFor('the login link', () => /^(http:\/\/127\.0\.0\.1:\d+\/login\?token=\S+)$/m.exec(out)?.[1], 90_000);
      const why = err.split('\n').filter((l) => /no Electron binary/.test(l));
      expect(why, err).toHaveLength(1);
      expect(why[0]).toMatch(/serving the same UI in web mode/);
      // The link logs a browser in to the page.
      const reply = await fetch(login, { redirect: 'manual' });
      expect(reply.status).toBe(303);
      const cookie = reply.headers.get('set-cookie')!.split(';')[0]!;
      const page = await fetch(new URL('/', login), { headers: { Cookie: cookie } });
      expect(page.status).toBe(200);
      expect(await page.text()).toMatch(/<div id="root">/);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });
});
