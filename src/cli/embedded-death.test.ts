// Issue 18, item 9: an embedded `warden run` killed while a host is up is
// noticed by that host, which holds its record in the same history, and
// recorded lost; `warden list` through the host never shows it running for
// ever. Real processes: `warden serve`, `warden run --embedded`, SIGKILL.

import { execa, type ResultPromise } from 'execa';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { until } from '../../test/kit/until';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunSummary } from '../shared/history';
import { serveFor, stopBackgroundHosts, WARDEN_BIN } from './testkit';

const servers: ResultPromise[] = [];
const dirs: string[] = [];

beforeAll(() => void execFileSync(process.execPath, [WARDEN_BIN, '--version'], { stdio: 'pipe' }), 120_000);

afterEach(async () => {
  for (const child of servers.splice(0)) {
    child.kill('SIGTERM');
    await child;
  }
  await stopBackgroundHosts(dirs);
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function list(dir: string): Promise<RunSummary[]> {
  const r = await execa(process.execPath, [WARDEN_BIN, 'list', '--json'], { reject: false, env: { WARDEN_STATE_DIR: dir }, stdin: 'ignore', timeout: 30_000 });
  expect(r.exitCode).toBe(0);
  return JSON.parse(r.stdout) as RunSummary[];
}

describe('an embedded run killed while a host is up', () => {
  it('is recorded lost by the host (not left running), and list through the host says so', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wemb-'));
    dirs.push(dir);
    const { child: host } = await serveFor(dir, servers);
    const embedded = execa(process.execPath, [WARDEN_BIN, 'run', '--embedded', '--', 'sh', '-c', 'echo started; sleep 60'], { reject: false, env: { WARDEN_STATE_DIR: dir }, stdin: 'ignore' });
    // Its record appears in the shared history, running.
    const run = await until('the embedded run in the history', async () => (await list(dir)).find((r) => r.command?.includes('sleep 60')), { everyMs: 100 });
    expect(run).toMatchObject({ state: 'running' });
    embedded.kill('SIGKILL');
    await embedded;
    // The host notices (waited on, not timed).
    const after = await until('the host to record it ended', async () => {
      const now = (await list(dir)).find((r) => r.id === run.id);
      return now?.state === 'ended' ? now : undefined;
    }, { everyMs: 200 });
    expect(after).toMatchObject({ id: run.id, state: 'ended', verdict: 'lost' });
    host.kill('SIGTERM');
    expect((await host).stderr).toMatch(new RegExp(`recovered 1 run\\(s\\) of a Warden process that went away while this host ran \\(${run.id}\\)`));
  }, 90_000);
});
