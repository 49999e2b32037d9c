import { describe, expect, it } from 'vitest';
import { changeOf, drawDelay, FOLLOW_MS } from './shown-output';

const state = (over: Record<string, Record<string, unknown>> = {}) => ({ output: {}, pages: {}, runs: {}, marks: {}, ...over }) as never;

describe('when the log is drawn again', () => {
  const out = { stdout: 'a\n' };
  const run = { id: 'r' };
  it.each<[string, ReturnType<typeof state>, ReturnType<typeof state>, 'now' | 'later' | null]>([
    ['nothing of this run changed', state({ output: { other: out } }), state(), null],
    ['its live output grew: with the next draw', state({ output: { r: { ...out } } }), state({ output: { r: out } }), 'later'],
    ['its output times: with the next draw', state({ marks: { r: { version: 2 } } }), state({ marks: { r: { version: 1 } } }), 'later'],
    ['its result changed (it ended): at once', state({ runs: { r: { ...run } } }), state({ runs: { r: run } }), 'now'],
    ['a page of its output came: at once', state({ pages: { r: {} } }), state(), 'now'],
    ['its live output was dropped for its whole result: at once', state(), state({ output: { r: out } }), 'now'],
  ])('%s', (_name, after, before, change) => {
    expect(changeOf(after, before, 'r')).toBe(change);
  });

  it('waits what is left of the interval since the last draw, and no more', () => {
    expect(drawDelay(1000, 1000, FOLLOW_MS)).toBe(FOLLOW_MS);
    expect(drawDelay(1000, 1100, 300)).toBe(200);
    expect(drawDelay(1000, 1300, 300)).toBe(0);
    expect(drawDelay(1000, 5000, 300)).toBe(0);
  });
});
