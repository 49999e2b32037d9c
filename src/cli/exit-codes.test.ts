// The exit-code contracts as tables: every verdict to its status under k8s,
// the contract chosen by flags and the environment, and the flags' checks.
// The same contract on real runs in a PID namespace: exit-codes-pod.test.ts.

import { describe, expect, it } from 'vitest';
import type { RunResult } from '../shared/result';
import { parseAnyRunArgs } from './args';
import { CONTRACT_NAMES, exitCodeChoice, exitStatusUnder, k8sExitStatus, parseExitCodes, parseOomExitCode } from './exit-codes';
import { exitStatusFor } from './render';
import { argvWithin } from './termination-log';

const ended = (fields: Partial<RunResult>): RunResult =>
  ({
    id: 'abcdef123456', kind: 'command', argv: ['x'], cwd: '/', state: 'ended', exitCode: null, signal: null,
    startedAt: '2026-01-01T00:00:00.000Z', elapsedMs: 10, limitMs: null, advice: null, notes: [],
    stdout: '', stderr: '', stdoutTruncated: 0, stderrTruncated: 0, ...fields,
  }) as RunResult;

describe('k8sExitStatus: every verdict to its status', () => {
  const rows: [string, Partial<RunResult>, number, number][] = [
    // name, result, under k8s with the OOM code 75, under standard
    ['completed', { verdict: 'completed', exitCode: 0 }, 0, 0],
    ['failed: its own code', { verdict: 'failed', exitCode: 3 }, 3, 3],
    ["failed: its own 124 stays (the verdict tells it from a timeout)", { verdict: 'failed', exitCode: 124 }, 124, 124],
    ['failed with no code (never seen): ours', { verdict: 'failed' }, 125, 125],
    ['timed out by SIGINT', { verdict: 'timed-out', signal: 'SIGINT' }, 124, 124],
    ['timed out by SIGKILL at the grace', { verdict: 'timed-out', signal: 'SIGKILL' }, 124, 124],
    ['timed out with its own exit', { verdict: 'timed-out', exitCode: 1 }, 124, 124],
    ['stopped by SIGINT', { verdict: 'stopped', signal: 'SIGINT' }, 143, 130],
    ['stopped by SIGKILL (forced)', { verdict: 'stopped', signal: 'SIGKILL' }, 143, 137],
    ['stopped, exiting 0 on SIGINT', { verdict: 'stopped', exitCode: 0 }, 143, 0],
    ['killed, OOM confirmed', { verdict: 'killed', signal: 'SIGKILL', oom: { confirmed: true } }, 75, 137],
    ["killed, a shell's 137 with the OOM counter risen", { verdict: 'killed', exitCode: 137, oom: { confirmed: true } }, 75, 137],
    ['killed, OOM not confirmed', { verdict: 'killed', signal: 'SIGKILL', oom: { confirmed: false } }, 137, 137],
    ['killed, no memory limit watched', { verdict: 'killed', signal: 'SIGKILL' }, 137, 137],
    ["killed, a shell's 137 without OOM", { verdict: 'killed', exitCode: 137 }, 137, 137],
    ['killed with neither code nor signal (never seen): ours', { verdict: 'killed' }, 125, 125],
    ['crashed: SIGSEGV', { verdict: 'crashed', signal: 'SIGSEGV' }, 139, 139],
    ["crashed: a shell's 134 for its child", { verdict: 'crashed', exitCode: 134 }, 134, 134],
    ['crashed with neither (never seen): ours', { verdict: 'crashed' }, 125, 125],
    ['signaled: SIGUSR1', { verdict: 'signaled', signal: 'SIGUSR1' }, 138, 138],
    ['signaled: SIGHUP', { verdict: 'signaled', signal: 'SIGHUP' }, 129, 129],
    ['signaled by a name the system lacks: its code', { verdict: 'signaled', signal: 'SIGNOPE', exitCode: 2 }, 2, 128],
    ['signaled with neither (never seen): ours', { verdict: 'signaled' }, 125, 125],
    ['spawn-failed: not found', { verdict: 'spawn-failed', exitCode: 127 }, 127, 127],
    ['spawn-failed: cannot run', { verdict: 'spawn-failed', exitCode: 126 }, 126, 126],
    ['spawn-failed without a code: ours', { verdict: 'spawn-failed' }, 125, 125],
    ['lost: its host went away', { verdict: 'lost', signal: 'SIGKILL' }, 125, 137],
    ['no verdict yet: the standard reading', { state: 'running', exitCode: 5 }, 5, 5],
  ];
  for (const [name, fields, k8s, standard] of rows) {
    it(name, () => {
      const result = ended(fields);
      expect(k8sExitStatus(result, 75)).toBe(k8s);
      expect(exitStatusUnder({ contract: 'k8s', oomExitCode: 75 }, result)).toBe(k8s);
      expect(exitStatusUnder({ contract: 'standard', oomExitCode: 75 }, result)).toBe(standard);
      expect(exitStatusFor(result)).toBe(standard);
    });
  }

  it('the OOM code defaults to 137', () => {
    expect(k8sExitStatus(ended({ verdict: 'killed', exitCode: 137, oom: { confirmed: true } }))).toBe(137);
  });
});

