// One figure everywhere (issue 29, item 3): an out-of-memory run whose
// processes' RSS sum passes its limit (pages shared after a fork count in
// each process) shows one peak, the cgroup's own count, in the header, the
// Runs row, the Verdict tab, the Process tree's card and chart caption and
// History, and the advice says the same figure; the word "out of memory" in
// the page title, the badges, History's chips and both Verdict filters;
// process counts as the most alive at once; one decimal in every size column.

import { execFileSync } from 'node:child_process';
import { expect, test } from '@playwright/test';
import { SETUP_TIMEOUT_MS, SPEC_TIMEOUT_MS, route, sameSize, sizeOf, skipReason, startHarness, tid, visible, waitFor, waitForAttr, waitForText, type Harness } from './harness';

const skip = skipReason('one-figure');
const MiB = 1024 * 1024;

// 60 MiB touched, then four children sharing it (copy on write: each one's RSS counts it), then more until the 100 MiB limit kills.
const OOM_SCRIPT = [
  'import os, time',
  "b = b'x' * (60 << 20)",
  'kids = []',
  'for _ in range(4):',
  '    pid = os.fork()',
  '    if pid == 0:',
  '        time.sleep(60)',
  '        os._exit(0)',
  '    kids.append(pid)',
  'time.sleep(2)',
  'more = []',
  'while True:',
  "    more.append(b'y' * (4 << 20))",
  '    time.sleep(0.05)',
].join('\n');

