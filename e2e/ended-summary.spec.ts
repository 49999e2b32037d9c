// An open page is not sent the output of runs it does not show (issue 19,
// item 2): a page on #/runs while 8 runs of 3,000,000 characters each (60,000
// numbered lines of 50; the engine keeps 2,000,000 of each) end receives
// under 1 MB from /api/ in all, its event stream included (it asks for
// ?ended=summary: each ended run comes without its output). The runs printed
// before the page opened and end after it, behind a gate, so what the stream
// carries is their ends. Then one of them opens on its output, fetched in
// pages: the last line is there, numbered 60,000.

import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { SETUP_TIMEOUT_MS, SPEC_TIMEOUT_MS, route, skipReason, startHarness, tid, visible, waitFor, type Harness } from './harness';

const skip = skipReason('ended-summary');
const RUNS = 8;

test.describe('Ended runs reach an open page without their output', () => {
  test.describe.configure({ mode: 'serial', timeout: SPEC_TIMEOUT_MS });
  test.skip(skip !== null, skip ?? '');
  let h: Harness;
  let dir = '';
  const ids: string[] = [];
  test.beforeAll(async ({ browser }) => {
    test.setTimeout(SETUP_TIMEOUT_MS);
    h = await startHarness('ended-summary', browser);
    dir = mkdtempSync(join(tmpdir(), 'we-gate-'));
    // Prints its 60,000 lines, says so, then ends only once the gate opens.
    const script = [
      'import os, sys, time',
      'for i in range(1, 60001):',
      "    print(f'{i:06d} ' + 'x' * 42)",
      'sys.stdout.flush()',
      `open(os.path.join(${JSON.stringify(dir)}, f'printed-{os.getpid()}'), 'w').close()`,
      `while not os.path.exists(${JSON.stringify(join(dir, 'gate'))}): time.sleep(0.05)`,
    ].join('\n');
    for (let i = 0; i < RUNS; i++) {
      const started = await h.cliJson(['run', '--json', '--detach', '--yield', '0s', '--limit', '5m', '--', 'python3', '-c', script]);
      ids.push(started.json.id);
    }
    await waitFor('every run printed', () => readdirSync(dir).filter((f) => f.startsWith('printed-')).length === RUNS, 120_000);
  });
  // eslint-disable-next-line no-empty-pattern
  test.afterEach(async ({}, testInfo) => {
    await h?.onTestEnd(testInfo);
  });
  test.afterAll(async () => {
    test.setTimeout(60_000);
    if (dir && !existsSync(join(dir, 'gate'))) writeFileSync(join(dir, 'gate'), '');
    await h?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('a Runs page open while they end receives under 1 MB; opening one shows its last line, numbered 60,000', async () => {
    // A fresh page (the harness's is open already, logged in): its event stream opens under watch.
    const page = await h.page.context().newPage();
    // Every byte the page receives from /api/, counted by the browser (the event stream too, which resource timing would not count until it closes).
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Network.enable');
    const urls = new Map<string, string>();
    let apiBytes = 0;
    cdp.on('Network.requestWillBeSent', (e) => urls.set(e.requestId, e.request.url));
    cdp.on('Network.dataReceived', (e) => {
      const url = urls.get(e.requestId);
      if (url && new URL(url).pathname.startsWith('/api/')) apiBytes += e.dataLength;
    });

    await page.goto(`${h.url()}/#/runs`);
    for (const id of ids) await visible(page.locator(tid('run-row', { 'data-run-id': id, 'data-state': 'running' })));
    const stream = [...urls.values()].filter((u) => new URL(u).pathname === '/api/v1/events');
    expect(stream.length, [...urls.values()].join('\n')).toBeGreaterThan(0);
    // The page asks for summaries.
    for (const u of stream) expect.soft(new URL(u).searchParams.get('ended')).toBe('summary');

    writeFileSync(join(dir, 'gate'), '');
    for (const id of ids) await visible(page.locator(tid('run-row', { 'data-run-id': id, 'data-state': 'ended' })));
    // A frame or two for anything still on its way.
    await page.waitForTimeout(500);
    console.log(`e2e/ended-summary: ${apiBytes.toLocaleString('en-US')} bytes from /api/ while ${RUNS} runs of 3,000,000 characters ended`);
    expect(apiBytes).toBeLessThan(1_000_000);
    await h.screenshot(page, 'runs-ended');

    // One of them opened: its output comes in pages, the last line numbered as the stream has it.
    await route(page, `#/runs/${ids[3]}/output`);
    await page.locator(tid('output-stream-stdout')).click();
    const last = page.locator(tid('output-line')).filter({ hasText: '060000 ' });
    await visible(last, 60_000);
    expect(await last.locator(tid('output-line-link')).innerText()).toBe('60000');
    await h.screenshot(page, 'last-line');
    await page.close();
  });
});
