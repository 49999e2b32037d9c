// Stay where the reader is (issue 19, item 9): a live run that ends while a
// person reads its output keeps the tab and the scroll they have; the Summary
// is offered, not forced.

import { expect, test } from '@playwright/test';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SETUP_TIMEOUT_MS, SPEC_TIMEOUT_MS, route, skipReason, sleep, startHarness, tid, visible, waitFor, waitForAttr, type Harness } from './harness';

const skip = skipReason('stay');

test.describe('Stay where the reader is', () => {
  test.describe.configure({ mode: 'serial', timeout: SPEC_TIMEOUT_MS });
  test.skip(skip !== null, skip ?? '');
  let h: Harness;
  test.beforeAll(async ({ browser }) => {
    test.setTimeout(SETUP_TIMEOUT_MS);
    h = await startHarness('stay', browser);
  });
  // eslint-disable-next-line no-empty-pattern
  test.afterEach(async ({}, testInfo) => {
    await h?.onTestEnd(testInfo);
  });
  test.afterAll(async () => {
    test.setTimeout(60_000);
    await h?.close();
  });

  test('a live run that fails under a person reading its output keeps the tab and the scroll, and offers the Summary', async () => {
    const { page } = h;
    // It fails when the test says (a gate file), once the reader has scrolled: live until then, however slow the machine.
    const gate = join(h.stateDir, 'fail-now');
    const started = await h.cliJson(['run', '--yield', '300ms', '--json', '--limit', '1m', '--', 'bash', '-c', `for i in $(seq 1 600); do echo "row $i"; done; until [ -e ${gate} ]; do sleep 0.05; done; echo boom >&2; exit 3`]);
    expect(started.code, started.stderr).toBe(75);
    const id = started.json.id;
    // Opened by a link without a tab: a live run opens on its output.
    await route(page, `#/runs/${id}`);
    const detail = page.locator(tid('run-detail'));
    await waitForAttr(detail, 'data-tab', 'output');
    const shownLiveAt = Date.now();
    await waitFor('line 600', async () => (await page.locator(tid('output-line', { 'data-line': '600' })).count()) > 0);
    // The reader scrolls up to line 200 or so.
    const view = await visible(page.locator(tid('output-view')));
    await view.evaluate((el) => (el.scrollTop = el.scrollHeight * 0.33));
    await sleep(200);
    const top = await view.evaluate((el) => el.scrollTop);
    // The page counts a run as read live once it was shown live for a second (RunDetail's READ_LIVE_MS): on a quick
    // machine all of the above takes less, and a run ending sooner opens on its Summary as an ended run does.
    await sleep(Math.max(0, shownLiveAt + 1500 - Date.now()));
    writeFileSync(gate, '');
    await waitForAttr(detail, 'data-verdict', 'failed');
    await sleep(500);
    expect(await detail.getAttribute('data-tab')).toBe('output');
    expect(Math.abs((await view.evaluate((el) => el.scrollTop)) - top)).toBeLessThan(40);
    const offer = await visible(page.locator(tid('summary-offer')));
    await h.screenshot(page, 'summary-offered');
    await offer.locator('a').click();
    await waitForAttr(detail, 'data-tab', 'summary');
  });
});
