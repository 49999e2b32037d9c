// The web UI across hosts: a remote over a real sshd on 127.0.0.1 (the
// second state dir stands for the other machine; src/cli/sshd-testkit.ts),
// added with `warden remote add` while the page is open. Its runs are
// listed beside the local ones with the host's name, filtered per host in
// Runs and History, stopped from the run's page, and started from New run;
// when the remote goes down the host bar says so and only its runs are
// marked unreachable, while local runs start and end as before; it
// reconnects by itself. Skipped, with the reason printed, without Chromium
// or sshd.

import { expect, test, type Page } from '@playwright/test';
import { controlPath } from '../src/client/remotes';
import { masterPid, startSshd, type Sshd } from '../src/cli/sshd-testkit';
import { stopBackgroundHosts } from '../src/cli/testkit';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { SETUP_TIMEOUT_MS, SPEC_TIMEOUT_MS, WAIT_MS, choose, route, skipReason, startHarness, tid, visible, waitFor, waitForAttr, waitForText, type Harness } from './harness';

const skip = skipReason('hosts');

/** The run page's verdict is 'completed'; else throws with what the page shows, so a timeout says where it stood. */
async function completed(page: Page): Promise<true> {
  const detail = page.locator(tid('run-detail')).first();
  const seen = {
    hash: await page.evaluate(() => window.location.hash),
    state: await detail.getAttribute('data-state', { timeout: 1000 }).catch(() => 'none'),
    verdict: await detail.getAttribute('data-verdict', { timeout: 1000 }).catch(() => 'none'),
    banner: (await page.locator(tid('error-banner')).count()) > 0 ? await page.locator(tid('error-banner')).innerText() : null,
    hosts: await page.locator(tid('host-state')).evaluateAll((pills) => pills.map((p) => `${p.getAttribute('data-host')}=${p.getAttribute('data-state')}`).join(' ')),
  };
  if (seen.verdict === 'completed') return true;
  throw new Error(JSON.stringify(seen));
}

