// The small ones (issue 19, item 11): inverse video (SGR 7) as test runners
// print " FAIL "; a very light RGB colour readable on the light theme and as
// written on the dark one; a long time left in the clock's units; a process
// shown by its program's name, so its script shows in the tree at 900 px;
// the Summary's heading said once, in the units the header uses; and (item
// 7) where the order between stdout and stderr cannot be told, it says so.

import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { SETUP_TIMEOUT_MS, SPEC_TIMEOUT_MS, route, skipReason, startHarness, tid, visible, waitFor, waitForText, type Harness } from './harness';

const skip = skipReason('small-ones');

test.describe('The small ones', () => {
  test.describe.configure({ mode: 'serial', timeout: SPEC_TIMEOUT_MS });
  test.skip(skip !== null, skip ?? '');
  let h: Harness;
  test.beforeAll(async ({ browser }) => {
    test.setTimeout(SETUP_TIMEOUT_MS);
    h = await startHarness('small-ones', browser);
  });
  // eslint-disable-next-line no-empty-pattern
  test.afterEach(async ({}, testInfo) => {
    await h?.onTestEnd(testInfo);
  });
  test.afterAll(async () => {
    test.setTimeout(60_000);
    await h?.close();
  });

  test('inverse video shows " FAIL " on a red ground; a light yellow reads on the light theme and is as written on the dark', async () => {
    const { page } = h;
    const done = await h.cliJson(['run', '--json', '--', 'printf', '\\033[7m\\033[1m\\033[31m FAIL \\033[39m\\033[22m\\033[27m src/x.test.ts\\n\\033[38;2;255;255;0myellow\\033[0m\\n']);
    expect(done.json.verdict, done.stderr).toBe('completed');
    await route(page, `#/runs/${done.json.id}/output`);
    const fail = page.locator(tid('output-line')).first().locator('span', { hasText: /^ FAIL $/ });
    await visible(fail);
    const colours = await fail.evaluate((el) => ({ bg: getComputedStyle(el).backgroundColor, fg: getComputedStyle(el).color }));
    expect(colours.bg).not.toBe('rgba(0, 0, 0, 0)');
    expect(colours.bg).not.toBe(colours.fg);
    // Red ground: more red than green or blue.
    const [r, g, b] = colours.bg.match(/\d+/g)!.map(Number);
    expect(r!).toBeGreaterThan(g! + 60);
    expect(r!).toBeGreaterThan(b! + 60);
    const yellow = page.locator(tid('output-line')).nth(1).locator('.rd-text > span', { hasText: /^yellow$/ });
    const light = await yellow.evaluate((el) => getComputedStyle(el).color);
    await page.emulateMedia({ colorScheme: 'dark' });
    const dark = await yellow.evaluate((el) => getComputedStyle(el).color);
    await page.emulateMedia({ colorScheme: 'light' });
    // As written on the dark theme (a color-mix computes to color(srgb ...)), darker on the light one.
    const asWritten = /^(rgb\(255, 255, 0\)|color\(srgb 1 1 0\))$/;
    expect(dark).toMatch(asWritten);
    expect(light).not.toMatch(asWritten);
    await h.screenshot(page, 'inverse-and-colours');
  });

  test('a long time left reads in minutes; the tree shows the interpreter by name and the script at 900 px', async () => {
    const { page } = h;
    await page.setViewportSize({ width: 900, height: 800 });
    const dir = join(h.stateDir, 'deeply-nested-directory-'.repeat(3));
    mkdirSync(dir, { recursive: true });
    const script = join(dir, 'job.py');
    writeFileSync(script, 'import time\ntime.sleep(60)\n');
    // The interpreter by its whole path (as a virtualenv or pyenv runs it), then the script.
    const python = execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim();
    const started = await h.cliJson(['run', '--yield', '300ms', '--json', '--limit', '10m', '--', python, script]);
    expect(started.code, started.stderr).toBe(75);
    await route(page, '#/runs');
    const phase = page.locator(tid('run-row', { 'data-run-id': started.json.id })).locator(tid('run-phase'));
    await waitForText(phase, /^9 min \d\d s left$/);
    await route(page, `#/runs/${started.json.id}/tree`);
    const node = await visible(page.locator(tid('tree-node')).first());
    const code = node.locator('code').first();
    await waitForText(code, /^python3 /);
    expect(await code.getAttribute('title')).toBe(`${python} ${script}`);
    expect(await code.innerText()).toBe(`${python.slice(python.lastIndexOf('/') + 1)} ${script}`);
    await h.screenshot(page, 'tree-900');
    await page.setViewportSize({ width: 1280, height: 860 });
    await h.cli(['stop', started.json.id]);
  });

  test("the Summary says its heading once, with the limit in the header's units", async () => {
    const { page } = h;
    const done = await h.cliJson(['run', '--json', '--limit', '90s', '--', 'bash', '-c', 'echo about to crash; kill -SEGV $$']);
    expect(done.json.verdict, done.stderr).toBe('crashed');
    await route(page, `#/runs/${done.json.id}/summary`);
    const heading = await visible(page.locator(tid('summary-verdict')));
    await waitForText(heading, /^Crashed with SIGSEGV after [\d.]+ s, before the 1 min 30 s limit\.$/);
    // The header writes the same limit the same way.
    await waitForText(page.locator(tid('run-limit')), /^1 min 30 s$/);
    const notes = page.locator(tid('summary-notes'));
    if ((await notes.count()) > 0) expect(await notes.innerText()).not.toMatch(/Crashed with SIGSEGV/);
    await h.screenshot(page, 'summary-heading');
  });

  test('a burst on both pipes marks the order between them approximate; writes far apart are in order', async () => {
    const { page } = h;
    const burst = await h.cliJson(['run', '--json', '--', 'bash', '-c', 'for i in 1 2 3; do echo out $i; echo err $i >&2; done']);
    expect(burst.json.verdict, burst.stderr).toBe('completed');
    await route(page, `#/runs/${burst.json.id}/output`);
    await waitFor('six lines', async () => (await page.locator(tid('output-line')).count()) === 6);
    // Where the merged log switches from one pipe to the other within the same moment, it says the order is approximate.
    const marked = page.locator(`${tid('output-line')}[data-order="approximate"]`);
    expect(await marked.count()).toBeGreaterThan(0);
    const title = await marked.first().locator(tid('output-order-approx')).getAttribute('title');
    expect(title).toMatch(/order here is approximate/);
    await h.screenshot(page, 'order-approximate');
    const apart = await h.cliJson(['run', '--json', '--', 'bash', '-c', 'echo out 1; sleep 0.4; echo err 1 >&2; sleep 0.4; echo out 2']);
    await route(page, `#/runs/${apart.json.id}/output`);
    await waitFor('three lines', async () => (await page.locator(tid('output-line')).count()) === 3);
    expect(await page.locator(tid('output-line')).allInnerTexts()).toEqual([expect.stringMatching(/out 1$/), expect.stringMatching(/err 1$/), expect.stringMatching(/out 2$/)]);
    expect(await page.locator(`${tid('output-line')}[data-order="approximate"]`).count()).toBe(0);
  });
});
