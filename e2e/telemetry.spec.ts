// Telemetry from the host (issue 19, item 4): a page opened on a live run
// late charts it from its first sample (the host sends the series it has),
// and its peak is the same figure in the Runs row and the Process tree; the
// Runs row's sparkline reads at a glance (issue 19, item 5): its last minute
// across the box (a young run's life, issue 29), its latest point marked, the
// figures in words.

import { expect, test } from '@playwright/test';
import { SETUP_TIMEOUT_MS, SPEC_TIMEOUT_MS, route, skipReason, sleep, startHarness, tid, visible, waitForAttr, type Harness, sameSize } from './harness';

const skip = skipReason('telemetry');

test.describe('Telemetry from the host', () => {
  test.describe.configure({ mode: 'serial', timeout: SPEC_TIMEOUT_MS });
  test.skip(skip !== null, skip ?? '');
  let h: Harness;
  test.beforeAll(async ({ browser }) => {
    test.setTimeout(SETUP_TIMEOUT_MS);
    h = await startHarness('telemetry', browser);
  });
  // eslint-disable-next-line no-empty-pattern
  test.afterEach(async ({}, testInfo) => {
    await h?.onTestEnd(testInfo);
  });
  test.afterAll(async () => {
    test.setTimeout(60_000);
    await h?.close();
  });

  test('a page opened on a live run 8 s old charts it from its first sample, and shows one peak in the row and the tree', async () => {
    const { page } = h;
    // A memory ramp before the page opens (20 MB a second for 6 s), then quiet.
    const script = 'import time\nb = []\nfor i in range(6):\n    b.append(bytearray(20_000_000))\n    time.sleep(1)\ntime.sleep(120)\n';
    const started = await h.cliJson(['run', '--yield', '300ms', '--json', '--limit', '5m', '--', 'python3', '-c', script]);
    expect(started.code, started.stderr).toBe(75);
    const id = started.json.id;
    await sleep(8000);
    await page.goto('about:blank');
    const opened = Date.now();
    await page.goto(`${h.url()}/#/runs/${id}/tree`);
    const rss = page.locator(tid('telemetry-rss'));
    await visible(rss);
    // The host's series so far: a point per second from the start, not only those sampled since the page opened.
    // Told apart by count, not by time: when the chart first has points it holds more than the page
    // could have sampled since it opened (one a second), however slowly a loaded machine opened it.
    const first = Number(await waitForAttr(rss, 'data-points', (v) => Number(v) > 0));
    const within = Date.now() - opened;
    console.log(`e2e/telemetry: ${first} points charted ${within} ms after opening a run 8 s old`);
    expect(first).toBeGreaterThan(Math.ceil(within / 1000) + 1);
    expect(Number(await waitForAttr(rss, 'data-points', (v) => Number(v) >= 7))).toBeGreaterThanOrEqual(7);
    expect(await page.locator(tid('run-detail')).getAttribute('data-state')).toBe('running');
    await h.screenshot(page, 'from-first-sample');

    // One peak: the Process tree's card and the Runs row say the same.
    const treePeak = await page.locator(tid('peak-rss')).innerText();
    await route(page, '#/runs');
    const rowPeak = await page.locator(tid('run-row', { 'data-run-id': id })).locator(tid('run-peak')).innerText();
    expect(sameSize(rowPeak, treePeak), `${rowPeak} in the row, ${treePeak} in the tree`).toBe(true);
    await h.cli(['stop', id]);
  });

  test("a live row's sparkline: a young run across its box (issue 29: not a sliver at the right of a minute), its figures in words", async () => {
    const { page } = h;
    const script = 'import time\nb = bytearray(40_000_000)\nend = time.time() + 30\nwhile time.time() < end:\n    pass\n';
    const started = await h.cliJson(['run', '--yield', '200ms', '--json', '--limit', '1m', '--', 'python3', '-c', script]);
    expect(started.code, started.stderr).toBe(75);
    const id = started.json.id;
    await route(page, '#/runs');
    const spark = page.locator(tid('run-row', { 'data-run-id': id })).locator(tid('run-spark'));
    await waitForAttr(spark, 'data-points', (v) => Number(v) >= 3);
    const label = (await spark.getAttribute('aria-label')) ?? '';
    expect(label).toMatch(/^CPU \d+ % now, highest \d+ %; memory [\d.]+ MiB now, highest [\d.]+ MiB; since it started$/);
    // A run a few seconds old spans the box from its left edge.
    const firstX = await spark.locator('polyline.sparkline-cpu').evaluate((el) => Number((el.getAttribute('points') ?? '').split(' ')[0]!.split(',')[0]));
    expect(firstX).toBeLessThan(2);
    await visible(spark.locator('circle'));
    await h.screenshot(page, 'sparkline-glance');
    await h.cli(['stop', id]);
  });
});
