// Who started a run, in its result and its history row, so lists group runs
// by it: the process a run is owned by (?ownerPid, an agent's), else what the
// request says (a terminal's shell), checked as one line.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpWardenApi } from '../../shared/http-api';
import { NodeTransport } from '../../client/transport';
import { processStartTime } from './owner-pids';
import { startHost, type Host } from './host';
import { withOwner } from '../../cli/main';

describe('who started a run', () => {
  let host: Host;
  let api: HttpWardenApi;
  beforeAll(async () => {
    host = await startHost({ stateDir: mkdtempSync(join(tmpdir(), 'wow-')), webRoot: null });
    api = new HttpWardenApi(new NodeTransport({ socketPath: host.socketPath }));
  }, 30_000);
  afterAll(async () => {
    await host?.shutdown();
  });

  it('is the owning process when there is one, over what the body says', async () => {
    const started = await api.start({ argv: ['true'], owner: { label: 'ignored', pid: 7 } }, { ownerPid: { pid: process.pid, startTime: processStartTime(process.pid)!, label: 'warden mcp for claude-code' } });
    const done = await api.wait(started.id, { timeoutMs: 30_000 });
    expect(done.owner).toEqual({ label: 'warden mcp for claude-code', pid: process.pid });
    const listed = (await api.history({ limit: 5 })).runs.find((r) => r.id === done.id);
    expect(listed?.owner).toEqual({ label: 'warden mcp for claude-code', pid: process.pid });
  });

  it("is the request's own word otherwise, one line; none when it names none", async () => {
    const said = await api.wait((await api.start({ argv: ['true'], owner: { label: 'bash\n\u202eevil', pid: 4242 } })).id, { timeoutMs: 30_000 });
    expect(said.owner).toEqual({ label: 'bash  evil', pid: 4242 });
    const python = await api.wait((await api.start({ code: 'x = 1', session: 'owners', owner: { label: 'zsh' } })).id, { timeoutMs: 60_000 });
    expect(python.owner).toEqual({ label: 'zsh', pid: null });
    const none = await api.wait((await api.start({ argv: ['true'] })).id, { timeoutMs: 30_000 });
    expect(none.owner).toBeUndefined();
    await expect(api.start({ argv: ['true'], owner: { label: '' } })).rejects.toThrow(/owner/);
    await expect(api.start({ argv: ['true'], owner: { label: 'x', pid: -1 } } as never)).rejects.toThrow(/owner/);
  });

  it('is the shell a terminal ran warden run from, unless an owner pid names another', () => {
    expect(withOwner({ argv: ['true'] }, true, 321, () => 'zsh')).toEqual({ argv: ['true'], owner: { label: 'zsh', pid: 321 } });
    expect(withOwner({ argv: ['true'] }, true, 321, () => null)).toEqual({ argv: ['true'], owner: { label: 'process 321', pid: 321 } });
    expect(withOwner({ argv: ['true'] }, false, 321, () => 'zsh')).toEqual({ argv: ['true'] });
    expect(withOwner({ argv: ['true'], owner: { label: 'mine' } }, true, 321, () => 'zsh')).toEqual({ argv: ['true'], owner: { label: 'mine' } });
    expect(withOwner({ argv: ['true'] }, true, 1, () => 'init')).toEqual({ argv: ['true'] });
  });
});