test.describe('One figure everywhere', () => {
  test.describe.configure({ mode: 'serial', timeout: SPEC_TIMEOUT_MS });
  test.skip(skip !== null, skip ?? '');
  let h: Harness;
  test.beforeAll(async ({ browser }) => {
    test.setTimeout(SETUP_TIMEOUT_MS);
    h = await startHarness('one-figure', browser);
  });
  // eslint-disable-next-line no-empty-pattern
  test.afterEach(async ({}, testInfo) => {
    await h?.onTestEnd(testInfo);
  });
  test.afterAll(async () => {
    test.setTimeout(60_000);
    await h?.close();
  });

  test('an out-of-memory run: one peak in every view, never past its limit, the advice\'s figure; "out of memory" everywhere', async () => {
    const { page } = h;
    const started = await h.cli(['run', '--yield', '300ms', '--memory', '100M', '--limit', '2m', '--json', '--', 'python3', '-c', OOM_SCRIPT]);
    if (started.code === 125 && /memory/i.test(started.stderr)) test.skip(true, `--memory is refused here: ${started.stderr.trim()}`);
    const id = (JSON.parse(started.stdout) as { id: string }).id;
    // Watched while it runs, so the page holds its live samples (whose RSS sum passes the limit) as well as its end.
    await route(page, `#/runs/${id}/tree`);
    const sums: number[] = [];
    await waitFor('a sample whose RSS sum passes the limit, or the end', async () => {
      // Read as it is now, without waiting: the poll comes back to it.
      const text = (await page.locator(tid('tree-totals')).allInnerTexts()).join(' ');
      const m = /([\d.]+ MiB)/.exec(text);
      if (m) sums.push(sizeOf(m[1]!));
      return (await page.locator(tid('run-detail')).getAttribute('data-state')) === 'ended';
    }, 60_000, 200);
    console.log(`e2e/one-figure: the live RSS sums seen reached ${Math.max(0, ...sums) / MiB} MiB under a 100 MiB limit`);
    const done = JSON.parse((await h.cli(['show', id, '--json'])).stdout) as { verdict: string; advice: string; oom?: { confirmed: boolean; peakBytes?: number }; peak?: { rssBytes: number; source?: string } };
    expect(done.verdict).toBe('killed');
    expect(done.oom?.confirmed).toBe(true);
    expect(done.peak).toMatchObject({ source: 'cgroup', rssBytes: done.oom!.peakBytes });
    const advised = /its peak was ([\d.]+ MiB)/.exec(done.advice)![1]!;

    // The detail: header, Verdict tab, Process tree's card and chart caption.
    await route(page, `#/runs/${id}/verdict`);
    const detail = await visible(page.locator(tid('run-detail')));
    await waitForAttr(detail, 'data-verdict', 'killed');
    await waitFor('the page title to say out of memory', async () => /\bout of memory · /.test(await page.title()));
    await waitForText(page.locator(tid('run-badge')), 'out of memory');
    const head = await page.locator(tid('run-peak-head')).innerText();
    expect(head).toMatch(/^cgroup peak /);
    expect(await page.locator(tid('run-peak-head')).getAttribute('data-source')).toBe('cgroup');
    const figures = [head, await page.locator(tid('oom-peak')).innerText()];
    await page.locator(tid('tab-tree')).click();
    figures.push(await (await visible(page.locator(tid('peak-rss')))).innerText());
    const caption = await waitForText(page.locator('figure', { has: page.locator(tid('telemetry-rss')) }).locator('figcaption'), /cgroup peak/);
    figures.push(caption.replace(/^.*cgroup peak /, ''));
    await h.screenshot(page, 'oom-tree');

    // Runs and History.
    await route(page, '#/runs');
    const row = page.locator(tid('run-row', { 'data-run-id': id }));
    await waitForText(row.locator(tid('run-badge')), 'out of memory');
    figures.push(await row.locator(tid('run-peak')).innerText());
    await page.locator(tid('filter-verdict')).selectOption({ label: 'out of memory' });
    await waitFor('the Runs filter to leave the out-of-memory run alone', async () => (await page.locator(tid('run-row')).count()) === 1);
    expect(await page.locator(tid('run-row')).first().getAttribute('data-run-id')).toBe(id);
    await page.locator(tid('filter-verdict')).selectOption({ label: 'killed' });
    await visible(page.locator(tid('runs-none-match')));
    await page.locator(tid('filter-verdict')).selectOption({ label: 'Any' });
    await h.screenshot(page, 'oom-runs');

    await page.locator(tid('nav-history')).click();
    const chip = page.locator(tid('history-count', { 'data-verdict': 'oom' }));
    await waitForText(chip, 'out of memory');
    expect(await page.locator(tid('history-count', { 'data-verdict': 'killed' })).count()).toBe(0);
    await waitForText(page.locator(tid('history-row', { 'data-run-id': id })).locator(tid('history-badge')), 'out of memory');
    figures.push(await page.locator(tid('history-row', { 'data-run-id': id })).locator(tid('history-peak')).innerText());
    await chip.click();
    await waitFor('History filtered to out-of-memory runs', async () => (await page.locator(tid('history-row')).count()) === 1);
    expect(await page.locator(tid('history-verdict')).inputValue()).toBe('oom');
    await h.screenshot(page, 'oom-history');
    await page.locator(tid('history-verdict')).selectOption('');

    // Every view's figure, and the advice's, is the one peak: the cgroup's, never past its limit.
    console.log(`e2e/one-figure: figures ${JSON.stringify(figures)}, advice ${advised}`);
    for (const figure of figures) {
      expect(sameSize(figure, advised), `${figure} beside the advice's ${advised}`).toBe(true);
      expect(sizeOf(figure)).toBeLessThanOrEqual(100 * MiB);
    }
  });

  test('process counts: the most alive at once, Warden\'s own wrapper not counted', async () => {
    const { page } = h;
    // The interpreter itself, not a version manager's shim before it (pyenv's would count as processes of the run).
    const python = execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim();
    const one = await h.cliJson(['run', '--json', '--', python, '-c', 'import time; time.sleep(1.5)']);
    const tree = await h.cliJson(['run', '--json', '--', 'bash', '-c', 'for i in 1 2 3 4 5 6 7 8 9 10 11 12 13; do sleep 1.5 & done; wait']);
    await route(page, '#/runs');
    await waitForText(page.locator(tid('run-row', { 'data-run-id': one.json.id })).locator(tid('run-processes')), /^1 proc at most$/);
    await waitForText(page.locator(tid('run-row', { 'data-run-id': tree.json.id })).locator(tid('run-processes')), /^14 procs at most$/);
    await route(page, `#/runs/${tree.json.id}/tree`);
    await waitForText(page.locator(tid('peak-processes')), /^14 at most at once$/);
  });

  test('sizes in a column: one decimal each, whatever the size', async () => {
    const { page } = h;
    await route(page, '#/runs');
    await visible(page.locator(tid('run-peak')));
    const rows = await page.locator(tid('run-peak')).allInnerTexts();
    expect(rows.length).toBeGreaterThanOrEqual(3);
    for (const text of rows) expect(text).toMatch(/^(\d+\.\d (KiB|MiB|GiB)|\d+ B|–)$/);
    await page.locator(tid('nav-history')).click();
    await visible(page.locator(tid('history-peak')));
    for (const text of await page.locator(tid('history-peak')).allInnerTexts()) expect(text).toMatch(/^(\d+\.\d (KiB|MiB|GiB)|\d+ B|–)$/);
    await h.screenshot(page, 'history-columns');
  });
});
