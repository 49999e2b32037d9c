// The monitor (issue 29, item 1): at 1,280 px Runs opens as the list beside
// the selected run (the list alone below 1,200 px, and either by choice);
// runs grouped by who started them (an agent's label and pid), each group
// with its live count and failures, collapsible; current CPU and memory in
// the rows; the keyboard as htop's (j/k, Enter, s, l, t, /); the tab kept as
// the selection moves; follow newest; a group's live runs merged in one tail,
// each line tagged with its run; the tree sorted by CPU or RSS.

import { spawn, type ChildProcess } from 'node:child_process';
import { expect, test } from '@playwright/test';
import { SETUP_TIMEOUT_MS, SPEC_TIMEOUT_MS, route, skipReason, startHarness, tid, visible, waitFor, waitForAttr, waitForText, type Harness } from './harness';

const skip = skipReason('monitor');

/** A run printing "NAME N" every 200 ms for a minute. */
const ticker = (name: string) => ['bash', '-c', `for i in $(seq 1 300); do echo "${name} $i"; sleep 0.2; done`];

test.describe('The monitor', () => {
  test.describe.configure({ mode: 'serial', timeout: SPEC_TIMEOUT_MS });
  test.skip(skip !== null, skip ?? '');
  let h: Harness;
  /** The "agent": a process the runs below are owned by, as an agent's warden mcp owns its runs. */
  let agent: ChildProcess;
  const ids: Record<string, string> = {};
  test.beforeAll(async ({ browser }) => {
    test.setTimeout(SETUP_TIMEOUT_MS);
    h = await startHarness('monitor', browser, { layout: 'auto' });
    agent = spawn('sleep', ['600'], { stdio: 'ignore' });
    const owned = (args: string[]) => h.cliJson(['run', '--yield', '0s', '--json', '--owner-pid', String(agent.pid), '--limit', '2m', '--', ...args]);
    ids.alpha = (await owned(ticker('alpha'))).json.id;
    ids.beta = (await owned(ticker('beta'))).json.id;
    const failed = await h.cliJson(['run', '--json', '--owner-pid', String(agent.pid), '--', 'bash', '-c', 'echo broken >&2; exit 3']);
    ids.failed = failed.json.id;
    // A run from this test's own process (a terminal's): another group.
    ids.other = (await h.cliJson(['run', '--json', '--', 'bash', '-c', 'echo other'])).json.id;
  });
  // eslint-disable-next-line no-empty-pattern
  test.afterEach(async ({}, testInfo) => {
    await h?.onTestEnd(testInfo);
  });
  test.afterAll(async () => {
    test.setTimeout(60_000);
    agent?.kill('SIGKILL');
    await h?.close();
  });

  test('at 1,280 px Runs is the monitor: groups by who started them, live counts and failures, CPU and memory now', async () => {
    const { page } = h;
    await route(page, '#/runs');
    await visible(page.locator(tid('monitor')));
    const group = page.locator(tid('monitor-group')).filter({ hasText: 'sleep' });
    await waitForText(group, `pid ${agent.pid}`);
    await waitForAttr(group, 'data-live', '2');
    expect(await group.getAttribute('data-failed')).toBe('1');
    await waitForText(group.locator(tid('monitor-group-failed')), '1 failed');
    expect(await page.locator(tid('monitor-group')).count()).toBe(2);
    // Current CPU and memory of the live rows, read from their latest sample.
    const alpha = page.locator(tid('monitor-row', { 'data-run-id': ids.alpha! }));
    await waitForText(alpha.locator(tid('monitor-rss')), /\d+\.\d (KiB|MiB)/);
    await waitForText(alpha.locator(tid('monitor-cpu')), /\d+ %/);
    await h.screenshot(page, 'monitor');
  });

  test('the keyboard: j/k move, l and t choose the tab, kept as the selection moves; Enter folds a group; / searches', async () => {
    const { page } = h;
    await page.locator(tid('monitor-row', { 'data-run-id': ids.alpha! })).click();
    const detail = page.locator(`${tid('monitor-detail')} ${tid('run-detail')}`);
    await waitForAttr(detail, 'data-tab', 'output');
    await page.locator('body').press('t');
    await waitForAttr(detail, 'data-tab', 'tree');
    // Another run: still the tree.
    await page.locator('body').press('j');
    await waitFor('another run selected', async () => (await page.locator(`${tid('monitor-row')}[aria-selected="true"]`).getAttribute('data-run-id')) !== ids.alpha);
    await waitForAttr(detail, 'data-tab', 'tree');
    await page.locator('body').press('l');
    await waitForAttr(detail, 'data-tab', 'output');
    await page.locator('body').press('k');
    await waitForAttr(page.locator(`${tid('monitor-row')}[aria-selected="true"]`), 'data-run-id', ids.alpha!);
    // Up to the group's header, then Enter folds it.
    const group = page.locator(tid('monitor-group')).filter({ hasText: 'sleep' });
    for (let i = 0; i < 5 && (await group.getAttribute('aria-selected')) !== 'true'; i++) await page.locator('body').press('k');
    await waitForAttr(group, 'aria-selected', 'true');
    await page.locator('body').press('Enter');
    await waitFor('the group folded', async () => (await page.locator(tid('monitor-row', { 'data-run-id': ids.alpha! })).count()) === 0);
    await page.locator('body').press('Enter');
    await visible(page.locator(tid('monitor-row', { 'data-run-id': ids.alpha! })));
    await page.locator('body').press('/');
    await waitFor('the search focused', async () => page.evaluate(() => document.activeElement?.getAttribute('data-testid') === 'monitor-search'));
    await page.keyboard.type('other');
    await waitFor('only the matching run', async () => (await page.locator(tid('monitor-row')).count()) === 1);
    await page.locator(tid('monitor-search')).fill('');
  });

  test("a group's live runs merged in one tail, each line tagged with its run", async () => {
    const { page } = h;
    const group = page.locator(tid('monitor-group')).filter({ hasText: 'sleep' });
    await group.click();
    const tail = await visible(page.locator(tid('merged-tail')));
    await waitFor('lines of both live runs in the tail', async () => {
      const runs = new Set(await tail.locator(tid('merged-tail-line')).evaluateAll((els) => els.map((el) => el.getAttribute('data-run-id'))));
      return runs.has(ids.alpha!) && runs.has(ids.beta!);
    });
    const texts = await tail.locator(tid('merged-tail-line')).allInnerTexts();
    expect(texts.some((t) => /^bash·\w{4}\s*alpha \d+$/.test(t))).toBe(true);
    expect(texts.some((t) => /^bash·\w{4}\s*beta \d+$/.test(t))).toBe(true);
    await h.screenshot(page, 'merged-tail');
  });

  test('follow newest selects a new run of the group as it starts; s stops the selected run', async () => {
    const { page } = h;
    const group = page.locator(tid('monitor-group')).filter({ hasText: 'sleep' });
    await group.locator(tid('monitor-follow')).click();
    await waitForAttr(group.locator(tid('monitor-follow')), 'aria-pressed', 'true');
    const started = await h.cliJson(['run', '--yield', '0s', '--json', '--owner-pid', String(agent.pid), '--limit', '2m', '--', ...ticker('gamma')]);
    await waitForAttr(page.locator(`${tid('monitor-row')}[aria-selected="true"]`), 'data-run-id', started.json.id);
    await visible(page.locator(`${tid('monitor-detail')} ${tid('run-detail')}[data-state="running"]`));
    await page.locator('body').press('s');
    await waitForAttr(page.locator(tid('monitor-row', { 'data-run-id': started.json.id })), 'data-verdict', 'stopped');
    await group.locator(tid('monitor-follow')).click();
  });

  test('the tree sorted by CPU, then by RSS, in the run pane', async () => {
    const { page } = h;
    const busy = await h.cliJson(['run', '--yield', '0s', '--json', '--limit', '1m', '--', 'bash', '-c', 'python3 -c "b = bytearray(60 << 20); import time; time.sleep(60)" & python3 -c "while True: pass" & wait']);
    await page.locator(tid('monitor-row', { 'data-run-id': busy.json.id })).click();
    await page.locator('body').press('t');
    await visible(page.locator(tid('proc-tree')));
    await waitFor('three processes sampled', async () => (await page.locator(tid('tree-node')).count()) >= 3);
    await page.locator(tid('tree-sort-rss')).click();
    await waitFor('the big one first under bash', async () => (await page.locator(tid('tree-node')).nth(1).innerText()).includes('bytearray'));
    await page.locator(tid('tree-sort-cpu')).click();
    await waitFor('the busy one first under bash', async () => (await page.locator(tid('tree-node')).nth(1).innerText()).includes('while True'));
    await h.screenshot(page, 'tree-sorted');
    await h.cli(['stop', busy.json.id]);
  });

  test('below 1,200 px the list, the monitor by choice; the choice kept', async () => {
    const { page } = h;
    await page.setViewportSize({ width: 1000, height: 800 });
    await route(page, '#/history');
    await route(page, '#/runs');
    await visible(page.locator(tid('run-row')));
    expect(await page.locator(tid('monitor')).count()).toBe(0);
    await page.locator(tid('layout-monitor')).click();
    await visible(page.locator(tid('monitor')));
    await page.reload();
    await visible(page.locator(tid('monitor')));
    await page.locator(tid('layout-list')).click();
    await visible(page.locator(tid('run-row')));
    await page.setViewportSize({ width: 1280, height: 860 });
  });
});
