// Verdict advice in web mode: a native crash in a Python session script, and a
// run the out-of-memory killer ended at its memory limit.

import type { Page } from '@playwright/test';
import { expect, test } from '@playwright/test';
import { SETUP_TIMEOUT_MS, SPEC_TIMEOUT_MS, route, skipReason, startHarness, tid, visible, waitForAttr, waitForText, type Harness, sameSize } from './harness';

const skip = skipReason('verdicts');

async function openVerdict(page: Page, id: string) {
  await route(page, `#/runs/${id}/output`);
  const detail = page.locator(tid('run-detail'));
  await visible(detail);
  await page.locator(tid('tab-verdict')).click();
  return detail;
}

test.describe('Verdicts (web mode)', () => {
  // One host and one browser page for the file, its tests in order (they share the page).
  test.describe.configure({ mode: 'serial', timeout: SPEC_TIMEOUT_MS });
  test.skip(skip !== null, skip ?? '');
  let h: Harness;
  test.beforeAll(async ({ browser }) => {
    test.setTimeout(SETUP_TIMEOUT_MS);
    h = await startHarness('verdicts', browser);
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

  test('a failed run opens on its summary: the verdict, the tail with the error line, then the full log', async () => {
    const { page } = h;
    const script = 'echo compiling...; for i in $(seq 1 60); do echo "step $i"; done; echo "error: linker failed" >&2; exit 2';
    const done = await h.cliJson(['run', '--json', '--', 'bash', '-c', script]);
    expect(done.json.verdict, done.stderr).toBe('failed');
    await route(page, `#/runs/${done.json.id}`);
    const detail = await visible(page.locator(tid('run-detail')));
    await waitForAttr(detail, 'data-tab', 'summary');
    await waitForText(page.locator(tid('summary-verdict')), 'Failed with exit code 2');
    const stderrTail = page.locator(tid('summary-tail', { 'data-stream': 'stderr' }));
    const errorLine = stderrTail.locator(tid('summary-line', { 'data-error': 'true' }));
    expect(await (await visible(errorLine)).innerText()).toContain('error: linker failed');
    // stdout's last 30 lines, numbered as in the stream (61 lines in all).
    const stdoutTail = page.locator(tid('summary-tail', { 'data-stream': 'stdout' }));
    await waitForText(stdoutTail.locator(tid('summary-gap')), '31 lines');
    expect(await stdoutTail.locator(tid('summary-line')).last().getAttribute('data-line')).toBe('61');
    await h.screenshot(page, 'summary-failed');

    await page.locator(tid('summary-open-stderr')).click();
    await waitForAttr(detail, 'data-tab', 'output');
    await waitForAttr(page.locator(tid('output-view')), 'data-stream', 'stderr');
  });

  test('a run that never started says why on its summary; a completed one opens on its output', async () => {
    const { page } = h;
    const failed = await h.cliJson(['run', '--json', '--cwd', '/nonexistent-warden-dir', '--', 'true']);
    expect(failed.json.verdict, failed.stderr).toBe('spawn-failed');
    await route(page, `#/runs/${failed.json.id}`);
    const detail = await visible(page.locator(tid('run-detail')));
    await waitForAttr(detail, 'data-tab', 'summary');
    await waitForText(page.locator(tid('summary-advice')), 'nonexistent-warden-dir');
    await waitForText(page.locator(tid('summary-no-output')), 'never started');
    await h.screenshot(page, 'summary-spawn-failed');

    const ok = await h.cliJson(['run', '--json', '--', 'echo', 'fine']);
    expect(ok.json.verdict, ok.stderr).toBe('completed');
    await route(page, `#/runs/${ok.json.id}`);
    await waitForAttr(detail, 'data-tab', 'output');
    await waitForText(page.locator(tid('output-view')), 'fine');
    expect(await page.locator(tid('tab-summary')).count()).toBe(0);
  });

  test('a Python run has a Script tab with its source, the failing line marked', async () => {
    const { page } = h;
    const done = await h.cliJson(['run', '--python', '--json', '-c', 'import time\nx = 1\nprint(x / 0)\n']);
    expect(done.json.verdict, done.stderr).toBe('failed');
    await route(page, `#/runs/${done.json.id}`);
    const detail = await visible(page.locator(tid('run-detail')));
    await waitForAttr(detail, 'data-tab', 'summary');
    await waitForText(page.locator(tid('summary-tail', { 'data-stream': 'stderr' })), 'ZeroDivisionError');
    await page.locator(tid('tab-script')).click();
    const view = await visible(page.locator(tid('script-view')));
    expect(await view.innerText()).toMatch(/import time[\s\S]*x = 1[\s\S]*print\(x \/ 0\)/);
    expect(await page.locator(tid('script-line', { 'data-error': 'true' })).getAttribute('data-line')).toBe('3');
    await h.screenshot(page, 'script');
  });

  test('a crashed Python script shows the crash advice', async () => {
    const { page } = h;
    // Through the host: a script in a Python session; its interpreter dies of SIGSEGV.
    const done = await h.cliJson(['run', '--python', '--json', '-c', 'import ctypes; ctypes.string_at(0)']);
    expect(done.json.verdict, done.stderr).toBe('crashed');
    const detail = await openVerdict(page, done.json.id);
    await waitForAttr(detail, 'data-verdict', 'crashed');
    await waitForText(page.locator(tid('verdict-advice')), /native code|traceback/i);
    await h.screenshot(page, 'crashed-python');
  });

  test('an out-of-memory run shows the confirmed figures', async () => {
    const { page } = h;
    const ran = await h.cli(['run', '--memory', '64Mi', '--json', '--', 'python3', '-c', 'b = bytearray(512*1024*1024)']);
    if (ran.code === 125 && /memory/i.test(ran.stderr)) {
      // Refused with one line: no writable memory cgroup here (never run without its limit).
      console.log(`e2e/verdicts: out-of-memory spec skipped: --memory is refused here: ${ran.stderr.trim()}`);
      test.skip(true, `--memory is refused here: ${ran.stderr.trim()}`);
    }
    const done = { ...ran, json: JSON.parse(ran.stdout) as { id: string; verdict?: string } };
    expect(done.json.verdict, done.stderr).toBe('killed');
    const detail = await openVerdict(page, done.json.id);
    await waitForAttr(detail, 'data-verdict', 'killed');
    const figures = await waitForText(page.locator(tid('oom-figures')), /\b64(\.0+)?\s*MiB\b/);
    expect(figures).toMatch(/confirmed/i);
    expect(figures).not.toMatch(/not confirmed/i);
    await h.screenshot(page, 'oom');

    // One peak figure in every view, and the badge names the out-of-memory kill.
    const peak = await page.locator(tid('oom-peak')).innerText();
    await page.locator(tid('tab-tree')).click();
    expect(sameSize(await (await visible(page.locator(tid('peak-rss')))).innerText(), peak)).toBe(true);
    await route(page, '#/runs');
    const row = page.locator(tid('run-row', { 'data-run-id': done.json.id }));
    await waitForText(row.locator(tid('run-badge')), 'out of memory');
    expect(sameSize(await row.locator(tid('run-peak')).innerText(), peak)).toBe(true);
    await waitForText(row.locator(tid('run-memory-limit')), /64(\.0+)?\s*MiB/);
    await h.screenshot(page, 'oom-row');
  });

  test('a live run with a memory limit shows the limit beside its peak so far, in the list and the detail', async () => {
    const { page } = h;
    const ran = await h.cli(['run', '--yield', '200ms', '--memory', '96Mi', '--limit', '2m', '--json', '--', 'sleep', '60']);
    if (ran.code === 125 && /memory/i.test(ran.stderr)) {
      console.log(`e2e/verdicts: live memory limit spec skipped: --memory is refused here: ${ran.stderr.trim()}`);
      test.skip(true, `--memory is refused here: ${ran.stderr.trim()}`);
    }
    expect(ran.code, ran.stderr).toBe(75);
    const id = (JSON.parse(ran.stdout) as { id: string }).id;
    await route(page, '#/runs');
    const row = page.locator(tid('run-row', { 'data-run-id': id }));
    await waitForAttr(row, 'data-state', 'running');
    await waitForText(row.locator(tid('run-memory-limit')), /of 96(\.0+)?\s*MiB limit/);
    await h.screenshot(page, 'live-memory-limit-row');
    await route(page, `#/runs/${id}/tree`);
    await waitForText(page.locator(tid('peak-memory-limit')), /96(\.0+)?\s*MiB/);
    await h.screenshot(page, 'live-memory-limit-tree');
    // The Verdict tab's peak so far is the Process tree's figure (a sleep's memory holds still).
    const treePeak = (await page.locator(tid('peak-rss')).innerText()).replace(/ of .*$/, '');
    expect(treePeak).toMatch(/\d/);
    await route(page, `#/runs/${id}/verdict`);
    await waitForText(page.locator(tid('oom-peak')), `${treePeak} so far`);
    // warden stop exits with the run's own status (130 after SIGINT).
    await h.cli(['stop', id]);
  });
});
