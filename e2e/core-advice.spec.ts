// Advice that can be followed (issue 29, item 8): a crash through a host
// whose own core limit is 0 says no core was written and names `warden run
// --core` (never ulimit, which a caller's shell cannot pass to the host's
// runs); `warden run --core` and New run's "Allow a core dump" box raise the
// run's limit, so the same crash leaves its core where core_pattern says.
// The host runs with a soft core limit of 0 here (prlimit on it), whatever
// the machine's default.

import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { ROOT, SETUP_TIMEOUT_MS, SPEC_TIMEOUT_MS, route, skipReason, startHarness, tid, visible, waitFor, waitForAttr, waitForText, type Harness } from './harness';

const skip = skipReason('core-advice');
const CRASH = 'import os, signal; os.kill(os.getpid(), signal.SIGSEGV)';

/** The host's pid, from its state dir's socket holder: the `warden serve` process the harness started. */
function hostPid(stateDir: string): number {
  const out = execFileSync('pgrep', ['-f', 'warden.mjs serve'], { encoding: 'utf8' }).trim().split('\n').map(Number);
  for (const pid of out) {
    try {
      if (readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`WARDEN_STATE_DIR=${stateDir}`)) return pid;
    } catch {
      // Gone, or another user's.
    }
  }
  throw new Error(`no warden serve process for ${stateDir}`);
}

const corePattern = () => readFileSync('/proc/sys/kernel/core_pattern', 'utf8').trim();
const hardLimit = () => /^Max core file size\s+\S+\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1] ?? '0';

test.describe('Advice that can be followed', () => {
  test.describe.configure({ mode: 'serial', timeout: SPEC_TIMEOUT_MS });
  test.skip(skip !== null, skip ?? '');
  test.skip(spawnSync('prlimit', ['--version']).status !== 0, 'prlimit is not installed: the host cannot be given a core limit of 0');
  test.skip(hardLimit() === '0', 'the hard core limit is 0 here: no run can raise it');
  let h: Harness;
  let cwd: string;
  test.beforeAll(async ({ browser }) => {
    test.setTimeout(SETUP_TIMEOUT_MS);
    h = await startHarness('core-advice', browser);
    // The host's own soft core limit 0, as a login with ulimit -c 0 gives it.
    expect(spawnSync('prlimit', ['--pid', String(hostPid(h.stateDir)), '--core=0:']).status).toBe(0);
    cwd = mkdtempSync(join(h.stateDir, 'cores-'));
  });
  // eslint-disable-next-line no-empty-pattern
  test.afterEach(async ({}, testInfo) => {
    await h?.onTestEnd(testInfo);
  });
  test.afterAll(async () => {
    test.setTimeout(60_000);
    await h?.close();
  });

  test('without --core: no core, and the way to get one is warden run --core, not ulimit', async () => {
    const { page } = h;
    // A caller whose own soft limit is 0 too (else warden run passes --core by itself, as its shell would allow a core).
    // (It exits with the crash's status, 139: its stdout is the result.)
    const out = spawnSync('prlimit', ['--core=0:', process.execPath, join(ROOT, 'bin', 'warden.mjs'), 'run', '--json', '--cwd', cwd, '--', 'python3', '-c', CRASH], { env: { ...process.env, WARDEN_STATE_DIR: h.stateDir }, encoding: 'utf8' }).stdout;
    const done = { json: JSON.parse(out) as { id: string; verdict: string; notes: string[]; core?: { dumped: boolean | null; limitBytes: number | null } } };
    expect(done.json.verdict).toBe('crashed');
    expect(done.json.core?.limitBytes).toBe(0);
    if (corePattern().startsWith('|')) test.skip(true, 'core_pattern pipes dumps to a program here: only it knows whether it kept one');
    expect(done.json.notes.join(' ')).toContain('run it again with warden run --core to get one');
    await route(page, `#/runs/${done.json.id}/summary`);
    const core = await visible(page.locator(tid('crash-core')));
    await waitForText(core, 'run it again with warden run --core');
    expect(await core.innerText()).not.toContain('ulimit');
    await h.screenshot(page, 'no-core');
  });

  test('warden run --core: the same crash leaves its core, and the report says the limit it ran under', async () => {
    const { page } = h;
    if (corePattern().startsWith('|')) test.skip(true, 'core_pattern pipes dumps to a program here');
    const dir = mkdtempSync(join(cwd, 'cli-'));
    const done = await h.cliJson<{ id: string; verdict: string; core?: { dumped: boolean | null; where?: string; limitBytes: number | null } }>(['run', '--json', '--core', '--cwd', dir, '--', 'python3', '-c', CRASH]);
    expect(done.json.verdict, done.stderr).toBe('crashed');
    expect(done.json.core?.limitBytes).toBe(hardLimit() === 'unlimited' ? null : Number(hardLimit()));
    if (!corePattern().startsWith('/')) {
      expect(done.json.core?.dumped).toBe(true);
      expect(readdirSync(dir).length).toBeGreaterThan(0);
      await route(page, `#/runs/${done.json.id}/summary`);
      await waitForText(page.locator(tid('crash-core')), /^Written to /);
    }
  });

  test("New run's Allow a core dump box does the same", async () => {
    const { page } = h;
    if (corePattern().startsWith('|')) test.skip(true, 'core_pattern pipes dumps to a program here');
    const dir = mkdtempSync(join(cwd, 'form-'));
    await page.locator(tid('nav-new')).click();
    await visible(page.locator(tid('new-run-form')));
    await page.locator(tid('new-run-command')).fill(`python3 -c '${CRASH}'`);
    await page.locator(tid('new-run-cwd')).fill(dir);
    await page.locator(tid('new-run-core')).check();
    await h.screenshot(page, 'new-run-core');
    await page.locator(tid('new-run-submit')).click();
    const detail = await visible(page.locator(tid('run-detail')));
    await waitForAttr(detail, 'data-verdict', 'crashed');
    if (!corePattern().startsWith('/')) {
      await waitForText(page.locator(tid('crash-core')), /^Written to /);
      await waitFor('the core file in the run directory', () => readdirSync(dir).length > 0);
    }
  });
});
