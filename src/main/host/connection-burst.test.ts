// A burst of clients against a host at its descriptor limit (issue 27, items
// 5 and 10): under a real RLIMIT_NOFILE of 256 (prlimit on the host's own
// Node), 900 clients at once each get an answer, a run or the 503 line, and
// never a broken connection (EPIPE, ECONNRESET) that the CLI would call a
// lost host. The clients are Warden's own (wire.ts), in this process.

import { execa } from 'execa';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NodeTransport } from '../../client/transport';
import { HttpWardenApi, WardenApiError } from '../../shared/http-api';
import { busyAnswer, connectionGuard, socketBacklog } from './connection-guard';
import type { Socket } from 'node:net';

describe('connectionGuard', () => {
  const fakeSocket = () => {
    const said: string[] = [];
    const socket = { on: () => socket, resume: () => socket, end: (text: string) => said.push(text), destroy: () => undefined } as unknown as Socket;
    return { socket, said };
  };
  it.each([
    // limit 1000: the reserve is 100, so connections are refused past 950 open
    ['well below', 1000, 500, false],
    ['at the threshold', 1000, 949, false],
    ['past it', 1000, 950, true],
    ['no limit known', null, 5000, false],
  ])('%s', (_name, limit, open, refused) => {
    let low = 0;
    const guard = connectionGuard({ limit, count: () => open, onLow: () => (low += 1) });
    const { socket, said } = fakeSocket();
    expect(guard(socket)).toBe(refused);
    expect(said.length).toBe(refused ? 1 : 0);
    expect(low).toBe(refused ? 1 : 0);
  });
  it('counts each connection taken between two counts of the descriptors', () => {
    const guard = connectionGuard({ limit: 1000, count: () => 940 });
    const outcomes = Array.from({ length: 12 }, () => guard(fakeSocket().socket));
    // 941 ... 950 taken (10), then refused past 950.
    expect(outcomes.slice(0, 10)).toEqual(Array.from({ length: 10 }, () => false));
    expect(outcomes.slice(10)).toEqual([true, true]);
  });
  it.each([
    [256, 16], // reserve 64
    [1024, 25], // reserve 102
    [4096, 102], // reserve 409
    [20000, 256], // reserve 1024
    [1_000_000, 256],
    [null, 511],
    [64, 16],
  ])('the socket\'s backlog at a limit of %s is %s', (limit, backlog) => expect(socketBacklog(limit)).toBe(backlog));
  it('answers a whole HTTP 503 with the kind and a one-line reason', () => {
    const text = busyAnswer(300, 256);
    const [head, body] = text.split('\r\n\r\n');
    expect(head!.split('\r\n')[0]).toBe('HTTP/1.1 503 Service Unavailable');
    expect(head).toContain(`Content-Length: ${Buffer.byteLength(body!)}`);
    expect(head).toContain('Connection: close');
    expect(JSON.parse(body!)).toEqual({ kind: 'unavailable', error: expect.stringMatching(/^The Warden host is low on file descriptors: about 300 of its 256 \(RLIMIT_NOFILE\)[^\n]*$/) });
  });
});

describe('a burst at the descriptor limit', () => {
  it('900 clients at once: each gets a run or the 503 line, none a broken connection', async () => {
    const code = [
      `import { startHost } from ${JSON.stringify(join(__dirname, 'host.ts'))};`,
      "import { mkdtempSync } from 'node:fs';",
      "import { tmpdir } from 'node:os';",
      "import { join } from 'node:path';",
      "const host = await startHost({ stateDir: mkdtempSync(join(tmpdir(), 'wburst-')), webRoot: null });",
      'process.stdout.write(JSON.stringify({ socketPath: host.socketPath }) + "\\n");',
      "process.stdin.on('data', async () => { await host.shutdown(); process.exit(0); });",
    ].join('\n');
    const child = execa('prlimit', ['--nofile=256:256', process.execPath, '--import', 'tsx', '--input-type=module', '-e', code], { reject: false, env: { WARDEN_SENTINEL: '0' }, stdin: 'pipe', timeout: 120_000 });
    const socketPath = await new Promise<string>((resolve, reject) => {
      child.stdout!.once('data', (chunk: Buffer) => resolve((JSON.parse(chunk.toString()) as { socketPath: string }).socketPath));
      void child.then((r) => reject(new Error(`the host exited: ${String(r.stderr)}`)));
    });
    try {
      const outcomes = await Promise.all(
        Array.from({ length: 900 }, async () => {
          const api = new HttpWardenApi(new NodeTransport({ socketPath }, { peerChecked: true }));
          try {
            await api.start({ argv: ['sleep', '1'] });
            return 'run';
          } catch (error) {
            if (error instanceof WardenApiError && error.status === 503 && !error.message.includes('\n') && /low on file descriptors/.test(error.message)) return '503';
            return `${(error as { code?: string }).code ?? ''} ${(error as Error).message}`;
          }
        }),
      );
      const others = outcomes.filter((o) => o !== 'run' && o !== '503');
      if (process.env.SHOW) console.log(JSON.stringify({ runs: outcomes.filter((o) => o === 'run').length, refused: outcomes.filter((o) => o === '503').length, others: others.length }));
      expect(others.slice(0, 5)).toEqual([]);
      expect(outcomes.filter((o) => o === 'run').length).toBeGreaterThan(10);
      expect(outcomes.filter((o) => o === '503').length).toBeGreaterThan(0);
    } finally {
      child.stdin!.write('stop\n');
      await child;
    }
  }, 150_000);
});
