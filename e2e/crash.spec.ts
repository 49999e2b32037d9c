// Crash forensics (issue 19, item 10, in part): a crashed command's Summary
// gives the exit status as a shell reports it (128 + n), the process that
// crashed (pid and command, from the last sample of its tree), and for a
// Python process without a fault report, how to get one (PYTHONFAULTHANDLER).

import { expect, test } from '@playwright/test';
import { SETUP_TIMEOUT_MS, SPEC_TIMEOUT_MS, route, skipReason, startHarness, tid, visible, waitForAttr, waitForText, type Harness } from './harness';

const skip = skipReason('crash');

test.describe('Crash forensics', () => {
  test.describe.configure({ mode: 'serial', timeout: SPEC_TIMEOUT_MS });
  test.skip(skip !== null, skip ?? '');
  let h: Harness;
  test.beforeAll(async ({ browser }) => {
    test.setTimeout(SETUP_TIMEOUT_MS);
    h = await startHarness('crash', browser);
  });
  // eslint-disable-next-line no-empty-pattern
  test.afterEach(async ({}, testInfo) => {
    await h?.onTestEnd(testInfo);
  });
  test.afterAll(async () => {
    test.setTimeout(60_000);
    await h?.close();
  });

  test('a Python process that dies of SIGSEGV: exit status 139, the process, and PYTHONFAULTHANDLER suggested', async () => {
    const { page } = h;
    const code = 'import os, signal, time\ntime.sleep(2)\nos.kill(os.getpid(), signal.SIGSEGV)\n';
    const started = await h.cliJson(['run', '--yield', '300ms', '--json', '--limit', '1m', '--', 'python3', '-c', code]);
    expect(started.code, started.stderr).toBe(75);
    // Watched while it runs: the page has its tree's last sample.
    await route(page, `#/runs/${started.json.id}`);
    const detail = await visible(page.locator(tid('run-detail')));
    await waitForAttr(detail, 'data-verdict', 'crashed', 20_000);
    await page.locator(tid('tab-summary')).click();
    await waitForText(page.locator(tid('crash-status')), '139 (128 + 11, SIGSEGV)');
    await waitForText(page.locator(tid('crash-culprit')), /^pid \d+: .*python/);
    await visible(page.locator(tid('crash-faulthandler')));
    await h.screenshot(page, 'crash-summary');
  });
});
