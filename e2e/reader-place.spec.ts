// The reader's place kept (issue 29, item 6): Runs scrolled 1,500 px and
// History scrolled down are where they were after Back from a run and after
// another tab and back; History's filters are in its link (linkable, kept on
// reload); a Refresh while the host is away keeps the rows on screen, greyed,
// said once (the connection bar alone), and they come back by themselves; a
// link to no run says so.

import { expect, test, type Page } from '@playwright/test';
import { SETUP_TIMEOUT_MS, SPEC_TIMEOUT_MS, route, skipReason, startHarness, tid, visible, waitFor, waitForAttr, waitForText, type Harness } from './harness';

const skip = skipReason('reader-place');

const scrollOf = (page: Page) => page.evaluate(() => document.querySelector('.app-main')!.scrollTop);
const scrollTo = (page: Page, top: number) => page.evaluate((t) => void (document.querySelector('.app-main')!.scrollTop = t), top);

test.describe("The reader's place kept", () => {
  test.describe.configure({ mode: 'serial', timeout: SPEC_TIMEOUT_MS });
  test.skip(skip !== null, skip ?? '');
  let h: Harness;
  test.beforeAll(async ({ browser }) => {
    test.setTimeout(SETUP_TIMEOUT_MS);
    h = await startHarness('reader-place', browser);
    // Enough ended runs for lists taller than two screens: 60, eight at a time, some failing.
    for (let batch = 0; batch < 8; batch++) {
      await Promise.all(Array.from({ length: 8 }, (_, i) => h.cli(['run', '--', 'bash', '-c', `echo run ${batch}-${i}; exit ${(batch * 8 + i) % 5 === 0 ? 1 : 0}`])));
    }
  });
  // eslint-disable-next-line no-empty-pattern
  test.afterEach(async ({}, testInfo) => {
    await h?.onTestEnd(testInfo);
  });
  test.afterAll(async () => {
    test.setTimeout(60_000);
    await h?.close();
  });

  test('Runs scrolled 1,500 px: the same place after Back from a run, and after another tab and back', async () => {
    const { page } = h;
    await route(page, '#/runs');
    await waitFor('the ended runs listed', async () => (await page.locator(tid('run-row')).count()) >= 50);
    await scrollTo(page, 1500);
    await waitFor('the pane scrolled', async () => (await scrollOf(page)) >= 1490);
    const row = page.locator(tid('run-row')).nth(35);
    const id = await row.getAttribute('data-run-id');
    await row.click();
    await waitFor('the run open', async () => (await page.evaluate(() => location.hash)).startsWith(`#/runs/${id}`));
    await visible(page.locator(tid('run-detail')));
    await page.goBack();
    await waitFor('Runs again', async () => (await page.evaluate(() => location.hash)) === '#/runs');
    const back = await waitFor('the scroll given back', async () => {
      const top = await scrollOf(page);
      return Math.abs(top - 1500) <= 2 ? top : false;
    });
    expect(Math.abs(back - 1500)).toBeLessThanOrEqual(2);
    await h.screenshot(page, 'runs-back');
    await page.locator(tid('nav-history')).click();
    await visible(page.locator(tid('history-row')));
    await page.locator(tid('nav-runs')).click();
    await waitFor('the scroll given back after another tab', async () => Math.abs((await scrollOf(page)) - 1500) <= 2);
  });

  test("History scrolled down: the same place after Back from a run; its filters in its link, kept on reload", async () => {
    const { page } = h;
    await page.locator(tid('nav-history')).click();
    await waitFor('History listing the runs', async () => (await page.locator(tid('history-row')).count()) >= 50);
    await scrollTo(page, 600);
    await waitFor('the pane scrolled', async () => (await scrollOf(page)) >= 590);
    await page.locator(tid('history-row')).nth(20).locator('a').click();
    await visible(page.locator(tid('run-detail')));
    await page.goBack();
    await waitFor('History scrolled where it was', async () => Math.abs((await scrollOf(page)) - 600) <= 2);

    // A filter goes into the link, which a reload keeps.
    await scrollTo(page, 0);
    await page.locator(tid('history-verdict')).selectOption('failed');
    await waitFor('the link to carry the filter', async () => (await page.evaluate(() => location.hash)) === '#/history?verdict=failed');
    await waitFor('failed runs only', async () => {
      const badges = await page.locator(tid('history-badge')).allInnerTexts();
      return badges.length > 0 && badges.every((b) => b === 'failed');
    });
    const failedRows = await page.locator(tid('history-row')).count();
    await page.locator(tid('history-search')).fill('run 3-');
    await waitFor('the link to carry the search', async () => (await page.evaluate(() => location.hash)) === '#/history?verdict=failed&q=run+3-');
    await page.reload();
    await visible(page.locator(tid('nav-history')));
    await waitFor('the filter read from the link', async () => (await page.locator(tid('history-verdict')).inputValue()) === 'failed');
    expect(await page.locator(tid('history-verdict')).inputValue()).toBe('failed');
    expect(await page.locator(tid('history-search')).inputValue()).toBe('run 3-');
    // The search the link kept, applied: only runs whose words match "run" and "3".
    await waitFor('the search applied after the reload', async () => {
      const texts = await page.locator(tid('history-row')).allInnerTexts();
      return texts.length > 0 && texts.length < failedRows && texts.every((t) => /run \d-\d/.test(t) && t.includes('3'));
    });
    await h.screenshot(page, 'history-filtered-link');
    // The plain link (the nav) keeps the page's own filters, and says them in the link.
    await page.locator(tid('history-search')).fill('');
    await waitFor('the search gone from the link', async () => (await page.evaluate(() => location.hash)) === '#/history?verdict=failed');
    await waitFor('the failed runs again', async () => (await page.locator(tid('history-row')).count()) === failedRows);
    await page.locator(tid('history-verdict')).selectOption('');
    await waitFor('the link plain again', async () => (await page.evaluate(() => location.hash)) === '#/history');
  });

  test('a Refresh while the host is away keeps the rows, greyed, said once; they come back by themselves', async () => {
    const { page } = h;
    await page.locator(tid('nav-history')).click();
    await waitFor('History listing the runs', async () => (await page.locator(tid('history-row')).count()) >= 50);
    const rows = await page.locator(tid('history-row')).count();
    await h.killHost('SIGKILL');
    await visible(page.locator(tid('connection-bar')));
    await page.getByRole('button', { name: 'Refresh' }).click();
    await waitForAttr(page.locator(tid('history-table')), 'data-stale', 'true');
    expect(await page.locator(tid('history-row')).count()).toBe(rows);
    // Said once: the connection bar; no banner, no error in the list.
    expect(await page.locator(tid('error-banner')).count()).toBe(0);
    expect(await page.locator(tid('history-error')).count()).toBe(0);
    await visible(page.locator(tid('history-stale')));
    await h.screenshot(page, 'history-outage');
    const login = await h.startHostAgain();
    await h.visitInAnotherPage(login);
    await waitForAttr(page.locator(tid('history-table')), 'data-stale', 'false', 60_000);
    expect(await page.locator(tid('history-row')).count()).toBe(rows);
    expect(await page.locator(tid('error-banner')).count()).toBe(0);
  });

  test('a link to no run says so', async () => {
    const { page } = h;
    await route(page, '#/runs/not-a-run');
    await waitForText(page.locator(tid('missing-view')), 'No such run');
    await waitForText(page.locator(tid('missing-what')), 'not-a-run is not a run id');
    await h.screenshot(page, 'no-such-run');
    await route(page, '#/runs/abcdef123456');
    await waitForText(page.locator(tid('run-detail')), 'No run abcdef123456 is known to this host or its history.');
    await route(page, '#/elsewhere');
    await waitForText(page.locator(tid('missing-view')), 'No such page');
  });
});