describe('exitCodeChoice', () => {
  const pod = { KUBERNETES_SERVICE_HOST: '10.96.0.1' };
  const rows: [string, { exitCodes?: 'standard' | 'k8s'; oomExitCode?: number }, NodeJS.ProcessEnv, { contract: string; oomExitCode: number }][] = [
    ['outside a pod: standard', {}, {}, { contract: 'standard', oomExitCode: 137 }],
    ['an empty KUBERNETES_SERVICE_HOST is not a pod', {}, { KUBERNETES_SERVICE_HOST: '' }, { contract: 'standard', oomExitCode: 137 }],
    ['inside a pod: k8s', {}, pod, { contract: 'k8s', oomExitCode: 137 }],
    ['inside a pod, asked for standard', { exitCodes: 'standard' }, pod, { contract: 'standard', oomExitCode: 137 }],
    ['outside, asked for k8s', { exitCodes: 'k8s' }, {}, { contract: 'k8s', oomExitCode: 137 }],
    ['--oom-exit-code alone asks for k8s', { oomExitCode: 75 }, {}, { contract: 'k8s', oomExitCode: 75 }],
    ['--oom-exit-code in a pod', { oomExitCode: 88 }, pod, { contract: 'k8s', oomExitCode: 88 }],
  ];
  for (const [name, given, env, want] of rows) it(name, () => expect(exitCodeChoice(given, env)).toEqual(want));

  it('--oom-exit-code with --exit-codes standard is refused', () => {
    expect(() => exitCodeChoice({ exitCodes: 'standard', oomExitCode: 75 }, pod)).toThrow(/^--oom-exit-code goes with --exit-codes k8s/);
  });

  it('names the contracts as the termination message does', () => {
    expect(CONTRACT_NAMES).toEqual({ standard: 'standard/v1', k8s: 'k8s/v1' });
  });
});

describe('--exit-codes and --oom-exit-code', () => {
  it('take their values, on commands and Python scripts', () => {
    expect(parseAnyRunArgs(['--exit-codes', 'k8s', '--oom-exit-code', '75', '--', 'true'])).toMatchObject({ exitCodes: 'k8s', oomExitCode: 75 });
    expect(parseAnyRunArgs(['--exit-codes=standard', 'true'])).toMatchObject({ exitCodes: 'standard' });
    expect(parseAnyRunArgs(['--python', '--exit-codes', 'k8s', '-c', 'pass'])).toMatchObject({ exitCodes: 'k8s' });
    expect(parseAnyRunArgs(['true'])).not.toHaveProperty('exitCodes');
    expect(parseAnyRunArgs(['true'])).not.toHaveProperty('oomExitCode');
  });

  it('refuse what they cannot mean, in one line', () => {
    expect(() => parseExitCodes('K8S')).toThrow('--exit-codes takes standard or k8s, not "K8S".');
    expect(parseExitCodes('k8s')).toBe('k8s');
    expect(parseExitCodes('standard')).toBe('standard');
    for (const bad of ['0', '256', '-1', '7.5', '', 'x', '0075']) expect(() => parseOomExitCode(bad), bad).toThrow(/^--oom-exit-code takes a status from 1 to 255/);
    for (const [code, meaning] of [[124, 'timed out'], [125, "Warden's own error"], [126, 'could not be run'], [127, 'not found'], [143, 'stopped on request']] as const) {
      expect(() => parseOomExitCode(String(code))).toThrow(new RegExp(`^--oom-exit-code ${code} would read as .*${meaning}`));
    }
    for (const good of [1, 75, 137, 255]) expect(parseOomExitCode(String(good))).toBe(good);
  });
});

describe('argvWithin', () => {
  it('keeps argv that fits whole, else the first words and "…"', () => {
    expect(argvWithin(['python3', 'train.py'])).toEqual(['python3', 'train.py']);
    expect(argvWithin([])).toEqual([]);
    const exact = ['a'.repeat(506)]; // ["aaa…"] is 510 bytes
    expect(argvWithin(exact, 510)).toEqual(exact);
    expect(argvWithin(exact, 509)).toEqual(['…']);
    const long = ['sh', '-c', 'x'.repeat(600), 'tail'];
    const cut = argvWithin(long);
    expect(cut).toEqual(['sh', '-c', '…']);
    expect(Buffer.byteLength(JSON.stringify(argvWithin(Array.from({ length: 200 }, (_, i) => `word${i}`))))).toBeLessThanOrEqual(512);
    expect(argvWithin(Array.from({ length: 200 }, (_, i) => `word${i}`)).at(-1)).toBe('…');
  });
});
