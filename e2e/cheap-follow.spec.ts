// Cheap to follow (issue 29, item 5): a page following a run that prints 25
// lines a second updates its log a few times a second (each time with every
// line so far), not once per chunk, and every clock of the page ticks once a
// second, on the output tab and on the tree tab; nothing is lost and the view
// stays at the tail. Counted with MutationObservers in the page (updates per
// window, never a duration); the CPU and layouts/s are bench (l) part 7's.

import { expect, test } from '@playwright/test';
import { SETUP_TIMEOUT_MS, SPEC_TIMEOUT_MS, route, skipReason, sleep, startHarness, tid, visible, waitFor, type Harness } from './harness';

const skip = skipReason('cheap-follow');
const WINDOW_MS = 5000;

/** A numbered line every 40 ms (25 a second) for a minute, flushed each time. */
const PRINTER = 'import sys, time\nt0 = time.monotonic()\nfor i in range(1500):\n    print(f"{i + 1:06d} following", flush=True)\n    d = t0 + (i + 1) * 0.04 - time.monotonic()\n    if d > 0:\n        time.sleep(d)\n';

/** Counts, over `ms`, the commits that changed the log view and the header's clock (one MutationObserver callback per commit). */
const COUNT_UPDATES = (ms: number) => `new Promise((resolve) => {
  const log = document.querySelector('[data-testid="output-view"]') || document.querySelector('[data-testid="proc-tree"]') || document.body;
  const clock = document.querySelector('[data-testid="run-elapsed"]');
  let logUpdates = 0, clockUpdates = 0, all = 0;
  const a = new MutationObserver(() => { logUpdates++; });
  const b = new MutationObserver(() => { clockUpdates++; });
  const c = new MutationObserver(() => { all++; });
  a.observe(log, { childList: true, subtree: true, characterData: true });
  if (clock) b.observe(clock, { childList: true, subtree: true, characterData: true });
  c.observe(document.body, { childList: true, subtree: true, characterData: true, attributes: true });
  setTimeout(() => { a.disconnect(); b.disconnect(); c.disconnect(); resolve({ logUpdates, clockUpdates, all }); }, ${ms});
})`;

test.describe('Cheap to follow', () => {
  test.describe.configure({ mode: 'serial', timeout: SPEC_TIMEOUT_MS });
  test.skip(skip !== null, skip ?? '');
  let h: Harness;
  test.beforeAll(async ({ browser }) => {
    test.setTimeout(SETUP_TIMEOUT_MS);
    h = await startHarness('cheap-follow', browser);
  });
  // eslint-disable-next-line no-empty-pattern
  test.afterEach(async ({}, testInfo) => {
    await h?.onTestEnd(testInfo);
  });
  test.afterAll(async () => {
    test.setTimeout(60_000);
    await h?.close();
  });

  test('following 25 lines a second: the log drawn a few times a second with every line, the clock once a second', async () => {
    const { page } = h;
    const started = await h.cliJson(['run', '--yield', '200ms', '--json', '--limit', '2m', '--', 'python3', '-c', PRINTER]);
    const id = started.json.id;
    await route(page, `#/runs/${id}/output`);
    const view = await visible(page.locator(tid('output-view')));
    await waitFor('20 lines shown', async () => Number(await view.getAttribute('data-lines')) >= 20);
    await sleep(1000);
    const before = Number(await view.getAttribute('data-lines'));
    const counts = (await page.evaluate(COUNT_UPDATES(WINDOW_MS))) as { logUpdates: number; clockUpdates: number; all: number };
    const after = Number(await view.getAttribute('data-lines'));
    console.log(`e2e/cheap-follow: output tab, ${WINDOW_MS} ms: ${after - before} lines came, the log was updated ${counts.logUpdates} times, the clock ${counts.clockUpdates}, the page ${counts.all}`);
    // Lines came at 25 a second: drawn at most ~3.3 times a second (FOLLOW_MS 300), never once per line.
    expect(after - before).toBeGreaterThan(25);
    expect(counts.logUpdates).toBeLessThanOrEqual(Math.ceil(WINDOW_MS / 300) + 2);
    expect(counts.logUpdates).toBeGreaterThan(0);
    expect(counts.clockUpdates).toBeLessThanOrEqual(WINDOW_MS / 1000 + 1);
    // At the tail, every line so far numbered as printed.
    const tail = await waitFor('the view at its tail, showing the newest lines', async () => {
      const state = (await view.evaluate((el) => ({ fromBottom: el.scrollHeight - el.scrollTop - el.clientHeight, last: [...el.querySelectorAll('[data-testid="output-line"]')].at(-1)?.textContent ?? '' }))) as { fromBottom: number; last: string };
      return state.fromBottom <= 40 ? state : false;
    });
    const m = /^(\d+)\s*(\d{6}) following$/.exec(tail.last.trim());
    expect(m, tail.last).not.toBeNull();
    expect(Number(m![1])).toBe(Number(m![2]));
    await h.screenshot(page, 'following');

    // The tree tab: the samples (two a second) and the clock, not ten ticks a second.
    await route(page, `#/runs/${id}/tree`);
    await visible(page.locator(tid('proc-tree')));
    await sleep(500);
    const tree = (await page.evaluate(COUNT_UPDATES(WINDOW_MS))) as { logUpdates: number; clockUpdates: number; all: number };
    console.log(`e2e/cheap-follow: tree tab, ${WINDOW_MS} ms: the clock updated ${tree.clockUpdates} times, the page ${tree.all}`);
    expect(tree.clockUpdates).toBeLessThanOrEqual(WINDOW_MS / 1000 + 1);
    await h.screenshot(page, 'tree-tab');
    await h.cli(['stop', id]);
  });
});
