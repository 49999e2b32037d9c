// Login to the first Runs row (issue 19, bench (l) part 6): what the page
// waits on between the one-time link and its first row. The API answers the
// Runs view needs are asked for as soon as the page arrives (preloads named by
// the page's Link header), not after the app's script has downloaded and run,
// and the app's own requests are served from them; the first script holds the
// Runs view, not the run detail's log and charts (loaded when a run opens);
// the app's first frame already has the rows (it waits, briefly, for the list).
// Orders and sizes, read from the page's Resource Timing: no durations.

import { expect, test } from '@playwright/test';
import { SETUP_TIMEOUT_MS, SPEC_TIMEOUT_MS, skipReason, startHarness, tid, visible, waitFor, type Harness } from './harness';

const skip = skipReason('login-fast');

interface Loaded {
  path: string;
  initiator: string;
  startMs: number;
  endMs: number;
  bytes: number;
}

test.describe('Login to the first Runs row', () => {
  test.describe.configure({ mode: 'serial', timeout: SPEC_TIMEOUT_MS });
  test.skip(skip !== null, skip ?? '');
  let h: Harness;
  test.beforeAll(async ({ browser }) => {
    test.setTimeout(SETUP_TIMEOUT_MS);
    h = await startHarness('login-fast', browser);
  });
  // eslint-disable-next-line no-empty-pattern
  test.afterEach(async ({}, testInfo) => {
    await h?.onTestEnd(testInfo);
  });
  test.afterAll(async () => {
    test.setTimeout(60_000);
    await h?.close();
  });

  /** A fresh one-time login link from the running host, as a person at the terminal gets it. */
  async function loginLink(): Promise<string> {
    const reply = await h.cli(['serve', '--open']);
    const link = /^(http:\/\/127\.0\.0\.1:\d+\/login\?token=\S+)$/m.exec(reply.stdout)?.[1];
    expect(link, `warden serve --open: ${reply.stderr}`).toBeTruthy();
    return link!;
  }

  test('the runs are asked for with the page, before the app script has arrived, and the app uses that answer', async () => {
    const done = await h.cliJson(['run', '--json', '--', 'bash', '-c', 'echo login-fast']);
    expect(done.json.verdict, done.stderr).toBe('completed');
    const context = await h.browser.newContext({ viewport: { width: 1280, height: 860 } });
    // The list's rows (the monitor is the default at this width; monitor.spec.ts reads it).
    await context.addInitScript(() => localStorage.getItem('warden.runsLayout') ?? localStorage.setItem('warden.runsLayout', 'list'));
    try {
      const page = await context.newPage();
      // What the host is asked for, in order, until the event stream answers (the store asks for the list
      // again once the stream is open, so a run that changed between the two comes from that answer).
      const asked: string[] = [];
      let streamOpen = false;
      page.on('request', (request) => {
        const url = new URL(request.url());
        if (!streamOpen && url.pathname.startsWith('/api/')) asked.push(`${url.pathname}${url.search}`);
      });
      page.on('response', (response) => {
        if (new URL(response.url()).pathname === '/api/v1/events') streamOpen = true;
      });
      await page.goto(await loginLink());
      await visible(page.locator(tid('run-row')));
      await h.screenshot(page, 'first-row');
      const loaded = await page.evaluate(() =>
        performance.getEntriesByType('resource').map((e) => {
          const r = e as PerformanceResourceTiming;
          const url = new URL(r.name);
          return { path: `${url.pathname}${url.search}`, initiator: r.initiatorType, startMs: r.startTime, endMs: r.responseEnd, bytes: r.encodedBodySize };
        }),
      );
      const entry = await page.evaluate(() => (document.querySelector('script[type="module"][src]') as HTMLScriptElement).src);
      const script = loaded.find((r) => entry.endsWith(r.path));
      expect(script, `the entry script ${entry} among ${loaded.map((r) => r.path).join(', ')}`).toBeTruthy();
      const list = loaded.filter((r) => r.path === '/api/v1/runs?output=none&hosts=all');
      const history = loaded.filter((r) => r.path.startsWith('/api/v1/history?'));
      expect(list.length, loaded.map((r) => `${r.initiator} ${r.path}`).join('\n')).toBeGreaterThan(0);
      expect(history.length).toBeGreaterThan(0);
      // Asked for by the page itself (the Link header's preload), while the app's script was still on its way.
      expect(list[0]!.initiator).toBe('link');
      expect(history[0]!.initiator).toBe('link');
      expect(list[0]!.startMs).toBeLessThan(script!.endMs);
      expect(history[0]!.startMs).toBeLessThan(script!.endMs);
      // The app's own first ask was served from the preload: the list went to the host once before the stream opened.
      await waitFor('the event stream to answer', () => streamOpen);
      expect(asked.filter((path) => path === '/api/v1/runs?output=none&hosts=all'), asked.join('\n')).toHaveLength(1);
      expect(asked.filter((path) => path.startsWith('/api/v1/history?')), asked.join('\n')).toHaveLength(1);
    } finally {
      await context.close();
    }
  });

  test('the first script holds the Runs view; a run’s detail is loaded when it opens, and works', async () => {
    const done = await h.cliJson(['run', '--json', '--', 'bash', '-c', 'for i in 1 2 3; do echo detail-line-$i; done']);
    expect(done.json.verdict, done.stderr).toBe('completed');
    const context = await h.browser.newContext({ viewport: { width: 1280, height: 860 } });
    // The list's rows (the monitor is the default at this width; monitor.spec.ts reads it).
    await context.addInitScript(() => localStorage.getItem('warden.runsLayout') ?? localStorage.setItem('warden.runsLayout', 'list'));
    try {
      const page = await context.newPage();
      // When the first row entered the page: the views' scripts are fetched in the background after it.
      await page.addInitScript(() => {
        const observer = new MutationObserver(() => {
          if (!document.querySelector('[data-testid="run-row"]')) return;
          (window as unknown as { firstRowAt: number }).firstRowAt = performance.now();
          observer.disconnect();
        });
        observer.observe(document, { childList: true, subtree: true });
      });
      await page.goto(await loginLink());
      await visible(page.locator(tid('run-row')));
      const firstRowAt = await page.evaluate(() => (window as unknown as { firstRowAt: number }).firstRowAt);
      const scripts = async (): Promise<Loaded[]> =>
        page.evaluate(() =>
          performance
            .getEntriesByType('resource')
            .map((e) => e as PerformanceResourceTiming)
            .filter((r) => new URL(r.name).pathname.endsWith('.js'))
            .map((r) => ({ path: new URL(r.name).pathname, initiator: r.initiatorType, startMs: r.startTime, endMs: r.responseEnd, bytes: r.encodedBodySize })),
        );
      const atFirstRow = (await scripts()).filter((r) => r.startMs < firstRowAt);
      const firstBytes = atFirstRow.reduce((sum, r) => sum + r.bytes, 0);
      // Was 1,078,656 bytes, all views in one script; React alone is ~180 KB minified.
      expect(firstBytes, atFirstRow.map((r) => `${r.path} ${r.bytes}`).join('\n')).toBeLessThan(400_000);
      expect(atFirstRow.some((r) => /RunDetail/.test(r.path)), 'the run detail was loaded before the first row').toBe(false);

      await page.locator(tid('run-row')).first().click();
      await visible(page.locator(tid('run-detail')));
      await waitFor('the run’s output', async () => (await page.locator('body').innerText()).includes('detail-line-3'));
      expect((await scripts()).some((r) => /RunDetail/.test(r.path))).toBe(true);
      await h.screenshot(page, 'detail-after-login');
    } finally {
      await context.close();
    }
  });

  test('the first frame of the app draws the Runs rows: no empty view first, no second render to wait for', async () => {
    const done = await h.cliJson(['run', '--json', '--', 'bash', '-c', 'echo first-frame']);
    expect(done.json.verdict, done.stderr).toBe('completed');
    const context = await h.browser.newContext({ viewport: { width: 1280, height: 860 } });
    // The list's rows (the monitor is the default at this width; monitor.spec.ts reads it).
    await context.addInitScript(() => localStorage.getItem('warden.runsLayout') ?? localStorage.setItem('warden.runsLayout', 'list'));
    try {
      const page = await context.newPage();
      // At the first mutation that shows the app's navigation: were the rows there too?
      await page.addInitScript(() => {
        const observer = new MutationObserver(() => {
          if (!document.querySelector('[data-testid="nav-runs"]')) return;
          (window as unknown as { rowsInFirstFrame: number }).rowsInFirstFrame = document.querySelectorAll('[data-testid="run-row"]').length;
          observer.disconnect();
        });
        observer.observe(document, { childList: true, subtree: true });
      });
      await page.goto(await loginLink());
      await visible(page.locator(tid('run-row')));
      const rows = await page.evaluate(() => (window as unknown as { rowsInFirstFrame?: number }).rowsInFirstFrame);
      expect(rows).toBeGreaterThan(0);
    } finally {
      await context.close();
    }
  });
});
