import { describe, expect, it } from 'vitest';
import { attentionOf, endedBadly, faviconOf, notificationOf, titleWith } from './attention';

describe('attention in web mode', () => {
  const runs = [
    { id: 'a', state: 'running' as const },
    { id: 'b', state: 'ended' as const, verdict: 'failed' as const, endedAt: '2026-01-01T10:00:05.000Z' },
    { id: 'c', state: 'ended' as const, verdict: 'crashed' as const, endedAt: '2026-01-01T09:00:00.000Z' },
    { id: 'd', state: 'ended' as const, verdict: 'completed' as const, endedAt: '2026-01-01T10:00:06.000Z' },
    { id: 'e', state: 'ended' as const, verdict: 'stopped' as const, endedAt: '2026-01-01T10:00:07.000Z' },
  ];

  it('counts live runs, and the failures since the person last looked', () => {
    expect(attentionOf(runs, '2026-01-01T10:00:00.000Z')).toEqual({ live: 1, failed: 1, state: 'failed' });
    expect(attentionOf(runs, '2026-01-01T11:00:00.000Z')).toEqual({ live: 1, failed: 0, state: 'live' });
    expect(attentionOf([], '')).toEqual({ live: 0, failed: 0, state: 'idle' });
    expect(endedBadly({ state: 'ended', verdict: 'stopped' })).toBe(false);
    expect(endedBadly({ state: 'ended', verdict: 'lost' })).toBe(true);
  });

  it('puts the counts in front of any title once, and takes them away', () => {
    const t = titleWith('Runs — Warden', { live: 2, failed: 1, state: 'failed' });
    expect(t).toBe('(2 live · 1 failed) Runs — Warden');
    expect(titleWith(t, { live: 0, failed: 3, state: 'failed' })).toBe('(3 failed) Runs — Warden');
    expect(titleWith(t, { live: 0, failed: 0, state: 'idle' })).toBe('Runs — Warden');
  });

  it('draws a favicon per state and words a notification', () => {
    expect(new Set(['failed', 'live', 'idle'].map((s) => faviconOf(s as 'failed')))).toHaveProperty('size', 3);
    expect(faviconOf('failed')).toMatch(/^data:image\/svg\+xml,/);
    expect(notificationOf({ id: 'x', verdict: 'crashed', exitCode: null, signal: 'SIGSEGV' }, './a.out')).toEqual({ title: 'Run crashed (SIGSEGV)', body: './a.out', tag: 'warden-x' });
  });
});
