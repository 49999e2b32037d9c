// A large run's output fetched in pages (issue 19, item 2): an ended run of
// 3,000,000 characters (60,000 numbered lines of 50; the engine keeps 2,000,000
// of them, head and tail) opens on its output tab with under 1 MB of API
// answers before its first line is painted; the rest comes while the view
// says how far it is. The last line is reachable and numbered 60,000; a link
// to a line in the last page lands on it; search finds what is only in the
// last page, and says "so far" until it has searched everything; the
// download is everything.

import { readFileSync } from 'node:fs';
import { expect, test, type Page } from '@playwright/test';
import { SETUP_TIMEOUT_MS, SPEC_TIMEOUT_MS, route, skipReason, startHarness, tid, visible, waitFor, waitForText, type Harness } from './harness';

const skip = skipReason('paging');

/** Line 59,990 alone holds this (in the last page of stdout); every line is 49 characters and a newline. */
const NEEDLE = 'needle-only-in-the-last-page';
const SCRIPT = [
  'import sys',
  'for i in range(1, 60001):',
  `    body = '${NEEDLE}' if i == 59990 else 'x' * 28`,
  "    print(f'{i:06d} {body}'.ljust(49, '.'))",
  "    if i % 15000 == 1: print(f'err at {i}', file=sys.stderr, flush=True)",
].join('\n');

