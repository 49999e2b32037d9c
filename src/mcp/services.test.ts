// Services through `warden mcp` as an agent sees them (the SDK's Client over
// stdio, a real background host): run with ready answers once the dev
// server is ready, the ready line and ports first, the server going on; a
// second run fetches a page from it; wait until a line; input answering a
// prompt; the tools' arguments checked in one line; and the agent's exit
// (closing warden mcp) freeing the port.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stopBackgroundHosts } from '../cli/testkit';
import { accepts, fixture, freePort, until } from '../main/supervisor/services-testkit';
import { parseToolArgs, runInput } from './schemas';
import { runRequestFrom } from './tools';

const BIN = resolve(__dirname, '../../bin/warden.mjs');
const stateDir = mkdtempSync(join(tmpdir(), 'wmcpsvc-'));
const workDir = realpathSync(mkdtempSync(join(tmpdir(), 'wmcpsvc-work-')));
const node = process.execPath;

async function attach(): Promise<Client> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && key !== 'WARDEN_EMBEDDED') env[key] = value;
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp'], env: { ...env, WARDEN_STATE_DIR: stateDir, WARDEN_HOST_IDLE: '60s' }, stderr: 'pipe', cwd: workDir });
  const client = new Client({ name: 'claude-code', version: '0.0.0' });
  await client.connect(transport);
  return client;
}

let client: Client;

async function call(name: string, args: Record<string, unknown>, on: Client = client) {
  const result = (await on.callTool({ name, arguments: args }, undefined, { timeout: 120_000 })) as CallToolResult;
  const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
  return { result, text, json: result.structuredContent as Record<string, unknown> };
}

beforeAll(async () => {
  client = await attach();
}, 120_000);

afterAll(async () => {
  await client?.close();
  await stopBackgroundHosts([stateDir]);
  rmSync(stateDir, { recursive: true, force: true });
  rmSync(workDir, { recursive: true, force: true });
}, 60_000);

