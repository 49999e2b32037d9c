import { describe, expect, it } from 'vitest';
import { AFTER_LOGIN_MAX_AGE_MS, afterLoginHash, hrefOf, parseRoute } from './router';

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
    // No run by that id: said so, not the Runs view in silence.
    expect(parseRoute('#/runs/abc123@-x')).toEqual({ view: 'missing', what: 'runs/abc123@-x' });
    expect(parseRoute('#/runs/abc123@local')).toEqual({ view: 'missing', what: 'runs/abc123@local' });
    expect(parseRoute('#/runs/nothex')).toEqual({ view: 'missing', what: 'runs/nothex' });
    expect(parseRoute('#/nowhere/else')).toEqual({ view: 'missing', what: 'nowhere/else' });
    expect(hrefOf({ view: 'missing', what: 'x' })).toBe('#/runs');
    expect(parseRoute('#/runs')).toEqual({ view: 'runs' });
    expect(parseRoute('#/')).toEqual({ view: 'runs' });
  });

  it("carries History's filters in its link", () => {
    expect(parseRoute('#/history?verdict=failed&range=day')).toEqual({ view: 'history', query: 'verdict=failed&range=day' });
    expect(parseRoute('#/history?')).toEqual({ view: 'history' });
    expect(hrefOf({ view: 'history', query: 'verdict=oom' })).toBe('#/history?verdict=oom');
    expect(hrefOf({ view: 'history', query: '' })).toBe('#/history');
    expect(hrefOf({ view: 'history' })).toBe('#/history');
    // A query on another view is no part of its route.
    expect(parseRoute('#/settings?x=1')).toEqual({ view: 'settings' });
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

describe('the route kept across login', () => {
  const now = 1_800_000_000_000;
  const kept = (hash: unknown, at: unknown = now - 1000) => JSON.stringify({ hash, at });

  it('takes a fresh hash route of this app, rebuilt from its parsed route', () => {
    expect(afterLoginHash(kept('#/runs/abc123/output'), now)).toBe('#/runs/abc123/output');
    expect(afterLoginHash(kept('#/runs/abc123/output/L12-L20'), now)).toBe('#/runs/abc123/output/L12-L20');
    expect(afterLoginHash(kept('#/runs/abc123@gpu'), now)).toBe('#/runs/abc123@gpu');
    expect(afterLoginHash(kept('#/history'), now)).toBe('#/history');
    expect(afterLoginHash(kept('#/history?verdict=failed&q=numpy+import'), now)).toBe('#/history?verdict=failed&q=numpy+import');
    // Not a known route: the start page's link, still a hash.
    expect(afterLoginHash(kept('#/nowhere'), now)).toBe('#/runs');
  });

  it('never another origin, a javascript: URL, a path outside the hash or markup', () => {
    for (const hostile of ['https://evil.example/#/runs', '//evil.example/#/runs', 'javascript:alert(1)', '#javascript:alert(1)', '/#/runs', '#/../../evil', '#/runs/x"><img src=x onerror=alert(1)>', '#/runs/a b', 42, null]) {
      expect(afterLoginHash(kept(hostile), now), String(hostile)).toBeNull();
    }
  });

  it('only once fresh: stale, from the future, or not what the login page writes', () => {
    expect(afterLoginHash(kept('#/history', now - AFTER_LOGIN_MAX_AGE_MS - 1), now)).toBeNull();
    expect(afterLoginHash(kept('#/history', now + 60_000), now)).toBeNull();
    expect(afterLoginHash(kept('#/history', 'yesterday'), now)).toBeNull();
    expect(afterLoginHash('#/history', now)).toBeNull();
    expect(afterLoginHash('{', now)).toBeNull();
    expect(afterLoginHash(null, now)).toBeNull();
  });
});
