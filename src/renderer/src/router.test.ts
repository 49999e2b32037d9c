import { describe, expect, it } from 'vitest';
import { hrefOf, parseRoute } from './router';

describe('routes', () => {
  it('reads a run link with and without a tab', () => {
    expect(parseRoute('#/runs/abc123')).toEqual({ view: 'run', id: 'abc123', tab: null });
    expect(parseRoute('#/runs/abc123/script')).toEqual({ view: 'run', id: 'abc123', tab: 'script' });
    expect(parseRoute('#/runs/abc123/summary')).toEqual({ view: 'run', id: 'abc123', tab: 'summary' });
    expect(parseRoute('#/runs/abc123/nonsense')).toEqual({ view: 'run', id: 'abc123', tab: null });
    expect(parseRoute('#/history')).toEqual({ view: 'history' });
    expect(parseRoute('')).toEqual({ view: 'runs' });
    // A remote's run, ID@HOST; never a name that is an option or the local host's.
    expect(parseRoute('#/runs/abc123@gpu/output')).toEqual({ view: 'run', id: 'abc123@gpu', tab: 'output' });
    expect(hrefOf({ view: 'run', id: 'abc123@gpu', tab: null })).toBe('#/runs/abc123@gpu');
    expect(parseRoute('#/runs/abc123@-x')).toEqual({ view: 'runs' });
    expect(parseRoute('#/runs/abc123@local')).toEqual({ view: 'runs' });
  });

  it('reads and writes links to lines of the output', () => {
    expect(parseRoute('#/runs/abc123/output/L120')).toEqual({ view: 'run', id: 'abc123', tab: 'output', lines: { stream: 'all', from: 120, to: 120 } });
    expect(parseRoute('#/runs/abc123/output/L140-L120')).toMatchObject({ lines: { stream: 'all', from: 120, to: 140 } });
    expect(parseRoute('#/runs/abc123/output/stderr:L3-L4')).toMatchObject({ lines: { stream: 'stderr', from: 3, to: 4 } });
    expect(parseRoute('#/runs/abc123/output/L0')).toEqual({ view: 'run', id: 'abc123', tab: 'output' });
    expect(hrefOf({ view: 'run', id: 'abc123', tab: 'output', lines: { stream: 'stdout', from: 5, to: 9 } })).toBe('#/runs/abc123/output/stdout:L5-L9');
    expect(hrefOf({ view: 'run', id: 'abc123', tab: 'output', lines: { stream: 'all', from: 7, to: 7 } })).toBe('#/runs/abc123/output/L7');
  });

  it('writes them back', () => {
    expect(hrefOf({ view: 'run', id: 'abc123', tab: null })).toBe('#/runs/abc123');
    expect(hrefOf({ view: 'run', id: 'abc123', tab: 'tree' })).toBe('#/runs/abc123/tree');
  });
});
