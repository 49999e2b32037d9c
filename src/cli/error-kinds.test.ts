// Errors from a real host (`warden serve` in a child process): its HTTP status
// and { error, kind } on the control socket, and the one line and exit status
// the real `warden` command gives for the same refusal. The kinds and what
// each boundary makes of them: src/shared/errors.ts.

import { execa, type ResultPromise } from 'execa';
import { request } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { socketPathFor } from '../client/transport';
import { serveFor, WARDEN_BIN } from './testkit';

const servers: ResultPromise[] = [];
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'warden-error-kinds-'));
  await serveFor(dir, servers);
});

afterAll(async () => {
  for (const child of servers) child.kill('SIGTERM');
  await Promise.all(servers.map((child) => child.catch(() => undefined)));
});

/** One request on the host's control socket: its status and JSON body. */
function raw(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const req = request({ socketPath: socketPathFor(dir), method, path, headers: { Host: 'localhost', ...(text !== undefined ? { 'Content-Type': 'application/json' } : {}) } }, (res) => {
      let answer = '';
      res.on('data', (chunk: Buffer) => (answer += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(answer) as unknown }));
    });
    req.on('error', reject);
    req.end(text);
  });
}

/** The real `warden` command, through the host of `dir`. */
function warden(args: string[]) {
  return execa(process.execPath, [WARDEN_BIN, ...args], { reject: false, env: { WARDEN_STATE_DIR: dir }, stdin: 'ignore', timeout: 60_000 });
}

describe('errors from a real host, by kind', () => {
  it('not found: 404 with kind not-found, and warden stop says so in one line, exit 125', async () => {
    expect(await raw('POST', '/api/v1/runs/abcdef012345/stop', {})).toEqual({ status: 404, body: { error: 'No run with id "abcdef012345".', kind: 'not-found' } });
    expect(await raw('POST', '/api/v1/sessions/nope/restart')).toEqual({ status: 404, body: { error: 'No session named "nope".', kind: 'not-found' } });
    const stop = await warden(['stop', 'abcdef012345']);
    expect(stop.exitCode).toBe(125);
    expect(stop.stderr).toBe('warden: No run with id "abcdef012345" (see warden list).');
  });

  it('bad input: 400 with kind bad-input, and warden run says the host\'s line, exit 125', async () => {
    expect(await raw('POST', '/api/v1/runs', { argv: ['true'], memory: '3' })).toEqual({ status: 400, body: { error: 'memory must be at least 1 MiB, not "3" (3 B).', kind: 'bad-input' } });
    const run = await warden(['run', '--memory', '3', '--', 'true']);
    expect(run.exitCode).toBe(125);
    expect(run.stderr).toBe('warden: memory must be at least 1 MiB, not "3" (3 B).');
  });

  it('busy: a session holding a script refuses the next with 409 and kind busy; warden run says why, exit 125', async () => {
    const held = await warden(['run', '--python', '--session', 'held', '--yield', '1s', '-c', 'import time\ntime.sleep(30)']);
    const id = /\[run ([0-9a-f]+)\]/.exec(held.stderr)?.[1];
    expect(id, held.stderr).toBeDefined();
    try {
      const refused = await raw('POST', '/api/v1/runs', { code: 'pass', session: 'held', onBusy: 'refuse' });
      expect(refused).toEqual({ status: 409, body: { error: `The session "held" is busy with run ${id}; the script was refused (onBusy: "refuse").`, kind: 'busy' } });
      const run = await warden(['run', '--python', '--session', 'held', '--on-busy', 'refuse', '-c', 'pass']);
      expect(run.exitCode).toBe(125);
      expect(run.stderr).toBe(`warden: The session "held" is busy with run ${id}; the script was refused (onBusy: "refuse").`);
    } finally {
      await warden(['stop', '--force', id!]);
    }
  });
});
