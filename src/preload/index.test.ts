// The preload with 'electron' mocked: window.warden is exposed through the
// context bridge, and each call goes to its IPC channel with its arguments.

import { describe, expect, it, vi } from 'vitest';

const exposed: Record<string, unknown> = {};
// The main process answers every call with an IpcAnswer (src/shared/errors.ts); this one echoes the call.
const invoke = vi.fn(async (...args: unknown[]): Promise<unknown> => ({ ok: true, value: args }));
const listeners = new Map<string, (event: unknown, payload: unknown) => void>();

vi.mock('electron', () => ({
  contextBridge: { exposeInMainWorld: (key: string, value: unknown) => (exposed[key] = value) },
  ipcRenderer: {
    invoke,
    on: (channel: string, fn: (event: unknown, payload: unknown) => void) => listeners.set(channel, fn),
    removeListener: (channel: string) => listeners.delete(channel),
  },
}));

describe('the preload', () => {
  it('exposes the Warden API as window.warden over IPC', async () => {
    await import('./index');
    const api = exposed.warden as import('../shared/api').WardenApi;
    expect(Object.keys(api).sort()).toEqual(['closeSession', 'extend', 'get', 'history', 'host', 'hosts', 'input', 'list', 'output', 'restartSession', 'saveSettings', 'sessions', 'settings', 'signal', 'start', 'stop', 'subscribe', 'timeline', 'wait']);
    await api.start({ argv: ['true'] });
    await api.start({ code: 'print(1)', session: 'work' });
    await api.start({ argv: ['true'] }, { host: 'gpu' });
    await api.stop('abc123', { force: true });
    await api.wait('abc123', { timeoutMs: 500, output: 'unseen' });
    await api.extend('abc123', 30_000);
    await api.input('abc123', { text: 'y\n', eof: true });
    await api.signal('abc123', 4321, 'TERM');
    await api.history({ verdict: 'failed', limit: 5 });
    await api.timeline('abc123');
    await api.get('abc123', { output: 'none' });
    await api.output!('abc123', { stream: 'stderr', offset: 262_144, limit: 262_144 });
    await api.host();
    await api.hosts!();
    await api.sessions();
    await api.restartSession('work');
    await api.closeSession('work');
    expect(invoke.mock.calls).toEqual([
      ['warden:start', { argv: ['true'] }],
      ['warden:start', { code: 'print(1)', session: 'work' }],
      ['warden:start', { argv: ['true'] }, { host: 'gpu' }],
      ['warden:stop', 'abc123', { force: true }],
      ['warden:wait', 'abc123', { timeoutMs: 500, output: 'unseen' }],
      ['warden:extend', 'abc123', 30_000],
      ['warden:input', 'abc123', { text: 'y\n', eof: true }],
      ['warden:signal', 'abc123', 4321, 'TERM'],
      ['warden:history', { verdict: 'failed', limit: 5 }],
      ['warden:timeline', 'abc123'],
      ['warden:get', 'abc123', { output: 'none' }],
      ['warden:output', 'abc123', { stream: 'stderr', offset: 262_144, limit: 262_144 }],
      ['warden:host'],
      ['warden:hosts'],
      ['warden:sessions'],
      ['warden:restart-session', 'work'],
      ['warden:close-session', 'work'],
    ]);
    const seen: unknown[] = [];
    const unsubscribe = api.subscribe((e) => seen.push(e));
    listeners.get('warden:event')!({}, [{ type: 'output', runId: 'x', stream: 'stdout', text: 'a', offset: 0 }, { type: 'ended', runId: 'x' }]);
    listeners.get('warden:event')!({}, 'not a batch');
    expect(seen).toEqual([{ type: 'output', runId: 'x', stream: 'stdout', text: 'a', offset: 0 }, { type: 'ended', runId: 'x' }]);
    unsubscribe();
    expect(listeners.has('warden:event')).toBe(false);
  });

  it('throws an error answer again as a WardenError with its kind and line', async () => {
    await import('./index');
    const api = exposed.warden as import('../shared/api').WardenApi;
    invoke.mockResolvedValueOnce({ ok: false, kind: 'not-found', error: 'No run with id "abcdef012345".' });
    await expect(api.stop('abcdef012345')).rejects.toMatchObject({ name: 'WardenError', kind: 'not-found', message: 'No run with id "abcdef012345".' });
    invoke.mockResolvedValueOnce({ ok: false, kind: 'busy', error: 'The session "s" is busy.' });
    await expect(api.start({ code: 'pass', session: 's' })).rejects.toMatchObject({ kind: 'busy' });
    invoke.mockResolvedValueOnce({ ok: true, value: null });
    await expect(api.get('abcdef012345')).resolves.toBeNull();
  });
});
