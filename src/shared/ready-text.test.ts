// Readiness in words: the probes that did not pass, and the ready line.

import { describe, expect, it } from 'vitest';
import type { ReadyProbe } from './result';
import { failingProbes, readyLine } from './ready-text';

describe('failingProbes', () => {
  const probe = (p: Partial<ReadyProbe>): ReadyProbe => ({ probe: 'tcp:5173', passed: false, attempts: 3, last: 'connection refused', ...p });
  it.each([
    [[probe({})], 'tcp:5173 (connection refused, 3 tries)'],
    [[probe({ attempts: 2 })], 'tcp:5173 (connection refused, 2 tries)'],
    [[probe({ attempts: 1 })], 'tcp:5173 (connection refused)'],
    [[probe({ attempts: 0, last: 'never tried' })], 'tcp:5173 (never tried)'],
    [[probe({ last: undefined })], 'tcp:5173 (not passed, 3 tries)'],
    [[probe({ probe: 'log:/x/', attempts: 9, last: 'no line matched yet (9 read)' })], 'log:/x/ (no line matched yet (9 read))'],
    [[probe({ passed: true }), probe({ probe: 'port', last: 'its processes hold no listening TCP socket yet', attempts: 4 })], 'port (its processes hold no listening TCP socket yet, 4 tries)'],
    [[probe({}), probe({ probe: 'file:x', last: 'does not exist yet', attempts: 5 })], 'tcp:5173 (connection refused, 3 tries); file:x (does not exist yet, 5 tries)'],
    [[probe({ passed: true })], ''],
  ])('%j', (probes, text) => expect(failingProbes(probes)).toBe(text));
});

describe('readyLine', () => {
  it.each([
    [{ afterMs: 1800, ports: [] }, 'ready after 1.8 s'],
    [{ afterMs: 250, ports: [{ port: 5173, address: '127.0.0.1' }] }, 'ready after 0.25 s, listening on 5173'],
    [{ afterMs: 61_000, ports: [{ port: 5173, address: '127.0.0.1' }, { port: 5173, address: '::1' }, { port: 24678, address: '::' }] }, 'ready after 1 min 01 s, listening on 5173 and 24678'],
  ])('%j', (report, text) => expect(readyLine({ ...report, probes: [] })).toBe(text));
});
