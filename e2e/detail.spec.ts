// The run detail in web mode: the deadline sequence as it happens, and the
// actions (stop, wait, extend) and the process tree tab.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Libsql from 'libsql';
import type { Page } from '@playwright/test';
import { expect, test } from '@playwright/test';
import { SETUP_TIMEOUT_MS, SPEC_TIMEOUT_MS, WAIT_MS, route, skipReason, startHarness, tid, visible, waitFor, waitForAttr, waitForRunRoute, waitForText, type Harness } from './harness';

const skip = skipReason('detail');

async function openRun(page: Page, id: string, tab = 'output') {
  await route(page, `#/runs/${id}/${tab}`);
  const detail = page.locator(tid('run-detail'));
  await visible(detail);
  return detail;
}

test.describe('Run detail (web mode)', () => {
  // One host and one browser page for the file, its tests in order (they share the page).
  test.describe.configure({ mode: 'serial', timeout: SPEC_TIMEOUT_MS });
  test.skip(skip !== null, skip ?? '');
  let h: Harness;
  test.beforeAll(async ({ browser }) => {
    test.setTimeout(SETUP_TIMEOUT_MS);
    h = await startHarness('detail', browser);
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

  test('a run past its 2 s limit shows "interrupting", then timed-out with its output', async () => {
    const { page } = h;
    // SIGINT is ignored, so the run stays in the interrupt step until SIGTERM (2 s after the limit).
    const started = await h.cliJson(['run', '--yield', '200ms', '--json', '--limit', '2s', '--', 'bash', '-c', "trap '' INT; echo before; sleep 30"]);
    expect(started.code, started.stderr).toBe(75);
    const id = started.json.id;
    const detail = await openRun(page, id);

    // Watched in the page on every frame: the phase text, or the bar's data-phase.
    await page.waitForFunction(
      () => {
        const phase = document.querySelector('[data-testid="run-phase"]');
        const bar = document.querySelector('[data-testid="run-bar"]');
        return /interrupting/i.test(phase?.textContent ?? '') || bar?.getAttribute('data-phase') === 'interrupting';
      },
      undefined,
      { polling: 'raf', timeout: WAIT_MS },
    );
    await h.screenshot(page, 'interrupting');

    await waitForAttr(detail, 'data-verdict', 'timed-out');
    await waitForAttr(detail, 'data-state', 'ended');
    await page.locator(tid('tab-output')).click();
    await waitForText(page.locator(tid('output-view')), 'before');
    await h.screenshot(page, 'timed-out');
  });

  test('Stop ends a run as stopped', async () => {
    const { page } = h;
    const started = await h.cliJson(['run', '--yield', '200ms', '--json', '--limit', '2m', '--', 'sleep', '60']);
    expect(started.code, started.stderr).toBe(75);
    const detail = await openRun(page, started.json.id);
    await waitForAttr(detail, 'data-state', 'running');
    await h.screenshot(page, 'before-stop');
    await page.locator(tid('action-stop')).click();
    await waitForAttr(detail, 'data-verdict', 'stopped');
    await h.screenshot(page, 'stopped');
  });

  test('Wait shows the verdict when the run ends', async () => {
    const { page } = h;
    const started = await h.cliJson(['run', '--yield', '100ms', '--json', '--limit', '30s', '--', 'bash', '-c', 'sleep 2; echo waited']);
    expect(started.code, started.stderr).toBe(75);
    const detail = await openRun(page, started.json.id);
    await page.locator(tid('action-wait')).click();
    // Waiting, or over already on a slow machine; either way the verdict tab follows.
    await waitFor('the verdict tab after Wait', async () => (await waitForRunRoute(page)).tab === 'verdict');
    const text = await waitForText(page.locator(tid('verdict-text')), /\S/);
    expect(text.toLowerCase()).toContain('complet');
    await waitForAttr(detail, 'data-verdict', 'completed');
    await h.screenshot(page, 'wait-verdict');
  });

  test('Extend moves the limit and the run completes instead of timing out', async () => {
    const { page } = h;
    // A 4 s limit leaves room to extend before it passes on a loaded machine; sleep 6 would time out without it.
    const started = await h.cliJson(['run', '--yield', '100ms', '--json', '--limit', '4s', '--', 'sleep', '6']);
    expect(started.code, started.stderr).toBe(75);
    const detail = await openRun(page, started.json.id);
    const limit = page.locator(tid('run-limit'));
    await waitForText(limit, /\b4(\.0+)?\s*s\b|0?:0?4\b/);
    await page.locator(tid('extend-by')).fill('30s');
    await page.locator(tid('action-extend')).click();
    await waitForText(limit, /\b34(\.0+)?\s*s\b|0?:34\b/);
    await h.screenshot(page, 'extended');
    await waitForAttr(detail, 'data-verdict', 'completed');
    await h.screenshot(page, 'extended-completed');

    await page.locator(tid('tab-timeline')).click();
    await visible(page.locator(tid('timeline-entry')));
    const kinds = await page.locator(tid('timeline-entry')).evaluateAll((els) => els.map((e) => e.getAttribute('data-kind') ?? ''));
    expect(kinds.some((k) => /limit|extend/i.test(k)), `timeline kinds: ${kinds.join(', ')}`).toBe(true);
    await h.screenshot(page, 'extended-timeline');
  });

  test('a truthful header: no limit in words, inputs per run, dismissable notices, per-run title; once ended no live controls, and a force kill recorded as such', async () => {
    const { page } = h;
    // Ignores SIGINT and SIGTERM: only a kill ends it, so Stop then Force kill is what ends it.
    const a = await h.cliJson(['run', '--yield', '200ms', '--json', '--', 'bash', '-c', "trap '' INT TERM; echo up; sleep 60"]);
    expect(a.code, a.stderr).toBe(75);
    const b = await h.cliJson(['run', '--yield', '200ms', '--json', '--limit', '2m', '--', 'sleep', '61']);
    expect(b.code, b.stderr).toBe(75);

    let detail = await openRun(page, a.json.id);
    await waitForAttr(detail, 'data-state', 'running');
    await waitForText(page.locator(tid('run-limit')), 'no limit');
    expect(await page.locator(tid('run-clock')).innerText()).not.toMatch(/–/);
    await waitFor('the page title to name the run', async () => /running · bash -c/.test(await page.title()));

    // A value typed for one run is not carried to the next one opened.
    await page.locator(tid('extend-by')).fill('7s');
    await page.locator(tid('wait-yield')).fill('3s');
    detail = await openRun(page, b.json.id);
    await waitForText(page.locator(tid('run-limit')), /2 min/);
    expect(await page.locator(tid('extend-by')).inputValue()).toBe('30s');
    expect(await page.locator(tid('wait-yield')).inputValue()).toBe('');
    await waitFor('the title of the second run', async () => /sleep 61/.test(await page.title()));

    // A notice goes away when dismissed.
    await page.locator(tid('extend-by')).fill('soon');
    await page.locator(tid('action-extend')).click();
    await visible(page.locator(tid('extend-error')));
    await page.locator(tid('extend-error')).locator(tid('notice-dismiss')).click();
    await page.locator(tid('extend-error')).waitFor({ state: 'detached', timeout: WAIT_MS });

    detail = await openRun(page, a.json.id);
    await page.locator(tid('action-stop')).click();
    await (await visible(page.locator(tid('action-force')))).click();
    await waitForAttr(detail, 'data-verdict', 'stopped');
    // Ended: only what still makes sense is offered.
    for (const id of ['action-stop', 'action-force', 'action-wait', 'wait-yield', 'extend-by', 'action-extend']) {
      await page.locator(tid(id)).first().waitFor({ state: 'detached', timeout: WAIT_MS });
    }
    await visible(page.locator(tid('action-rerun')));
    const clockText = await waitForText(page.locator(tid('run-clock')), /ended/);
    expect(clockText).toMatch(/^took \d+(\.\d+)? s · no limit · ended (just now|\d+ s ago)$/);
    // In a browser the live and failed counts go in front (attention in web mode).
    await waitFor('the title of the ended run', async () => /^(\([^)]*\) )?stopped · bash -c/.test(await page.title()));
    await h.screenshot(page, 'ended-header');

    await page.locator(tid('tab-timeline')).click();
    // Its own entry, or the stop's when both came within a moment (a quick second click).
    await visible(page.locator(tid('timeline-entry')).filter({ hasText: 'Force kill' }));
    const texts = await page.locator(tid('timeline-entry')).allInnerTexts();
    expect(texts.some((t) => /Sent SIGKILL[\s\S]*force kill/.test(t)), texts.join(' | ')).toBe(true);
    expect(texts.some((t) => /kill step/.test(t)), texts.join(' | ')).toBe(false);
    await h.screenshot(page, 'force-kill-timeline');
    await page.locator(tid('tab-verdict')).click();
    await waitForText(page.locator(tid('stop-ended-by')), /force kill/);
    await waitForText(page.locator(tid('verdict-time-limit')), 'no limit');

    await h.cli(['stop', b.json.id]);
  });

  test('one timed log: stdout and stderr merged in the order written, stderr tinted, a stream filter, times per line, and a download; the same after a reload', async () => {
    const { page } = h;
    const done = await h.cliJson(['run', '--json', '--', 'bash', '-c', 'for i in 1 2 3; do echo out$i; sleep 0.2; echo err$i >&2; sleep 0.2; done']);
    expect(done.json.verdict, done.stderr).toBe('completed');
    const expected = ['out1', 'err1', 'out2', 'err2', 'out3', 'err3'];
    const lineTexts = async () => (await page.locator(tid('output-line')).allInnerTexts()).map((t) => t.replace(/^\s*\d+\s*/, '').trim());
    for (const pass of ['live marks', 'from the history'] as const) {
      if (pass === 'from the history') await page.reload();
      const view = page.locator(tid('output-view'));
      await openRun(page, done.json.id, 'output');
      await waitForAttr(view, 'data-stream', 'all');
      await waitForAttr(view, 'data-timed', 'true');
      await waitFor(`the merged order (${pass})`, async () => JSON.stringify(await lineTexts()) === JSON.stringify(expected));
      const streams = await page.locator(tid('output-line')).evaluateAll((els) => els.map((e) => `${e.getAttribute('data-stream')}:${e.classList.contains('rd-line-stderr')}`));
      expect(streams).toEqual(['stdout:false', 'stderr:true', 'stdout:false', 'stderr:true', 'stdout:false', 'stderr:true']);
      // Two pipes, each read as it arrives: the view says the order between them is by arrival.
      await waitForText(page.locator(tid('output-order-note')), 'order between streams: by arrival');
    }
    // Times since the start, in order, about 0.2 s apart.
    await page.locator(tid('output-time')).click();
    await waitForAttr(page.locator(tid('output-time')), 'data-mode', 'relative');
    const times = (await page.locator(tid('output-line-time')).allInnerTexts()).map((t) => Number(t.replace('+', '')));
    expect(times).toHaveLength(6);
    expect(times.every((t, i) => i === 0 || t > times[i - 1]!)).toBe(true);
    expect(times[5]! - times[0]!).toBeGreaterThan(0.8);
    await h.screenshot(page, 'merged-log');
    await page.locator(tid('output-time')).click();
    await waitForAttr(page.locator(tid('output-time')), 'data-mode', 'clock');
    expect(await page.locator(tid('output-line-time')).first().innerText()).toMatch(/^\d\d:\d\d:\d\d\.\d{3}$/);

    // The whole merged output as a file.
    const [file] = await Promise.all([page.waitForEvent('download'), page.locator(tid('output-download')).click()]);
    expect(file.suggestedFilename()).toBe(`warden-${done.json.id}-output.log`);
    expect(readFileSync((await file.path())!, 'utf8')).toBe(`${expected.join('\n')}\n`);

    // One stream alone (times off again, so the lines read as written).
    await page.locator(tid('output-time')).click();
    await waitForAttr(page.locator(tid('output-time')), 'data-mode', 'off');
    await page.locator(tid('output-stream-stderr')).click();
    await waitFor('stderr alone', async () => JSON.stringify(await lineTexts()) === JSON.stringify(['err1', 'err2', 'err3']));
  });

  test('links to lines: opened scrolled to them and highlighted, a click on a line number makes the link, Shift extends it; search with case and regex options', async () => {
    const { page } = h;
    const done = await h.cliJson(['run', '--json', '--', 'bash', '-c', 'for i in $(seq 1 400); do echo "line $i"; done; echo "Error: disk full"; echo "error: net down" >&2']);
    expect(done.json.verdict, done.stderr).toBe('completed');
    // A link shared by someone: a fresh page opens on it.
    await page.goto(`${h.url()}/#/runs/${done.json.id}/output/L300-L302`);
    const view = await visible(page.locator(tid('output-view')));
    const linked = page.locator(tid('output-line', { 'data-linked': 'true' }));
    await waitFor('the three linked lines', async () => (await linked.count()) === 3);
    expect(await linked.first().getAttribute('data-line')).toBe('300');
    const box = (await linked.first().boundingBox())!;
    const frame = (await view.boundingBox())!;
    expect(box.y).toBeGreaterThanOrEqual(frame.y);
    expect(box.y).toBeLessThan(frame.y + frame.height);
    await h.screenshot(page, 'line-link');

    // A click on a line number links to it; Shift+click to the lines from there.
    await page.locator(tid('output-line', { 'data-line': '305' })).locator(tid('output-line-link')).click();
    await waitFor('the link to line 305', async () => (await page.evaluate(() => location.hash)).endsWith('/output/L305'));
    await page.locator(tid('output-line', { 'data-line': '308' })).locator(tid('output-line-link')).click({ modifiers: ['Shift'] });
    await waitFor('the link to lines 305-308', async () => (await page.evaluate(() => location.hash)).endsWith('/output/L305-L308'));
    await waitFor('four linked lines', async () => (await linked.count()) === 4);

    // Search: case ignored by default, matched when asked; a regular expression; a bad one said so.
    const search = page.locator(tid('output-search'));
    const matches = page.locator(tid('output-matches'));
    await search.fill('error');
    await waitForText(matches, '/ 2');
    await page.locator(tid('output-search-case')).click();
    await waitForText(matches, '/ 1');
    await page.locator(tid('output-search-regex')).click();
    await search.fill('^line 3\\d\\d$');
    await waitForText(matches, '/ 100');
    await search.fill('(');
    await waitForText(matches, 'bad pattern');
  });

  test('ANSI: 256 colours, RGB, underline, dim and italic are shown as written', async () => {
    const { page } = h;
    const done = await h.cliJson(['run', '--json', '--', 'printf', '\\033[38;5;200mpink\\033[0m \\033[38;2;10;200;30mrgb\\033[0m \\033[4munder\\033[0m \\033[2;3mdimitalic\\033[0m\\n']);
    expect(done.json.verdict, done.stderr).toBe('completed');
    await openRun(page, done.json.id, 'output');
    const line = await visible(page.locator(tid('output-line')));
    await waitForText(line, 'dimitalic');
    const style = (word: string) =>
      line.locator('span', { hasText: new RegExp(`^${word}$`) }).evaluate((el) => {
        const cs = getComputedStyle(el);
        return { color: cs.color, decoration: cs.textDecorationLine, fontStyle: cs.fontStyle, opacity: cs.opacity };
      });
    expect((await style('pink')).color).toBe('rgb(255, 0, 215)');
    expect((await style('rgb')).color).toBe('rgb(10, 200, 30)');
    expect((await style('under')).decoration).toBe('underline');
    expect(await style('dimitalic')).toMatchObject({ fontStyle: 'italic', opacity: '0.65' });
    expect(await line.innerText()).not.toMatch(/\[|38;5/);
    await h.screenshot(page, 'ansi');
  });

  test('a cut output: no escape fragment after the marker, the count exact, and the lines after it numbered as in the stream', async () => {
    const { page } = h;
    // 100 underlined lines, 1,592 characters; a 200-character cap keeps 100 of each end, and the tail's
    // edge falls inside the ESC [ 0 m that ends line 94.
    const done = await h.cliJson(['run', '--json', '--output-cap', '200', '--', 'bash', '-c', 'for i in $(seq 1 100); do printf "\\033[4mline %d\\033[0m\\n" $i; done']);
    expect(done.json.verdict, done.stderr).toBe('completed');
    expect(done.json.stdout).not.toMatch(/\]\n0m/);
    await openRun(page, done.json.id, 'output');
    await page.locator(tid('output-stream-stdout')).click();
    await waitForAttr(page.locator(tid('output-view')), 'data-stream', 'stdout');
    const texts = await page.locator(tid('output-line')).allInnerTexts();
    const marker = texts.find((t) => /characters dropped here/.test(t))!;
    expect(marker).toBeDefined();
    // 1,592 - 100 - 100 + the 2 characters of the split escape.
    expect(marker).toMatch(/1,394 characters dropped here/);
    expect(texts.every((t) => !/\[\d*m|^\s*\S*\s*0m\s*$/.test(t.replace(/^\s*\S+\s*/, '')))).toBe(true);
    const gutters = await page.locator(tid('output-line-link')).allInnerTexts();
    expect(gutters.at(-1)).toBe('100');
    expect(texts.at(-1)).toMatch(/line 100$/);
    expect(gutters).toContain('⋯');
    await h.screenshot(page, 'cut-output');
  });

  test('wrap: long lines wrap onto rows of their own height, nothing overlaps, nothing scrolls sideways', async () => {
    const { page } = h;
    const done = await h.cliJson(['run', '--json', '--', 'bash', '-c', 'echo first; printf "%0.sword " $(seq 1 400); echo; echo after']);
    expect(done.json.verdict, done.stderr).toBe('completed');
    await openRun(page, done.json.id, 'output');
    const view = page.locator(tid('output-view'));
    await waitForText(view, 'after');
    expect(await view.evaluate((el) => el.scrollWidth > el.clientWidth)).toBe(true);
    await page.locator(tid('output-wrap')).click();
    await waitForAttr(view, 'data-wrap', 'true');
    const box = async (n: string) => (await page.locator(tid('output-line', { 'data-line': n })).boundingBox())!;
    await waitFor('the long line wrapped', async () => (await box('2')).height > 40);
    const [two, three] = [await box('2'), await box('3')];
    expect(three.y).toBeGreaterThanOrEqual(two.y + two.height - 1);
    expect(await view.evaluate((el) => el.scrollWidth <= el.clientWidth + 1)).toBe(true);
    await h.screenshot(page, 'wrapped');
    await page.locator(tid('output-wrap')).click();
    await waitForAttr(view, 'data-wrap', 'false');
  });

  test('telemetry: a sparkline per live row, CPU and memory charts while it runs, and the stored series after a reload', async () => {
    const { page } = h;
    const script = 'import time\nb = []\nfor i in range(60):\n    b.append(bytearray(3_000_000))\n    time.sleep(0.1)\n';
    // 6 s: the sparkline's two samples, two screenshots (1.5-2 s on a busy 2-core machine) and the charts while it still runs.
    const started = await h.cliJson(['run', '--yield', '200ms', '--json', '--limit', '6s', '--', 'python3', '-c', script]);
    expect(started.code, started.stderr).toBe(75);
    const id = started.json.id;
    await route(page, '#/runs');
    const spark = page.locator(tid('run-row', { 'data-run-id': id })).locator(tid('run-spark'));
    await waitForAttr(spark, 'data-points', (v) => Number(v) >= 2);
    await h.screenshot(page, 'sparkline');

    const detail = await openRun(page, id, 'tree');
    await waitForAttr(page.locator(tid('telemetry-cpu')), 'data-points', (v) => Number(v) >= 2);
    expect(await page.locator(tid('telemetry-rss')).getAttribute('data-source')).toBe('live');
    await waitForAttr(detail, 'data-verdict', 'timed-out');

    // A fresh page knows nothing live: the series comes from the history, with the limit and the stop marked.
    await page.reload();
    await openRun(page, id, 'tree');
    const rss = page.locator(tid('telemetry-rss'));
    await waitForAttr(rss, 'data-source', 'history');
    const points = Number(await rss.getAttribute('data-points'));
    expect(points).toBeGreaterThanOrEqual(3);
    await waitForAttr(rss, 'data-draw-ms', (v) => v !== null);
    await h.screenshot(page, 'telemetry');
  });

  test('a chart of a one-hour run (3,600 points) draws, and says how long it took', async () => {
    const { page } = h;
    const done = await h.cliJson(['run', '--json', '--', 'true']);
    // An hour of samples at 1 s, stored as the history stores a run's telemetry.
    const points = Array.from({ length: 3600 }, (_, i) => [i * 1000, 50 + 40 * Math.sin(i / 60), 100e6 + 50e6 * Math.sin(i / 300), 1 + (i % 5)]);
    const db = new Libsql(join(h.stateDir, 'history.db'));
    // In place of the one sample a loaded machine may have caught of it.
    db.prepare(`DELETE FROM run_events WHERE run_id = ? AND kind = 'telemetry'`).run(done.json.id);
    db.prepare(`INSERT INTO run_events (run_id, at, at_ms, kind, detail) VALUES (?, ?, NULL, 'telemetry', ?)`).run(done.json.id, Date.now(), JSON.stringify({ stepMs: 1000, points }));
    db.close();
    await openRun(page, done.json.id, 'tree');
    const cpu = page.locator(tid('telemetry-cpu'));
    await waitForAttr(cpu, 'data-points', '3600');
    const drawMs = Number(await waitForAttr(cpu, 'data-draw-ms', (v) => v !== null));
    console.log(`e2e/detail: a CPU chart of 3,600 points drew in ${drawMs.toFixed(1)} ms (target: <= 50 ms)`);
    await h.screenshot(page, 'telemetry-hour');
  });

  test('the process tree shows three levels, then Stop ends them', async () => {
    const { page } = h;
    const started = await h.cliJson(['run', '--yield', '200ms', '--json', '--limit', '2m', '--', 'bash', '-c', 'bash -c "sleep 30 & sleep 30" & sleep 30']);
    expect(started.code, started.stderr).toBe(75);
    const detail = await openRun(page, started.json.id);
    await page.locator(tid('tab-tree')).click();
    for (const depth of ['0', '1', '2']) await visible(page.locator(tid('tree-node', { 'data-depth': depth })));
    const pids = await page.locator(tid('tree-node')).evaluateAll((els) => els.map((e) => e.getAttribute('data-pid')));
    expect(pids.every((p) => p !== null && /^\d+$/.test(p)), `pids: ${pids.join(',')}`).toBe(true);
    await h.screenshot(page, 'tree');

    // Drawn as a tree, and a branch folds away and back.
    const branch = page.locator(tid('tree-node', { 'data-depth': '1' })).filter({ has: page.locator(tid('tree-fold')) });
    expect(await branch.first().innerText()).toMatch(/[├└]─/);
    await branch.first().locator(tid('tree-fold')).click();
    await waitForAttr(branch, 'data-folded', 'true');
    await page.locator(tid('tree-node', { 'data-depth': '2' })).first().waitFor({ state: 'detached', timeout: WAIT_MS });
    expect(await branch.first().innerText()).toMatch(/\d+ hidden/);
    await branch.first().locator(tid('tree-fold')).click();
    await visible(page.locator(tid('tree-node', { 'data-depth': '2' })));

    await page.locator(tid('action-stop')).click();
    await waitForAttr(detail, 'data-verdict', 'stopped');
    await h.screenshot(page, 'tree-stopped');
  });

  test('Send signal: confirmed in a dialog naming the pid and command, it ends only that process and is on the timeline', async () => {
    const { page } = h;
    const started = await h.cliJson(['run', '--yield', '200ms', '--json', '--limit', '2m', '--', 'bash', '-c', 'sleep 300 & wait $!; echo "child ended with $?"; exec sleep 299']);
    expect(started.code, started.stderr).toBe(75);
    const detail = await openRun(page, started.json.id);
    await page.locator(tid('tab-tree')).click();
    // The row whose own command is the sleep (bash's command line holds the words too).
    const rowOf = (command: string) => page.locator(tid('tree-node')).filter({ has: page.locator('code', { hasText: new RegExp(`^${command}$`) }) });
    const child = await visible(rowOf('sleep 300'));
    const pid = (await child.getAttribute('data-pid'))!;
    const root = (await page.locator(tid('tree-node', { 'data-depth': '0' })).first().getAttribute('data-pid'))!;

    // Cancel sends nothing.
    await child.locator(tid('tree-signal')).click();
    const dialog = await visible(page.locator(tid('signal-dialog')));
    expect(await dialog.innerText()).toContain(`process ${pid}`);
    expect(await dialog.innerText()).toContain('sleep 300');
    await h.screenshot(page, 'signal-dialog');
    await dialog.locator(tid('signal-cancel')).click();
    await dialog.waitFor({ state: 'detached', timeout: WAIT_MS });
    await visible(page.locator(tid('tree-node', { 'data-pid': pid })));

    // TERM to the child only: bash lives on and says how its child ended.
    await page.locator(tid('tree-node', { 'data-pid': pid })).locator(tid('tree-signal')).click();
    await visible(page.locator(tid('signal-dialog')));
    await page.locator(tid('signal-term')).check();
    await page.locator(tid('signal-confirm')).click();
    await waitForText(page.locator(tid('tree-signal-sent')), `SIGTERM sent to ${pid} (sleep 300)`);
    await page.locator(tid('tree-node', { 'data-pid': pid })).waitFor({ state: 'detached', timeout: WAIT_MS });
    await visible(page.locator(tid('tree-node', { 'data-pid': root })));
    expect(await detail.getAttribute('data-state')).not.toBe('ended');
    await h.screenshot(page, 'signal-sent');

    await page.locator(tid('tab-timeline')).click();
    await waitForText(page.locator(tid('run-detail')), `SIGTERM sent to ${pid} (sleep 300)`);
    await h.screenshot(page, 'signal-timeline');

    // KILL to the main process (now the exec'd sleep 299) ends the run.
    await page.locator(tid('tab-tree')).click();
    const main = await visible(rowOf('sleep 299'));
    await main.locator(tid('tree-signal')).click();
    await page.locator(tid('signal-kill')).check();
    await page.locator(tid('signal-confirm')).click();
    await waitForAttr(detail, 'data-state', 'ended');
    await page.locator(tid('tab-output')).click();
    await waitForText(page.locator(tid('run-detail')), 'child ended with 143');
  });
});
