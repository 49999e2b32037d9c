// A deep link kept across login (issue 19, item 11): a browser without a
// session that opens a hash route (#/runs/ID/output) gets the login page; the
// link it then opens (from `warden serve --open`, in another tab as a terminal
// would) lands on that same route, not the start page. Only a same-origin hash
// route is kept: a javascript: URL or another origin put where the route is
// kept lands on the start page of this origin.

import { expect, test, type BrowserContext, type Page } from '@playwright/test';
import { SETUP_TIMEOUT_MS, SPEC_TIMEOUT_MS, WAIT_MS, skipReason, startHarness, tid, visible, waitFor, type Harness } from './harness';

const skip = skipReason('deep-link');

test.describe('A deep link kept across login', () => {
  test.describe.configure({ mode: 'serial', timeout: SPEC_TIMEOUT_MS });
  test.skip(skip !== null, skip ?? '');
  let h: Harness;
  test.beforeAll(async ({ browser }) => {
    test.setTimeout(SETUP_TIMEOUT_MS);
    h = await startHarness('deep-link', browser);
  });
  // eslint-disable-next-line no-empty-pattern
  test.afterEach(async ({}, testInfo) => {
    await h?.onTestEnd(testInfo);
  });
  test.afterAll(async () => {
    test.setTimeout(60_000);
    await h?.close();
  });

  /** A fresh one-time login link from the running host, as a person at the terminal gets it. */
  async function loginLink(): Promise<string> {
    const reply = await h.cli(['serve', '--open']);
    const link = /^(http:\/\/127\.0\.0\.1:\d+\/login\?token=\S+)$/m.exec(reply.stdout)?.[1];
    expect(link, `warden serve --open: ${reply.stderr}`).toBeTruthy();
    return link!;
  }

  /** Opens `link` in a new tab of `context` (where a terminal's link opens) and returns that tab once the UI shows. */
  async function openLink(context: BrowserContext, link: string): Promise<Page> {
    const tab = await context.newPage();
    await tab.goto(link);
    await waitFor('the tab to land on the web UI after login', async () => (await tab.evaluate(() => window.location.pathname)) === '/');
    await visible(tab.locator(tid('nav-runs')));
    return tab;
  }

  test('a run link opened before login is where the login link lands', async () => {
    const done = await h.cliJson(['run', '--json', '--', 'bash', '-c', 'for i in 1 2 3; do echo deep-link-line-$i; done']);
    expect(done.json.verdict, done.stderr).toBe('completed');
    const context = await h.browser.newContext({ viewport: { width: 1280, height: 860 } });
    // The list's rows (the monitor is the default at this width; monitor.spec.ts reads it).
    await context.addInitScript(() => localStorage.getItem('warden.runsLayout') ?? localStorage.setItem('warden.runsLayout', 'list'));
    try {
      const first = await context.newPage();
      const route = `#/runs/${done.json.id}/output`;
      const reply = await first.goto(`${h.url()}/${route}`);
      expect(reply?.status()).toBe(401);
      await visible(first.locator(tid('login-page')));
      await h.screenshot(first, 'login-page');

      const tab = await openLink(context, await loginLink());
      await waitFor(`the tab to land on ${route}`, async () => (await tab.evaluate(() => window.location.hash)) === route, WAIT_MS);
      await visible(tab.locator(tid('run-detail')));
      await waitFor('the output of the run', async () => (await tab.locator('body').innerText()).includes('deep-link-line-3'));
      await h.screenshot(tab, 'landed');

      // The kept route is used once: the next login lands on the start page.
      const again = await openLink(context, await loginLink());
      expect(await again.evaluate(() => window.location.hash)).not.toContain(done.json.id);
    } finally {
      await context.close();
    }
  });

  test('only a same-origin hash route is kept: never another origin or a javascript: URL', async () => {
    const context = await h.browser.newContext({ viewport: { width: 1280, height: 860 } });
    try {
      const first = await context.newPage();
      // A hash that is not a route is not kept by the login page.
      await first.goto(`${h.url()}/#javascript:alert(1)`);
      await visible(first.locator(tid('login-page')));
      expect(await first.evaluate(() => Object.keys(localStorage))).toEqual([]);

      // Whatever else is put where the route is kept (another origin, a javascript: URL, a route
      // that escapes the hash) lands on this origin's start page and runs nothing.
      const origin = new URL(h.url()).origin;
      for (const hostile of ['https://evil.example/#/runs', 'javascript:window.__pwned=1', '#/../../evil', '//evil.example/#/history', '#/runs/x"><img src=x onerror=alert(1)>']) {
        await first.evaluate((value) => localStorage.setItem('warden.afterLogin', JSON.stringify({ hash: value, at: Date.now() })), hostile);
        const tab = await openLink(context, await loginLink());
        expect(new URL(tab.url()).origin, hostile).toBe(origin);
        expect(await tab.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), hostile).toBeUndefined();
        expect(['', '#/runs'], hostile).toContain(await tab.evaluate(() => window.location.hash));
        expect(await tab.evaluate(() => localStorage.getItem('warden.afterLogin')), hostile).toBeNull();
        await tab.close();
      }
    } finally {
      await context.close();
    }
  });
});
