// `warden mcp` for a state dir it cannot write (issue 27, item 8): as a user
// whose state dir is read-only, its runs still run, supervised in the MCP
// server's own process, and every run answer says they are not recorded.
// Before, every call answered "Cannot open the background host's log".
// The user is nobody (65534) through setpriv; root could write any dir.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cannotRunAs } from '../main/store/store-testkit';

const BIN = resolve(__dirname, '../../bin/warden.mjs');
const NOBODY = 65534;
const asNobody = process.getuid?.() === 0 ? cannotRunAs(NOBODY, BIN) : 'switching to another user needs root';
const dir = mkdtempSync(join(tmpdir(), 'wmcpro-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('warden mcp on a read-only state dir', () => {
  it('as nobody: runs run, supervised by the server itself, with a note; the state dir stays untouched', async (context) => {
    if (asNobody) return context.skip(asNobody);
    chmodSync(dir, 0o755);
    const stateDir = join(dir, 'state');
    mkdirSync(stateDir);
    chownSync(stateDir, NOBODY, NOBODY);
    chmodSync(stateDir, 0o555);
    const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, WARDEN_STATE_DIR: stateDir };
    const transport = new StdioClientTransport({ command: 'setpriv', args: [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', process.execPath, BIN, 'mcp'], env, stderr: 'pipe', cwd: '/' });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const client = new Client({ name: 'warden-ro-test', version: '0.0.0' });
    await client.connect(transport);
    try {
      const result = (await client.callTool({ name: 'run', arguments: { argv: ['sh', '-c', 'echo ran as $(id -u)'] } }, undefined, { timeout: 60_000 })) as CallToolResult;
      const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
      expect(result.isError, text).not.toBe(true);
      const run = result.structuredContent as { verdict: string; stdout: string; notes: string[] };
      expect(run.verdict).toBe('completed');
      expect(run.stdout).toBe(`ran as ${NOBODY}\n`);
      expect(run.notes.join(' ')).toContain(`Warden's state directory ${stateDir} is not writable (EACCES), so no Warden host can run for it: this warden mcp supervises its runs itself`);
      expect(text).toContain('supervises its runs itself');
      expect(stderr).toMatch(/^warden mcp: Warden's state directory .* is not writable/m);
      expect(readdirSync(stateDir)).toEqual([]);
    } finally {
      await client.close();
    }
  }, 90_000);
});
