// Crash forensics (issue 19, item 10): a crashed command's Summary gives the
// exit status as a shell reports it (128 + n), the process that crashed (pid
// and command, from the last sample of its tree), whether a core was dumped and
// where core_pattern sends it, and for a Python process without a fault report,
// how to get one (PYTHONFAULTHANDLER); a session script's crash marks the
// script's own line (not the fatal line) in Summary and Script.

import { mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { SETUP_TIMEOUT_MS, SPEC_TIMEOUT_MS, route, skipReason, startHarness, tid, visible, waitForAttr, waitForText, type Harness } from './harness';

const skip = skipReason('crash');

/** The kernel's core_pattern and this user's hard core size limit (what a process may raise its own to). */
function coreSetup(): { pattern: string; softLimit: string; hardLimit: string } {
  const pattern = readFileSync('/proc/sys/kernel/core_pattern', 'utf8').trim();
  const limits = /^Max core file size\s+(\S+)\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
  return { pattern, softLimit: limits?.[1] ?? '0', hardLimit: limits?.[2] ?? '0' };
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

test.describe('Crash forensics', () => {
  test.describe.configure({ mode: 'serial', timeout: SPEC_TIMEOUT_MS });
  test.skip(skip !== null, skip ?? '');
  let h: Harness;
  test.beforeAll(async ({ browser }) => {
    test.setTimeout(SETUP_TIMEOUT_MS);
    h = await startHarness('crash', browser);
  });
  // eslint-disable-next-line no-empty-pattern
  test.afterEach(async ({}, testInfo) => {
    await h?.onTestEnd(testInfo);
  });
  test.afterAll(async () => {
    test.setTimeout(60_000);
    await h?.close();
  });

  test('a Python process that dies of SIGSEGV: exit status 139, the process, and PYTHONFAULTHANDLER suggested', async () => {
    const { page } = h;
    const code = 'import os, signal, time\ntime.sleep(2)\nos.kill(os.getpid(), signal.SIGSEGV)\n';
    const started = await h.cliJson(['run', '--yield', '300ms', '--json', '--limit', '1m', '--', 'python3', '-c', code]);
    expect(started.code, started.stderr).toBe(75);
    // Watched while it runs: the page has its tree's last sample.
    await route(page, `#/runs/${started.json.id}`);
    const detail = await visible(page.locator(tid('run-detail')));
    await waitForAttr(detail, 'data-verdict', 'crashed');
    await page.locator(tid('tab-summary')).click();
    await waitForText(page.locator(tid('crash-status')), '139 (128 + 11, SIGSEGV)');
    await waitForText(page.locator(tid('crash-culprit')), /^pid \d+: .*python/);
    await visible(page.locator(tid('crash-faulthandler')));
    await h.screenshot(page, 'crash-summary');
  });

  test("a session script that crashes in native code: the script's line marked in Summary and Script, the advice says where its report is", async () => {
    const { page } = h;
    const code = 'import ctypes\ndef f():\n    ctypes.string_at(0)\nf()\n';
    const done = await h.cliJson(['run', '--python', '--json', '--limit', '1m', '-c', code]);
    expect(done.json.verdict, done.stderr).toBe('crashed');
    await route(page, `#/runs/${done.json.id}`);
    const detail = await visible(page.locator(tid('run-detail')));
    await waitForAttr(detail, 'data-verdict', 'crashed');
    await visible(page.locator(tid('run-summary')));
    // Line 3 (the call that crashed, in f), not line 4 (where f was called) nor the fatal line.
    const where = await visible(page.locator(tid('summary-script-line')));
    expect(await where.getAttribute('data-line')).toBe('3');
    await waitForText(where, /ctypes\.string_at\(0\)/);
    const frame = page.locator(`${tid('summary-line')}[data-script-frame="true"]`);
    await waitForText(frame, /File "<script>", line 3 in f/);
    expect(await frame.count()).toBe(1);
    const advice = await page.locator(tid('summary-advice')).innerText();
    expect(advice).toContain("crash report in stderr");
    expect(advice).not.toContain('above');
    await visible(page.locator(tid('crash-fault-report')));
    const { pattern } = coreSetup();
    const core = await visible(page.locator(tid('crash-core')));
    if (pattern.startsWith('|')) await waitForText(core, /core_pattern hands it to \//);
    await h.screenshot(page, 'crash-script-line');
    await page.locator(tid('summary-open-script')).click();
    await waitForAttr(page.locator(`${tid('script-line')}[data-line="3"]`), 'data-error', 'true');
    expect(await page.locator(`${tid('script-line')}[data-line="4"]`).getAttribute('data-error')).toBe('false');
    await h.screenshot(page, 'crash-script-tab');
  });

  test('a core dump: where it was written, or why there is none', async () => {
    const { page } = h;
    // The host started from here: its soft limit is this process's, and the runs' unless they change theirs.
    const { pattern, softLimit, hardLimit } = coreSetup();
    const cwd = mkdtempSync(join(h.stateDir, 'cores-'));
    const crash = 'import os, signal; os.kill(os.getpid(), signal.SIGSEGV)';
    // Its soft limit raised to the hard one, as a person after a core would (ulimit -c unlimited).
    const raised = await h.cliJson(['run', '--json', '--cwd', cwd, '--', 'python3', '-c', `import resource; resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY,) * 2) if resource.getrlimit(resource.RLIMIT_CORE)[1] == resource.RLIM_INFINITY else None; ${crash}`]);
    expect(raised.json.verdict, raised.stderr).toBe('crashed');
    await route(page, `#/runs/${raised.json.id}/summary`);
    const core = await visible(page.locator(tid('crash-core')));
    if (pattern.startsWith('|')) {
      await waitForText(core, new RegExp(`^core_pattern hands it to ${escapeRegExp(pattern.slice(1).trim().split(/\s+/)[0]!)}`));
    } else if (hardLimit === 'unlimited' && !pattern.startsWith('/')) {
      await waitForText(core, new RegExp(`^Written to ${escapeRegExp(cwd)}/core`));
      expect(await core.getAttribute('data-dumped')).toBe('true');
    }
    await h.screenshot(page, 'crash-core');
    // With a limit of 0, none: and how to get one.
    const zero = await h.cliJson(['run', '--json', '--cwd', cwd, '--', 'python3', '-c', `import resource; resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1])); ${crash}`]);
    await route(page, `#/runs/${zero.json.id}/summary`);
    const none = await visible(page.locator(tid('crash-core')));
    if (!pattern.startsWith('|')) {
      await waitForText(none, softLimit === '0' ? /^None was written at .*: its core file size limit was 0 when it started \(run it again with warden run --core, or New run's Allow a core dump, to get one\)\.$/ : /^None was written at /);
      expect(await none.getAttribute('data-dumped')).toBe('false');
    }
  });
});
