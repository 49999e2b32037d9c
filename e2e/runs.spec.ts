// The Runs view and History in web mode: a run from the New run form, a run
// from another process appearing live, and History after a host restart.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { SETUP_TIMEOUT_MS, SPEC_TIMEOUT_MS, WAIT_MS, choose, route, skipReason, sleep, startHarness, tag, tid, visible, waitFor, waitForAttr, waitForRunRoute, waitForText, type Harness } from './harness';

const skip = skipReason('runs');

test.describe('Runs and History (web mode)', () => {
  // One host and one browser page for the file, its tests in order (they share the page).
  test.describe.configure({ mode: 'serial', timeout: SPEC_TIMEOUT_MS });
  test.skip(skip !== null, skip ?? '');
  let h: Harness;
  test.beforeAll(async ({ browser }) => {
    test.setTimeout(SETUP_TIMEOUT_MS);
    h = await startHarness('runs', browser);
  });
  // Playwright Test reads the fixtures a hook takes from its first parameter: none here.
  // eslint-disable-next-line no-empty-pattern
  test.afterEach(async ({}, testInfo) => {
    await h?.onTestEnd(testInfo);
  });
  test.afterAll(async () => {
    test.setTimeout(60_000);
    await h?.close();
  });

  test('a run started from the New run form moves its bar and ends completed', async () => {
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

  test('a run started by the CLI in another process appears live without a reload', async () => {
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

  test('runs for all day: live runs pinned above 60 ended ones, ended runs paged, sortable, relative times, readable at 900 px, and quiet live rows cost no layout per frame', async () => {
    const { page } = h;
    const token = readFileSync(join(h.stateDir, 'run', 'token'), 'utf8').trim();
    const api = (path: string, body?: unknown) =>
      fetch(`${h.url()}${path}`, { method: body ? 'POST' : 'GET', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
    // Sixty short runs, then one that stays live: the newest ended runs must not bury it.
    for (let batch = 0; batch < 6; batch++) {
      const replies = await Promise.all(Array.from({ length: 10 }, (_, i) => api('/api/v1/runs', { argv: ['bash', '-c', `sleep 0.0${i}`] })));
      expect(replies.every((r) => r.status === 201)).toBe(true);
    }
    await waitFor('the sixty runs to end', async () => {
      const list = (await (await api('/api/v1/runs')).json()) as { state: string }[];
      return list.filter((r) => r.state === 'ended').length >= 60;
    });
    const live = (await (await api('/api/v1/runs', { argv: ['sleep', '60'], limitMs: 120_000 })).json()) as { id: string };
    // Four more quiet live runs, for five in all.
    const quiet = await Promise.all(Array.from({ length: 4 }, () => api('/api/v1/runs', { argv: ['sleep', '60'], limitMs: 120_000 }).then((r) => r.json() as Promise<{ id: string }>)));

    await route(page, '#/runs');
    const liveSection = page.locator(tid('runs-section-live'));
    await visible(liveSection.locator(tid('run-row', { 'data-run-id': live.id })));
    const ended = page.locator(tid('runs-section-ended'));
    // Five live runs, nothing printing, the default order: no layout per frame (the bars move by transform).
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Performance.enable');
    const metric = async () => {
      const { metrics } = await cdp.send('Performance.getMetrics');
      const get = (name: string) => metrics.find((m) => m.name === name)?.value ?? 0;
      return { layouts: get('LayoutCount'), task: get('TaskDuration'), at: get('Timestamp') };
    };
    const before = await metric();
    await sleep(4000);
    const after = await metric();
    const seconds = after.at - before.at;
    const layoutsPerSecond = (after.layouts - before.layouts) / seconds;
    console.log(`e2e/runs: 5 live quiet runs: ${layoutsPerSecond.toFixed(1)} layouts/s, main thread busy ${(((after.task - before.task) / seconds) * 100).toFixed(1)}% of a core`);
    // A count, not a time: the rows' clocks share one timer that ticks once a
    // second (a layout for all five), plus the sparklines' samples; one clock
    // per row at 4 Hz laid the page out 5.6 times a second.
    expect(layoutsPerSecond).toBeLessThan(4);
    await cdp.detach();

    // The first page of ended runs, and more on request.
    await waitFor('a page of 50 ended runs', async () => (await ended.locator(tid('run-row')).count()) === 50);
    await page.locator(tid('runs-more')).click();
    await waitFor('more ended runs', async () => (await ended.locator(tid('run-row')).count()) > 50);
    // Relative start times, the absolute one on hover.
    const started = ended.locator(tid('run-started')).first();
    expect(await started.innerText()).toMatch(/just now|\d+ s ago|\d+ min ago/);
    expect(await started.getAttribute('title')).toMatch(/\d{4}/);

    // Sorted by duration, longest first, then the other way.
    await page.locator(tid('sort-duration')).click();
    const durations = async () => (await ended.locator(tid('run-duration')).allInnerTexts()).map((t) => parseFloat(t));
    await waitFor('ended runs longest first', async () => {
      const d = await durations();
      return d.length > 1 && d.every((v, i) => i === 0 || d[i - 1]! >= v);
    });
    await page.locator(tid('sort-duration')).click();
    await waitFor('ended runs shortest first', async () => {
      const d = await durations();
      return d.length > 1 && d.every((v, i) => i === 0 || d[i - 1]! <= v);
    });
    expect(await page.locator('[role="columnheader"][aria-sort="ascending"]').innerText()).toMatch(/Duration/i);
    // Live runs stay on top whatever the order.
    expect(await page.locator(tid('run-row')).first().getAttribute('data-state')).toBe('running');
    await h.screenshot(page, 'all-day');

    // At 900 px the command is readable and the meta line is whole.
    await page.setViewportSize({ width: 900, height: 860 });
    const row = liveSection.locator(tid('run-row', { 'data-run-id': live.id }));
    const command = row.locator('.runs-line');
    expect((await command.boundingBox())!.width).toBeGreaterThan(250);
    const meta = row.locator('.runs-meta');
    expect(await meta.evaluate((el) => el.scrollWidth <= el.clientWidth + 1)).toBe(true);
    await h.screenshot(page, 'all-day-900px');
    await page.setViewportSize({ width: 1280, height: 860 });

    for (const id of [live.id, ...quiet.map((q) => q.id)]) await api(`/api/v1/runs/${id}/stop`, {});
  });

  test('History: dates and relative times, counts per verdict for the filter, sorting, and no cut badges or signals', async () => {
    const { page } = h;
    const t = tag('hist');
    const made = await Promise.all([
      h.cliJson(['run', '--json', '--', 'bash', '-c', `exit 3; : ${t}`]),
      h.cliJson(['run', '--json', '--', 'bash', '-c', `kill -USR1 $$; : ${t}`]),
      h.cliJson(['run', '--json', '--', 'bash', '-c', `sleep 0.3; kill -SEGV $$; : ${t}`]),
      h.cliJson(['run', '--json', '--cwd', '/nonexistent-warden', '--', 'true', t]),
    ]);
    expect(made.map((m) => m.json.verdict)).toEqual(['failed', 'signaled', 'crashed', 'spawn-failed']);

    await page.locator(tid('nav-history')).click();
    await (await visible(page.locator(tid('history-search')))).fill(t);
    await waitFor('the four runs', async () => (await page.locator(tid('history-row')).count()) === 4);
    const counts = page.locator(tid('history-counts'));
    for (const verdict of ['failed', 'signaled', 'crashed', 'spawn-failed']) {
      await waitForText(counts.locator(tid('history-count', { 'data-verdict': verdict })), /\b1\b/);
    }
    // A verdict's chip filters by it; the counts stay those of the other filters.
    await counts.locator(tid('history-count', { 'data-verdict': 'crashed' })).click();
    await waitFor('only the crashed run', async () => (await page.locator(tid('history-row')).count()) === 1);
    expect(await page.locator(tid('history-row')).getAttribute('data-run-id')).toBe(made[2]!.json.id);
    await waitForText(counts.locator(tid('history-count', { 'data-verdict': 'failed' })), /\b1\b/);
    await counts.locator(tid('history-count', { 'data-verdict': 'crashed' })).click();
    await waitFor('the four runs again', async () => (await page.locator(tid('history-row')).count()) === 4);

    // Whole badges and signal names: nothing cut, no ellipsis.
    const cut = await page.locator(`${tid('history-row')} td.history-status, ${tid('history-row')} td.history-exit`).evaluateAll((cells) =>
      cells.filter((c) => c.scrollWidth > c.clientWidth + 1 || [...c.querySelectorAll('*')].some((e) => e.scrollWidth > e.clientWidth + 1)).map((c) => c.textContent),
    );
    expect(cut).toEqual([]);
    const exits = await page.locator(tid('history-exit-cell')).allInnerTexts();
    expect(exits).toEqual(expect.arrayContaining(['SIGUSR1', 'SIGSEGV', '3']));
    // A date and a relative time, the full instant on hover.
    const started = page.locator(tid('history-started')).first();
    expect(await started.innerText()).toMatch(/(just now|\d+ s ago)[\s\S]*\d\d:\d\d:\d\d/);
    expect(await started.getAttribute('title')).toMatch(/\d{4}/);

    // Sorted by the store: longest first, across pages.
    await page.locator(tid('history-sort-elapsed')).click();
    await waitFor('the crashed run (0.3 s) first', async () => (await page.locator(tid('history-row')).first().getAttribute('data-run-id')) === made[2]!.json.id);
    expect(await page.locator('th[aria-sort="descending"]').innerText()).toMatch(/Elapsed/i);
    await h.screenshot(page, 'history-counts');
    await page.locator(tid('history-sort-started')).click();
  });

  test('Settings: a value the host would refuse is marked on its field, and unsaved changes are not dropped without asking', async () => {
    const { page } = h;
    await page.locator(tid('nav-settings')).click();
    const bytesField = await visible(page.locator(tid('settings-retention-bytes')));
    await waitFor('the settings to load', async () => (await bytesField.inputValue()) !== '');
    await bytesField.fill('10K');
    const row = page.locator('.form-row', { has: bytesField });
    await waitForText(row.locator(tid('field-error')), 'at least 1M');
    expect(await page.locator(tid('settings-save')).isDisabled()).toBe(true);
    expect(await page.locator(tid('settings-error')).count()).toBe(0);
    await h.screenshot(page, 'settings-invalid');
    await bytesField.fill('1G');
    await page.locator(tid('settings-grace')).fill('3s');

    // Leaving asks; staying keeps the changes.
    page.once('dialog', (dialog) => void dialog.dismiss());
    await page.locator(tid('nav-runs')).click();
    await sleep(300);
    expect(await page.locator(tid('settings-form')).count()).toBe(1);
    expect(await page.locator(tid('settings-grace')).inputValue()).toBe('3s');
    // Leaving after all drops them.
    page.once('dialog', (dialog) => void dialog.accept());
    await page.locator(tid('nav-runs')).click();
    await page.locator(tid('settings-form')).waitFor({ state: 'detached', timeout: WAIT_MS });
    await page.locator(tid('nav-settings')).click();
    const grace = await visible(page.locator(tid('settings-grace')));
    await waitFor('the stored grace back', async () => (await grace.inputValue()) === '5s');
  });

  test('History search finds an old run after the host restarts', async () => {
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
