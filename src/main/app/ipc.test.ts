// IPC handlers against the real engine: a real command runs through the same
// path the renderer uses, and bad input is refused before the engine.

import { describe, expect, it } from 'vitest';
import { IPC, type OutputPage } from '../../shared/api';
import type { RunEvent } from '../../shared/events';
import type { RunResult, SessionInfo } from '../../shared/result';
import { DEFAULT_SETTINGS } from '../../shared/settings';
import { fromIpcAnswer, type ErrorKind } from '../../shared/errors';
import { forwardEvents, registerIpc, trustedSender, type IpcMainLike } from './ipc';
import { APP_ENTRY, APP_ORIGIN } from './protocol';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeCommandRemote, saveRemotes } from '../../client/remotes';
import type { HostStatus } from '../../shared/hosts';
import type { RunPage } from '../../shared/history';
import { federate } from '../host/federated-api';
import { RemoteHosts } from '../host/remote-hosts';
import { engineApi } from '../supervisor/api';
import { Supervisor } from '../supervisor/supervisor';

type Handler = (event: { senderFrame?: { url: string } | null }, ...args: unknown[]) => unknown;

function setup(wrap: (api: ReturnType<typeof engineApi>) => ReturnType<typeof engineApi> = (a) => a) {
  const handlers = new Map<string, Handler>();
  const ipc: IpcMainLike = { handle: (c, fn) => void handlers.set(c, fn), removeHandler: (c) => void handlers.delete(c) };
  const api = wrap(engineApi(new Supervisor()));
  const unregister = registerIpc(ipc, api, [APP_ORIGIN]);
  const frame = { senderFrame: { url: APP_ENTRY } };
  // Each answer as the preload takes it: the value, or its error thrown again (src/shared/errors.ts).
  const call = (channel: string, ...args: unknown[]) => Promise.resolve().then(() => handlers.get(channel)!(frame, ...args)).then((answer) => fromIpcAnswer(answer));
  return { handlers, api, unregister, call };
}

