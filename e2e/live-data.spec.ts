// Exact live data (issue 19, item 1): a page opened on a run that has printed
// for a while and still prints shows every line with its right number. The
// page subscribes first, buffers, takes the snapshot and merges by offset;
// the lines written while it connects are neither dropped nor misnumbered.

import { expect, test } from '@playwright/test';
import { SETUP_TIMEOUT_MS, SPEC_TIMEOUT_MS, WAIT_MS, skipReason, startHarness, tid, visible, waitFor, type Harness } from './harness';

const skip = skipReason('live-data');

/** Every output line the page renders now, as [number, text]. */
async function renderedLines(h: Harness): Promise<[number, string][]> {
  return h.page.locator(tid('output-line')).evaluateAll((rows) =>
    rows.map((row) => [Number(row.getAttribute('data-line')), (row.querySelector('.rd-text')?.textContent ?? '').trim()] as [number, string]),
  );
}

test.describe('Exact live data', () => {
  test.describe.configure({ mode: 'serial', timeout: SPEC_TIMEOUT_MS });
  test.skip(skip !== null, skip ?? '');
  let h: Harness;
  test.beforeAll(async ({ browser }) => {
    test.setTimeout(SETUP_TIMEOUT_MS);
    h = await startHarness('live-data', browser);
  });
  // eslint-disable-next-line no-empty-pattern
  test.afterEach(async ({}, testInfo) => {
    await h?.onTestEnd(testInfo);
  });
  test.afterAll(async () => {
    test.setTimeout(60_000);
    await h?.close();
  });

  test('a page opened on a run with 3,000 lines behind it, printing 25 lines a second, shows every line with its right number', async () => {
    const { page } = h;
    // 3,000 lines at once, then 25 a second for 12 s, then quiet but live (the final result would hide a live loss).
    const script = 'for i in $(seq 1 3000); do echo "line $i"; done; for i in $(seq 3001 3300); do echo "line $i"; sleep 0.04; done; sleep 60';
    const started = await h.cliJson(['run', '--yield', '300ms', '--json', '--limit', '5m', '--', 'bash', '-c', script]);
    expect(started.code, started.stderr).toBe(75);
    const id = started.json.id;
    // The first 3,000 are behind it when the page opens (waited on, not a time).
    await waitFor('the first 3,000 lines', async () => (await h.cliJson(['show', id, '--json'])).json.stdout.includes('line 3000\n'));
    // Straight onto the output by URL, in a page loaded afresh: it connects while the run prints.
    await page.goto('about:blank');
    await page.goto(`${h.url()}/#/runs/${id}/output`);
    await visible(page.locator(tid('output-view')));

    let checks = 0;
    let highest = 0;
    const wrong: string[] = [];
    // While it prints: every rendered line's number is the one its text names.
    await waitFor(
      'line 3300 with its number while the run prints',
      async () => {
        for (const [n, text] of await renderedLines(h)) {
          if (text !== `line ${n}`) wrong.push(`#${n}: ${JSON.stringify(text)}`);
          highest = Math.max(highest, n);
        }
        checks++;
        return highest >= 3300;
      },
      WAIT_MS,
      200,
    );
    expect(wrong.slice(0, 5), `lines shown with the wrong number (${wrong.length} of ${checks} looks)`).toEqual([]);
    expect(highest).toBe(3300);
    const detail = page.locator(tid('run-detail'));
    expect(await detail.getAttribute('data-state')).toBe('running');

    // The lines written while the page connected are there too: scroll through all of them.
    const view = page.locator(tid('output-view'));
    const seen = new Set<number>();
    const height = await view.evaluate((el) => el.scrollHeight);
    for (let top = 0; top <= height; top += 300) {
      await view.evaluate((el, y) => (el.scrollTop = y), top);
      await page.evaluate(() => new Promise<void>((r) => requestAnimationFrame(() => requestAnimationFrame(() => r()))));
      for (const [n, text] of await renderedLines(h)) {
        if (text !== `line ${n}`) wrong.push(`#${n}: ${JSON.stringify(text)}`);
        seen.add(n);
      }
    }
    expect(wrong.slice(0, 5)).toEqual([]);
    const missing = [];
    for (let n = 1; n <= 3300; n++) if (!seen.has(n)) missing.push(n);
    expect(missing.slice(0, 10), `${missing.length} lines never shown`).toEqual([]);
    await view.evaluate((el) => (el.scrollTop = el.scrollHeight));
    await h.screenshot(page, 'every-line');
    await h.cli(['stop', id]);
  });
});
