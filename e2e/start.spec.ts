// `npm start` where Electron's binary cannot be downloaded (no internet; here a
// mirror on a closed loopback port): one line says so, and the same UI is
// served in web mode with its login link, instead of stopping.

import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { chromium } from 'playwright-core';
import { electronBinary } from '../scripts/electron-binary.mjs';
import { CHROMIUM, CHROMIUM_ARGS, RESULTS_DIR, ROOT, SETUP_TIMEOUT_MS, chromiumMissing, ensureBuilt, waitFor } from './harness';

const present = electronBinary().missing === undefined;
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

      // The same UI in Chromium through the printed link, in both colour schemes.
      const missing = chromiumMissing();
      if (missing) console.log(`e2e/start: no screenshots: ${missing}`);
      else {
        const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
        try {
          // The link is one-time and was used above: the browser gets the session it gave.
          const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
          const [name, ...value] = cookie.split('=');
          await context.addCookies([{ name: name!, value: value.join('='), url: new URL('/', login).href }]);
          const tab = await context.newPage();
          await tab.goto(new URL('/', login).href);
          await tab.locator('[data-testid="nav-runs"]').waitFor({ state: 'visible', timeout: 30_000 });
          mkdirSync(RESULTS_DIR, { recursive: true });
          for (const colorScheme of ['light', 'dark'] as const) {
            await tab.emulateMedia({ colorScheme });
            await tab.evaluate(() => new Promise<void>((r) => requestAnimationFrame(() => requestAnimationFrame(() => r()))));
            await tab.screenshot({ path: join(RESULTS_DIR, `start-web-mode-${colorScheme}.png`), fullPage: true });
          }
        } finally {
          await browser.close();
        }
      }
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });
});
