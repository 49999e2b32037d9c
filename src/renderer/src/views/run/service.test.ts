// What the run view shows of a service (service.ts): readiness in words,
// one link per port that answers HTTP, and whether it takes input.

import { describe, expect, it } from 'vitest';
import type { RunResult } from '../../../../shared/result';
import { hasServiceBar, portLinks, serviceView } from './service';
import { withServiceEvent } from '../../store';
import { serviceEntry } from './describe';

function run(fields: Partial<RunResult>): RunResult {
  return { id: 'abc123', kind: 'command', argv: ['npm', 'run', 'dev'], cwd: '/p', state: 'running', exitCode: null, signal: null, startedAt: '2026-01-01T00:00:00.000Z', elapsedMs: 3000, limitMs: null, advice: null, notes: [], stdout: '', stderr: '', stdoutTruncated: 0, stderrTruncated: 0, ...fields };
}

const READY = { afterMs: 1800, probes: [{ probe: 'port', passed: true, attempts: 3 }], line: 'Local: http://localhost:5173/', ports: [{ port: 5173, address: '127.0.0.1' }] };

describe('portLinks', () => {
  it('one per port, sorted, with a link only where it answered HTTP', () => {
    expect(
      portLinks([
        { port: 24678, address: '127.0.0.1' },
        { port: 5173, address: '::1', http: false },
        { port: 5173, address: '127.0.0.1', http: true },
        { port: 8080, address: '0.0.0.0', http: true },
      ]),
    ).toEqual([
      { port: 5173, address: '::1', url: 'http://localhost:5173/' },
      { port: 8080, address: '0.0.0.0', url: 'http://localhost:8080/' },
      { port: 24678, address: '127.0.0.1', url: null },
    ]);
  });
});

describe('serviceView', () => {
  it('a ready service: when, its line, its live ports, input when its pipe is open', () => {
    const view = serviceView(run({ ready: READY, ports: [{ port: 5173, address: '127.0.0.1', http: true }], stdinPipe: 'open' }));
    expect(view).toEqual({ readiness: 'Ready after 1.80 s', tone: 'ok', line: 'Local: http://localhost:5173/', ports: [{ port: 5173, address: '127.0.0.1', url: 'http://localhost:5173/' }], takesInput: true, lease: null });
    expect(hasServiceBar(view)).toBe(true);
  });
  it('falls back to the ports it had when ready, until they are found live', () => {
    expect(serviceView(run({ ready: READY })).ports).toEqual([{ port: 5173, address: '127.0.0.1', url: null }]);
  });
  it('an ended service shows no ports and takes no input', () => {
    const view = serviceView(run({ state: 'ended', ready: READY, ports: [{ port: 5173, address: '127.0.0.1', http: true }], stdinPipe: 'open' }));
    expect(view.ports).toEqual([]);
    expect(view.takesInput).toBe(false);
  });
  it('not ready, waiting, never ready', () => {
    expect(serviceView(run({ ready: false }))).toMatchObject({ readiness: 'Not ready in time', tone: 'bad' });
    const probes = [{ probe: 'port', passed: true, attempts: 1 }, { probe: 'log:/x/', passed: false, attempts: 2 }];
    expect(serviceView(run({ probes }))).toMatchObject({ readiness: 'Waiting to be ready (log:/x/)', tone: 'wait' });
    expect(serviceView(run({ probes, state: 'ended' }))).toMatchObject({ readiness: 'Never ready: it ended first', tone: 'bad' });
  });
  it('a lease while live', () => {
    expect(serviceView(run({ lease: { ms: 7_200_000, endsAtMs: 7_200_000 } })).lease).toBe('lease until 2 h');
    expect(hasServiceBar(serviceView(run({ lease: { ms: 1, endsAtMs: 1 } })))).toBe(true);
    expect(serviceView(run({ state: 'ended', lease: { ms: 1, endsAtMs: 1 } })).lease).toBeNull();
  });
  it('a plain run with a port, with a closed pipe, or with nothing', () => {
    expect(hasServiceBar(serviceView(run({ ports: [{ port: 3000, address: '127.0.0.1' }] })))).toBe(true);
    expect(serviceView(run({ stdinPipe: 'closed' })).takesInput).toBe(false);
    expect(hasServiceBar(serviceView(run({ stdinPipe: 'closed' })))).toBe(false);
    expect(hasServiceBar(serviceView(run({})))).toBe(false);
  });
});

