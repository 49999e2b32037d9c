// What a model and a person read of a service (src/shared/model-answer.ts,
// render.ts): the ready line and the ports first, the advice for a ready
// run, a waiting one and one not ready in time, and the exit statuses.

import { describe, expect, it } from 'vitest';
import type { ReadyReport, RunResult } from '../shared/result';
import { answerJson, answerText, modelAnswer, portsText, portText, readyText, type Pager } from '../shared/model-answer';
import { exitStatusFor, humanSummary, NOT_READY_STATUS } from './render';
import { statusOf } from './host-verbs';

const pager: Pager = {
  page: (id, stream, offset) => `show ${id} ${stream} ${offset}`,
  next: (id, until) => `wait ${id}${until ? ` until ${until}` : ''}`,
  stop: (id) => `stop ${id}`,
  waitFor: (id) => `wait ${id} until log`,
  send: (id) => `send ${id}`,
};

const READY: ReadyReport = {
  afterMs: 1800,
  probes: [
    { probe: 'port', passed: true, afterMs: 1750, attempts: 7, port: 5173 },
    { probe: 'log:/Local:/', passed: true, afterMs: 1800, attempts: 4 },
  ],
  line: '➜  Local:   http://localhost:5173/',
  ports: [{ port: 5173, address: '127.0.0.1', pid: 42 }],
};

function service(fields: Partial<RunResult>): RunResult {
  return {
    id: 'abc123def456',
    kind: 'command',
    argv: ['npm', 'run', 'dev'],
    cwd: '/p',
    state: 'running',
    exitCode: null,
    signal: null,
    startedAt: '2026-01-01T00:00:00.000Z',
    elapsedMs: 1900,
    limitMs: null,
    advice: null,
    notes: [],
    stdout: 'VITE ready\n',
    stderr: '',
    stdoutTruncated: 0,
    stderrTruncated: 0,
    probes: READY.probes,
    ...fields,
  };
}

describe('portText and portsText', () => {
  it.each([
    [{ port: 5173, address: '127.0.0.1', http: true }, 'http://localhost:5173/'],
    [{ port: 5173, address: '0.0.0.0', http: true }, 'http://localhost:5173/'],
    [{ port: 5173, address: '::', http: true }, 'http://localhost:5173/'],
    [{ port: 5173, address: '::1', http: true }, 'http://localhost:5173/'],
    [{ port: 8080, address: '10.0.0.7', http: true }, 'http://10.0.0.7:8080/'],
    [{ port: 8080, address: 'fe80::1', http: true }, 'http://[fe80::1]:8080/'],
    // An IPv4-mapped listener: its URL as the app's link has it.
    [{ port: 5173, address: '::ffff:127.0.0.1', http: true }, 'http://localhost:5173/'],
    [{ port: 8080, address: '::ffff:10.0.0.2', http: true }, 'http://10.0.0.2:8080/'],
    [{ port: 8080, address: '::ffff:10.0.0.2' }, '[::ffff:10.0.0.2]:8080'],
    [{ port: 5432, address: '127.0.0.1' }, '127.0.0.1:5432'],
    [{ port: 5432, address: '::1', http: false }, '[::1]:5432'],
  ])('%j', (port, text) => expect(portText(port)).toBe(text));
  it('lists each with its number first', () => {
    expect(portsText([{ port: 5173, address: '127.0.0.1', http: true }, { port: 24678, address: '127.0.0.1' }])).toBe('5173 (http://localhost:5173/), 24678 (127.0.0.1:24678)');
  });
});

describe('readyText', () => {
  it('says when it became ready, where it listens and the line that said so', () => {
    expect(readyText(service({ ready: READY }))).toBe('ready after 1.8 s, listening on 5173; it printed: ➜  Local:   http://localhost:5173/');
    expect(readyText(service({ ready: { ...READY, line: undefined, ports: [] } }))).toBe('ready after 1.8 s');
    expect(readyText(service({ ready: { ...READY, ports: [{ port: 5173, address: '127.0.0.1' }, { port: 5173, address: '::1' }, { port: 24678, address: '::1' }] } }))).toMatch(/^ready after 1\.8 s, listening on 5173 and 24678;/);
  });
  it('says which probes did not pass: in time, yet, or before it ended', () => {
    const failing = [{ probe: 'tcp:5173', passed: false, attempts: 480, last: 'connection refused' }];
    expect(readyText(service({ ready: false, probes: failing }))).toBe('not ready in time: tcp:5173 (connection refused, 480 tries)');
    expect(readyText(service({ ready: false, probes: undefined }))).toBe('not ready in time: its probes did not pass');
    expect(readyText(service({ probes: failing }))).toBe('not ready yet after 1.9 s: tcp:5173 (connection refused, 480 tries)');
    expect(readyText(service({ probes: failing, state: 'ended', verdict: 'failed', exitCode: 1 }))).toBe('never ready: it ended first (tcp:5173 (connection refused, 480 tries))');
  });
  it('is null without probes', () => {
    expect(readyText(service({ probes: undefined }))).toBeNull();
  });
});