describe('warden mcp with services', { timeout: 90_000 }, () => {
  it('offers ready, lease, onNotReady and stdinPipe on run, until on wait, and an input tool', async () => {
    const { tools } = await client.listTools();
    const run = tools.find((t) => t.name === 'run')!;
    expect(Object.keys(run.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(['ready', 'lease', 'onNotReady', 'stdinPipe']));
    expect(run.description).toMatch(/For a server or watcher that never ends .* give ready/);
    const wait = tools.find((t) => t.name === 'wait')!;
    expect(Object.keys(wait.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(['until', 'since']));
    const input = tools.find((t) => t.name === 'input')!;
    expect(Object.keys(input.inputSchema.properties ?? {})).toEqual(['id', 'text', 'eof']);
  });

  it('starts a dev server that answers ready with its port; a second run fetches a page from it', async () => {
    const port = await freePort();
    const started = await call('run', { argv: [node, fixture('dev-server.mjs'), '--port', String(port), '--delay', '200'], ready: { probes: ['port', 'log:/Local:/'] } });
    expect(started.result.isError).toBeFalsy();
    const lines = started.text.split('\n');
    expect(lines[1]).toMatch(new RegExp(`^<ready>ready after .*, listening on ${port}; it printed: ➜  Local:   http://localhost:${port}/</ready>$`));
    expect(lines[2]).toMatch(new RegExp(`^<ports>${port} `));
    expect(Object.keys(started.json).slice(0, 4)).toEqual(['id', 'ready', 'ports', 'state']);
    expect(started.json).toMatchObject({ state: 'running', limitMs: null, lease: { ms: 7_200_000 } });
    const id = started.json.id as string;
    const fetched = await call('run', { argv: ['curl', '-sf', `http://127.0.0.1:${port}/`] });
    expect(fetched.json).toMatchObject({ verdict: 'completed', stdout: expect.stringContaining(`hello from the dev server on ${port}`) });
    const listed = await call('list', { live: true });
    expect(listed.text).toMatch(new RegExp(`running, ready, listening on ${port}`));
    const extended = await call('extend', { id, by: '30m' });
    expect(extended.text.split('\n')[0]).toMatch(new RegExp(`^Run ${id}'s lease now ends at 2 h 30 min of its clock \\(`));
    expect(extended.json).toMatchObject({ limitMs: null, lease: { ms: 7_200_000, endsAtMs: 9_000_000 } });
    const stopped = await call('stop', { id });
    expect(stopped.json).toMatchObject({ verdict: 'stopped' });
    expect(await accepts(port)).toBe(false);
  });

  it('waits until a line, and answers a prompt with input', async () => {
    const started = await call('run', { argv: [node, fixture('ask.mjs')], stdinPipe: true, yield: '500ms' });
    const id = started.json.id as string;
    const asked = await call('wait', { id, until: 'log:/\\[y\\/N\\]/' });
    expect(asked.json.until).toMatchObject({ met: true, line: 'Install the missing packages? [y/N]' });
    const sent = await call('input', { id, text: 'y\n' });
    expect(sent.text).toMatch(/^Sent 2 characters to run [0-9a-f]{12}; its answer comes with wait/);
    const ended = await call('wait', { id });
    expect(ended.json).toMatchObject({ verdict: 'completed', exitCode: 0 });
    expect(ended.json.stdout).toContain('You said: y');
    const refused = await call('input', { id, text: 'again\n' });
    expect(refused.result.isError).toBe(true);
    expect(refused.text).toMatch(/has ended; it takes no more input\.$/);
  });

  it('says waiting to be ready when the yield comes first, and the next call waits until ready', async () => {
    const port = await freePort();
    const started = await call('run', { argv: [node, fixture('dev-server.mjs'), '--port', String(port), '--delay', '3000'], ready: { probes: [`port:${port}`] }, yield: '500ms' });
    expect(started.text.split('\n')[1]).toMatch(/^<ready>not ready yet after .*: port:\d+ \(/);
    expect(started.json.next).toBe(`wait {"id": "${started.json.id as string}", "until": "ready"}`);
    const ready = await call('wait', { id: started.json.id, until: 'ready' });
    expect(ready.text.split('\n')[1]).toMatch(new RegExp(`^<ready>ready after .*, listening on ${port}</ready>$`));
    await call('stop', { id: started.json.id });
  });

  it('refuses bad service arguments in one line', async () => {
    for (const [args, line] of [
      [{ argv: ['true'], ready: { probes: ['nope'] } }, /^The readiness probe "nope" is not one Warden knows/],
      [{ argv: ['true'], ready: { probes: ['port'], timeout: 'soon' } }, /^ready\.timeout takes a duration/],
      [{ argv: ['true'], onNotReady: 'keep' }, /^onNotReady goes with ready/],
      [{ python: 'pass', ready: { probes: ['port'] } }, /^ready, lease, onNotReady and stdinPipe are for commands/],
      [{ argv: ['cat'], stdin: 'x', stdinPipe: true }, /^stdin \(text given at once\) and stdinPipe/],
      [{ argv: ['true'], ready: { probes: ['port'], extra: 1 } }, /^ready: ready takes probes, timeout, interval, delay and status, not "extra"/],
    ] as const) {
      const { result, text } = await call('run', args as Record<string, unknown>);
      expect(result.isError, text).toBe(true);
      expect(text).toMatch(line);
      expect(text.trim().split('\n')).toHaveLength(1);
    }
    const bad = await call('wait', { id: 'abcdef123456', until: 'Compiled' });
    expect(bad.result.isError).toBe(true);
    const none = await call('input', { id: 'abcdef123456' });
    expect(none.text).toMatch(/^input needs text to send/);
  });

  it("frees the port within 5 s of the agent's exit (warden mcp closing)", async () => {
    const agent = await attach();
    const port = await freePort();
    const started = await call('run', { shell: `"${node}" "${fixture('dev-server.mjs')}" --port ${port}`, ready: { probes: ['port'] } }, agent);
    expect(started.json.state).toBe('running');
    expect(await accepts(port)).toBe(true);
    await agent.close();
    const closed = performance.now();
    await until('the port refuses connections', async () => !(await accepts(port)), 5_000);
    console.log(`the agent gone, the port refused connections ${Math.round(performance.now() - closed)} ms later`);
  });
});

describe('runRequestFrom with services', () => {
  it('passes ready, lease, onNotReady and stdinPipe to the request', () => {
    const args = parseToolArgs(runInput, { shell: 'npm run dev', ready: { probes: 'port', timeout: '60s', interval: '100ms', delay: '1s', status: '200-499' }, onNotReady: 'keep', lease: '30m' });
    expect(runRequestFrom(args, '/p')).toMatchObject({
      argv: ['npm run dev'],
      shell: true,
      ready: { probes: ['port'], timeoutMs: 60_000, intervalMs: 100, delayMs: 1000, status: '200-499', onNotReady: 'keep' },
      leaseMs: 1_800_000,
    });
    expect(runRequestFrom(parseToolArgs(runInput, { argv: ['cat'], stdinPipe: true }), '/p')).toMatchObject({ stdinPipe: true });
    expect(runRequestFrom(parseToolArgs(runInput, { argv: ['x'], ready: { probes: ['port', 'log:/a,b/'] }, lease: '0' }), '/p')).toMatchObject({ ready: { probes: ['port', 'log:/a,b/'] }, leaseMs: null });
  });
});
