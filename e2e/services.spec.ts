// Services in the web UI (issue 26, items 3 and 6): a dev server started
// with --ready shows "Ready" and a link to its port (it answers HTTP) in the
// run's header, and the link is its page; a run started with --stdin-pipe
// gets a one-line input whose answer reaches the process's stdin and lands
// on the run's timeline.

import { expect, test } from '@playwright/test';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { ROOT, SETUP_TIMEOUT_MS, SPEC_TIMEOUT_MS, route, skipReason, startHarness, tid, visible, waitFor, waitForText, type Harness } from './harness';

const skip = skipReason('services');
const FIXTURES = join(ROOT, 'test/fixtures/services');

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

test.describe('Services', () => {
  test.describe.configure({ mode: 'serial', timeout: SPEC_TIMEOUT_MS });
  test.skip(skip !== null, skip ?? '');
  let h: Harness;
  test.beforeAll(async ({ browser }) => {
    test.setTimeout(SETUP_TIMEOUT_MS);
    h = await startHarness('services', browser);
  });
  // eslint-disable-next-line no-empty-pattern
  test.afterEach(async ({}, testInfo) => {
    await h?.onTestEnd(testInfo);
  });
  test.afterAll(async () => {
    test.setTimeout(60_000);
    await h?.close();
  });

  test('a ready dev server shows Ready and a link to its page', async () => {
    const { page } = h;
    const port = await freePort();
    const started = await h.cliJson(['run', '--ready', 'port', '--json', '--', process.execPath, join(FIXTURES, 'dev-server.mjs'), '--port', String(port)]);
    expect(started.json.state, started.stderr).toBe('running');
    await page.goto(`${h.url()}/`);
    await route(page, `#/runs/${started.json.id}/output`);
    const bar = await visible(page.locator(tid('service-bar')));
    await waitForText(bar.locator(tid('service-ready')), /^Ready after /);
    const link = await visible(bar.locator(tid('service-port-link')));
    expect(await link.getAttribute('href')).toBe(`http://localhost:${port}/`);
    expect(await link.getAttribute('target')).toBe('_blank');
    const opened = await h.page.context().newPage();
    try {
      await opened.goto((await link.getAttribute('href'))!);
      await expect(opened.locator('h1')).toHaveText(`hello from the dev server on ${port}`);
    } finally {
      await opened.close();
    }
    await h.screenshot(page, 'service-ready');
    await h.cli(['stop', started.json.id]);
    await waitFor('the bar drops its ports once it ended', async () => (await bar.locator(tid('service-port-link')).count()) === 0);
  });

  test('a run with a stdin pipe takes a line of input from the page', async () => {
    const { page } = h;
    const started = await h.cliJson(['run', '--stdin-pipe', '--yield', '0s', '--json', '--', process.execPath, join(FIXTURES, 'ask.mjs')]);
    await route(page, `#/runs/${started.json.id}/output`);
    const input = await visible(page.locator(tid('service-input-text')));
    await input.fill('y');
    await page.locator(tid('service-input-send')).click();
    await waitFor('the run completed', async () => (await page.locator(tid('run-detail')).getAttribute('data-verdict')) === 'completed');
    const shown = await h.cliJson<{ stdout: string }>(['show', started.json.id, '--json']);
    expect(shown.json.stdout).toContain('You said: y');
    await route(page, `#/runs/${started.json.id}/timeline`);
    await waitForText(page.locator('[data-testid="run-detail"]'), /Input sent/);
    await expect(page.locator(tid('service-input'))).toHaveCount(0);
  });
});
