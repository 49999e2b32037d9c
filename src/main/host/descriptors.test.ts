// A host keeps descriptors for itself: under a real RLIMIT_NOFILE (prlimit on
// a Node process of its own), runs that would take the last of them are
// refused with 503 and a reason, the host keeps answering, and runs start
// again once the earlier ones have ended.

import { execa } from 'execa';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

describe('a host near its descriptor limit', () => {
  it('refuses new runs with 503 and a reason before it runs out, and goes on', async () => {
    const code = [
      `import { startHost } from ${JSON.stringify(join(__dirname, 'host.ts'))};`,
      "import { request } from 'node:http';",
      "import { mkdtempSync } from 'node:fs';",
      "import { tmpdir } from 'node:os';",
      "import { join } from 'node:path';",
      "const host = await startHost({ stateDir: mkdtempSync(join(tmpdir(), 'wfd-')), webRoot: null });",
      'const call = (method, path, body) => new Promise((resolve, reject) => {',
      "  const req = request({ socketPath: host.socketPath, method, path, headers: { 'content-type': 'application/json' } }, (res) => {",
      "    let data = ''; res.on('data', (c) => (data += c)); res.on('end', () => resolve({ status: res.statusCode, body: data }));",
      '  });',
      "  req.on('error', reject); req.end(body === undefined ? undefined : JSON.stringify(body));",
      '});',
      'let started = 0; let refused;',
      'for (let i = 0; i < 1000 && !refused; i++) {',
      "  const r = await call('POST', '/api/v1/runs', { argv: ['sleep', '3'] });",
      '  if (r.status === 201) started += 1; else refused = r;',
      '}',
      "const info = await call('GET', '/api/v1/host');",
      // Once the earlier runs have ended, runs start again.
      // Waited for however long a loaded machine takes (the test's timeout is the hang guard).
      "while (JSON.parse((await call('GET', '/api/v1/runs')).body).some((run) => run.state !== 'ended')) await new Promise((r) => setTimeout(r, 100));",
      "const later = await call('POST', '/api/v1/runs', { argv: ['echo', 'again'] });",
      'const figures = host.supervisor.descriptorFigures?.();',
      'const report = await host.shutdown();',
      'process.stdout.write(JSON.stringify({ started, refused, info: info.status, later: later.status, laterBody: later.body, figures, unrecorded: report.unrecorded.length }));',
    ].join('\n');
    const child = await execa('prlimit', ['--nofile=256:256', process.execPath, '--import', 'tsx', '--input-type=module', '-e', code], {
      reject: false,
      env: { WARDEN_SENTINEL: '0' },
      timeout: 90_000,
    });
    expect(child.stderr).toBe('');
    expect(child.exitCode).toBe(0);
    if (process.env.SHOW) console.log(child.stdout);
    const r = JSON.parse(child.stdout) as { started: number; refused?: { status: number; body: string }; info: number; later: number; unrecorded: number };
    expect(r.started).toBeGreaterThan(10);
    expect(r.refused?.status).toBe(503);
    expect(JSON.parse(r.refused!.body).error).toMatch(/low on file descriptors: about \d+ of its 256 \(RLIMIT_NOFILE\)/);
    expect(r.info).toBe(200);
    expect(r.later).toBe(201);
    expect(r.unrecorded).toBe(0);
  }, 120_000);
});
