// `warden mcp` under a burst of calls (issue 27, item 5): an agent's 4,000
// list calls and 1,000 run calls at once reach one host that is there all
// along; none may be told its host was lost. The server bounds its calls in
// flight (host-link.ts MAX_IN_FLIGHT), so it never opens more connections
// than the host's socket queue takes; a call the socket did not take is
// tried again (client/wire.ts), and a busy host is never called lost.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stopBackgroundHosts } from '../cli/testkit';

const BIN = resolve(__dirname, '../../bin/warden.mjs');
const dir = mkdtempSync(join(tmpdir(), 'wmcpburst-'));
afterAll(async () => {
  await stopBackgroundHosts([dir]);
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

describe('warden mcp under a burst', () => {
  it('4,000 list and 1,000 run calls at once: every one answered, none "Lost the Warden host"', async () => {
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp'], env: { ...env, WARDEN_STATE_DIR: dir, WARDEN_HOST_IDLE: '60s' }, stderr: 'pipe' });
    const client = new Client({ name: 'warden-burst-test', version: '0.0.0' });
    await client.connect(transport);
    try {
      const text = (result: CallToolResult) => result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
      const calls = [
        ...Array.from({ length: 4000 }, () => client.callTool({ name: 'list', arguments: {} }, undefined, { timeout: 170_000 })),
        ...Array.from({ length: 1000 }, (_, i) => client.callTool({ name: 'run', arguments: { argv: ['echo', `burst ${i}`] } }, undefined, { timeout: 170_000 })),
      ];
      const results = (await Promise.all(calls)) as CallToolResult[];
      const failed = results.filter((r) => r.isError === true).map(text);
      expect(failed.slice(0, 3)).toEqual([]);
      expect(results.map(text).some((t) => t.includes('Lost the Warden host'))).toBe(false);
      const runs = results.slice(4000).map((r) => (r.structuredContent as { verdict?: string }).verdict);
      expect(runs.every((v) => v === 'completed')).toBe(true);
    } finally {
      await client.close();
    }
  }, 180_000);
});
