// Each kind of Warden error through every boundary's own code: the host's
// HTTP handler on a real unix socket, the client that reads its answer and
// raises the same kind again, the CLI's line and exit status, an MCP tool
// call's answer, and the IPC answer the preload throws again. The status is
// the kind's, whatever the message says.

import { createServer, request, type Server } from 'node:http';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WardenApi } from '../src/shared/api';
import { ERROR_KINDS, fromIpcAnswer, ipcAnswer, WardenError, type ErrorKind } from '../src/shared/errors';
import { HttpWardenApi } from '../src/shared/http-api';
import { NodeTransport } from '../src/client/transport';
import { EventHub } from '../src/main/host/event-hub';
import { createControlHandler } from '../src/main/host/server';
import { reportError } from '../src/cli/main';
import { errorResult } from '../src/mcp/server';

/** What each boundary gives for a kind: the contract of docs/architecture.md, "Errors". */
const TABLE: Array<[ErrorKind, number, number, boolean]> = [
  // kind, HTTP status, CLI exit, MCP isError
  ['bad-input', 400, 125, true],
  ['not-found', 404, 125, true],
  ['busy', 409, 125, true],
  ['shutting-down', 503, 125, true],
  ['unavailable', 503, 125, true],
  ['denied', 403, 125, true],
  ['internal', 500, 125, true],
];

/** The error every API call of the host throws next. */
let next: unknown = null;
const throwing = new Proxy({} as WardenApi, {
  get: () => async () => {
    throw next;
  },
});

let dir: string;
let socketPath: string;
let server: Server;
let hub: EventHub;

beforeAll(async () => {
  // The client talks only to a socket in a private directory inside another (as a state dir's run/).
  dir = mkdtempSync(join(tmpdir(), 'warden-errors-'));
  mkdirSync(join(dir, 'run'), { mode: 0o700 });
  socketPath = join(dir, 'run', 'control.sock');
  hub = new EventHub({ subscribe: () => () => undefined }, 'test');
  const handler = createControlHandler({ api: throwing, hub, token: 'unused', webRoot: null, port: () => null });
  server = createServer((req, res) => handler(req, res, 'unix'));
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
});

afterAll(async () => {
  hub.close();
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

/** One request on the socket, its status and parsed body. */
function raw(method: string, path: string): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, method, path, headers: { Host: 'localhost' } }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as unknown }));
    });
    req.on('error', reject);
    req.end();
  });
}

// Who listens is this process (the peer check is the transport's own test's).
const client = () => new HttpWardenApi(new NodeTransport({ socketPath }, { peerChecked: true }));

describe('one error type across the boundaries', () => {
  it('names every kind in the table', () => {
    expect(TABLE.map(([kind]) => kind).sort()).toEqual([...ERROR_KINDS].sort());
  });

  it.each(TABLE)('%s: HTTP %i, CLI exit %i, MCP isError %s, and IPC keeps the kind', async (kind, status, cliExit, isError) => {
    const message = `A ${kind} refusal, in words of its own.`;
    next = new WardenError(kind, message);

    // The host: the kind's status, and the kind on the wire beside the line.
    expect(await raw('GET', '/api/v1/runs/abcdef012345')).toEqual({ status, body: { error: message, kind } });

    // The client raises it again with the same kind (and the line as it was).
    const raised = await client()
      .stop('abcdef012345')
      .then(
        () => null,
        (error: unknown) => error,
      );
    expect(raised).toBeInstanceOf(WardenError);
    expect(raised).toMatchObject({ kind, message, status });

    // The CLI: one line, and the exit status of the kind.
    let said = '';
    expect(reportError(raised, { err: (text) => (said += text) })).toBe(cliExit);
    expect(said).toBe(`warden: ${message}\n`);

    // MCP: the tool call's answer.
    expect(errorResult(raised)).toEqual({ content: [{ type: 'text', text: message }], isError });

    // IPC: the main process's answer, thrown again by the preload's side.
    const answer = await ipcAnswer(() => {
      throw next;
    });
    expect(answer).toEqual({ ok: false, kind, error: message });
    expect(() => fromIpcAnswer(answer)).toThrow(expect.objectContaining({ kind, message }));
  });

  it('anything that is no WardenError is internal: a 500, and said as an internal error', async () => {
    next = new TypeError('boom');
    expect(await raw('GET', '/api/v1/host')).toEqual({ status: 500, body: { error: 'Internal error in the Warden host: boom', kind: 'internal' } });
    let said = '';
    expect(reportError(new TypeError('boom'), { err: (text) => (said += text) })).toBe(125);
    expect(said).toBe('warden: internal error: boom\n');
    expect(errorResult(new TypeError('boom'))).toEqual({ content: [{ type: 'text', text: 'Internal error: boom' }], isError: true });
    expect(await ipcAnswer(() => Promise.reject(new TypeError('boom')))).toEqual({ ok: false, kind: 'internal', error: 'Internal error: boom' });
  });

  it('a reworded message keeps its status: the kind decides, never the text', async () => {
    // Not found, without "No run with id" in it.
    next = new WardenError('not-found', 'Nothing here goes by abcdef012345.');
    expect((await raw('POST', '/api/v1/runs/abcdef012345/stop')).status).toBe(404);
    // Words the old patterns looked for, in an error of another kind.
    next = new WardenError('bad-input', 'No run with id "x" is busy while Warden is shutting down.');
    expect(await raw('GET', '/api/v1/sessions')).toEqual({ status: 400, body: { error: 'No run with id "x" is busy while Warden is shutting down.', kind: 'bad-input' } });
    next = new WardenError('busy', 'Occupied with another script.');
    expect((await raw('GET', '/api/v1/settings')).status).toBe(409);
  });

  it('an error from another copy of the class (a bundle of its own) counts by its kind', async () => {
    // Another bundle's WardenError: a class of its own, marked with the same registered symbol.
    class Elsewhere extends Error {
      readonly kind = 'busy';
      constructor(message: string) {
        super(message);
        Object.defineProperty(this, Symbol.for('warden.error'), { value: true });
      }
    }
    next = new Elsewhere('Held by another script.');
    expect(await raw('GET', '/api/v1/sessions')).toEqual({ status: 409, body: { error: 'Held by another script.', kind: 'busy' } });
    // An error that merely has a kind field is no WardenError: a bug, said as one.
    class Lookalike extends Error {
      readonly kind = 'busy';
    }
    next = new Lookalike('Not ours.');
    expect((await raw('GET', '/api/v1/sessions')).status).toBe(500);
  });

  it('an answer without a kind (an older host) is read by its status', async () => {
    const fake = createServer((_req, res) => {
      res.writeHead(404, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ error: 'No run with id "abcdef012345".' }));
    });
    const path = join(dir, 'run', 'old.sock');
    await new Promise<void>((resolve) => fake.listen(path, resolve));
    try {
      const old = new HttpWardenApi(new NodeTransport({ socketPath: path }, { peerChecked: true }));
      await expect(old.stop('abcdef012345')).rejects.toMatchObject({ kind: 'not-found', status: 404 });
      expect(await old.get('abcdef012345')).toBeNull();
    } finally {
      await new Promise((resolve) => fake.close(resolve));
    }
  });
});
