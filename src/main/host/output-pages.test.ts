// A run's output in pages (issue 19, item 2): GET /api/v1/runs/ID/output
// ?stream=stdout|stderr&offset=N&limit=M answers one range of one stream, so a
// view of a large run never fetches its output whole. Against a real host and
// real processes over its unix socket; bad ranges are one-line 400s.

import { request } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpWardenApi, OUTPUT_PAGE_MAX_CHARS, ROUTES } from '../../shared/http-api';
import { NodeTransport } from '../../client/transport';
import { startHost, type Host } from './host';

const hosts: Host[] = [];

afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.shutdown()));
});

async function host(): Promise<Host> {
  const h = await startHost({ stateDir: mkdtempSync(join(tmpdir(), 'wo-')), webRoot: null });
  hosts.push(h);
  return h;
}

/** GET `path` on the host's socket: the status and the raw body (its bytes counted). */
function get(h: Host, path: string): Promise<{ status: number; body: string; bytes: number }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath: h.socketPath, path, headers: { Host: 'localhost' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        resolve({ status: res.statusCode ?? 0, body: body.toString('utf8'), bytes: body.length });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

interface Page {
  id: string;
  stream: string;
  offset: number;
  text: string;
  next: number;
  total: number;
  state: string;
}

describe('a page from a line', () => {
  it("starts at the line asked, says the line it starts on and how many lines the stream has; an offset's page says its line too", async () => {
    const h = await host();
    const api = new HttpWardenApi(new NodeTransport({ socketPath: h.socketPath }));
    const done = await api.wait((await api.start({ argv: ['python3', '-c', "for i in range(1, 5001): print(f'{i:05d} line')"] })).id, { timeoutMs: 60_000 });
    const page = JSON.parse((await get(h, `${ROUTES.output(done.id)}?stream=stdout&line=4200&limit=22`)).body) as Page & { firstLine: number; lines: number };
    expect(page).toMatchObject({ offset: 4199 * 11, text: '04200 line\n04201 line\n', firstLine: 4200, lines: 5000, total: 55_000 });
    // The same through the client, by offset: mid-line pages name the line they start in.
    expect(await api.output(done.id, { stream: 'stdout', offset: 11 * 10 + 3, limit: 5 })).toMatchObject({ firstLine: 11, lines: 5000, text: '11 li' });
    expect(await api.output(done.id, { stream: 'stdout', line: 5001 })).toMatchObject({ offset: 55_000, text: '', firstLine: 5000 });
    expect(await api.output(done.id, { stream: 'stderr', line: 1 })).toMatchObject({ offset: 0, text: '', firstLine: 1, lines: 0 });
  });
});

describe('a run output in pages', () => {
  it('answers ranges of each stream that put together are the stream, each a fraction of the whole run', async () => {
    const h = await host();
    const api = new HttpWardenApi(new NodeTransport({ socketPath: h.socketPath }));
    // 300,000 characters of numbered lines on stdout (multi-byte ones included), a few on stderr.
    const started = await api.start({ argv: ['python3', '-c', "import sys\nfor i in range(20000): print(f'{i:06d} é out')\nprint('err line', file=sys.stderr)"] });
    const done = await api.wait(started.id, { timeoutMs: 60_000 });
    expect(done.state).toBe('ended');
    const whole = await get(h, ROUTES.run(done.id));
    const stdout = (JSON.parse(whole.body) as { stdout: string }).stdout;
    expect(stdout.length).toBe(20000 * 13);

    let offset = 0;
    let joined = '';
    let pages = 0;
    for (;;) {
      const reply = await get(h, `${ROUTES.output(done.id)}?stream=stdout&offset=${offset}&limit=65536`);
      expect(reply.status, reply.body).toBe(200);
      const page = JSON.parse(reply.body) as Page;
      expect(page).toMatchObject({ id: done.id, stream: 'stdout', offset, total: stdout.length, state: 'ended' });
      expect(page.next).toBe(offset + page.text.length);
      expect(reply.bytes).toBeLessThan(whole.bytes / 3);
      joined += page.text;
      pages++;
      if (page.next >= page.total) break;
      // A page that does not move the loop on would ask for it again until the test's timeout.
      expect(page.next, 'a page that is not the last moves forward').toBeGreaterThan(offset);
      offset = page.next;
    }
    expect(joined).toBe(stdout);
    expect(pages).toBe(Math.ceil(stdout.length / 65536));

    // The run without its output: what a view asks before it pages (a fraction of the whole).
    const bare = await get(h, `${ROUTES.run(done.id)}?output=none`);
    expect(JSON.parse(bare.body)).toMatchObject({ id: done.id, stdout: '', stderr: '', outputChars: { stdout: stdout.length, stderr: 9 } });
    expect(bare.bytes).toBeLessThan(whole.bytes / 20);
    const err = JSON.parse((await get(h, `${ROUTES.output(done.id)}?stream=stderr`)).body) as Page;
    expect(err).toMatchObject({ stream: 'stderr', offset: 0, text: 'err line\n', next: 9, total: 9 });
    // Past the end: an empty page at the end, not an error (a view asks for what may come).
    const past = JSON.parse((await get(h, `${ROUTES.output(done.id)}?stream=stderr&offset=500`)).body) as Page;
    expect(past).toMatchObject({ offset: 9, text: '', next: 9, total: 9 });
  });

  it('refuses a bad range, stream or query with a one-line 400, and an unknown run with a 404', async () => {
    const h = await host();
    const api = new HttpWardenApi(new NodeTransport({ socketPath: h.socketPath }));
    const done = await api.wait((await api.start({ argv: ['bash', '-c', 'echo hi'] })).id, { timeoutMs: 30_000 });
    const base = ROUTES.output(done.id);
    for (const query of [
      '',
      '?stream=both',
      '?stream=stdout&offset=-1',
      '?stream=stdout&offset=1.5',
      '?stream=stdout&offset=abc',
      '?stream=stdout&offset=',
      '?stream=stdout&offset=99999999999999999999',
      '?stream=stdout&limit=0',
      `?stream=stdout&limit=${OUTPUT_PAGE_MAX_CHARS + 1}`,
      '?stream=stdout&limit=1e3',
      '?stream=stdout&stream=stderr',
      '?stream=stdout&from=3',
      '?stream=stdout&line=0',
      '?stream=stdout&line=1.5',
      '?stream=stdout&line=3&offset=4',
      '?stream=stdout&line=2&line=3',
    ]) {
      const reply = await get(h, `${base}${query}`);
      expect(reply.status, query).toBe(400);
      const body = JSON.parse(reply.body) as { error: string; kind: string };
      expect(body.kind, query).toBe('bad-input');
      expect(body.error, query).not.toMatch(/[\r\n]/);
      expect(body.error.length, query).toBeGreaterThan(10);
    }
    expect((await get(h, `${ROUTES.run(done.id)}?output=some`)).status).toBe(400);
    const unknown = `${done.id.slice(0, -1)}${done.id.endsWith('0') ? '1' : '0'}`;
    expect((await get(h, `${ROUTES.output(unknown)}?stream=stdout`)).status).toBe(404);
  });
});
