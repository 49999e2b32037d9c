// A client newer than its host (an app or serve of an earlier release still
// running): the run request's umask and rlimits are fields that host refuses
// ('A run request has no field "umask"'); the client starts the run without
// them rather than failing every run. Against a real HTTP server on a unix
// socket that answers as such a host does.

import { createServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HttpWardenApi, WardenApiError } from '../shared/http-api';
import { NodeTransport } from './transport';

const dir = mkdtempSync(join(tmpdir(), 'wolder-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a host older than the client', () => {
  it('refuses umask and rlimits: the run starts without them; any other 400 stays an error', async () => {
    const bodies: Record<string, unknown>[] = [];
    const server = createServer((req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString()));
      req.on('end', () => {
        const body = JSON.parse(text) as Record<string, unknown>;
        bodies.push(body);
        const unknown = Object.keys(body).filter((k) => !['argv', 'cwd', 'baseEnv', 'limitMs'].includes(k));
        res.setHeader('Content-Type', 'application/json');
        if (unknown.length > 0) {
          res.statusCode = 400;
          return res.end(JSON.stringify({ error: `A run request has no field ${unknown.map((k) => JSON.stringify(k)).join(', ')}.`, kind: 'bad-input' }));
        }
        res.statusCode = 201;
        res.end(JSON.stringify({ id: 'abc123', state: 'running' }));
      });
    });
    const socketPath = join(dir, 'old.sock');
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    try {
      const api = new HttpWardenApi(new NodeTransport({ socketPath }, { peerChecked: true }));
      const started = await api.start({ argv: ['true'], cwd: '/', umask: 0o77, rlimits: { nofile: [256, 1024] } });
      expect(started.id).toBe('abc123');
      expect(bodies).toEqual([{ argv: ['true'], cwd: '/', umask: 0o77, rlimits: { nofile: [256, 1024] } }, { argv: ['true'], cwd: '/' }]);
      // Another refused field is the caller's mistake, said as it is.
      await expect(api.start({ argv: ['true'], shell: true })).rejects.toThrow(WardenApiError);
      await expect(api.start({ argv: ['true'], shell: true })).rejects.toThrow('A run request has no field "shell".');
    } finally {
      server.close();
    }
  });
});
