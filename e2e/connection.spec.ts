// Connection awareness in web mode: the host killed with SIGKILL under an open
// page (a persistent bar within moments, clocks standing still, actions off),
// the host back on the same port (the page says its login ended, and picks up
// by itself once the browser logs in again, without a reload), and a browser
// without a session (an HTML page that says how to log in, never raw JSON).

import { expect, test } from '@playwright/test';
import { SETUP_TIMEOUT_MS, SPEC_TIMEOUT_MS, WAIT_MS, route, skipReason, sleep, startHarness, tid, visible, waitForAttr, waitForText, type Harness } from './harness';

const skip = skipReason('connection');

test.describe('Connection awareness (web mode)', () => {
  // One host and one browser page for the file, its tests in order (they share the page).
  test.describe.configure({ mode: 'serial', timeout: SPEC_TIMEOUT_MS });
  test.skip(skip !== null, skip ?? '');
  let h: Harness;
  test.beforeAll(async ({ browser }) => {
    test.setTimeout(SETUP_TIMEOUT_MS);
    h = await startHarness('connection', browser);
  });
  // Playwright Test reads the fixtures a hook takes from its first parameter: none here.
  // eslint-disable-next-line no-empty-pattern
  test.afterEach(async ({}, testInfo) => {
    await h?.onTestEnd(testInfo);
  });
  test.afterAll(async () => {
    test.setTimeout(60_000);
    await h?.close();
  });

  test('shows the host going away, freezes the clocks and the actions, and recovers after a restart without a reload', async () => {
    const { page } = h;
    const started = await h.cliJson(['run', '--yield', '200ms', '--json', '--limit', '5m', '--', 'sleep', '120']);
    expect(started.code, started.stderr).toBe(75);
    const id = started.json.id;
    await route(page, `#/runs/${id}`);
    const detail = await visible(page.locator(tid('run-detail')));
    await waitForAttr(detail, 'data-state', 'running');
    // Survives only if the page is never reloaded.
    await page.evaluate(() => ((window as unknown as { __noReload: number }).__noReload = 42));

    const killedAt = Date.now();
    await h.killHost('SIGKILL');
    const bar = page.locator(tid('connection-bar'));
    await waitForAttr(bar, 'data-state', 'offline');
    console.log(`e2e/connection: the disconnected bar showed ${Date.now() - killedAt} ms after the host was killed (target: within 2000 ms)`);
    await waitForText(bar, 'Disconnected, reconnecting');

    // The clock stands still and the live controls are off while the host is away.
    const before = await page.locator(tid('run-elapsed')).innerText();
    await sleep(1500);
    expect(await page.locator(tid('run-elapsed')).innerText()).toBe(before);
    expect(await page.locator(tid('action-stop')).isDisabled()).toBe(true);
    expect(await page.locator(tid('action-extend')).isDisabled()).toBe(true);
    await h.screenshot(page, 'disconnected');

    // The host comes back on the same port; it forgot the page's login.
    const loginUrl = await h.startHostAgain();
    await waitForAttr(bar, 'data-state', 'unauthorised', WAIT_MS);
    await waitForText(bar, 'warden serve --open');
    await h.screenshot(page, 'logged-out');

    // Logging in again in another tab brings this page back by itself.
    await h.visitInAnotherPage(loginUrl);
    await bar.waitFor({ state: 'detached', timeout: WAIT_MS });
    expect(await page.evaluate(() => (window as unknown as { __noReload?: number }).__noReload)).toBe(42);
    // The run the dead host had is now known for what it is: lost, with its time to the last sign of life.
    await waitForAttr(detail, 'data-verdict', 'lost');
    expect(await page.locator(tid('action-stop')).count()).toBe(0);

    // Live events flow again: a run started now shows up and ends in the page.
    const next = await h.cliJson(['run', '--json', '--', 'bash', '-c', 'echo after-restart']);
    expect(next.json.verdict, next.stderr).toBe('completed');
    await page.locator(tid('nav-runs')).click();
    await visible(page.locator(tid('run-row', { 'data-run-id': next.json.id, 'data-verdict': 'completed' })));
    await h.screenshot(page, 'recovered');
  });

  test('a browser without a session gets a page that says how to log in', async () => {
    const context = await h.browser.newContext({ viewport: { width: 1000, height: 700 } });
    try {
      const page = await context.newPage();
      const reply = await page.goto(h.url());
      expect(reply?.status()).toBe(401);
      expect(reply?.headers()['content-type']).toMatch(/text\/html/);
      const card = await visible(page.locator(tid('login-page')));
      expect(await card.innerText()).toContain('warden serve --open');
      expect(await page.evaluate(() => document.body.innerText)).not.toMatch(/^\s*\{/);
      await h.screenshot(page, 'login-page');
    } finally {
      await context.close();
    }
  });
});
