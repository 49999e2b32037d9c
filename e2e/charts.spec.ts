// Charts like Grafana's (issue 29, item 4): the time axis runs to the run's
// end; each stop step, a force kill and the out-of-memory kill are marked on
// it; the memory limit's label sits inside the plot; the panels are taller
// and grow with the page; CPU and memory share one crosshair; a drag zooms
// both, a double click resets them. What a canvas drew is read from the
// attributes the charts set (data-marks, data-x-min, data-x-max,
// data-limit-label), and seen in the screenshots.

import type { Locator, Page } from '@playwright/test';
import { expect, test } from '@playwright/test';
import { SETUP_TIMEOUT_MS, SPEC_TIMEOUT_MS, route, skipReason, startHarness, tid, visible, waitFor, waitForAttr, type Harness } from './harness';

const skip = skipReason('charts');

// Ignores SIGINT and SIGTERM and keeps a core busy: the stop sequence goes all the way to SIGKILL.
const STUBBORN = 'import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nb = bytearray(30_000_000)\nwhile True:\n    sum(range(300000))\n    time.sleep(0.02)\n';

// Memory taken 8 MiB at a time until the 100 MiB limit's kill.
const GREEDY = 'import time\nb = []\nwhile True:\n    b.append(bytearray(8 << 20))\n    time.sleep(0.1)\n';

interface Drawn {
  marks: string[];
  xMin: number;
  xMax: number;
  limitLabel: string;
  height: number;
}

async function drawn(plot: Locator): Promise<Drawn> {
  return plot.evaluate((el: HTMLElement) => ({
    marks: (el.dataset.marks ?? '').split(' ').filter(Boolean),
    xMin: Number(el.dataset.xMin),
    xMax: Number(el.dataset.xMax),
    limitLabel: el.dataset.limitLabel ?? '',
    height: el.querySelector('canvas')?.getBoundingClientRect().height ?? 0,
  }));
}

async function openTree(page: Page, id: string): Promise<{ cpu: Locator; rss: Locator }> {
  await route(page, `#/runs/${id}/tree`);
  await visible(page.locator(tid('run-detail')));
  const cpu = page.locator(tid('telemetry-cpu'));
  const rss = page.locator(tid('telemetry-rss'));
  await waitForAttr(cpu, 'data-marks', (v) => v !== null);
  await waitForAttr(rss, 'data-marks', (v) => v !== null);
  return { cpu, rss };
}

function kinds(marks: string[]): string[] {
  return marks.map((m) => m.split('@')[0]!);
}