test.describe('A large run output in pages', () => {
  test.describe.configure({ mode: 'serial', timeout: SPEC_TIMEOUT_MS });
  test.skip(skip !== null, skip ?? '');
  let h: Harness;
  let id = '';
  test.beforeAll(async ({ browser }) => {
    test.setTimeout(SETUP_TIMEOUT_MS);
    h = await startHarness('paging', browser);
    // Ended before the page below opens: the page learns of it from the list, without its output.
    const done = await h.cliJson(['run', '--json', '--', 'python3', '-c', SCRIPT]);
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

  /**
   * Watches the page from now on: when the first output-line is added, every
   * text output-matches and output-loading show, and (resource timing) the
   * API answers each with its size and when it ended.
   */
  async function watch(page: Page): Promise<void> {
    await page.evaluate(() => {
      const w = window as unknown as { seen: { firstLineAt: number | null; matches: string[]; loading: string[] } };
      w.seen = { firstLineAt: null, matches: [], loading: [] };
      performance.setResourceTimingBufferSize(100_000);
      performance.clearResourceTimings();
      const look = () => {
        if (w.seen.firstLineAt === null && document.querySelector('[data-testid="output-line"]')) w.seen.firstLineAt = performance.now();
        const matches = document.querySelector('[data-testid="output-matches"]')?.textContent ?? '';
        if (matches !== (w.seen.matches[w.seen.matches.length - 1] ?? '')) w.seen.matches.push(matches);
        const loading = document.querySelector('[data-testid="output-loading"]')?.textContent ?? '';
        if (loading !== '' && loading !== w.seen.loading[w.seen.loading.length - 1]) w.seen.loading.push(loading);
      };
      new MutationObserver(look).observe(document.body, { childList: true, subtree: true, characterData: true });
    });
  }

  async function seen(page: Page): Promise<{ firstLineAt: number | null; matches: string[]; loading: string[]; answers: { name: string; bytes: number; endedAt: number }[] }> {
    return page.evaluate(() => {
      const w = window as unknown as { seen: { firstLineAt: number | null; matches: string[]; loading: string[] } };
      const answers = (performance.getEntriesByType('resource') as PerformanceResourceTiming[])
        .filter((e) => new URL(e.name).pathname.startsWith('/api/') && !new URL(e.name).pathname.startsWith('/api/v1/events'))
        .map((e) => ({ name: new URL(e.name).pathname + new URL(e.name).search, bytes: e.decodedBodySize, endedAt: e.responseEnd }));
      return { ...w.seen, answers };
    });
  }

  const lineTexts = (page: Page) => page.locator(tid('output-line')).allInnerTexts();

  test('opening its output fetches under 1 MB before the first line shows, then the rest; the last line is number 60,000', async () => {
    const { page } = h;
    await page.goto(`${h.url()}/`);
    const row = page.locator(tid('run-row', { 'data-run-id': id }));
    await visible(row);
    await page.waitForLoadState('networkidle');
    await watch(page);
    await route(page, `#/runs/${id}/output`);
    await visible(page.locator(tid('output-line')).first());
    // Everything in: the loading line goes.
    await waitFor('every page', async () => (await page.locator(tid('output-loading')).count()) === 0 && (await lineTexts(page)).some((t) => t.includes('060000 ')));
    const s = await seen(page);
    expect(s.firstLineAt).not.toBeNull();
    const before = s.answers.filter((a) => a.endedAt <= s.firstLineAt!);
    const bytesBefore = before.reduce((sum, a) => sum + a.bytes, 0);
    const all = s.answers.reduce((sum, a) => sum + a.bytes, 0);
    console.log(`e2e/paging: ${bytesBefore.toLocaleString('en-US')} bytes of API answers before the first output-line (${before.map((a) => `${a.name} ${a.bytes}`).join(', ')}); ${all.toLocaleString('en-US')} in all, in ${s.answers.length} answers`);
    expect(bytesBefore).toBeLessThan(1_000_000);
    // The rest came in pages, never the run whole.
    expect(s.answers.filter((a) => a.name.includes('/output?')).length).toBeGreaterThan(3);
    expect(s.answers.every((a) => a.bytes < 400_000), s.answers.map((a) => `${a.name} ${a.bytes}`).join('\n')).toBe(true);
    expect(s.answers.some((a) => a.name === `/api/v1/runs/${id}?output=none`)).toBe(true);
    // The view said how far it was while the pages came.
    expect(s.loading.length, JSON.stringify(s.loading)).toBeGreaterThan(0);
    expect(s.loading[0]).toMatch(/^loading 0\.\d MB of 2\.0 MB$/);

    // Merged (the default view), at the end: the last line, and the stderr lines each where they were written.
    const texts = await lineTexts(page);
    expect(texts[texts.length - 1]).toContain('060000 xxxx');
    // stdout alone: the last line is numbered 60,000 (counted past the engine's cut).
    await page.locator(tid('output-stream-stdout')).click();
    const last = page.locator(tid('output-line')).filter({ hasText: '060000 ' });
    await visible(last);
    expect(await last.locator(tid('output-line-link')).innerText()).toBe('60000');
    await h.screenshot(page, 'last-line');
  });

  test('a link to a line in the last page lands on it, opened in a fresh page', async () => {
    const { page } = h;
    // Its row, as the whole output has it: from the page that has it all.
    await page.locator(tid('output-stream-stdout')).click();
    await page.locator(tid('output-search')).fill(NEEDLE);
    await waitForText(page.locator(tid('output-matches')), /^1 \/ 1$/);
    const hit = page.locator(tid('output-line')).filter({ hasText: NEEDLE });
    await visible(hit);
    const href = (await hit.locator(tid('output-line-link')).getAttribute('href'))!;
    expect(href).toMatch(new RegExp(`^#/runs/${id}/output/stdout:L\\d+$`));
    const row = Number(/L(\d+)$/.exec(href)![1]);
    // Past the first page of stdout (262,144 characters: 5,243 lines of 50).
    expect(row).toBeGreaterThan(30_000);

    const fresh = await page.context().newPage();
    try {
      await fresh.goto(`${h.url()}/${href}`);
      const linked = fresh.locator(tid('output-line', { 'data-linked': 'true' }));
      await visible(linked);
      expect(await linked.getAttribute('data-line')).toBe(String(row));
      expect(await linked.innerText()).toContain(`059990 ${NEEDLE}`);
      // Numbered from the stream's end (past the engine's cut) once every page is in.
      await waitForText(linked.locator(tid('output-line-link')), /^59990$/);
      await h.screenshot(fresh, 'linked-line');
    } finally {
      await fresh.close();
    }
  });

  test('search finds what is only in the last page, saying "so far" until all is searched; the download is everything', async () => {
    const { page } = h;
    // A fresh page: the run's output comes in pages again while the search is typed.
    await page.goto(`${h.url()}/`);
    await visible(page.locator(tid('run-row', { 'data-run-id': id })));
    await watch(page);
    await route(page, `#/runs/${id}/output`);
    await visible(page.locator(tid('output-line')).first());
    await page.locator(tid('output-search')).fill(NEEDLE);
    await waitForText(page.locator(tid('output-matches')), /^1 \/ 1$/);
    await visible(page.locator(tid('output-line')).filter({ hasText: NEEDLE }));
    const s = await seen(page);
    // Never "no matches" while pages were still to come: only "... so far".
    expect(s.matches.filter((t) => t !== '' && !t.endsWith('so far') && !/^[1–] \/ 1$/.test(t)), JSON.stringify(s.matches)).toEqual([]);

    // The download: every kept line, merged, from 000001 to 060000 with the engine's cut between.
    await waitFor('every page', async () => (await page.locator(tid('output-loading')).count()) === 0);
    const [file] = await Promise.all([page.waitForEvent('download'), page.locator(tid('output-download')).click()]);
    const text = readFileSync((await file.path())!, 'utf8');
    const lines = text.split('\n');
    // stdout's lines, apart: where stderr's lines fall between them is the order they arrived in
    // (Python buffers stdout to a pipe, so "err at 1" may well come first).
    const numbered = lines.filter((l) => /^\d{6} /.test(l));
    expect(numbered[0]).toMatch(/^000001 x+\.*$/);
    expect(numbered[numbered.length - 1]).toMatch(/^060000 x+\.*$/);
    expect(text).toContain(`059990 ${NEEDLE}`);
    expect(text).toMatch(/\[warden: [\d,]+ characters dropped here\]/);
    expect(lines.filter((l) => l.startsWith('err at ')).length).toBeGreaterThan(0);
    // Kept whole: every line after the cut to the end, in order.
    const tail = lines.filter((l) => /^\d{6} /.test(l)).map((l) => Number(l.slice(0, 6)));
    const afterCut = tail.slice(tail.findIndex((n, i) => i > 0 && n !== tail[i - 1]! + 1));
    expect(afterCut[afterCut.length - 1]).toBe(60_000);
    expect(afterCut.every((n, i) => i === 0 || n === afterCut[i - 1]! + 1)).toBe(true);
    await h.screenshot(page, 'search-last-page');
  });
});
