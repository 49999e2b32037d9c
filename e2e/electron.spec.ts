// The desktop app itself (Electron, through Playwright's _electron): the
// window opens on the built app and the Runs view shows. Needs Electron's
// binary, which `npm start` downloads; where it is missing this is skipped
// with the reason printed.

import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { _electron, test, type ElectronApplication } from '@playwright/test';
import { RESULTS_DIR, ROOT, SETUP_TIMEOUT_MS, ensureBuilt, tid, visible, waitForAttr } from './harness';

function electronBinary(): { path: string } | { missing: string } {
  const dir = join(ROOT, 'node_modules', 'electron');
  if (!existsSync(dir)) return { missing: 'the electron package is not installed' };
  const pathTxt = join(dir, 'path.txt');
  const dist = join(dir, 'dist');
  if (!existsSync(pathTxt) || !existsSync(dist)) {
    return { missing: 'no Electron binary (node_modules/electron/dist and path.txt are missing: the electron package fetches it when first needed, as `npm start` does)' };
  }
  const binary = join(dist, readFileSync(pathTxt, 'utf8').trim());
  return existsSync(binary) ? { path: binary } : { missing: `path.txt names ${binary}, which does not exist` };
}

const found = electronBinary();
if ('missing' in found) console.log(`e2e/electron: skipped: ${found.missing}`);

test.describe('the desktop app (Electron)', () => {
  test.describe.configure({ timeout: SETUP_TIMEOUT_MS });
  test.skip('missing' in found, 'missing' in found ? found.missing : '');
  let app: ElectronApplication | undefined;
  let stateDir: string | undefined;
  test.afterAll(async () => {
    await app?.close().catch(() => undefined);
    if (stateDir) rmSync(stateDir, { recursive: true, force: true });
  });

  test('opens its window on the Runs view', async () => {
    {
      await ensureBuilt();
      stateDir = mkdtempSync('/tmp/we-');
      const args = ['--no-sandbox', '--disable-gpu'];
      // No display (CI, a container): Chromium's headless platform.
      if (process.platform === 'linux' && !process.env.DISPLAY && !process.env.WAYLAND_DISPLAY) args.push('--ozone-platform=headless');
      app = await _electron.launch({
        executablePath: (found as { path: string }).path,
        args: [...args, ROOT],
        cwd: ROOT,
        env: { ...process.env, WARDEN_STATE_DIR: stateDir } as Record<string, string>,
        timeout: 90_000,
      });
      const page = await app.firstWindow();
      await visible(page.locator(tid('nav-runs')), 60_000);
      await page.locator(tid('nav-runs')).click();
      await waitForAttr(page.locator(tid('nav-runs')), 'aria-current', 'page');
      mkdirSync(RESULTS_DIR, { recursive: true });
      for (const colorScheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme });
        await page.screenshot({ path: join(RESULTS_DIR, `electron-runs-${colorScheme}.png`) });
      }
    }
  });
});