describe('IPC handlers', () => {
  it('start, wait and get a real run, and forward its events', async () => {
    const { api, call } = setup();
    const events: RunEvent[] = [];
    const stop = forwardEvents(api, (channel, batch) => channel === IPC.event && events.push(...batch));
    const started = (await call(IPC.start, { argv: ['bash', '-c', 'echo via-ipc; exit 4'] })) as RunResult;
    const result = (await call(IPC.wait, started.id)) as RunResult;
    stop();
    expect(result.verdict).toBe('failed');
    expect(result.exitCode).toBe(4);
    expect(result.stdout).toBe('via-ipc\n');
    expect(((await call(IPC.get, started.id)) as RunResult).state).toBe('ended');
    expect(events.map((e) => e.type)).toContain('ended');
  });

  it('answers a run without its output, and its output in pages that put together are the stream', async () => {
    const { call } = setup();
    // 130,000 characters on stdout (numbered lines, a multi-byte one among them), one line on stderr.
    const started = (await call(IPC.start, { argv: ['python3', '-c', "import sys\nfor i in range(10000): print(f'{i:06d} é out')\nprint('err line', file=sys.stderr)"] })) as RunResult;
    const whole = (await call(IPC.wait, started.id)) as RunResult;
    expect(whole.stdout.length).toBe(130_000);
    const bare = (await call(IPC.get, started.id, { output: 'none' })) as RunResult;
    expect(bare).toMatchObject({ id: started.id, state: 'ended', verdict: 'completed', stdout: '', stderr: '', outputChars: { stdout: 130_000, stderr: 9 } });
    let joined = '';
    let offset = 0;
    let pages = 0;
    for (;;) {
      const page = (await call(IPC.output, started.id, { stream: 'stdout', offset, limit: 50_000 })) as OutputPage;
      expect(page).toMatchObject({ id: started.id, stream: 'stdout', offset, total: 130_000, state: 'ended' });
      expect(page.text.length).toBeLessThanOrEqual(50_000);
      joined += page.text;
      pages++;
      if (page.next >= page.total) break;
      expect(page.next, 'a page that is not the last moves forward').toBeGreaterThan(offset);
      offset = page.next;
    }
    expect(pages).toBe(3);
    expect(joined).toBe(whole.stdout);
    expect(await call(IPC.output, started.id, { stream: 'stderr' })).toMatchObject({ offset: 0, text: 'err line\n', next: 9, total: 9 });
    expect(await call(IPC.output, started.id, { stream: 'stderr', offset: 500 })).toMatchObject({ offset: 9, text: '', next: 9 });
  });

  it('runs a Python script in a session, lists, restarts and closes the session', async () => {
    const { call } = setup();
    const started = (await call(IPC.start, { code: 'x = 6 * 7\nprint(x)', session: 'ipc' })) as RunResult;
    expect(started).toMatchObject({ kind: 'python', session: 'ipc' });
    const result = (await call(IPC.wait, started.id)) as RunResult;
    expect(result).toMatchObject({ verdict: 'completed', stdout: '42\n' });
    const sessions = (await call(IPC.sessions)) as SessionInfo[];
    expect(sessions).toMatchObject([{ name: 'ipc', state: 'idle', scriptsRun: 1 }]);
    expect(await call(IPC.restartSession, 'ipc')).toMatchObject({ name: 'ipc', pid: null });
    expect(await call(IPC.closeSession, 'ipc')).toMatchObject({ name: 'ipc', state: 'closed' });
    expect(await call(IPC.sessions)).toEqual([]);
  });

  it('wait with a timeout yields the running snapshot, and stop ends the run', async () => {
    const { call } = setup();
    const started = (await call(IPC.start, { argv: ['sleep', '30'] })) as RunResult;
    const yielded = (await call(IPC.wait, started.id, { timeoutMs: 50 })) as RunResult;
    expect(yielded.state).toBe('running');
    await call(IPC.stop, started.id, {});
    const result = (await call(IPC.wait, started.id)) as RunResult;
    expect(result.verdict).toBe('stopped');
    expect(result.stop?.reason).toBe('user');
  });

  it.each([
    [IPC.start, ['not an object'], /object/],
    [IPC.start, [{ argv: ['true'], evil: 1 }], /no field "evil"/],
    [IPC.start, [{ argv: [] }], /argv: needs at least the command/],
    [IPC.start, [{ argv: ['true'], limitMs: -5 }], /limitMs/],
    [IPC.start, [{ code: 'pass', argv: ['true'] }], /not both/],
    [IPC.start, [{ code: 'pass', shell: true }], /Python run request has no field "shell"/],
    [IPC.start, [{ code: 42 }], /code: must be a string/],
    [IPC.start, [{ code: 'pass', session: '../x' }], /session name/],
    [IPC.start, [{ code: 'pass', onBusy: 'wait' }], /onBusy/],
    [IPC.restartSession, ['a b'], /session name/],
    [IPC.closeSession, [7], /session name/],
    [IPC.closeSession, ['nope'], /No session named "nope"/],
    [IPC.wait, ['../../etc'], /hex/],
    [IPC.wait, ['abcdef012345', 'soon'], /wait options/i],
    [IPC.wait, ['abcdef012345', { timeoutMs: 'soon' }], /timeoutMs: must be a number of milliseconds/],
    [IPC.extend, ['abcdef012345', 0], /byMs: must be more than 0/],
    [IPC.signal, ['abcdef012345', 12, 'HUP'], /signal: must be "TERM" or "KILL"/],
    [IPC.signal, ['abcdef012345', -3, 'KILL'], /pid: must be a positive process id/],
    [IPC.signal, ['abcdef012345', 12, 'KILL'], /No run/],
    [IPC.history, [{ verdict: 'great' }], /verdict: must be one or more of/],
    [IPC.history, [{ evil: 1 }], /no field "evil"/],
    [IPC.timeline, ['zz'], /hex/],
    [IPC.get, [42], /hex/],
    [IPC.get, ['abcdef012345', { output: 'some' }], /output is none or all/],
    [IPC.output, ['../x', { stream: 'stdout' }], /hex/],
    [IPC.output, ['abcdef012345'], /takes \{ stream/],
    [IPC.output, ['abcdef012345', { stream: 'both' }], /stream is stdout or stderr/],
    [IPC.output, ['abcdef012345', { stream: 'stdout', offset: -1 }], /offset takes a whole number/],
    [IPC.output, ['abcdef012345', { stream: 'stdout', offset: 1.5 }], /offset takes a whole number/],
    [IPC.output, ['abcdef012345', { stream: 'stdout', limit: 0 }], /limit takes a whole number from 1 to 1000000/],
    [IPC.output, ['abcdef012345', { stream: 'stdout', limit: '10' }], /limit takes a whole number/],
    [IPC.output, ['abcdef012345', { stream: 'stdout', from: 3 }], /not from/],
    [IPC.output, ['abcdef012345', { stream: 'stdout' }], /No run/],
    [IPC.stop, ['abcdef012345'], /No run/],
    [IPC.stop, ['abcdef012345', { force: 'yes' }], /force: must be true or false/],
    [IPC.saveSettings, [{ graceMs: 5 }], /settings|defaultLimitMs/],
    [IPC.saveSettings, [{ ...DEFAULT_SETTINGS, graceMs: -1 }], /graceMs: must be from 0 to/],
    [IPC.saveSettings, [{ ...DEFAULT_SETTINGS, retention: { maxRuns: 0, maxBytes: 2 ** 30 } }], /retention.maxRuns: must be at least 1/],
    [IPC.saveSettings, [{ ...DEFAULT_SETTINGS, evil: true }], /no field "evil"/],
  ])('%s refuses bad input %j', async (channel, args, message) => {
    const { call } = setup();
    await expect(call(channel, ...args)).rejects.toThrow(message);
  });

  it('answers an error with its kind and line, which the preload throws again as a WardenError', async () => {
    const { handlers, call } = setup();
    const answer = (channel: string, ...args: unknown[]) => handlers.get(channel)!({ senderFrame: { url: APP_ENTRY } }, ...args);
    expect(await answer(IPC.stop, 'abcdef012345')).toEqual({ ok: false, kind: 'not-found', error: 'No run with id "abcdef012345".' });
    expect(await answer(IPC.start, { argv: [] })).toMatchObject({ ok: false, kind: 'bad-input' });
    await expect(call(IPC.closeSession, 'nope')).rejects.toMatchObject({ name: 'WardenError', kind: 'not-found' satisfies ErrorKind, message: 'No session named "nope".' });
    // A session holding a script refuses the next one with onBusy "refuse": busy, not bad input.
    const held = (await call(IPC.start, { code: 'import time\ntime.sleep(30)', session: 'held' })) as RunResult;
    expect(await answer(IPC.start, { code: 'pass', session: 'held', onBusy: 'refuse' })).toMatchObject({ ok: false, kind: 'busy', error: expect.stringMatching(/^The session "held" is busy with run /) });
    await call(IPC.stop, held.id, { force: true });
    await call(IPC.closeSession, 'held');
  });

  it('extends a live run, reads history, timeline, host info and settings, and stores settings', async () => {
    const { call } = setup();
    const started = (await call(IPC.start, { argv: ['sleep', '30'], limitMs: 60_000 })) as RunResult;
    expect(((await call(IPC.extend, started.id, 30_000)) as RunResult).limitMs).toBe(90_000);
    await call(IPC.stop, started.id, { force: true });
    expect(((await call(IPC.wait, started.id, { output: 'all' })) as RunResult).verdict).toBe('stopped');
    expect(await call(IPC.history, { limit: 5 })).toEqual({ runs: [], nextCursor: null });
    expect(await call(IPC.timeline, started.id)).toEqual([]);
    expect(await call(IPC.host)).toMatchObject({ pid: process.pid });
    expect(await call(IPC.settings)).toEqual(DEFAULT_SETTINGS);
    const next = { ...DEFAULT_SETTINGS, defaultLimitMs: 30_000, memory: '512M' };
    expect(await call(IPC.saveSettings, next)).toEqual(next);
    expect(await call(IPC.settings)).toEqual(next);
  });

  it("takes a run's host, a history's host and hosts=all, and refuses a host that is not a name", async () => {
    // A remote whose command fails at once stands for a machine that is not there.
    const stateDir = mkdtempSync(join(tmpdir(), 'wipc-'));
    saveRemotes(stateDir, [makeCommandRemote('never', 'false')]);
    const remotes = new RemoteHosts({ stateDir, retryMs: 60_000 });
    try {
      const { call } = setup((engine) => federate(engine, remotes, new Date().toISOString()));
      const hosts = (await call(IPC.hosts)) as HostStatus[];
      expect(hosts.map((h) => [h.name, h.local])).toEqual([
        ['local', true],
        ['never', false],
      ]);
      await expect(call(IPC.start, { argv: ['true'] }, { host: '-oProxyCommand=x' })).rejects.toThrow(/host is 'local' or a remote's name/);
      await expect(call(IPC.start, { argv: ['true'] }, { host: '*' })).rejects.toThrow(/not "\*"/);
      await expect(call(IPC.start, { argv: ['true'] }, { host: 'never' })).rejects.toThrow(/Remote host never cannot be reached now/);
      await expect(call(IPC.get, 'abcdef@never')).rejects.toThrow(/Remote host never cannot be reached now/);
      await expect(call(IPC.get, 'abcdef@nowhere')).rejects.toThrow(/No remote host named "nowhere"/);
      await expect(call(IPC.stop, 'abcdef@-x', {})).rejects.toThrow();
      const started = (await call(IPC.start, { argv: ['true'] }, { host: 'local' })) as RunResult;
      await call(IPC.wait, started.id);
      expect(((await call(IPC.list, { output: 'none', hosts: 'all' })) as RunResult[]).map((r) => r.id)).toContain(started.id);
      await expect(call(IPC.history, { host: '../x' })).rejects.toThrow(/host is 'local', '\*' or a remote's name/);
      expect(((await call(IPC.history, { host: '*' })) as RunPage).runs).toEqual([]);
    } finally {
      remotes.close();
      rmSync(stateDir, { recursive: true, force: true });
    }
  });

  it('refuses calls from other origins, and unregisters', async () => {
    const { handlers, unregister } = setup();
    const denied = { ok: false, kind: 'denied', error: "Calls are accepted from Warden's own window only." };
    await expect(handlers.get(IPC.list)!({ senderFrame: { url: 'http://localhost:9999/' } })).resolves.toEqual(denied);
    await expect(handlers.get(IPC.list)!({ senderFrame: null })).resolves.toEqual(denied);
    // Any file:// page (a downloaded .html, a page a link opened) is not Warden's.
    await expect(handlers.get(IPC.list)!({ senderFrame: { url: 'file:///home/u/Downloads/evil.html' } })).resolves.toEqual(denied);
    await expect(handlers.get(IPC.list)!({ senderFrame: { url: 'app://other/index.html' } })).resolves.toEqual(denied);
    await expect(handlers.get(IPC.list)!({ senderFrame: { url: `${APP_ORIGIN}/index.html#/runs` } })).resolves.toMatchObject({ ok: true, value: expect.any(Array) });
    unregister();
    expect(handlers.size).toBe(0);
  });

  it('trusts only the origins it was given', () => {
    expect(trustedSender('http://localhost:5173/x', ['http://localhost:5173'])).toBe(true);
    expect(trustedSender('http://localhost:5174/x', ['http://localhost:5173'])).toBe(false);
    expect(trustedSender('file:///a', ['http://localhost:5173'])).toBe(false);
    expect(trustedSender('not a url', ['file://'])).toBe(false);
    expect(trustedSender('app://warden/index.html#/runs/abc', ['app://warden'])).toBe(true);
    expect(trustedSender('app://warden.evil/index.html', ['app://warden'])).toBe(false);
    expect(trustedSender('app://warden:8080/index.html', ['app://warden'])).toBe(false);
    // No page without a real origin, even if someone lists one.
    expect(trustedSender('file:///app/out/renderer/index.html', ['file://'])).toBe(false);
    expect(trustedSender('file:///app/out/renderer/index.html', ['null'])).toBe(false);
    expect(trustedSender('data:text/html,<p>x', ['null'])).toBe(false);
    expect(trustedSender('about:blank', ['null', 'about:blank'])).toBe(false);
  });
});
