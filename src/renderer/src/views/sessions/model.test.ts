import { describe, expect, it } from 'vitest';
import type { RunResult, SessionInfo } from '../../../../shared/result';
import { confirmText, needsConfirm, sessionRunsKey, sortSessions } from './model';

const run = (id: string, kind: RunResult['kind'], state: RunResult['state'], stdout = '') => ({ id, kind, state, stdout }) as RunResult;

describe('sessionRunsKey', () => {
  it('changes when a Python script starts or ends, not when it prints', () => {
    const before = sessionRunsKey({ a: run('a', 'python', 'running'), b: run('b', 'command', 'running') }, ['a', 'b']);
    expect(sessionRunsKey({ a: run('a', 'python', 'running', 'lots of output'), b: run('b', 'command', 'ended') }, ['a', 'b'])).toBe(before);
    expect(sessionRunsKey({ a: run('a', 'python', 'ended'), b: run('b', 'command', 'running') }, ['a', 'b'])).not.toBe(before);
    expect(sessionRunsKey({ c: run('c', 'python', 'queued'), a: run('a', 'python', 'running') }, ['c', 'a'])).not.toBe(before);
  });
});

describe('sessions', () => {
  const session = (name: string, over: Partial<SessionInfo> = {}): SessionInfo => ({
    name,
    pid: 1,
    state: 'idle',
    scriptsRun: 0,
    queued: 0,
    running: null,
    pythonVersion: '3.12.1',
    startedAt: null,
    ...over,
  });

  it('sorts by name', () => {
    expect(sortSessions([session('work'), session('alpha'), session('beta')]).map((s) => s.name)).toEqual(['alpha', 'beta', 'work']);
  });

  it('asks before closing, and before a restart that kills a script', () => {
    expect(needsConfirm('close', session('a'))).toBe(true);
    expect(needsConfirm('restart', session('a'))).toBe(false);
    expect(needsConfirm('restart', session('a', { running: 'r1', state: 'busy' }))).toBe(true);
  });

  it('says what the action ends', () => {
    expect(confirmText('close', session('a'))).toBe('Close session a? The interpreter and everything it holds are gone.');
    expect(confirmText('close', session('a', { running: 'r1', queued: 2 }))).toBe(
      'Close session a? This stops its running script and 2 queued scripts. The interpreter and everything it holds are gone.',
    );
    expect(confirmText('close', session('a', { queued: 1 }))).toContain('This stops 1 queued script.');
    expect(confirmText('restart', session('a', { running: 'r1' }))).toContain('running script is killed');
  });
});
