// Deep links fast again (issue 29, item 7): a link to line 150,000 of an
// ended run's 9.5 MB output, opened in a fresh page, fetches the page holding
// that line with the first ones (a fraction of the output before the line is
// shown, by resource timing: bytes, never a duration), shows it at its own
// number with the lines before it pending, never a half line at a page's
// edge, and does not move while the rest arrives. The time to the line is
// bench (l) part 9's.

import { expect, test, type Page } from '@playwright/test';
import { SETUP_TIMEOUT_MS, SPEC_TIMEOUT_MS, skipReason, startHarness, tid, visible, waitFor, waitForAttr, type Harness } from './harness';

const skip = skipReason('deep-link-line');
const LINES = 190_000;
const LINKED = 150_000;
/** Every line: six digits, a space, 42 of x, a newline (50 characters: 9.5 MB in all). */
const SCRIPT = `import sys\nw = sys.stdout.write\nfor i in range(1, ${LINES + 1}):\n    w(f"{i:06d} " + "x" * 42 + "\\n")\n`;
const LINE = /^(\d{6}) x{42}$/;

/** Bytes of API answers the page received (resource timing), and the rows shown now with their text and place. */
async function pageState(page: Page): Promise<{ apiBytes: number; rows: { line: number; text: string; top: number }[]; loading: boolean }> {
  return page.evaluate(() => {
    const apiBytes = performance.getEntriesByType('resource').filter((e) => e.name.includes('/api/v1/')).reduce((n, e) => n + (e as PerformanceResourceTiming).encodedBodySize, 0);
    const rows = [...document.querySelectorAll('[data-testid="output-line"]')].map((el) => ({
      line: Number(el.getAttribute('data-line')),
      text: el.querySelector('.rd-text')?.textContent ?? '',
      top: el.getBoundingClientRect().top,
    }));
    return { apiBytes, rows, loading: document.querySelector('[data-testid="output-loading"]') !== null };
  });
}

test.describe('Deep links into big ended logs', () => {
  test.describe.configure({ mode: 'serial', timeout: SPEC_TIMEOUT_MS });
  test.skip(skip !== null, skip ?? '');
  let h: Harness;
  let id = '';
  test.beforeAll(async ({ browser }) => {
    test.setTimeout(SETUP_TIMEOUT_MS);
    h = await startHarness('deep-link-line', browser);
    const done = await h.cliJson(['run', '--json', '--output-cap', '10000000', '--', 'python3', '-c', SCRIPT], { timeoutMs: 120_000 });
    expect(done.json.verdict, done.stderr).toBe('completed');
    id = done.json.id;
  });
  // eslint-disable-next-line no-empty-pattern
  test.afterEach(async ({}, testInfo) => {
    await h?.onTestEnd(testInfo);
  });
  test.afterAll(async () => {
    test.setTimeout(60_000);
    await h?.close();
  });

  test(`a link to line ${LINKED.toLocaleString('en-US')} of 9.5 MB: that page first, at its number, whole lines, nothing moving while the rest comes`, async () => {
    const { page } = h;
    // What the page had received when the linked line first showed, recorded in the page as it happens.
    await page.addInitScript(() => {
      const look = () => {
        const row = document.querySelector('[data-testid="output-line"][data-linked="true"]');
        if (!row) return;
        const apiBytes = performance.getEntriesByType('resource').filter((e) => e.name.includes('/api/v1/')).reduce((n, e) => n + (e as PerformanceResourceTiming).encodedBodySize, 0);
        (window as unknown as { __linkedSeen: unknown }).__linkedSeen = { at: performance.now(), apiBytes, pending: document.querySelectorAll('[data-testid="output-line-pending"]').length, rows: document.querySelectorAll('[data-testid="output-line"]').length };
        observer.disconnect();
      };
      const observer = new MutationObserver(look);
      document.addEventListener('DOMContentLoaded', () => observer.observe(document.body, { childList: true, subtree: true, attributes: true, attributeFilter: ['data-linked'] }));
    });
    // A fresh page on the link (a new document, not a hash change of this one): nothing of the run held yet.
    await page.goto('about:blank');
    await page.goto(`${h.url()}/#/runs/${id}/output/L${LINKED}`);
    const linked = page.locator(`${tid('output-line')}[data-linked="true"]`);
    await visible(linked, 60_000);
    const first = await pageState(page);
    const seen = (await page.evaluate(() => (window as unknown as { __linkedSeen?: { at: number; apiBytes: number; pending: number; rows: number } }).__linkedSeen)) ?? null;
    const at = first.rows.find((r) => r.line === LINKED);
    expect(at, JSON.stringify(first.rows.slice(0, 3))).toBeDefined();
    expect(LINE.exec(at!.text)?.[1]).toBe(String(LINKED));
    expect(seen, 'the page saw the linked line appear').not.toBeNull();
    console.log(`e2e/deep-link-line: ${(seen!.apiBytes / 1e6).toFixed(2)} MB of API answers when line ${LINKED} first showed (of about 9.7 MB whole), ${seen!.pending} pending rows around it`);
    // The page holding the line came with the first ones, not after the 9 MB before it.
    expect(seen!.apiBytes).toBeLessThan(2_000_000);
    // Every row shown is a whole line, numbered as its own text says.
    for (const row of first.rows) {
      const m = LINE.exec(row.text);
      expect(m, `row ${row.line}: ${JSON.stringify(row.text)}`).not.toBeNull();
      expect(Number(m![1])).toBe(row.line);
    }
    await h.screenshot(page, 'linked-line');

    // The rest arrives: the linked line stays where it was on screen.
    await waitFor('the whole output in', async () => !(await pageState(page)).loading, 90_000);
    await waitForAttr(page.locator(tid('output-view')), 'data-lines', String(LINES));
    const after = await pageState(page);
    const still = after.rows.find((r) => r.line === LINKED);
    expect(still).toBeDefined();
    expect(Math.abs(still!.top - at!.top)).toBeLessThanOrEqual(1);
    for (const row of after.rows) expect(Number(LINE.exec(row.text)?.[1])).toBe(row.line);
    expect(await page.locator(tid('output-line-pending')).count()).toBe(0);
  });
});