test.describe('Charts like Grafana\'s', () => {
  test.describe.configure({ mode: 'serial', timeout: SPEC_TIMEOUT_MS });
  test.skip(skip !== null, skip ?? '');
  let h: Harness;
  test.beforeAll(async ({ browser }) => {
    test.setTimeout(SETUP_TIMEOUT_MS);
    h = await startHarness('charts', browser);
  });
  // eslint-disable-next-line no-empty-pattern
  test.afterEach(async ({}, testInfo) => {
    await h?.onTestEnd(testInfo);
  });
  test.afterAll(async () => {
    test.setTimeout(60_000);
    await h?.close();
  });

  let stubborn = '';
  let stubbornMs = 0;

  test('a run past its limit that ignores SIGINT and SIGTERM: the axis to its end, the limit, each step and the kill marked', async () => {
    const { page } = h;
    const done = await h.cliJson<{ id: string; verdict: string; elapsedMs: number }>(['run', '--json', '--limit', '4s', '--grace', '3s', '--', 'python3', '-c', STUBBORN]);
    stubborn = done.json.id;
    stubbornMs = done.json.elapsedMs;
    expect(done.json.verdict).toBe('timed-out');
    const { cpu, rss } = await openTree(page, stubborn);
    for (const plot of [cpu, rss]) {
      const d = await drawn(plot);
      // The axis reaches the run's end (the last SIGKILL), not the last sample before it.
      expect(d.xMin).toBe(0);
      expect(d.xMax * 1000, `axis end ${d.xMax} s; the run took ${stubbornMs} ms`).toBeGreaterThanOrEqual(stubbornMs - 1);
      expect(kinds(d.marks)).toEqual(expect.arrayContaining(['limit', 'step', 'end']));
      // The limit, SIGINT at it, SIGTERM and the SIGKILL at the grace: the steps in time order.
      expect(d.marks.filter((m) => m.startsWith('step@')).length, d.marks.join(' ')).toBeGreaterThanOrEqual(2);
      const at = d.marks.map((m) => Number(m.split('@')[1]));
      expect([...at].sort((a, b) => a - b)).toEqual(at);
    }
    console.log(`e2e/charts: marks ${(await drawn(cpu)).marks.join(' ')} over a run of ${stubbornMs} ms`);
    await h.screenshot(page, 'steps');
  });

  test('panels are taller and grow with the page', async () => {
    const { page } = h;
    const { cpu } = await openTree(page, stubborn);
    const small = (await drawn(cpu)).height;
    expect(small).toBeGreaterThanOrEqual(200);
    await page.setViewportSize({ width: 1280, height: 1200 });
    await waitFor('the panel to grow with the window', async () => (await drawn(cpu)).height > small + 40);
    const tall = (await drawn(cpu)).height;
    console.log(`e2e/charts: panel ${small} px at 860 px of window, ${tall} px at 1200 px`);
    await page.setViewportSize({ width: 1280, height: 860 });
  });

  test('one crosshair: the cursor over CPU shows memory at the same moment; a drag zooms both, a double click resets both', async () => {
    const { page } = h;
    const { cpu, rss } = await openTree(page, stubborn);
    const cpuOver = cpu.locator('.u-over');
    const box = (await cpuOver.boundingBox())!;
    const rssValue = rss.locator('.u-legend .u-series').nth(1).locator('.u-value');
    const rssAt = rss.locator('.u-legend .u-series').nth(0).locator('.u-value');
    const cpuAt = cpu.locator('.u-legend .u-series').nth(0).locator('.u-value');
    await page.mouse.move(box.x + box.width * 0.5, box.y + box.height * 0.5);
    // The memory chart's legend follows the CPU chart's cursor: the same moment, a value.
    await waitFor('the memory legend to follow the CPU cursor', async () => /^\+/.test(await rssAt.innerText()));
    expect(await rssAt.innerText()).toBe(await cpuAt.innerText());
    expect(await rssValue.innerText()).toMatch(/MiB|KiB|B$/);
    const cursor = await rss.locator('.u-cursor-x').evaluate((el) => getComputedStyle(el).display);
    expect(cursor).not.toBe('none');
    await h.screenshot(page, 'crosshair');

    // A drag over the CPU chart's middle: both charts show that range.
    await page.mouse.move(box.x + box.width * 0.3, box.y + box.height * 0.5);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.45, box.y + box.height * 0.5, { steps: 5 });
    await page.mouse.move(box.x + box.width * 0.6, box.y + box.height * 0.5, { steps: 5 });
    await page.mouse.up();
    await waitFor('both charts zoomed', async () => {
      const [a, b] = [await drawn(cpu), await drawn(rss)];
      return a.xMin > 0 && a.xMax * 1000 < stubbornMs - 1 && a.xMin === b.xMin && a.xMax === b.xMax;
    });
    const zoomed = await drawn(rss);
    const whole = stubbornMs / 1000;
    console.log(`e2e/charts: zoomed to ${zoomed.xMin.toFixed(2)}..${zoomed.xMax.toFixed(2)} s of ${whole.toFixed(2)} s`);
    expect(zoomed.xMin).toBeGreaterThan(whole * 0.2);
    expect(zoomed.xMax).toBeLessThan(whole * 0.7);
    await visible(page.locator(tid('telemetry-reset-zoom')));
    await h.screenshot(page, 'zoomed');

    // A double click on the memory chart: both show the whole run again.
    await rss.locator('.u-over').dblclick();
    await waitFor('both charts reset', async () => {
      const [a, b] = [await drawn(cpu), await drawn(rss)];
      return a.xMin === 0 && b.xMin === 0 && a.xMax * 1000 >= stubbornMs - 1 && b.xMax === a.xMax;
    });
    expect(await page.locator(tid('telemetry-reset-zoom')).count()).toBe(0);
  });

  test('a force kill is marked as one', async () => {
    const { page } = h;
    await page.mouse.move(0, 0);
    const started = await h.cliJson(['run', '--yield', '200ms', '--json', '--limit', '2m', '--', 'python3', '-c', STUBBORN]);
    expect(started.code, started.stderr).toBe(75);
    const id = started.json.id;
    await new Promise((r) => setTimeout(r, 3000));
    const stopped = await h.cli(['stop', id, '--force']);
    expect(stopped.code, stopped.stderr).not.toBe(125);
    const { cpu } = await openTree(page, id);
    const d = await drawn(cpu);
    expect(kinds(d.marks), d.marks.join(' ')).toContain('force');
    await h.screenshot(page, 'force');
  });

  test('an out-of-memory run: its kill marked, the limit labelled inside the memory plot', async () => {
    const { page } = h;
    const done = await h.cli(['run', '--json', '--memory', '100M', '--limit', '2m', '--', 'python3', '-c', GREEDY]);
    if (done.code === 125 && /memory/i.test(done.stderr)) test.skip(true, `--memory is refused here: ${done.stderr.trim()}`);
    const result = JSON.parse(done.stdout) as { id: string; oom?: { confirmed: boolean }; elapsedMs: number };
    expect(result.oom?.confirmed).toBe(true);
    const { cpu, rss } = await openTree(page, result.id);
    const d = await drawn(rss);
    expect(kinds(d.marks), d.marks.join(' ')).toContain('oom');
    expect(kinds((await drawn(cpu)).marks)).toContain('oom');
    expect(d.limitLabel).toBe('inside');
    expect(d.xMax * 1000).toBeGreaterThanOrEqual(result.elapsedMs - 1);
    await h.screenshot(page, 'oom');
  });
});
