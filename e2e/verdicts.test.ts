// Verdict advice in web mode: a native crash in a Python session script, and a
// run the out-of-memory killer ended at its memory limit.

import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SETUP_TIMEOUT_MS, SPEC_TIMEOUT_MS, route, skipReason, startHarness, tid, visible, waitForAttr, waitForText, type Harness } from './harness';

const skip = skipReason('verdicts');

async function openVerdict(page: Page, id: string) {
  await route(page, `#/runs/${id}/output`);
  const detail = page.locator(tid('run-detail'));
  await visible(detail);
  await page.locator(tid('tab-verdict')).click();
  return detail;
}

describe.skipIf(skip !== null)('Verdicts (web mode)', { timeout: SPEC_TIMEOUT_MS }, () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness('verdicts');
  }, SETUP_TIMEOUT_MS);
  afterAll(async () => {
    await h?.close();
  }, 60_000);

  it('a crashed Python script shows the crash advice', async () => {
    const { page } = h;
    // Through the host: a script in a Python session; its interpreter dies of SIGSEGV.
    const done = await h.cliJson(['run', '--python', '--json', '-c', 'import ctypes; ctypes.string_at(0)']);
    expect(done.json.verdict, done.stderr).toBe('crashed');
    const detail = await openVerdict(page, done.json.id);
    await waitForAttr(detail, 'data-verdict', 'crashed');
    await waitForText(page.locator(tid('verdict-advice')), /native code|traceback/i);
    await h.screenshot(page, 'crashed-python');
  });

  it('an out-of-memory run shows the confirmed figures', async (ctx) => {
    const { page } = h;
    const ran = await h.cli(['run', '--memory', '64M', '--json', '--', 'python3', '-c', 'b = bytearray(512*1024*1024)']);
    if (ran.code === 125 && /memory/i.test(ran.stderr)) {
      // Refused with one line: no writable memory cgroup here (never run without its limit).
      console.log(`e2e/verdicts: out-of-memory spec skipped: --memory is refused here: ${ran.stderr.trim()}`);
      ctx.skip();
    }
    const done = { ...ran, json: JSON.parse(ran.stdout) as { id: string; verdict?: string } };
    expect(done.json.verdict, done.stderr).toBe('killed');
    const detail = await openVerdict(page, done.json.id);
    await waitForAttr(detail, 'data-verdict', 'killed');
    const figures = await waitForText(page.locator(tid('oom-figures')), /\b64(\.0+)?\s*MiB\b/);
    expect(figures).toMatch(/confirmed/i);
    expect(figures).not.toMatch(/not confirmed/i);
    await h.screenshot(page, 'oom');
  });
});
