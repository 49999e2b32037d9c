// The history of every host at once (history host=*), paged: a local host
// relaying a remote that is a real second host, reached by a command remote
// running this checkout's `warden dial-stdio` with another state dir (no ssh
// needed). Page after page, every run of both histories comes exactly once,
// newest first, whatever the page size; the counts are both hosts'.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCommandRemote, saveRemotes } from '../../client/remotes';
import { connectToHost } from '../../client/transport';
import type { RunSummary } from '../../shared/history';
import type { HttpWardenApi } from '../../shared/http-api';
import { stopBackgroundHosts, WARDEN_BIN } from '../../cli/testkit';
import { startHost, type Host } from './host';
import { until } from '../../../test/kit/until';

const localDir = mkdtempSync(join(tmpdir(), 'wfh-local-'));
const remoteDir = mkdtempSync(join(tmpdir(), 'wfh-remote-'));
let host: Host;
let api: HttpWardenApi;
const localIds: string[] = [];
const remoteIds: string[] = [];

beforeAll(async () => {
  saveRemotes(localDir, [makeCommandRemote('other', `env WARDEN_STATE_DIR=${remoteDir} WARDEN_HOST_IDLE=60s ${process.execPath} ${WARDEN_BIN} dial-stdio`)]);
  host = await startHost({ stateDir: localDir, webRoot: null, remotes: { retryMs: 300 } });
  api = (await connectToHost(localDir))!;
  await until('the remote to connect', async () => (await api.hosts()).find((h) => h.name === 'other')?.state === 'connected');
  // Interleaved in time: two local, one there, and so on.
  for (let i = 0; i < 12; i++) {
    const there = i % 3 === 2;
    const started = there ? await api.start({ argv: ['true'] }, { host: 'other' }) : await api.start({ argv: ['true'] });
    await api.wait(started.id);
    (there ? remoteIds : localIds).push(started.id);
  }
}, 90_000);

afterAll(async () => {
  await host?.shutdown();
  await stopBackgroundHosts([remoteDir]);
  for (const dir of [localDir, remoteDir]) rmSync(dir, { recursive: true, force: true });
}, 60_000);

describe('the history of every host, paged', () => {
  it.each([1, 3, 5, 50])('gives every run of both hosts once, newest first, %i to a page', async (limit) => {
    const seen: RunSummary[] = [];
    let cursor: string | null = null;
    let first = true;
    for (let pages = 0; pages < 30; pages++) {
      const page = await api.history({ host: '*', state: 'ended', limit, ...(cursor ? { cursor } : {}), counts: first });
      if (first) expect(page.counts?.total).toBe(12);
      first = false;
      expect(page.runs.length).toBeLessThanOrEqual(limit);
      seen.push(...page.runs);
      // A page with more to come holds runs, and its cursor is a new one: the loop moves forward.
      if (page.nextCursor !== null) expect(page.runs.length).toBeGreaterThan(0);
      expect(page.nextCursor === null || page.nextCursor !== cursor, 'a cursor given again').toBe(true);
      cursor = page.nextCursor;
      if (cursor === null) break;
    }
    expect(cursor).toBeNull();
    expect(seen.map((r) => r.id).sort()).toEqual([...localIds, ...remoteIds].sort());
    expect(seen.filter((r) => r.id.endsWith('@other')).every((r) => r.host === 'other')).toBe(true);
    const starts = seen.map((r) => r.startedAt);
    expect(starts).toEqual([...starts].sort().reverse());
  });

  it('one host alone, and a cursor that is not one it gave refused', async () => {
    const there = await api.history({ host: 'other', state: 'ended' });
    expect(there.runs.map((r) => r.id).sort()).toEqual([...remoteIds].sort());
    const here = await api.history({ state: 'ended' });
    expect(here.runs.map((r) => r.id).sort()).toEqual([...localIds].sort());
    await expect(api.history({ host: '*', cursor: 'h:bm90IGpzb24' })).rejects.toThrow(/not one a history page of all hosts gave/);
  });

  it("pages a remote run's output through the relay, and answers the run without it", async () => {
    const started = await api.start({ argv: ['python3', '-c', "for i in range(10000): print(f'{i:06d} é out')"] }, { host: 'other' });
    const whole = await api.wait(started.id);
    expect(whole.stdout.length).toBe(130_000);
    expect(await api.get(started.id, { output: 'none' })).toMatchObject({ id: started.id, host: 'other', stdout: '', outputChars: { stdout: 130_000, stderr: 0 } });
    let joined = '';
    for (let offset = 0, pages = 0; pages < 10; pages++) {
      const page = await api.output(started.id, { stream: 'stdout', offset, limit: 50_000 });
      expect(page).toMatchObject({ id: started.id, offset, total: 130_000, state: 'ended' });
      joined += page.text;
      if (page.next >= page.total) break;
      expect(page.next, 'a page that is not the last moves forward').toBeGreaterThan(offset);
      offset = page.next;
    }
    expect(joined).toBe(whole.stdout);
    const bareId = started.id.slice(0, started.id.indexOf('@'));
    await expect(api.output(`${bareId.slice(0, -1)}${bareId.endsWith('0') ? '1' : '0'}@other`, { stream: 'stdout' })).rejects.toThrow(/No run/);
  });
});
