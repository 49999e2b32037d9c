// Runs without output, from the history (issue 19, items 2 and 3): the Runs
// list fetches summaries (a run's output comes when its detail opens), so a
// fresh page with 8 ended runs of 3 MB fetches well under 1 MB; and the Runs
// view is backed by the history, so after a host's SIGKILL and a restart it
// lists the run the dead host lost, as lost, and its counts agree with
// History's.

import { expect, test, type Response } from '@playwright/test';
import { SETUP_TIMEOUT_MS, SPEC_TIMEOUT_MS, WAIT_MS, route, skipReason, startHarness, tid, visible, waitFor, waitForAttr, waitForText, type Harness } from './harness';

const skip = skipReason('runs-history');

test.describe('Runs without output, from the history', () => {
  test.describe.configure({ mode: 'serial', timeout: SPEC_TIMEOUT_MS });
  test.skip(skip !== null, skip ?? '');
  let h: Harness;
  test.beforeAll(async ({ browser }) => {
    test.setTimeout(SETUP_TIMEOUT_MS);
    h = await startHarness('runs-history', browser);
  });
  // eslint-disable-next-line no-empty-pattern
  test.afterEach(async ({}, testInfo) => {
    await h?.onTestEnd(testInfo);
  });
  test.afterAll(async () => {
    test.setTimeout(60_000);
    await h?.close();
  });

  test('a fresh Runs page with 8 ended runs of 3 MB fetches under 1 MB of API answers; the output comes when a run opens', async () => {
    const { page } = h;
    // 3,000,000 characters each: 60,000 lines of 49 characters and a newline.
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      const done = await h.cliJson(['run', '--json', '--', 'bash', '-c', `yes 'run ${i} ${'x'.repeat(40)}' | head -c 3000000; echo; echo last-line-${i}`]);
      expect(done.json.verdict, done.stderr).toBe('completed');
      ids.push(done.json.id);
    }
    let apiBytes = 0;
    const answers: string[] = [];
    const count = async (response: Response) => {
      const url = new URL(response.url());
      if (!url.pathname.startsWith('/api/') || url.pathname === '/api/v1/events') return;
      const body = await response.body().catch(() => Buffer.alloc(0));
      apiBytes += body.length;
      answers.push(`${url.pathname}${url.search} ${body.length}`);
    };
    page.on('response', count);
    await page.goto(`${h.url()}/`);
    await visible(page.locator(tid('run-row')).first());
    await waitFor('all 8 rows', async () => (await page.locator(tid('run-row')).count()) === 8);
    // Answers still on their way are counted too.
    await page.waitForLoadState('networkidle');
    page.off('response', count);
    console.log(`e2e/runs-history: a fresh Runs page fetched ${apiBytes.toLocaleString('en-US')} bytes of API answers (${answers.join(', ')})`);
    expect(apiBytes, answers.join('\n')).toBeLessThan(1_000_000);
    await h.screenshot(page, 'runs-without-output');

    // Opening one fetches its output.
    await page.locator(tid('run-row', { 'data-run-id': ids[3]! })).click();
    await route(page, `#/runs/${ids[3]}/output`);
    await visible(page.locator(tid('output-view')));
    await waitFor('the last line of the output', async () => (await page.locator(tid('output-line')).allInnerTexts()).some((t) => t.includes('last-line-3')));
  });

  test('after a host SIGKILL and a restart, Runs lists the run it lost as lost, and its counts agree with History', async () => {
    const { page } = h;
    const started = await h.cliJson(['run', '--yield', '300ms', '--json', '--limit', '10m', '--', 'bash', '-c', 'echo before-the-crash; sleep 300']);
    expect(started.code, started.stderr).toBe(75);
    const id = started.json.id;
    // Sampled while it lived: the row has its peak so far (the host stores it as it rises).
    await route(page, '#/runs');
    // Past the first sample of a just-exec'd process (0 B).
    await waitForText(page.locator(tid('run-row', { 'data-run-id': id })).locator(tid('run-peak')), /^[1-9]/);
    const storedPeak = async () => {
      const listed = await h.cliJson<{ id: string; peakRssBytes: number | null }[]>(['list', '--live', '--json']);
      return (listed.json.find((r) => r.id === id)?.peakRssBytes ?? 0) > 0;
    };
    await waitFor('the peak so far in the history', storedPeak, WAIT_MS);
    await h.killHost('SIGKILL');
    const login = await h.startHostAgain();
    // The app starts afresh (a new page after the restart).
    await page.goto(login);
    await route(page, '#/runs');
    const row = page.locator(tid('run-row', { 'data-run-id': id }));
    await visible(row, WAIT_MS);
    await waitForAttr(row, 'data-verdict', 'lost');
    await waitForText(row.locator(tid('run-badge')), 'lost');
    // Its telemetry kept: the peak memory it had when its host died (not the 0 B of its start).
    await waitForText(row.locator(tid('run-peak')), /^[1-9]/);
    await waitForText(page.locator(tid('runs-count')), /0 live · 9 ended/);
    await h.screenshot(page, 'lost-run');

    // History says the same: 9 in all.
    await page.locator(tid('nav-history')).click();
    await waitForText(page.locator(tid('history-counts')), /9 in all/);
    // And the lost run's output, from the history, opens from Runs.
    await route(page, '#/runs');
    await row.click();
    await route(page, `#/runs/${id}/output`);
    await waitFor('its output from the history', async () => (await page.locator(tid('output-line')).allInnerTexts()).some((t) => t.includes('before-the-crash')));
  });
});
