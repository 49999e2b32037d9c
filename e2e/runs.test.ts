// The Runs view and History in web mode: a run from the New run form, a run
// from another process appearing live, and History after a host restart.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SETUP_TIMEOUT_MS, SPEC_TIMEOUT_MS, choose, route, skipReason, startHarness, tag, tid, visible, waitFor, waitForAttr, waitForRunRoute, type Harness } from './harness';

const skip = skipReason('runs');

describe.skipIf(skip !== null)('Runs and History (web mode)', { timeout: SPEC_TIMEOUT_MS }, () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness('runs');
  }, SETUP_TIMEOUT_MS);
  afterAll(async () => {
    await h?.close();
  }, 60_000);

  it('a run started from the New run form moves its bar and ends completed', async () => {
    const { page } = h;
    await page.locator(tid('nav-new')).click();
    await visible(page.locator(tid('new-run-form')));
    if ((await page.locator(tid('new-run-kind')).count()) > 0) await choose(page.locator(tid('new-run-kind')), 'command');
    // The form splits words like a shell: three argv words. Four seconds, so the bar is read twice while it runs.
    await page.locator(tid('new-run-command')).fill('bash -c "sleep 4; echo done"');
    await page.locator(tid('new-run-limit')).fill('20s');
    await h.screenshot(page, 'new-run-form');
    await page.locator(tid('new-run-submit')).click();

    const { id, tab } = await waitForRunRoute(page);
    expect(tab).toBe('output');

    await page.locator(tid('nav-runs')).click();
    const row = page.locator(tid('run-row', { 'data-run-id': id }));
    await visible(row);
    const bar = row.locator(tid('run-bar'));
    expect(await bar.first().getAttribute('role')).toBe('progressbar');
    const first = Number(await waitForAttr(bar, 'aria-valuenow', (v) => v !== null && Number.isFinite(Number(v))));
    await waitForAttr(bar, 'aria-valuenow', (v) => v !== null && Number(v) > first);
    await h.screenshot(page, 'run-moving');

    await waitForAttr(row, 'data-verdict', 'completed');
    await waitForAttr(row, 'data-state', 'ended');
    await h.screenshot(page, 'run-completed');
  });

  it('a run started by the CLI in another process appears live without a reload', async () => {
    const { page } = h;
    await route(page, '#/runs');
    await visible(page.locator(tid('nav-runs')));
    const marker = await page.evaluate(() => {
      const w = window as unknown as { __wardenNoReload?: string };
      w.__wardenNoReload = Math.random().toString(36);
      return w.__wardenNoReload;
    });

    const started = await h.cliJson(['run', '--yield', '200ms', '--json', '--limit', '60s', '--', 'sleep', '30']);
    expect(started.code).toBe(75);
    const row = page.locator(tid('run-row', { 'data-run-id': started.json.id }));
    await visible(row);
    await waitForAttr(row, 'data-state', 'running');
    await h.screenshot(page, 'cli-run-live');
    // The same document: nothing reloaded the page to show it.
    expect(await page.evaluate(() => (window as unknown as { __wardenNoReload?: string }).__wardenNoReload)).toBe(marker);

    const stopped = await h.cli(['stop', started.json.id]);
    expect(stopped.code, stopped.stderr).not.toBe(125);
    await waitForAttr(row, 'data-state', 'ended');
  });

  it('History search finds an old run after the host restarts', async () => {
    const { page } = h;
    const needle = tag('needle');
    const done = await h.cliJson(['run', '--json', '--', 'echo', needle]);
    expect(done.code, done.stderr).toBe(0);
    expect(done.json.stdout).toContain(needle);

    await h.restartHost();

    await page.locator(tid('nav-history')).click();
    const search = await visible(page.locator(tid('history-search')));
    await search.fill('needle');
    const row = page.locator(tid('history-row', { 'data-run-id': done.json.id }));
    await visible(row);
    // The search filters: the other runs of this host (earlier specs) are not listed.
    await waitFor('only the needle run to be listed', async () => (await page.locator(tid('history-row')).count()) === 1);
    await h.screenshot(page, 'history-search');

    // A search for something else leaves it out.
    await search.fill(`${needle}-absent`);
    await waitFor('the row to leave the results', async () => (await row.count()) === 0);
  });
});
