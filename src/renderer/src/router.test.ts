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
  });

  it('writes them back', () => {
    expect(hrefOf({ view: 'run', id: 'abc123', tab: null })).toBe('#/runs/abc123');
    expect(hrefOf({ view: 'run', id: 'abc123', tab: 'tree' })).toBe('#/runs/abc123/tree');
  });
});
