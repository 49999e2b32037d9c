// Codex's yield_time_ms, read back from its session transcript, and the
// yield Warden answers with so Codex's model sees Warden's answer.

import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { askedYieldMs, codexYieldMs, readTail } from './codex-yield';

const call = (callId: string, args: unknown, type = 'function_call') => JSON.stringify({ timestamp: 't', type: 'response_item', payload: { type, name: 'exec_command', arguments: typeof args === 'string' ? args : JSON.stringify(args), call_id: callId } });

describe('askedYieldMs', () => {
  it.each<[string, string, number | undefined]>([
    [call('call_1', { cmd: 'x', yield_time_ms: 2000 }), 'call_1', 2000],
    [call('call_1', { cmd: 'x' }), 'call_1', undefined],
    [call('call_1', { cmd: 'x', yield_time_ms: 2000 }), 'call_2', undefined],
    [[call('call_1', { yield_time_ms: 1000 }), call('call_2', { yield_time_ms: 3000 })].join('\n'), 'call_1', 1000],
    [[call('call_1', { yield_time_ms: 1000 }), call('call_1', { yield_time_ms: 5000 })].join('\n'), 'call_1', 5000],
    [call('call_1', { yield_time_ms: 2000 }, 'function_call_output'), 'call_1', undefined],
    [call('call_1', { yield_time_ms: '2000' }), 'call_1', undefined],
    [call('call_1', { yield_time_ms: -1 }), 'call_1', undefined],
    [call('call_1', { yield_time_ms: 0 }), 'call_1', 0],
    [call('call_1', '{not json'), 'call_1', undefined],
    [`{"cut line "call_id":"call_1" "function_call"\n${call('call_1', { yield_time_ms: 700 })}`, 'call_1', 700],
    ['', 'call_1', undefined],
    // The first line of the text is read too, and a call's output after it is passed over.
    [[call('call_1', { yield_time_ms: 1500 }), call('call_1', { yield_time_ms: 9 }, 'function_call_output')].join('\n'), 'call_1', 1500],
    // Another call whose text names this id is not this call.
    [[call('call_1', { yield_time_ms: 1500 }), call('call_2', { cmd: 'echo "call_id":"call_1" function_call', yield_time_ms: 9 })].join('\n'), 'call_1', 1500],
    // Numbers JSON can hold that are no time: too large to be finite, fractions are times.
    [call('call_1', '{"yield_time_ms":1e400}'), 'call_1', undefined],
    [call('call_1', { yield_time_ms: 2500.5 }), 'call_1', 2500.5],
    [call('call_1', { yield_time_ms: null }), 'call_1', undefined],
    // arguments as an object, not the JSON text Codex writes: not read.
    [JSON.stringify({ type: 'response_item', payload: { type: 'function_call', arguments: { yield_time_ms: 2000 }, call_id: 'call_1' } }), 'call_1', undefined],
    [JSON.stringify({ type: 'response_item', note: '"call_id":"call_1" "function_call"' }), 'call_1', undefined],
    ['"call_id":"call_1" "function_call" null', 'call_1', undefined],
    // Lines that name the id and "function_call" as keys but are not the call: passed over for the call before them.
    [[call('call_1', { yield_time_ms: 1500 }), JSON.stringify({ payload: { type: 'function_call_output', call_id: 'call_1', arguments: '{"yield_time_ms":9}', function_call: 1 } })].join('\n'), 'call_1', 1500],
    [[call('call_1', { yield_time_ms: 1500 }), JSON.stringify({ call_id: 'call_1', payload: { type: 'function_call', call_id: 'call_2', arguments: '{"yield_time_ms":9}' } })].join('\n'), 'call_1', 1500],
    [[call('call_1', { yield_time_ms: 1500 }), JSON.stringify({ payload: { type: 'function_call', call_id: 'call_1', arguments: 5 } })].join('\n'), 'call_1', 1500],
  ])('%#', (text, callId, expected) => expect(askedYieldMs(text, callId)).toBe(expected));
});

describe('codexYieldMs', () => {
  it.each<[number | undefined, number]>([
    [undefined, 6000],
    [10_000, 6000],
    [12_000, 7200],
    [30_000, 18_000],
    [300_000, 50_000],
    [8000, 4000],
    [5000, 1000],
    [2000, 250],
    [0, 250],
  ])('asked %s', (asked, expected) => expect(codexYieldMs(asked, 6000)).toBe(expected));

  it.each<[number | undefined, number, number]>([
    // At Codex's default and above, never earlier than the usual yield; below it, never later.
    [undefined, 8000, 8000],
    [10_000, 8000, 8000],
    [9999, 8000, 5999],
    [9000, 3000, 3000],
    [20_000, 3000, 12_000],
    // Rounded to whole milliseconds.
    [10_001, 1000, 6001],
    [4001.7, 6000, 250],
    [6250.4, 6000, 2250],
  ])('asked %s, usually %s', (asked, usual, expected) => expect(codexYieldMs(asked, usual)).toBe(expected));
});

describe('readTail', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wtail-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  it('reads a small file whole, the end of a large one, and nothing of a missing one', () => {
    writeFileSync(join(dir, 'small'), 'abc\n');
    expect(readTail(join(dir, 'small'))).toBe('abc\n');
    writeFileSync(join(dir, 'large'), `${'x'.repeat(300 * 1024)}END`);
    const tail = readTail(join(dir, 'large'));
    expect(tail.length).toBe(256 * 1024);
    expect(tail.endsWith('END')).toBe(true);
    expect(readTail(join(dir, 'missing'))).toBe('');
    expect(readTail(dir)).toBe('');
  });

  it('closes what it opened, read or not', () => {
    const open = () => readdirSync('/proc/self/fd').length;
    const before = open();
    for (let i = 0; i < 20; i++) {
      readTail(join(dir, 'small'));
      readTail(dir);
    }
    expect(open()).toBe(before);
  });
});