describe('a service as a model reads it', () => {
  it('puts the ready line and the ports first, and advises using it', () => {
    const result = service({ ready: READY, ports: [{ port: 5173, address: '127.0.0.1', pid: 42, http: true }], lease: { ms: 7_200_000, endsAtMs: 7_200_000 }, stdinPipe: 'open' });
    const answer = modelAnswer(result, { streamChars: 8000, pager });
    const text = answerText(answer);
    const lines = text.split('\n');
    expect(lines[1]).toBe('<ready>ready after 1.8 s, listening on 5173; it printed: ➜  Local:   http://localhost:5173/</ready>');
    expect(lines[2]).toBe('<ports>5173 (http://localhost:5173/)</ports>');
    expect(lines[3]).toBe('<verdict>running</verdict>');
    expect(answer.advice).toBe(
      'It is ready and keeps running in Warden, leased until 2 h of its clock (extend renews the lease): use it now. wait abc123def456 until log waits for a line of its output (after an edit, "Compiled" or an error), send abc123def456 answers it on stdin, and stop abc123def456 ends it; it also ends when you (the agent) exit.',
    );
    expect(answer.next).toBe('wait abc123def456');
    const json = answerJson(answer);
    expect(Object.keys(json).slice(0, 4)).toEqual(['id', 'ready', 'ports', 'state']);
    expect(json.ports).toEqual([{ port: 5173, address: '127.0.0.1', url: 'http://localhost:5173/' }]);
    expect(json.lease).toEqual({ ms: 7_200_000, endsAtMs: 7_200_000 });
    expect(json.stdinPipe).toBe('open');
  });

  it('without a lease or a pipe says neither', () => {
    const answer = modelAnswer(service({ ready: READY }), { streamChars: 8000, pager });
    expect(answer.advice).not.toMatch(/leased|stdin/);
    expect(answer.ports).toEqual(READY.ports);
  });

  it('while not ready yet: the next call waits until ready', () => {
    const answer = modelAnswer(service({ probes: [{ probe: 'port', passed: false, attempts: 3, last: 'its processes hold no listening TCP socket yet' }] }), { streamChars: 8000, pager });
    expect(answer.next).toBe('wait abc123def456 until ready');
    expect(answer.advice).toBe('It is not ready yet and keeps starting in Warden. Call wait abc123def456 until ready to wait until it is (or stop abc123def456 to end it).');
    expect(answerText(answer).split('\n')[1]).toBe('<ready>not ready yet after 1.9 s: port (its processes hold no listening TCP socket yet, 3 tries)</ready>');
  });

  it('a run without probes has no ready line and no ports line', () => {
    const text = answerText(modelAnswer(service({ probes: undefined }), { streamChars: 8000, pager }));
    expect(text).not.toMatch(/<ready>|<ports>/);
  });

  it('carries what a wait until found, and a daemon main exit', () => {
    const json = answerJson(modelAnswer(service({ ready: READY, until: { condition: 'log:/Compiled/', met: true, line: 'Compiled', stream: 'stdout' }, mainExit: { exitCode: 0, signal: null, atMs: 300 } }), { streamChars: 8000, pager }));
    expect(json.until).toEqual({ condition: 'log:/Compiled/', met: true, line: 'Compiled', stream: 'stdout' });
    expect(json.mainExit).toEqual({ exitCode: 0, signal: null, atMs: 300 });
  });
});

describe('exit statuses', () => {
  it('is 0 for a ready run still running, in every format', () => {
    const ready = service({ ready: READY });
    expect(statusOf(ready, 'human')).toBe(0);
    expect(statusOf(ready, 'json')).toBe(0);
    expect(statusOf(ready, 'shell-results')).toBe(0);
  });
  it('is 3 when not ready in time, stopped for it or kept', () => {
    expect(NOT_READY_STATUS).toBe(3);
    expect(statusOf(service({ ready: false }), 'human')).toBe(3);
    expect(statusOf(service({ ready: false }), 'shell-results')).toBe(3);
    expect(exitStatusFor(service({ ready: false, state: 'ended', verdict: 'stopped', signal: 'SIGINT' }))).toBe(3);
  });
  it('is the yield status while it still waits to be ready', () => {
    expect(statusOf(service({}), 'human')).toBe(75);
    expect(statusOf(service({}), 'shell-results')).toBe(0);
  });
  it('is its own once it ended after being ready', () => {
    expect(exitStatusFor(service({ ready: READY, state: 'ended', verdict: 'stopped', signal: 'SIGINT' }))).toBe(130);
  });
});

describe('humanSummary', () => {
  it('says the ready line first', () => {
    const text = humanSummary(service({ ready: READY, state: 'ended', verdict: 'stopped', signal: 'SIGINT' }));
    expect(text.split('\n')[0]).toBe('warden: ready after 1.8 s, listening on 5173; it printed: ➜  Local:   http://localhost:5173/');
  });
});