describe('withServiceEvent', () => {
  const r = run({ lease: { ms: 1000, endsAtMs: 1000 }, stdinPipe: 'open' });
  it('applies each kind to the run', () => {
    expect(withServiceEvent(r, { type: 'ready', runId: 'abc123', ready: READY, atMs: 1800 })).toMatchObject({ ready: READY, probes: READY.probes });
    expect(withServiceEvent(r, { type: 'ready', runId: 'abc123', ready: false, atMs: 1800 }).ready).toBe(false);
    expect(withServiceEvent(r, { type: 'ports', runId: 'abc123', ports: [{ port: 1, address: '::' }], atMs: 1 }).ports).toEqual([{ port: 1, address: '::' }]);
    expect(withServiceEvent(r, { type: 'lease-renewed', runId: 'abc123', endsAtMs: 5000, byMs: 4000, atMs: 1 }).lease).toEqual({ ms: 1000, endsAtMs: 5000 });
    expect(withServiceEvent(run({}), { type: 'lease-renewed', runId: 'abc123', endsAtMs: 5000, byMs: 4000, atMs: 1 }).lease).toBeUndefined();
    expect(withServiceEvent(r, { type: 'main-exited', runId: 'abc123', mainExit: { exitCode: 0, signal: null, atMs: 5 } }).mainExit).toEqual({ exitCode: 0, signal: null, atMs: 5 });
    expect(withServiceEvent(r, { type: 'input', runId: 'abc123', text: 'y\n', chars: 2, eof: false, atMs: 5 }).stdinPipe).toBe('open');
    expect(withServiceEvent(r, { type: 'input', runId: 'abc123', text: '', chars: 0, eof: true, atMs: 5 }).stdinPipe).toBe('closed');
  });
});

describe('serviceEntry (the timeline)', () => {
  it.each([
    ['ready', { ready: true, ports: [5173], line: 'Local: x' }, 'Ready', 'listening on 5173: Local: x'],
    ['ready', { ready: true, ports: [] }, 'Ready', 'its probes passed'],
    ['ready', { ready: false }, 'Not ready', 'its readiness probes did not pass in time'],
    ['ports', { ports: [{ port: 5173 }, { port: 24678 }] }, 'Ports', 'listening on 5173, 24678'],
    ['ports', { ports: [] }, 'Ports', 'listening on no port'],
    ['ports', { ports: [], more: 'its ports kept changing; later changes are not kept' }, 'Ports', 'its ports kept changing; later changes are not kept'],
    ['input', { text: 'y\n', chars: 2, eof: false }, 'Input sent', '"y\\n"'],
    ['input', { text: 'abc', chars: 5000, eof: true }, 'Input sent, then end of input', '"abc" (5000 characters)'],
    ['input', { text: '', chars: 0, eof: true }, 'End of input sent', 'its stdin closed'],
    ['lease-renewed', { byMs: 3_600_000, endsAtMs: 10_800_000 }, 'Lease renewed', 'by 1 h, to 3 h'],
    ['main-exited', { exitCode: 0, signal: null }, 'Main process exited', 'exit code 0; the service lives on in its other processes'],
    ['other', { a: 1 }, 'other', '{"a":1}'],
  ])('%s %j', (kind, detail, title, text) => expect(serviceEntry(kind, detail)).toEqual({ title, detail: text }));
});
