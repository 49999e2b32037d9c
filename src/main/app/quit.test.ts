// The question before quitting an app that hosts live runs.

import { describe, expect, it } from 'vitest';
import type { RunResult } from '../../shared/result';
import { CANCEL_QUIT, STOP_AND_QUIT, formatElapsed, quitPrompt, runLabel } from './quit';

function run(fields: Partial<RunResult>): RunResult {
  return {
    id: 'a1b2c3d4e5f6',
    kind: 'command',
    argv: ['sleep', '60'],
    cwd: '/tmp',
    state: 'running',
    exitCode: null,
    signal: null,
    startedAt: '2026-01-01T00:00:00.000Z',
    elapsedMs: 0,
    limitMs: null,
    advice: null,
    notes: [],
    stdout: '',
    stderr: '',
    stdoutTruncated: 0,
    stderrTruncated: 0,
    ...fields,
  } as RunResult;
}

describe('quitPrompt', () => {
  it('asks nothing when no run is live', () => {
    expect(quitPrompt([])).toBeNull();
  });

  it('lists each live run with its id, command and elapsed time; Cancel is the default', () => {
    const prompt = quitPrompt([
      run({ id: 'aaaaaaaaaaaa', argv: ['bash', '-c', 'make test'], elapsedMs: 192_500 }),
      run({ id: 'bbbbbbbbbbbb', kind: 'python', argv: undefined, code: '\n\nimport time\ntime.sleep(99)', session: 'work', elapsedMs: 4_210 }),
      run({ id: 'cccccccccccc', state: 'queued', kind: 'python', argv: undefined, code: 'print(1)', session: 'work' }),
    ])!;
    expect(prompt.message).toBe('3 runs are live in this Warden. Stop them and quit?');
    expect(prompt.detail).toContain('aaaaaaaaaaaa  bash -c make test — 3 min 12 s');
    expect(prompt.detail).toContain('bbbbbbbbbbbb  import time (session work) — 4.2 s');
    expect(prompt.detail).toContain('cccccccccccc  print(1) (session work) — queued');
    expect(prompt.detail).toMatch(/stopped with the stop sequence .* recorded in the history/);
    expect(prompt.buttons).toEqual([STOP_AND_QUIT, CANCEL_QUIT]);
    expect(prompt.buttons[prompt.confirmId]).toBe('Stop runs and quit');
    expect(prompt.buttons[prompt.cancelId]).toBe('Cancel');
    expect(prompt.defaultId).toBe(prompt.cancelId);
  });

  it('speaks of one run in the singular, and says how many more past ten', () => {
    expect(quitPrompt([run({})])!.message).toBe('A run is live in this Warden. Stop it and quit?');
    const many = quitPrompt(Array.from({ length: 13 }, (_, i) => run({ id: `${i}`.padStart(12, '0') })))!;
    expect(many.detail).toContain('and 3 more');
    expect(many.detail).not.toContain('000000000010');
  });
});

describe('formatting', () => {
  it('elapsed times read like the Runs view', () => {
    expect(formatElapsed(850)).toBe('850 ms');
    expect(formatElapsed(4_290)).toBe('4.2 s');
    expect(formatElapsed(59_999)).toBe('59.9 s');
    expect(formatElapsed(187_000)).toBe('3 min 07 s');
    expect(formatElapsed(7_500_000)).toBe('2 h 05 min');
  });

  it('a long command is cut with an ellipsis; a script with no text is named as one', () => {
    expect(runLabel(run({ argv: ['echo', 'x'.repeat(200)] }), 20)).toBe(`echo ${'x'.repeat(14)}…`);
    expect(runLabel(run({ kind: 'python', argv: undefined, code: '   \n' }))).toBe('a Python script');
  });
});
