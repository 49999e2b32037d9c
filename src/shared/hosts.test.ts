// Run ids across hosts: a remote's run is ID@HOST, and nothing else parses as one.

import { describe, expect, it } from 'vitest';
import { hostChoice, hostOf, hostRunId, splitRunId } from './hosts';

describe('run ids across hosts', () => {
  it('names a remote run ID@HOST and reads it back; a local id stays as it is', () => {
    expect(hostRunId('abc123', 'gpu')).toBe('abc123@gpu');
    expect(hostRunId('abc123', 'local')).toBe('abc123');
    expect(hostRunId('abc123', null)).toBe('abc123');
    expect(splitRunId('abc123@gpu-1.lab')).toEqual({ id: 'abc123', host: 'gpu-1.lab' });
    expect(splitRunId('abc123')).toEqual({ id: 'abc123', host: null });
    expect(hostOf('abc123@gpu')).toBe('gpu');
    expect(hostOf('abc123')).toBe('local');
  });

  it('refuses what is not a run of a host: options, paths, the local name, a bad id', () => {
    for (const bad of ['abc123@', 'abc123@-oProxyCommand=x', 'abc123@../x', 'abc123@local', 'xyz@gpu', 'abc123@gpu@x', '@gpu', 'ABC123']) expect(splitRunId(bad)).toBeNull();
  });

  it('takes local, a remote name, or * where all hosts are allowed', () => {
    expect(hostChoice(undefined, true)).toBeUndefined();
    expect(hostChoice('gpu', false)).toBe('gpu');
    expect(hostChoice('*', true)).toBe('*');
    expect(() => hostChoice('*', false)).toThrow(/host is 'local' or a remote's name/);
    expect(() => hostChoice('-x', true)).toThrow(/not "-x"/);
    expect(() => hostChoice(3, true)).toThrow();
  });
});
