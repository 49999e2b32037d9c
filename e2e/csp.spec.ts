// The page under its Content-Security-Policy (src/shared/csp.ts, the same one
// the app:// handler sends in Electron), in Chromium: no inline script or
// style is allowed, and every view, with the runs that exercise its inline
// styles (ANSI colours, the elapsed bar, virtualised output, uPlot charts, the
// Python script), renders without one violation, and so does the login page
// (its one <style> block allowed by its hash). A style attribute and an
// inline script written into the page on purpose are refused and recorded, by
// the header's policy and by index.html's meta tag each, so the count can fail.

import { expect, test } from '@playwright/test';
import { SETUP_TIMEOUT_MS, SPEC_TIMEOUT_MS, route, skipReason, startHarness, tid, visible, waitFor, type Harness } from './harness';

const skip = skipReason('csp');

interface Violation {
  directive: string;
  blocked: string;
  sample: string;
  policy: string;
}

declare global {
  interface Window {
    __cspViolations?: Violation[];
  }
}

test.describe('the Content-Security-Policy (web mode)', () => {
  test.describe.configure({ mode: 'serial', timeout: SPEC_TIMEOUT_MS });
  test.skip(skip !== null, skip ?? '');
  let h: Harness;
  const violations = async () => h.page.evaluate(() => window.__cspViolations ?? []);
  /** Two frames: what a route or a click changed has rendered. */
  const settle = () => h.page.evaluate(() => new Promise<void>((r) => requestAnimationFrame(() => requestAnimationFrame(() => r()))));

  test.beforeAll(async ({ browser }) => {
    test.setTimeout(SETUP_TIMEOUT_MS);
    h = await startHarness('csp', browser);
    // Recorded in the page from its first script on, reloads included.
    await h.page.context().addInitScript(() => {
      window.__cspViolations = [];
      document.addEventListener('securitypolicyviolation', (event) => {
        window.__cspViolations!.push({ directive: event.effectiveDirective, blocked: event.blockedURI, sample: event.sample, policy: event.originalPolicy });
      });
    });
    await h.page.reload();
    await visible(h.page.locator(tid('nav-runs')));
  });
  // eslint-disable-next-line no-empty-pattern
  test.afterEach(async ({}, testInfo) => {
    await h?.onTestEnd(testInfo);
  });
  test.afterAll(async () => {
    test.setTimeout(60_000);
    await h?.close();
  });

  test('the page is served with the strict policy: no unsafe-inline, no unsafe-eval', async () => {
    const response = await h.page.request.get(`${h.url()}/`);
    const csp = response.headers()['content-security-policy'] ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/);
  });

  test('every view renders without a violation', async () => {
    const { page } = h;
    // Colours (inline colour styles), several lines (virtualised rows), a failure (the Summary), a few seconds of process tree (the charts).
    const failed = await h.cliJson(['run', '--json', '--limit', '30s', '--', 'bash', '-c', 'for i in 1 2 3 4; do printf "\\e[31mred %s\\e[0m \\e[38;5;45mcolour\\e[0m \\e[1;4mbold\\e[0m\\n" $i; sleep 0.7; done; echo oops >&2; exit 3']);
    expect(failed.json.verdict).toBe('failed');
    const python = await h.cliJson(['run', '--json', '--python', '-c', 'for i in range(3):\n    print("line", i)']);
    expect(python.json.verdict).toBe('completed');
    const live = await h.cliJson(['run', '--json', '--yield', '300ms', '--limit', '60s', '--', 'sleep', '30']);

    for (const hash of ['#/runs', '#/history', '#/sessions', '#/new', '#/settings']) {
      await route(page, hash);
      await settle();
    }
    for (const tab of ['summary', 'output', 'tree', 'verdict', 'timeline']) {
      await route(page, `#/runs/${failed.json.id}/${tab}`);
      await visible(page.locator(tid('run-detail')));
      await settle();
    }
    // React's style={…} props went in through the CSSOM and apply: the 256-colour ANSI spans (inline colours) are painted as set.
    await route(page, `#/runs/${failed.json.id}/output`);
    const painted = await waitFor('coloured output', () =>
      page.evaluate(() => {
        const spans = [...document.querySelectorAll<HTMLElement>('[data-testid="run-detail"] span[style]')].filter((el) => el.style.color);
        // Chromium reads a set colour back as rgb(…), the form getComputedStyle gives: equal when it applied.
        const applied = spans.filter((el) => getComputedStyle(el).color === el.style.color);
        return spans.length > 0 ? { styled: spans.length, applied: applied.length } : false;
      }),
    );
    expect(painted.applied).toBe(painted.styled);
    // The charts drew (uPlot styles its canvas and legend through the CSSOM).
    await route(page, `#/runs/${failed.json.id}/tree`);
    await waitFor('the telemetry charts', async () => (await page.locator('.uplot').count()) > 0);
    for (const tab of ['script', 'output']) {
      await route(page, `#/runs/${python.json.id}/${tab}`);
      await visible(page.locator(tid('run-detail')));
      await settle();
    }
    // A live run: its elapsed bar (a width style) and live charts.
    await route(page, `#/runs/${live.json.id}/output`);
    await visible(page.locator(tid('run-detail')));
    await route(page, '#/runs');
    await waitFor('the live run in the list', async () => (await page.locator('.runs-bar-fill').count()) > 0);
    await settle();
    await h.cli(['stop', live.json.id]);

    expect(await violations()).toEqual([]);
    expect(h.pageErrors.filter((e) => /Content Security Policy/i.test(e))).toEqual([]);
  });

  test('the login page (a browser without a session) is styled under its policy, without a violation', async () => {
    const context = await h.browser.newContext();
    try {
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('console', (message) => void (message.type() === 'error' && errors.push(message.text())));
      const reply = await page.goto(`${h.url()}/`);
      expect(reply?.status()).toBe(401);
      expect(reply?.headers()['content-security-policy']).not.toContain('unsafe-inline');
      await visible(page.locator(tid('login-page')));
      // Its one <style> block applied: the card is centred in a grid.
      expect(await page.evaluate(() => getComputedStyle(document.body).display)).toBe('grid');
      expect(errors.filter((e) => /Content Security Policy/i.test(e))).toEqual([]);
    } finally {
      await context.close();
    }
  });

  test('a style attribute or an inline script written into the page is refused, by the header and by the meta tag', async () => {
    const before = (await violations()).length;
    const applied = await h.page.evaluate(() => {
      const probe = document.createElement('div');
      probe.innerHTML = '<span style="color: rgb(255, 0, 0)">x</span>';
      document.body.appendChild(probe);
      const colour = getComputedStyle(probe.firstElementChild!).color;
      const script = document.createElement('script');
      script.textContent = 'window.__inlineRan = true';
      document.body.appendChild(script);
      probe.remove();
      script.remove();
      return { colour, ran: (window as { __inlineRan?: boolean }).__inlineRan === true };
    });
    expect(applied.colour).not.toBe('rgb(255, 0, 0)');
    expect(applied.ran).toBe(false);
    // Each of the two policies in force reports each violation: the header's (it alone has frame-ancestors) and the meta tag's.
    const added = await waitFor('the four violations', async () => {
      const now = await violations();
      return now.length - before >= 4 ? now.slice(before) : false;
    });
    const seen = added.map((v) => `${v.directive} ${v.policy.includes('frame-ancestors') ? 'header' : 'meta'}`).sort();
    expect(seen).toEqual(['script-src-elem header', 'script-src-elem meta', 'style-src-attr header', 'style-src-attr meta']);
  });
});
