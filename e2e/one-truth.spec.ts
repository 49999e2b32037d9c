// One truth per run across views (issue 19, item 6): the same verdict words
// and badges in Runs, the detail header and History; the memory limit,
// current memory and CPU in a live run's header; a Python script named by
// its first line that is not an import or a comment.

import { expect, test, type Page } from '@playwright/test';
import { SETUP_TIMEOUT_MS, SPEC_TIMEOUT_MS, route, skipReason, startHarness, tid, visible, waitForText, type Harness } from './harness';

const skip = skipReason('one-truth');

/** The badges of a run in Runs, its detail header and History, as text. */
async function badgesEverywhere(page: Page, id: string): Promise<{ runs: string[]; detail: string[]; history: string[] }> {
  await route(page, '#/runs');
  const row = await visible(page.locator(tid('run-row', { 'data-run-id': id })));
  const runs = await row.locator('.badge').allInnerTexts();
  await route(page, `#/runs/${id}/output`);
  await visible(page.locator(tid('run-detail', { 'data-state': 'ended' })));
  const detail = await page.locator('.rd-title-row .badge').allInnerTexts();
  await route(page, '#/history');
  const hrow = await visible(page.locator(tid('history-row', { 'data-run-id': id })));
  const history = await hrow.locator('.badge').allInnerTexts();
  return { runs, detail, history };
}

test.describe('One truth per run', () => {
  test.describe.configure({ mode: 'serial', timeout: SPEC_TIMEOUT_MS });
  test.skip(skip !== null, skip ?? '');
  let h: Harness;
  test.beforeAll(async ({ browser }) => {
    test.setTimeout(SETUP_TIMEOUT_MS);
    h = await startHarness('one-truth', browser);
  });
  // eslint-disable-next-line no-empty-pattern
  test.afterEach(async ({}, testInfo) => {
    await h?.onTestEnd(testInfo);
  });
  test.afterAll(async () => {
    test.setTimeout(60_000);
    await h?.close();
  });

  test('a run that left a process behind has the same badges in Runs, the detail header and History', async () => {
    const { page } = h;
    const done = await h.cliJson(['run', '--json', '--', 'bash', '-c', 'sleep 30 & exit 2']);
    expect(done.json.verdict, done.stderr).toBe('failed');
    const seen = await badgesEverywhere(page, done.json.id);
    expect(seen.runs).toEqual(['failed', '1 left behind']);
    expect(seen.detail).toEqual(seen.runs);
    expect(seen.history).toEqual(seen.runs);
    await route(page, `#/runs/${done.json.id}/verdict`);
    await h.screenshot(page, 'left-behind-header');
  });

  test('a Python script is named by its first line that is not an import or a comment, in every view', async () => {
    const { page } = h;
    const code = '# fetch the numbers\nimport json\nfrom os import path\n\nprint(json.dumps({"total": 42}))\n';
    const done = await h.cliJson(['run', '--python', '--json', '-c', code]);
    expect(done.json.verdict, done.stderr).toBe('completed');
    const title = 'print(json.dumps({"total": 42}))';
    await route(page, '#/runs');
    await waitForText(page.locator(tid('run-row', { 'data-run-id': done.json.id })).locator('.runs-line'), title);
    await route(page, `#/runs/${done.json.id}/output`);
    await waitForText(page.locator(tid('run-title')), title);
    await route(page, '#/history');
    await waitForText(page.locator(tid('history-row', { 'data-run-id': done.json.id })).locator('.history-command code'), title);
    await h.screenshot(page, 'python-titles');
  });

  test('a live run\'s header shows its memory now and its CPU', async () => {
    const { page } = h;
    const started = await h.cliJson(['run', '--yield', '300ms', '--json', '--limit', '2m', '--', 'python3', '-c', 'import time\nb = bytearray(30_000_000)\ntime.sleep(60)\n']);
    expect(started.code, started.stderr).toBe(75);
    await route(page, `#/runs/${started.json.id}/output`);
    await waitForText(page.locator(tid('run-resources')), /RSS sum \d+(\.\d+)? MiB.*peak.* \d+(\.\d+)? MiB.*CPU \d+ %/);
    await h.screenshot(page, 'live-header');
    await h.cli(['stop', started.json.id]);
  });
});