test.describe('Runs across hosts (web mode)', () => {
  test.describe.configure({ mode: 'serial', timeout: SPEC_TIMEOUT_MS });
  test.skip(skip !== null, skip ?? '');
  let h: Harness;
  let sshd: Sshd | null = null;
  let noSshd = '';
  test.beforeAll(async ({ browser }) => {
    test.setTimeout(SETUP_TIMEOUT_MS);
    const started = await startSshd();
    if ('skip' in started) {
      noSshd = started.skip;
      console.log(`e2e/hosts: skipped: ${noSshd}`);
      return;
    }
    sshd = started;
    // The host (warden serve) runs ssh through the test's keys, as a user's ssh config would.
    process.env.WARDEN_SSH = sshd.ssh;
    h = await startHarness('hosts', browser);
    const added = await h.cli(['remote', 'add', 'box', sshd.url, '--warden', sshd.warden]);
    expect(added.code, added.stderr).toBe(0);
  });
  // eslint-disable-next-line no-empty-pattern
  test.afterEach(async ({}, testInfo) => {
    await h?.onTestEnd(testInfo);
  });
  test.afterAll(async () => {
    test.setTimeout(120_000);
    // The ssh session (ControlMaster) the host shares with box persists after the host, and its
    // control socket lies in the state dir that close() removes: its pid is read first, and it is
    // ended once the host is gone (before that, the host would open another), so that it closes
    // its sshd session too.
    const master = sshd && h ? masterPid(sshd.ssh, controlPath(h.stateDir, 'box')!) : null;
    await h?.close();
    if (!sshd) return;
    if (master !== null) {
      try {
        process.kill(master, 'SIGTERM');
      } catch {
        // gone already
      }
      await waitFor('the ssh ControlMaster to exit', () => !existsSync(`/proc/${master}`) || /\) Z/.test(readFileSync(`/proc/${master}/stat`, 'latin1')), WAIT_MS);
    }
    await sshd.stop();
    await stopBackgroundHosts([sshd.remoteStateDir]);
    for (const dir of [sshd.dir, sshd.remoteStateDir]) rmSync(dir, { recursive: true, force: true });
  });

  test("lists a remote's runs with its name, filters per host, stops one from its page, and starts one there", async () => {
    test.skip(sshd === null, noSshd);
    const { page } = h;
    const local = await h.cliJson(['run', '--json', '--', 'bash', '-c', 'echo here']);
    expect(local.code, local.stderr).toBe(0);
    const remote = await h.cliJson(['--remote', 'box', 'run', '--yield', '200ms', '--json', '--limit', '5m', '--', 'sleep', '120']);
    expect(remote.code, remote.stderr).toBe(75);
    const remoteId = `${remote.json.id}@box`;

    await route(page, '#/runs');
    await waitForAttr(page.locator(tid('host-state', { 'data-host': 'box' })), 'data-state', 'connected');
    await waitForAttr(page.locator(tid('host-state', { 'data-host': 'local' })), 'data-state', 'connected');
    const remoteRow = await visible(page.locator(tid('run-row', { 'data-run-id': remoteId })));
    await waitForAttr(remoteRow, 'data-state', 'running');
    await waitForText(remoteRow.locator(tid('run-host')), 'box');
    const localRow = await visible(page.locator(tid('run-row', { 'data-run-id': local.json.id })));
    await waitForText(localRow.locator(tid('run-host')), 'local');
    await h.screenshot(page, 'runs-across-hosts');

    // A filter per host.
    await choose(page.locator(tid('filter-host')), 'box');
    await waitFor('only box runs', async () => (await page.locator(tid('run-row', { 'data-run-id': local.json.id })).count()) === 0);
    expect(await page.locator(tid('run-row', { 'data-run-id': remoteId })).count()).toBe(1);
    const ids = await page.locator(tid('run-row')).evaluateAll((rows) => rows.map((r) => r.getAttribute('data-run-id') ?? ''));
    expect(ids.every((id) => id.endsWith('@box'))).toBe(true);
    await choose(page.locator(tid('filter-host')), 'local');
    await waitFor('only local runs', async () => (await page.locator(tid('run-row', { 'data-run-id': remoteId })).count()) === 0);
    await visible(page.locator(tid('run-row', { 'data-run-id': local.json.id })));
    await choose(page.locator(tid('filter-host')), '');

    // Its page, and Stop: the run ends on that machine.
    await route(page, `#/runs/${remoteId}`);
    const detail = await visible(page.locator(tid('run-detail')));
    await waitForAttr(detail, 'data-state', 'running');
    await page.locator(tid('action-stop')).click();
    await waitForAttr(detail, 'data-state', 'ended');
    await waitForAttr(detail, 'data-verdict', 'stopped');
    const there = await h.cliJson(['--remote', 'box', 'show', remote.json.id, '--json']);
    expect(there.json).toMatchObject({ state: 'ended', verdict: 'stopped' });

    // History: every host, or one.
    await route(page, '#/history');
    await visible(page.locator(tid('history-row', { 'data-run-id': remoteId })));
    await visible(page.locator(tid('history-row', { 'data-run-id': local.json.id })));
    await choose(page.locator(tid('history-host')), 'box');
    await waitFor('box history only', async () => (await page.locator(tid('history-row', { 'data-run-id': local.json.id })).count()) === 0);
    await visible(page.locator(tid('history-row', { 'data-run-id': remoteId })));
    await h.screenshot(page, 'history-one-host');
    await choose(page.locator(tid('history-host')), '');

    // New run on the remote: the page lands on its run there.
    await route(page, '#/new');
    await choose(await visible(page.locator(tid('new-run-host'))), 'box');
    await page.locator(tid('new-run-command')).fill('bash -c "echo from-the-form"');
    await page.locator(tid('new-run-submit')).click();
    const landed = await waitFor('the page to route to a run on box', async () => {
      const hash = await page.evaluate(() => window.location.hash);
      return /^#\/runs\/([0-9a-f]{6,32})@box/.exec(hash)?.[1] ?? false;
    });
    await visible(page.locator(tid('run-detail')));
    await waitFor('the run on box to complete', () => completed(page));
    const shown = await h.cliJson(['--remote', 'box', 'show', landed, '--json']);
    expect(shown.json).toMatchObject({ verdict: 'completed', stdout: 'from-the-form\n' });
  });

  test('a remote that goes down is shown disconnected, only its runs unreachable; local runs work; it comes back by itself', async () => {
    test.skip(sshd === null, noSshd);
    const { page } = h;
    const remote = await h.cliJson(['--remote', 'box', 'run', '--yield', '200ms', '--json', '--limit', '5m', '--', 'sleep', '120']);
    expect(remote.code, remote.stderr).toBe(75);
    const remoteId = `${remote.json.id}@box`;
    await route(page, '#/runs');
    await visible(page.locator(tid('run-row', { 'data-run-id': remoteId })));

    // The machine goes away: its sshd and the ssh session the host shares with it.
    await sshd!.stop();
    const master = masterPid(sshd!.ssh, controlPath(h.stateDir, 'box')!);
    if (master !== null) process.kill(master, 'SIGTERM');
    const pill = page.locator(tid('host-state', { 'data-host': 'box' }));
    await waitForAttr(pill, 'data-state', 'disconnected', WAIT_MS);
    const row = page.locator(tid('run-row', { 'data-run-id': remoteId }));
    await waitForAttr(row.locator(tid('run-host')), 'data-unreachable', 'true');
    // The local host's own connection is fine: no disconnected bar for the page.
    expect(await page.locator(tid('connection-bar')).count()).toBe(0);
    await h.screenshot(page, 'remote-down');

    // A local run from the form starts and ends as ever.
    await route(page, '#/new');
    await choose(page.locator(tid('new-run-host')), 'local');
    await page.locator(tid('new-run-command')).fill('bash -c "echo still-here"');
    await page.locator(tid('new-run-submit')).click();
    await visible(page.locator(tid('run-detail')));
    await waitFor('the local run to complete', () => completed(page));
    expect(await page.evaluate(() => window.location.hash)).not.toContain('@');

    // Back: the link returns with nobody asking; the run went on there meanwhile.
    await sshd!.restart();
    await route(page, '#/runs');
    await waitForAttr(pill, 'data-state', 'connected', WAIT_MS);
    await waitFor('the row to be reachable again', async () => (await row.locator(tid('run-host')).getAttribute('data-unreachable')) === null);
    await waitForAttr(row, 'data-state', 'running');
    await h.cli(['--remote', 'box', 'stop', remote.json.id]);
  });
});
