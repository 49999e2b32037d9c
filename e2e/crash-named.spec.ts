// Crashes named where they happen (issue 29, item 2): a command's traceback
// at the end of stderr gives the Summary's heading ("Raised KeyError:
// 'database_url' at crash_keyerror.py:5") and the advice, and marks the
// exception's line and the innermost frame of the user's files (not the
// caret) in the Summary and in the log; a model's answer says the same; a
// shell whose child segfaulted and which exited 3 gets the crash card for
// that child; the culprit of a crash is recorded, so a page opened after the
// end names it.

import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { SETUP_TIMEOUT_MS, SPEC_TIMEOUT_MS, route, skipReason, startHarness, tid, visible, waitForAttr, waitForText, type Harness } from './harness';

const skip = skipReason('crash-named');

const SCRIPT = 'import json\n\n\ndef load(config):\n    return config["database_url"]\n\n\nsettings = load({"debug": True})\n';
const SEGV = 'import os, signal; os.kill(os.getpid(), signal.SIGSEGV)';

test.describe('Crashes named', () => {
  test.describe.configure({ mode: 'serial', timeout: SPEC_TIMEOUT_MS });
  test.skip(skip !== null, skip ?? '');
  let h: Harness;
  let cwd: string;
  test.beforeAll(async ({ browser }) => {
    test.setTimeout(SETUP_TIMEOUT_MS);
    h = await startHarness('crash-named', browser);
    cwd = mkdtempSync(join(h.stateDir, 'app-'));
    writeFileSync(join(cwd, 'crash_keyerror.py'), SCRIPT);
  });
  // eslint-disable-next-line no-empty-pattern
  test.afterEach(async ({}, testInfo) => {
    await h?.onTestEnd(testInfo);
  });
  test.afterAll(async () => {
    test.setTimeout(60_000);
    await h?.close();
  });

  test("python3 crash_keyerror.py: the heading names the KeyError and where, the exception's line and the frame are marked, not the caret", async () => {
    const { page } = h;
    const done = await h.cliJson(['run', '--json', '--cwd', cwd, '--', 'python3', 'crash_keyerror.py']);
    expect(done.json.verdict, done.stderr).toBe('failed');
    await route(page, `#/runs/${done.json.id}`);
    await visible(page.locator(tid('run-summary')));
    await waitForText(page.locator(tid('summary-crash-heading')), "Raised KeyError: 'database_url' at crash_keyerror.py:5");
    await waitForText(page.locator(tid('summary-verdict')), /^Failed with exit code 1 after/);
    await waitForText(page.locator(tid('summary-advice')), "Look at crash_keyerror.py:5 (in load) first: it raised KeyError: 'database_url' there.");
    const error = page.locator(`${tid('summary-line')}[data-crash="error"]`);
    await waitForText(error, "KeyError: 'database_url'");
    expect(await error.count()).toBe(1);
    const frame = page.locator(`${tid('summary-line')}[data-crash="frame"]`);
    expect(await frame.count()).toBe(2);
    expect(await frame.first().innerText()).toContain('line 5, in load');
    expect(await frame.nth(1).innerText()).toContain('return config["database_url"]');
    // The caret under the code and the traceback's head are not marked.
    const marked = await page.locator(`${tid('summary-line')}[data-error="true"]`).allInnerTexts();
    expect(marked.some((t) => /^\s*\d*\s*[~^]+\s*$/.test(t))).toBe(false);
    expect(marked.some((t) => t.includes('Traceback (most recent call last)'))).toBe(false);
    await h.screenshot(page, 'summary-keyerror');

    // The log marks the same lines.
    await page.locator(tid('tab-output')).click();
    const logError = page.locator(`${tid('output-line')}[data-crash="error"]`);
    await waitForText(logError, "KeyError: 'database_url'");
    await waitForText(page.locator(`${tid('output-line')}[data-crash="frame"]`).first(), 'line 5, in load');
    await h.screenshot(page, 'log-keyerror');
  });

  test("a model's answer says the same (shell-results and JSON)", async () => {
    const text = await h.cli(['run', '--format', 'shell-results', '--cwd', cwd, '--', 'python3', 'crash_keyerror.py']);
    expect(text.stdout).toContain("<crash>raised KeyError: 'database_url' at crash_keyerror.py:5 (in load)</crash>");
    expect(text.stdout).toContain("<advice>Look at crash_keyerror.py:5 (in load) first: it raised KeyError: 'database_url' there.");
  });

  test('a Node error and a Rust-style panic are named in their own words', async () => {
    const { page } = h;
    writeFileSync(join(cwd, 'crash.js'), "function readConfig() {\n  const data = JSON.parse('{}');\n  return data.database.url;\n}\nreadConfig();\n");
    const node = await h.cliJson(['run', '--json', '--cwd', cwd, '--', 'node', 'crash.js']);
    await route(page, `#/runs/${node.json.id}/summary`);
    await waitForText(page.locator(tid('summary-crash-heading')), "Threw TypeError: Cannot read properties of undefined (reading 'url') at crash.js:3");
    // A panic printed by a shell script: the heading quotes its message.
    const panic = await h.cliJson(['run', '--json', '--cwd', cwd, '--', 'bash', '-c', `printf "thread 'main' panicked at src/main.rs:4:32:\\ndatabase_url missing from config\\nnote: run with \\\`RUST_BACKTRACE=1\\\` environment variable to display a backtrace\\n" >&2; exit 101`]);
    await route(page, `#/runs/${panic.json.id}/summary`);
    await waitForText(page.locator(tid('summary-crash-heading')), 'Panicked with "database_url missing from config" at src/main.rs:4');
    await h.screenshot(page, 'summary-panic');
  });

  test('a shell whose child segfaulted, then exited 3: the crash card for that child, kept for a page opened later', async () => {
    const { page } = h;
    const done = await h.cliJson(['run', '--json', '--cwd', cwd, '--', 'bash', '-c', `python3 -c '${SEGV}'; echo after; exit 3`]);
    expect(done.json.verdict, done.stderr).toBe('failed');
    // Not watched live: the page opens after the end.
    await route(page, `#/runs/${done.json.id}`);
    const card = await visible(page.locator(tid('summary-crash')));
    await waitForText(page.locator(tid('crash-status')), 'SIGSEGV, in a process it ran; it went on to exit with 3');
    await waitForText(page.locator(tid('crash-culprit')), new RegExp(`^pid \\d+: python3 -c '${SEGV.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}'$`));
    await waitForText(page.locator(tid('summary-notes')), 'The shell reported that a command it ran died of SIGSEGV');
    await visible(card.locator(tid('crash-core')));
    await h.screenshot(page, 'shell-child-crash');
  });

  test('a crash not watched live still names its process', async () => {
    const { page } = h;
    const done = await h.cliJson(['run', '--json', '--', 'python3', '-c', `import time; time.sleep(1); ${SEGV}`]);
    expect(done.json.verdict, done.stderr).toBe('crashed');
    await route(page, `#/runs/${done.json.id}`);
    const detail = await visible(page.locator(tid('run-detail')));
    await waitForAttr(detail, 'data-verdict', 'crashed');
    await waitForText(page.locator(tid('crash-culprit')), /^pid \d+: .*python3 -c import time/);
  });
});
