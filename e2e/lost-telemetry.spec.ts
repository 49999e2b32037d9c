// A lost run keeps its telemetry (issue 19, item 3): the host stores a live
// run's series as it runs, so after the host's SIGKILL and a restart the lost
// run's Process tree charts its memory from the history (not the empty
// state), its Runs row draws its sparkline, and the peak is one figure in
// the row, the tree, the chart and History.

import { expect, test } from '@playwright/test';
import { SETUP_TIMEOUT_MS, SPEC_TIMEOUT_MS, WAIT_MS, route, skipReason, startHarness, tid, visible, waitFor, waitForAttr, waitForText, type Harness, sameSize } from './harness';

const skip = skipReason('lost-telemetry');

test.describe('A lost run keeps its telemetry', () => {
  test.describe.configure({ mode: 'serial', timeout: SPEC_TIMEOUT_MS });
  test.skip(skip !== null, skip ?? '');
  let h: Harness;
  test.beforeAll(async ({ browser }) => {
    test.setTimeout(SETUP_TIMEOUT_MS);
    h = await startHarness('lost-telemetry', browser);
  });
  // eslint-disable-next-line no-empty-pattern
  test.afterEach(async ({}, testInfo) => {
    await h?.onTestEnd(testInfo);
  });
  test.afterAll(async () => {
    test.setTimeout(60_000);
    await h?.close();
  });

  test('after a host SIGKILL and a restart, the lost run charts its memory and draws its sparkline, one peak everywhere', async () => {
    const { page } = h;
    // 16 MiB more every half second for 4 s, then quiet: a ramp in the series.
    const script = 'import time\nb = []\nfor i in range(8):\n    b.append(bytearray(16 << 20))\n    time.sleep(0.5)\ntime.sleep(300)\n';
    const started = await h.cliJson(['run', '--yield', '300ms', '--json', '--limit', '10m', '--', 'python3', '-c', script]);
    expect(started.code, started.stderr).toBe(75);
    const id = started.json.id;
    // Past most of the ramp, as the history has it (the page is not open: nothing of this comes from it).
    const storedPeak = async () => {
      const listed = await h.cliJson<{ id: string; peakRssBytes: number | null }[]>(['list', '--live', '--json']);
      return (listed.json.find((r) => r.id === id)?.peakRssBytes ?? 0) > 100 * 2 ** 20;
    };
    await waitFor('the ramp past 100 MiB in the history', storedPeak, WAIT_MS, 250);
    await h.killHost('SIGKILL');
    const login = await h.startHostAgain();
    await page.goto(login);
    await route(page, '#/runs');
    const row = page.locator(tid('run-row', { 'data-run-id': id }));
    await waitForAttr(row, 'data-verdict', 'lost');

    // Its Runs row: the sparkline of its last stored minute, the figures in words as of its last sample.
    const spark = row.locator(tid('run-spark'));
    await waitForAttr(spark, 'data-points', (v) => Number(v) >= 3);
    expect(await spark.getAttribute('aria-label')).toMatch(/^CPU \d+ % at its last sample, highest \d+ %; memory [\d.]+ MiB at its last sample, highest [\d.]+ MiB; (?:last minute|since it started)$/);
    const rowPeak = await row.locator(tid('run-peak')).innerText();
    const rowSource = await row.locator(tid('run-peak')).getAttribute('data-source');
    expect(rowPeak).toMatch(/^1\d\d(\.\d)? MiB$/);
    await h.screenshot(page, 'lost-row-sparkline');

    // Its Process tree: both charts from the history, the memory chart's highest point the row's peak.
    await route(page, `#/runs/${id}/tree`);
    const rss = page.locator(tid('telemetry-rss'));
    await visible(rss);
    await waitForAttr(rss, 'data-points', (v) => Number(v) >= 3);
    expect(await rss.getAttribute('data-source')).toBe('history');
    await waitForAttr(page.locator(tid('telemetry-cpu')), 'data-points', (v) => Number(v) >= 3);
    expect(await page.locator(tid('telemetry-none')).count()).toBe(0);
    expect(await rss.locator('canvas').count()).toBeGreaterThan(0);
    // The chart plots the RSS sum sampled; its caption names the run's one peak beside it when that is the cgroup's.
    const caption = await waitForText(page.locator('figure', { has: rss }).locator('figcaption'), /peak/);
    expect(sameSize(caption.replace(/^.*(?:cgroup peak|highest RSS sum) /, ''), rowPeak), `${caption} / ${rowPeak}`).toBe(true);
    expect(sameSize(await page.locator(tid('peak-rss')).innerText(), rowPeak)).toBe(true);
    await h.screenshot(page, 'lost-tree-charts');

    // History says the same peak.
    await page.locator(tid('nav-history')).click();
    await waitForText(page.locator(tid('history-row', { 'data-run-id': id })).locator(tid('history-peak')), rowPeak);
    expect(await page.locator(tid('history-row', { 'data-run-id': id })).locator(tid('history-peak')).getAttribute('data-source')).toBe(rowSource);
  });
});
