// Attention in web mode (issue 19, item 8): the tab's title carries the live
// and failed counts, the favicon the state, and (asked once, off by default)
// a browser notification for a run that fails while the tab is hidden. Also:
// the "cannot be reached" banner goes once the host is back.

import { expect, test } from '@playwright/test';
import { SETUP_TIMEOUT_MS, SPEC_TIMEOUT_MS, route, skipReason, startHarness, tid, visible, waitFor, waitForAttr, type Harness } from './harness';

const skip = skipReason('attention');

test.describe('Attention in web mode', () => {
  test.describe.configure({ mode: 'serial', timeout: SPEC_TIMEOUT_MS });
  test.skip(skip !== null, skip ?? '');
  let h: Harness;
  test.beforeAll(async ({ browser }) => {
    test.setTimeout(SETUP_TIMEOUT_MS);
    h = await startHarness('attention', browser);
  });
  // eslint-disable-next-line no-empty-pattern
  test.afterEach(async ({}, testInfo) => {
    await h?.onTestEnd(testInfo);
  });
  test.afterAll(async () => {
    test.setTimeout(60_000);
    await h?.close();
  });

  test('the title counts live and failed runs, the favicon says the state, and a failure while hidden notifies when asked to', async () => {
    const { page } = h;
    await route(page, '#/settings');
    const icon = page.locator('link[rel="icon"]');
    await waitForAttr(icon, 'data-state', 'idle');
    const live = await h.cliJson(['run', '--yield', '300ms', '--json', '--limit', '2m', '--', 'sleep', '60']);
    expect(live.code, live.stderr).toBe(75);
    await waitFor('the live count in the title', async () => /^\(1 live\) Settings — Warden$/.test(await page.title()));
    await waitForAttr(icon, 'data-state', 'live');
    const failed = await h.cliJson(['run', '--json', '--', 'bash', '-c', 'exit 4']);
    expect(failed.json.verdict).toBe('failed');
    await waitFor('the failed count in the title', async () => /^\(1 live · 1 failed\) /.test(await page.title()));
    await waitForAttr(icon, 'data-state', 'failed');
    // Looking at Runs is seeing it: the failure is no longer counted.
    await route(page, '#/runs');
    await waitFor('the title without the failure', async () => /^\(1 live\) Runs — Warden$/.test(await page.title()));
    await h.screenshot(page, 'title-and-favicon');

    // Notifications: off until asked; on, one for a run that fails while the tab is hidden.
    await page.context().grantPermissions(['notifications']);
    const toggle = await visible(page.locator(tid('notify-toggle')));
    expect(await toggle.getAttribute('aria-pressed')).toBe('false');
    await page.evaluate(() => {
      const shown: string[] = [];
      (window as unknown as { __shown: string[] }).__shown = shown;
      const Real = window.Notification;
      // Records what is shown, and shows it.
      window.Notification = class extends Real {
        constructor(title: string, options?: NotificationOptions) {
          super(title, options);
          shown.push(`${title}: ${options?.body ?? ''}`);
        }
      } as typeof Notification;
      Object.defineProperty(document, 'hidden', { configurable: true, get: () => true });
    });
    await toggle.click();
    await waitForAttr(toggle, 'aria-pressed', 'true');
    await route(page, '#/settings');
    const crash = await h.cliJson(['run', '--json', '--', 'bash', '-c', 'kill -SEGV $$']);
    expect(crash.json.verdict).toBe('crashed');
    const shown = await waitFor('a notification', async () => {
      const list = await page.evaluate(() => (window as unknown as { __shown: string[] }).__shown);
      return list.length > 0 ? list : null;
    });
    expect(shown).toEqual([`Run crashed (SIGSEGV): bash -c 'kill -SEGV $$'`]);
    await h.cli(['stop', live.json.id]);
  });
});
