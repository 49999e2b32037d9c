// `warden mcp` as an agent's client sees it: the SDK's own Client over stdio
// against `node bin/warden.mjs mcp` (a real subprocess), which starts a real
// background host for a fresh state dir. Real processes throughout; no
// wall-clock assertions.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { execa } from 'execa';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectToHost } from '../client/transport';
import { stopBackgroundHosts } from '../cli/testkit';
import type { RunSummary } from '../shared/history';
import { InputError } from '../shared/schemas';
import { parseToolArgs, runInput } from './schemas';
import { runRequestFrom } from './tools';
import type { RunResult } from '../shared/result';
import { until } from '../../test/kit/until';

const BIN = resolve(__dirname, '../../bin/warden.mjs');

function childEnv(stateDir: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && key !== 'WARDEN_EMBEDDED') env[key] = value;
  return { ...env, WARDEN_STATE_DIR: stateDir, WARDEN_HOST_IDLE: '30s' };
}

interface Attached {
  client: Client;
  stderr: () => string;
}

async function attach(stateDir: string, cwd?: string, env: Record<string, string> = {}): Promise<Attached> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp'], env: { ...childEnv(stateDir), ...env }, stderr: 'pipe', ...(cwd !== undefined ? { cwd } : {}) });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: 'warden-mcp-test', version: '0.0.0' });
  await client.connect(transport);
  return { client, stderr: () => stderr };
}

const dir = mkdtempSync(join(tmpdir(), 'wmcp-'));
/** Every state dir a test used: afterAll makes sure no host of theirs is left. */
const stateDirs = [dir];
/** The agent's directory: where the MCP server is started (the host runs elsewhere, in the state dir). */
const workDir = realpathSync(mkdtempSync(join(tmpdir(), 'wmcp-work-')));
mkdirSync(join(workDir, 'sub'));
let session: Attached;

/** A tool call, its text block and its structuredContent. */
async function call(name: string, args: Record<string, unknown>, options: { onprogress?: (p: { progress: number; message?: string }) => void } = {}) {
  const result = (await session.client.callTool({ name, arguments: args }, undefined, { timeout: 120_000, ...options })) as CallToolResult;
  const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
  return { result, text, run: result.structuredContent as unknown as RunResult };
}

function expectOneLineError(result: CallToolResult, text: string): void {
  expect(result.isError).toBe(true);
  expect(text.trim().split('\n')).toHaveLength(1);
}

/** Ends the host a state dir's clients started, and waits until its process is gone. */
async function stopHost(stateDir: string): Promise<void> {
  const api = await connectToHost(stateDir);
  if (!api) return;
  const { pid } = await api.host();
  process.kill(pid, 'SIGTERM');
  for (let i = 0; i < 300; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  process.kill(pid, 'SIGKILL');
}

beforeAll(async () => {
  session = await attach(dir, workDir);
}, 180_000);

afterAll(async () => {
  await session?.client.close();
  await stopHost(dir);
  await stopBackgroundHosts(stateDirs);
}, 60_000);

describe('warden mcp', { timeout: 60_000 }, () => {
  it('lists its tools, each with a description and input and output schemas', async () => {
    const { tools } = await session.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['extend', 'input', 'list', 'run', 'search', 'sessions', 'show', 'stop', 'wait']);
    for (const tool of tools) {
      expect(tool.description?.length).toBeGreaterThan(50);
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type).toBe('object');
    }
    const run = tools.find((t) => t.name === 'run')!;
    expect(Object.keys(run.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(['argv', 'shell', 'python', 'session', 'cwd', 'env', 'stdin', 'limit', 'grace', 'memory', 'yield', 'detach', 'streamChars']));
    expect(Object.keys(run.outputSchema?.properties ?? {})).toEqual(expect.arrayContaining(['id', 'state', 'verdict', 'exitCode', 'stdout', 'stderr', 'advice', 'next', 'stdoutCut', 'stderrCut']));
    // Claude Code would defer the tools behind its ToolSearch otherwise.
    for (const tool of tools) expect(tool._meta?.['anthropic/alwaysLoad']).toBe(true);
  });

  it('runs a command and answers with the result contract and a shell_results block', async () => {
    const { result, text, run } = await call('run', { argv: ['bash', '-c', 'echo hi'] });
    expect(result.isError).toBeFalsy();
    expect(run).toMatchObject({ kind: 'command', state: 'ended', verdict: 'completed', exitCode: 0, signal: null, stdout: 'hi\n', stderr: '', stdoutCut: 0, stderrCut: 0 });
    expect(run.id).toMatch(/^[0-9a-f]{6,32}$/);
    expect(text).toContain('<shell_results>');
    expect(text).toContain('<verdict>completed</verdict>');
    expect(text).toContain('<stdout>hi\n</stdout>');
    expect(text).not.toContain('<next>');
  });

  it('okExit: an exit code named as success is completed, with a note; one not named still fails', async () => {
    const ok = await call('run', { argv: ['grep', 'no-such-text', '/dev/null'], okExit: 1 });
    expect(ok.run).toMatchObject({ verdict: 'completed', exitCode: 1, advice: null });
    expect(ok.run.notes.join('\n')).toContain('which this run was told means success (ok-exit 1)');
    expect(ok.text).toContain('<verdict>completed</verdict>');
    const other = await call('run', { shell: 'exit 3', okExit: [1, 2] });
    expect(other.run).toMatchObject({ verdict: 'failed', exitCode: 3 });
  });

  it("runs in the agent's directory (where warden mcp started), a relative cwd taken from there", async () => {
    const here = await call('run', { argv: ['pwd'] });
    expect(here.run.stdout).toBe(`${workDir}\n`);
    expect(here.run.cwd).toBe(workDir);
    const sub = await call('run', { shell: 'pwd; echo "$GREETING" >&2', cwd: 'sub', env: { GREETING: 'hello' } });
    expect(sub.run.stdout).toBe(`${join(workDir, 'sub')}\n`);
    expect(sub.run.stderr).toBe('hello\n');
    const stdin = await call('run', { argv: ['cat'], stdin: 'from stdin' });
    expect(stdin.run.stdout).toBe('from stdin');
  });

  it('keeps the output of a run its limit stopped: timed-out', async () => {
    const { run, text } = await call('run', { argv: ['bash', '-c', 'echo before; sleep 30'], limit: '1s' });
    expect(run.state).toBe('ended');
    expect(run.verdict).toBe('timed-out');
    expect(run.stdout).toBe('before\n');
    expect(run.limitMs).toBe(1000);
    expect(run.stop?.reason).toBe('deadline');
    expect(text).toContain('<verdict>timed-out</verdict>');
    expect(text).toContain('<advice>');
  });

  it('yields a run still going with a <next> hint; wait returns the rest and its end', async () => {
    // The second line waits for the test (a gate file), so the first answer cannot hold it however slow the machine.
    const gate = join(workDir, 'yield-gate');
    const first = await call('run', { shell: `echo first; until [ -e ${gate} ]; do sleep 0.05; done; echo second`, yield: '1s' });
    expect(first.run.state).toBe('running');
    expect(first.run.verdict).toBe('running');
    expect(first.run.stdout).toBe('first\n');
    expect(first.text).toContain('<verdict>running</verdict>');
    expect(first.text).toContain(`<next>wait {"id": "${first.run.id}"}</next>`);
    // What Claude Code and Codex show (structuredContent): the exact call, and advice saying to make it.
    expect((first.run as unknown as { next: string }).next).toBe(`wait {"id": "${first.run.id}"}`);
    expect(first.run.advice).toContain(`wait {"id": "${first.run.id}"}`);
    writeFileSync(gate, '');
    const rest = await call('wait', { id: first.run.id });
    expect(rest.run).toMatchObject({ id: first.run.id, state: 'ended', verdict: 'completed', exitCode: 0, stdout: 'second\n' });
    expect(rest.text).not.toContain('<next>');
  });

  it('sends progress notifications while wait blocks, when the client asks for them', async () => {
    // It ends once the wait has sent two notifications (the test opens a gate), not after a time the wait might start too late for.
    const gate = join(workDir, 'progress-gate');
    const started = await call('run', { argv: ['bash', '-c', 'echo tick; until [ -e "$1" ]; do sleep 0.05; done', 'tick', gate], yield: '500ms' });
    expect(started.run.state).toBe('running');
    const seen: { progress: number; message?: string }[] = [];
    const done = await call('wait', { id: started.run.id }, {
      onprogress: (p) => {
        seen.push(p);
        if (seen.length === 2) writeFileSync(gate, '');
      },
    });
    expect(done.run.verdict).toBe('completed');
    expect(seen.length).toBeGreaterThan(0);
    expect(seen[0]!.message).toContain(started.run.id);
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.progress).toBeGreaterThan(seen[i - 1]!.progress);
  });

  it('extends a yielded run, then stops it: stopped, with its final result', async () => {
    const started = await call('run', { argv: ['sleep', '60'], limit: '20s', yield: '1s' });
    expect(started.run.state).toBe('running');
    const extended = await call('extend', { id: started.run.id, by: '1m' });
    expect(extended.result.isError).toBeFalsy();
    expect(extended.run.limitMs).toBe(80_000);
    expect(extended.text).toContain('1 min 20 s limit');
    const stopped = await call('stop', { id: started.run.id });
    expect(stopped.run).toMatchObject({ id: started.run.id, state: 'ended', verdict: 'stopped' });
    expect(stopped.run.stop?.reason).toBe('user');
    expect(stopped.text).toContain('<verdict>stopped</verdict>');
  });

  it("says a Python script's native crash is one, with advice about native code", async () => {
    const crash = await call('run', { python: 'import ctypes; ctypes.string_at(0)', limit: '40s' });
    expect(crash.run.kind).toBe('python');
    expect(crash.run.verdict).toBe('crashed');
    expect(crash.run.advice).toMatch(/native code/);
    expect(crash.text).toContain('<verdict>crashed</verdict>');
    const sessions = await call('sessions', {});
    expect(sessions.result.isError).toBeFalsy();
    expect(sessions.text).toContain('default');
  });

  it('answers bad input with one line and keeps serving', async () => {
    const both = await call('run', { argv: ['true'], shell: 'true' });
    expectOneLineError(both.result, both.text);
    expect(both.text).toContain('exactly one of argv, shell or python');
    const soon = await call('run', { argv: ['true'], limit: 'soon' });
    expectOneLineError(soon.result, soon.text);
    expect(soon.text).toBe('limit takes a duration such as 500ms, 30s, 2m or 1h, not "soon".');
    const number = await call('run', { argv: ['true'], limit: 5 });
    expectOneLineError(number.result, number.text);
    expect(number.text).toMatch(/^limit: /);
    const extra = await call('run', { argv: ['true'], timeoutSeconds: 5 });
    expectOneLineError(extra.result, extra.text);
    expect(extra.text).toContain('"timeoutSeconds"');
    const long = await call('run', { argv: ['true'], yield: '5m' });
    expectOneLineError(long.result, long.text);
    const unknown = await call('wait', { id: 'abcdef123456' });
    expectOneLineError(unknown.result, unknown.text);
    expect(unknown.text).toContain('No run with id');
    const notAnId = await call('show', { id: 'not-an-id' });
    expectOneLineError(notAnId.result, notAnId.text);
    const missing = await call('nosuchtool', {});
    expect(missing.result.isError).toBe(true);
    // Still serving.
    const ok = await call('run', { argv: ['echo', 'still here'] });
    expect(ok.run.stdout).toBe('still here\n');
  });

  it("lists its runs, as `warden list --json` does for the same state dir, and pages a run's output with show", async () => {
    const { run } = await call('run', { argv: ['python3', '-c', "print('x' * 30000)"] });
    expect(run.verdict).toBe('completed');
    const cli = await execa(process.execPath, [BIN, 'list', '--json'], { env: childEnv(dir), reject: false, stdin: 'ignore', timeout: 60_000 });
    expect(cli.exitCode).toBe(0);
    expect((JSON.parse(cli.stdout) as RunSummary[]).map((r) => r.id)).toContain(run.id);

    const listed = await call('list', { verdict: 'completed', since: '1h' });
    expect((listed.result.structuredContent as { runs: RunSummary[] }).runs.map((r) => r.id)).toContain(run.id);
    expect(listed.text).toContain(run.id);

    const page = await call('show', { id: run.id, stream: 'stdout', maxChars: 1000 });
    expect(page.run.stdout).toBe('x'.repeat(1000));
    expect(page.run).not.toHaveProperty('stderr');
    expect(page.text).toContain(`<page>A page of run ${run.id}'s output, not all of it: stdout: characters 0 to 1,000 of 30,001, 29,001 more; next page: show {"id": "${run.id}", "stream": "stdout", "offset": 1000, "maxChars": 1000}</page>`);
    const last = await call('show', { id: run.id, offset: 29_500, maxChars: 20_000 });
    expect(last.run.stdout).toBe(`${'x'.repeat(500)}\n`);
    expect(last.text).not.toContain('next page');
    expect(last.text).toContain('stdout: characters 29,500 to 30,001 of 30,001, its end; stderr: empty');

    // A long output: both forms keep its head and tail and name the show call for the rest.
    const big = await call('run', { argv: ['python3', '-c', "print('y' * 120000)"] });
    expect((big.run as unknown as { stdoutChars: number }).stdoutChars).toBe(120_001);
    expect(big.text).toMatch(/\[warden: [\d,]+ characters of stdout cut here/);
    expect(big.text.length).toBeLessThan(20_000);
  });

  it("a page of one stream says it is a page, keeps the run's own verdict and advice, and each next call names its stream", async () => {
    const { run } = await call('run', { shell: 'seq 1 3000; echo big-err-line >&2; exit 1' });
    expect(run).toMatchObject({ verdict: 'failed', advice: 'Read stderr for the error the command reported.' });
    const page = await call('show', { id: run.id, stream: 'stdout', offset: 2000 });
    const json = page.result.structuredContent as Record<string, unknown> & { page: { stream: string; stdout: { from: number; to: number; total: number }; next: string[] } };
    // The run's own verdict and advice: it did write on stderr, though this page holds none of it.
    expect(json).toMatchObject({ verdict: 'failed', exitCode: 1, advice: 'Read stderr for the error the command reported.' });
    expect(json).not.toHaveProperty('stderr');
    expect(page.text).not.toContain('<stderr>');
    expect(page.text).toContain('<advice>Read stderr for the error the command reported.</advice>');
    // It says it is a page before anything else, in both forms.
    expect(page.text.split('\n')[1]).toMatch(/^<page>A page of run [0-9a-f]+'s output, not all of it: stdout: characters 2,000 to 10,000 of 13,893, 3,893 more; next page: show \{"id": "[0-9a-f]+", "stream": "stdout", "offset": 10000\}<\/page>$/);
    expect(Object.keys(json)[0]).toBe('page');
    expect(json.page).toEqual({ stream: 'stdout', stdout: { from: 2000, to: 10_000, total: 13_893 }, next: [`show {"id": "${run.id}", "stream": "stdout", "offset": 10000}`] });
    // Following the next call as written returns the rest of stdout alone.
    const next = JSON.parse(json.page.next[0]!.replace(/^show /, '')) as Record<string, unknown>;
    const rest = await call('show', next);
    const restJson = rest.result.structuredContent as Record<string, unknown>;
    expect(restJson.stdout).toBe(Array.from({ length: 3000 }, (_, i) => `${i + 1}\n`).join('').slice(10_000));
    expect(restJson).not.toHaveProperty('stderr');
    expect(restJson).not.toHaveProperty('page.next');
    // Both streams: one next call per stream that has more.
    const both = await call('show', { id: run.id, maxChars: 5 });
    expect((both.result.structuredContent as { page: { next: string[] } }).page.next).toEqual([
      `show {"id": "${run.id}", "stream": "stdout", "offset": 5, "maxChars": 5}`,
      `show {"id": "${run.id}", "stream": "stderr", "offset": 5, "maxChars": 5}`,
    ]);
  });

  it('search finds lines as rg -n -C prints them; its next call goes on; a bad pattern is one line', async () => {
    const { run } = await call('run', { shell: 'for i in $(seq 1 300); do echo "step $i"; done; printf "\\033[31mTraceback\\033[0m (most recent call last):\\r\\n  KeyError: x\\n" >&2; exit 1' });
    const found = await call('search', { id: run.id, pattern: 'Traceback', context: 1 });
    const answer = found.result.structuredContent as unknown as { matches: { line: number; stream: string; offset: number; text: string; after: string[] }[]; more: boolean; cursor: string | null };
    expect(answer.matches).toEqual([expect.objectContaining({ run: run.id, stream: 'stderr', line: 1, offset: 5, text: 'Traceback (most recent call last):', after: ['  KeyError: x'] })]);
    expect(answer).toMatchObject({ more: false, cursor: null });
    expect(found.text.split('\n').slice(1, 3)).toEqual(['1:5:Traceback (most recent call last):', '2-  KeyError: x']);
    // The offset is show's.
    const shown = await call('show', { id: run.id, stream: 'stderr', offset: 5, maxChars: 9 });
    expect((shown.result.structuredContent as { stderr: string }).stderr).toBe('Traceback');

    const paged = await call('search', { id: run.id, pattern: 'step \\d+0$', maxMatches: 10, stream: 'stdout' });
    const first = paged.result.structuredContent as unknown as { matches: { line: number }[]; next: string };
    expect(first.matches.map((m) => m.line)).toEqual([10, 20, 30, 40, 50, 60, 70, 80, 90, 100]);
    expect(first.next).toMatch(/^search \{"cursor": "[A-Za-z0-9_-]+", "maxMatches": 10\}$/);
    expect(paged.text).toContain(`To go on (it stopped at maxMatches; more lines may match): ${first.next}`);
    const rest = await call('search', JSON.parse(first.next.replace(/^search /, '')) as Record<string, unknown>);
    expect((rest.result.structuredContent as unknown as { matches: { line: number }[] }).matches.map((m) => m.line)).toEqual([110, 120, 130, 140, 150, 160, 170, 180, 190, 200]);

    const bad = await call('search', { id: run.id, pattern: '[z-a]' });
    expectOneLineError(bad.result, bad.text);
    expect(bad.text).toMatch(/^pattern is not a valid regular expression \(JavaScript, u flag\): /);
    const both = await call('search', { id: run.id, pattern: 'x', cursor: 'abc' });
    expect(both.text).toMatch(/^cursor carries the search it continues/);
  });

  it('offers runs as resources: the newest listed, templates for any, each read sized for a model', async () => {
    const { run } = await call('run', { shell: 'seq 1 100000; echo "resource-err" >&2; exit 4' });
    const { resourceTemplates } = await session.client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(['warden://runs/{id}', 'warden://runs/{id}/stdout', 'warden://runs/{id}/stderr']);
    const { resources } = await session.client.listResources();
    const listed = resources.find((r) => r.uri === `warden://runs/${run.id}`)!;
    expect(listed).toMatchObject({ name: run.id, mimeType: 'text/plain', title: `/bin/sh -c 'seq 1 100000; echo "resource-err" >&2; exit 4' (failed)` });
    expect(resources[0]!.uri).toBe(`warden://runs/${run.id}`); // newest first

    const whole = await session.client.readResource({ uri: `warden://runs/${run.id}` });
    const summary = (whole.contents[0] as { text: string }).text;
    expect(summary.split('\n').slice(0, 3)).toEqual(['<shell_results>', '<verdict>failed</verdict>', '<exit_code>4</exit_code>']);
    expect(summary).toContain('<stderr>resource-err\n</stderr>');
    expect(summary).toMatch(/\[warden: [\d,]+ characters of stdout cut here \(characters 2,000 to [\d,]+ of 588,895\); read them with show \{"id": "[0-9a-f]+", "stream": "stdout", "offset": 2000\}\]/);
    const stdout = (await session.client.readResource({ uri: `warden://runs/${run.id}/stdout` })).contents[0] as { text: string; mimeType: string };
    expect(stdout.mimeType).toBe('text/plain');
    expect(stdout.text.startsWith('1\n2\n3\n')).toBe(true);
    expect(stdout.text.endsWith('99999\n100000\n')).toBe(true);
    expect(stdout.text.length).toBeLessThan(25_000);
    expect(stdout.text).toMatch(/\[warden: [\d,]+ characters of stdout cut here \(characters [\d,]+ to [\d,]+ of 588,895\); read them with show /);
    expect(((await session.client.readResource({ uri: `warden://runs/${run.id}/stderr` })).contents[0] as { text: string }).text).toBe('resource-err\n');

    await expect(session.client.readResource({ uri: 'warden://runs/abcdef123456' })).rejects.toThrow(/No run with id "abcdef123456"/);
    await expect(session.client.readResource({ uri: 'warden://elsewhere' })).rejects.toThrow(/No Warden resource "warden:\/\/elsewhere"/);
    await expect(session.client.listResources({ cursor: 'not-a-cursor' })).rejects.toThrow(/cursor/i);
  });

  it('--help says it always uses a host; an unknown option is one line and exit 125', async () => {
    const help = await execa(process.execPath, [BIN, 'mcp', '--help'], { env: childEnv(dir), reject: false, stdin: 'ignore' });
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toContain('Usage: warden mcp');
    expect(help.stdout).toMatch(/always goes through a Warden host/);
    const bad = await execa(process.execPath, [BIN, 'mcp', '--bogus'], { env: childEnv(dir), reject: false, stdin: 'ignore' });
    expect(bad.exitCode).toBe(125);
    // (bin/warden.mjs may say first that it rebuilt the CLI after a source changed.)
    const lines = bad.stderr.trim().split('\n').filter((line) => !/ the CLI\b/.test(line));
    expect(lines).toEqual(['warden: Unknown option --bogus for warden mcp (see warden mcp --help).']);
  });

  it('exits 0 when stdin closes', async () => {
    const child = await execa(process.execPath, [BIN, 'mcp'], { env: childEnv(dir), reject: false, input: '', timeout: 30_000 });
    expect(child.exitCode).toBe(0);
    expect(child.stdout).toBe('');
  });

  it('starts a new host when the one it used went away; wait and stop answer for a run of the old one from the history', async () => {
    const old = await call('run', { argv: ['echo', 'old host'] });
    const before = (await (await connectToHost(dir))!.host()).pid;
    await stopHost(dir);
    const { result, run } = await call('run', { argv: ['echo', 'new host'] });
    expect(result.isError).toBeFalsy();
    expect(run.stdout).toBe('new host\n');
    const after = (await (await connectToHost(dir))!.host()).pid;
    expect(after).not.toBe(before);
    // The new host does not hold the old run: its stored result answers.
    const waited = await call('wait', { id: old.run.id });
    expect(waited.run).toMatchObject({ id: old.run.id, state: 'ended', verdict: 'completed', stdout: 'old host\n' });
    const stopped = await call('stop', { id: old.run.id });
    expect(stopped.result.isError).toBeFalsy();
    expect(stopped.text).toMatch(/^Run [0-9a-f]+ had already ended \(completed\); nothing was stopped\./);
  });

  it('keeps the background host it started from idling out while attached; the host goes once it left', async () => {
    const quick = mkdtempSync(join(tmpdir(), 'wmcp-idle-'));
    stateDirs.push(quick);
    const attached = await attach(quick, workDir, { WARDEN_HOST_IDLE: '1s' });
    try {
      const first = (await attached.client.callTool({ name: 'run', arguments: { argv: ['true'] } }, undefined, { timeout: 60_000 })) as CallToolResult;
      expect(first.isError).toBeFalsy();
      const pid = (await (await connectToHost(quick))!.host()).pid;
      // Several idle periods with no live run (at least 3.5 s pass: a bound from below): the open event stream keeps the host.
      await new Promise((r) => setTimeout(r, 3500));
      expect((await (await connectToHost(quick))?.host())?.pid).toBe(pid);
      await attached.client.close();
      await until('the host to idle out', () => {
        try {
          process.kill(pid, 0);
          return false;
        } catch {
          return true;
        }
      });
    } finally {
      await attached.client.close();
      await stopHost(quick);
    }
  });

  it('never dies when no host can be had: a tool call answers one line, the next call is answered too', async () => {
    const bad = await attach('/dev/null/warden-state');
    try {
      const { tools } = await bad.client.listTools();
      expect(tools.length).toBe(9);
      for (const name of ['run', 'list']) {
        const result = (await bad.client.callTool({ name, arguments: name === 'run' ? { argv: ['true'] } : {} }, undefined, { timeout: 60_000 })) as CallToolResult;
        const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
        expectOneLineError(result, text);
      }
    } finally {
      await bad.client.close();
    }
  });
});

describe("the run tool's arguments as a run request (the CLI's parser underneath)", () => {
  const request = (args: Record<string, unknown>) => runRequestFrom(parseToolArgs(runInput, args), '/work/here');

  it('maps each argument to the request field warden run would set', () => {
    expect(request({ argv: ['make', '-j4'], limit: '2m', grace: '3s', memory: '256M', env: { A: '1' }, stdin: 'x' })).toEqual({
      argv: ['make', '-j4'],
      limitMs: 120_000,
      graceMs: 3000,
      memory: '256M',
      cwd: '/work/here',
      env: { A: '1' },
      stdin: 'x',
    });
    expect(request({ shell: 'ls | wc -l', cwd: 'sub' })).toEqual({ argv: ['ls | wc -l'], shell: true, cwd: '/work/here/sub' });
    expect(request({ python: 'print(1)', session: 'work', limit: '500ms', cwd: '/abs' })).toEqual({ code: 'print(1)', session: 'work', limitMs: 500, cwd: '/abs' });
    // Values that look like options stay values.
    expect(request({ argv: ['echo', '--', '-n'], stdin: '--' })).toMatchObject({ argv: ['echo', '--', '-n'], stdin: '--' });
    expect(request({ python: '-1' })).toMatchObject({ code: '-1' });
    // okExit: one code or a list, each once, as --ok-exit gives them.
    expect(request({ argv: ['grep', 'x', 'f'], okExit: 1 })).toMatchObject({ okExitCodes: [1] });
    expect(request({ shell: 'diff a b', okExit: [2, 1, 2] })).toMatchObject({ okExitCodes: [2, 1] });
  });

  it('refuses what the CLI refuses, in one line naming the argument', () => {
    const message = (args: Record<string, unknown>) => {
      try {
        request(args);
      } catch (error) {
        expect(error).toBeInstanceOf(InputError);
        return (error as Error).message;
      }
      throw new Error('accepted');
    };
    expect(message({})).toMatch(/^run needs one of argv/);
    expect(message({ argv: ['true'], python: 'x' })).toBe('run takes exactly one of argv, shell or python, not argv and python.');
    // As timeout(1) reads it, a limit of 0 is none.
    expect(request({ argv: ['true'], limit: '0s' })).toMatchObject({ limitMs: null });
    expect(message({ argv: ['true'], grace: 'later' })).toBe('grace takes a duration such as 500ms, 30s, 2m or 1h, not "later".');
    expect(message({ argv: ['true'], session: 'a' })).toBe('session goes with python: the session a script runs in.');
    expect(message({ python: 'x', stdin: 'y' })).toBe('stdin is for commands (argv or shell), not python scripts.');
    expect(message({ python: 'x', session: 'no spaces' })).toMatch(/^session: must be 1 to 64 letters/);
    expect(message({ argv: [] })).toMatch(/^argv: needs at least the command/);
    expect(message({ python: 'x', okExit: 1 })).toBe('okExit is for commands (argv or shell), not python scripts.');
    expect(message({ argv: ['true'], okExit: 0 })).toBe('okExit lists exit codes besides 0, which always means success.');
    expect(message({ argv: ['true'], okExit: [1, 256] })).toBe('okExit takes exit codes from 1 to 255 (one, or a list), not 256.');
    expect(message({ argv: ['true'], okExit: 1.5 })).toBe('okExit takes exit codes from 1 to 255 (one, or a list), not 1.5.');
    expect(message({ argv: ['true'], okExit: 'one' })).toMatch(/^okExit: must be an exit code or a list of them/);
  });
});

// ---------------------------------------------------------------- what each agent's model gets

/** A session as a given harness names itself in initialize (clientInfo.name). */
async function attachAs(name: string, stateDir: string, env: Record<string, string> = {}): Promise<Attached & { transport: StdioClientTransport }> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp'], env: { ...childEnv(stateDir), ...env }, stderr: 'pipe', cwd: workDir });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(transport);
  return { client, stderr: () => stderr, transport };
}

async function callOn(client: Client, name: string, args: Record<string, unknown>) {
  const result = (await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 })) as CallToolResult;
  const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
  return { result, text, json: result.structuredContent as Record<string, unknown> & { stdout: string; stderr: string; id: string } };
}

/** The run as the host has it now (the whole result contract). */
async function hostRun(stateDir: string, id: string): Promise<RunResult | null> {
  return (await connectToHost(stateDir))!.get(id);
}

/** True once `check` holds (waited on, however slow the machine; test/kit/until.ts gives up on a hang). */
async function eventually(check: () => Promise<boolean>): Promise<boolean> {
  await until('the host to get there', check, { everyMs: 100 });
  return true;
}

const MARKER = /\[warden: ([\d,]+) characters of (stdout|stderr) cut here \(characters ([\d,]+) to ([\d,]+)(?: of ([\d,]+))?\); read them with show (\{[^}]*\})\]/;
const num = (text: string) => Number(text.replace(/,/g, ''));

describe('what an agent receives', { timeout: 90_000 }, () => {
  const LINES = 300_000;
  /** 300,000 numbered lines on stdout, a traceback-like error on stderr, exit 3. */
  const bigRun = { argv: ['python3', '-c', `import sys\nfor i in range(${LINES}): print(i)\nprint("Traceback: f('b') > \\"x\\" & <y>", file=sys.stderr)\nsys.exit(3)`] };
  // 1,988,890 characters: under the host's output cap (2,000,000), so the history keeps it all.
  const expectedStdout = Array.from({ length: LINES }, (_, i) => `${i}\n`).join('');

  for (const [client, budget, form] of [
    ['claude-code', 25_000, 'json'],
    ['codex-mcp-client', 12_000, 'json'],
    ['gemini-cli-mcp-client', 40_000, 'text'],
  ] as const) {
    it(`${client}: a 300,000-line run gives verdict, exit, stderr and an exact, pageable marker within ${budget} characters`, async () => {
      const agent = await attachAs(client, dir);
      try {
        const { text, json, result } = await callOn(agent.client, 'run', { argv: bigRun.argv, limit: '60s' });
        expect(result._meta?.['anthropic/maxResultSizeChars']).toBeGreaterThanOrEqual(JSON.stringify(json).length);
        const shown = form === 'json' ? JSON.stringify(json) : text;
        // Codex's ~12,000 and Gemini's 40,000 cuts, and Claude Code's token limit, never reach Warden's marker.
        expect(shown.length).toBeLessThan(budget * (client === 'codex-mcp-client' ? 0.85 : 1));
        expect(JSON.stringify(json).length).toBeLessThan(budget);
        expect(text.length).toBeLessThan(40_000);
        expect(json).toMatchObject({ verdict: 'failed', exitCode: 3, state: 'ended' });
        expect(json.stderr).toContain("Traceback: f('b') > \"x\" & <y>");
        // What decides the next step comes first in both forms.
        expect(text.split('\n').slice(0, 4)).toEqual(['<shell_results>', '<verdict>failed</verdict>', '<exit_code>3</exit_code>', expect.stringMatching(/^<elapsed>.* of a 1 min limit<\/elapsed>$/)]);
        expect(Object.keys(json).slice(0, 4)).toEqual(['id', 'state', 'verdict', 'exitCode']);
        expect(text).toContain("<stderr>Traceback: f('b') > \"x\" &amp; &lt;y>\n</stderr>");

        const marker = MARKER.exec(json.stdout)!;
        expect(marker).not.toBeNull();
        const [cut, from, to, total] = [num(marker[1]!), num(marker[3]!), num(marker[4]!), num(marker[5]!)];
        expect(total).toBe(expectedStdout.length);
        expect(to - from).toBe(cut);
        expect(json.stdoutCut).toBe(cut);
        expect(json.stdoutChars).toBe(expectedStdout.length);
        // Head and tail are exactly the output around the cut.
        const [head, tail] = json.stdout.split(`${marker[0]}\n`);
        expect(head).toBe(expectedStdout.slice(0, from));
        expect(tail).toBe(expectedStdout.slice(to));
        // The marker's call, made as written, returns the characters cut, from the first.
        const page = await callOn(agent.client, 'show', JSON.parse(marker[6]!) as Record<string, unknown>);
        expect(page.result.isError).toBeFalsy();
        expect(page.json.stdout).toBe(expectedStdout.slice(from, from + page.json.stdout.length));
        expect(page.json.stdout.length).toBeGreaterThan(1000);
        expect(page.text).toMatch(/next page: show \{"id": "[0-9a-f]+", "stream": "stdout", "offset": \d+\}/);
        // The whole output stays in the history.
        expect((await hostRun(dir, json.id))!.stdout).toBe(expectedStdout);
      } finally {
        await agent.client.close();
      }
    });
  }

  it("escapes only & and < in the text, and gives advice that fits an empty stderr", async () => {
    const { text, json } = await call('run', { shell: `printf '%s\\n' "{\\"a\\": 'b'} -> x & y < z"; exit 1` }).then((r) => ({ text: r.text, json: r.run as unknown as Record<string, string> }));
    expect(text).toContain(`<stdout>{"a": 'b'} -> x &amp; y &lt; z\n</stdout>`);
    expect(text).not.toMatch(/&quot;|&apos;|&gt;/);
    expect(json.stderr).toBe('');
    expect(json.advice).not.toMatch(/stderr for/i);
    expect(json.advice).toMatch(/nothing on stderr/);
    // Continued by wait: the output an earlier answer carried counts as seen.
    const yielded = await call('run', { shell: 'echo compiling; sleep 1.5; exit 3', yield: '500ms' });
    const waited = await call('wait', { id: yielded.run.id });
    expect(waited.run).toMatchObject({ verdict: 'failed', stdout: '', stderr: '' });
    expect(waited.run.advice).toBe('It wrote nothing on stderr; the end of stdout may say why.');
  });

  it('accepts and ignores wait_for_previous (Gemini CLI adds it to every call)', async () => {
    const ran = await call('run', { argv: ['echo', 'gemini'], wait_for_previous: true });
    expect(ran.result.isError).toBeFalsy();
    expect(ran.run.stdout).toBe('gemini\n');
    const waited = await call('wait', { id: ran.run.id, wait_for_previous: false });
    expect(waited.result.isError).toBeFalsy();
    const listed = await call('list', { wait_for_previous: true, limit: 1 });
    expect(listed.result.isError).toBeFalsy();
  });

  it('takes timeout as milliseconds (as the shell tools do) for the limit; an unknown argument lists the accepted ones', async () => {
    const timed = await call('run', { argv: ['bash', '-c', 'echo started; sleep 30'], timeout: 1000 });
    expect(timed.run).toMatchObject({ verdict: 'timed-out', limitMs: 1000, stdout: 'started\n' });
    const both = await call('run', { argv: ['true'], timeout: 1000, limit: '1s' });
    expectOneLineError(both.result, both.text);
    expect(both.text).toMatch(/limit or timeout, not both/);
    const unknown = await call('run', { argv: ['true'], cmd: 'ls' });
    expectOneLineError(unknown.result, unknown.text);
    expect(unknown.text).toBe('Run takes no argument "cmd": it takes argv, shell, python, session, cwd, env, stdin, okExit, limit, grace, memory, yield, detach, streamChars, ready, onNotReady, lease, stdinPipe, host, timeout (milliseconds, taken as limit).');
    const waitUnknown = await call('wait', { id: 'abcdef123456', timeout: 5 });
    expect(waitUnknown.text).toBe('Wait takes no argument "timeout": it takes id, yield, streamChars, until, since.');
  });

  it('gives a run with no limit WARDEN_DEFAULT_LIMIT (10m unless set; none turns it off)', async () => {
    const plain = await call('run', { argv: ['true'] });
    expect(plain.run.limitMs).toBe(600_000);
    const short = await attachAs('claude-code', dir, { WARDEN_DEFAULT_LIMIT: '1s' });
    const off = await attachAs('claude-code', dir, { WARDEN_DEFAULT_LIMIT: 'none' });
    try {
      const stopped = await callOn(short.client, 'run', { argv: ['sleep', '30'] });
      expect(stopped.json).toMatchObject({ verdict: 'timed-out', limitMs: 1000 });
      const unbounded = await callOn(off.client, 'run', { argv: ['true'] });
      expect(unbounded.json.limitMs).toBeNull();
    } finally {
      await short.client.close();
      await off.client.close();
    }
  });

  for (const how of ['stdin closes', 'warden mcp is SIGKILLed'] as const) {
    it(`stops the runs an agent left live when ${how}, with a note; detach: true keeps a run`, async () => {
      const agent = await attachAs('claude-code', dir);
      const owned = await callOn(agent.client, 'run', { argv: ['sleep', '60'], yield: '300ms' });
      const kept = await callOn(agent.client, 'run', { argv: ['sleep', '60'], yield: '300ms', detach: true });
      expect(owned.json.state).toBe('running');
      expect(kept.json.state).toBe('running');
      if (how === 'stdin closes') await agent.client.close();
      else process.kill(agent.transport.pid!, 'SIGKILL');
      const ended = await eventually(async () => (await hostRun(dir, owned.json.id))?.state === 'ended');
      expect(ended).toBe(true);
      const result = (await hostRun(dir, owned.json.id))!;
      expect(result.verdict).toBe('stopped');
      expect(result.notes.join(' ')).toMatch(/Its owner, warden mcp for claude-code \(pid \d+\), went away before the run ended, so Warden stopped it/);
      // Nobody asked for it: no note may say so.
      expect(result.stop?.reason).toBe('owner');
      expect(result.notes.join(' ')).not.toMatch(/on request/);
      // The detached one goes on.
      expect((await hostRun(dir, kept.json.id))!.state).toBe('running');
      await (await connectToHost(dir))!.stop(kept.json.id, { force: true });
      await agent.client.close();
    });
  }
});

describe('warden mcp over raw stdio', { timeout: 60_000 }, () => {
  /** A warden mcp child spoken to line by line. */
  function rawMcp(stateDir: string) {
    const child = spawn(process.execPath, [BIN, 'mcp'], { env: childEnv(stateDir), stdio: ['pipe', 'pipe', 'pipe'], cwd: workDir });
    let out = '';
    const waiters: (() => void)[] = [];
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      waiters.splice(0).forEach((w) => w());
    });
    child.stderr.resume();
    child.stdin.on('error', () => undefined); // a server that died is seen by the assertions, not as EPIPE
    const lines = () => out.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { id: unknown; result?: unknown; error?: { code: number; message: string } });
    const next = async (count: number) => {
      // Each line wakes it; the server's exit (no more lines) or the test's timeout ends a wait for more.
      let ended = false;
      void closed.then(() => ((ended = true), waiters.splice(0).forEach((w) => w())));
      while (lines().length < count && !ended) await new Promise<void>((r) => waiters.push(r));
      return lines();
    };
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    // After 'close' the server's every line has been read.
    const closed = new Promise<void>((r) => child.on('close', () => r()));
    return { child, next, exited, write: (text: string) => child.stdin.write(text) };
  }

  const INIT = `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } })}\n`;

  it('answers initialize before it finds or starts a host', async () => {
    const fresh = mkdtempSync(join(tmpdir(), 'wmcp-init-'));
    stateDirs.push(fresh);
    const mcp = rawMcp(fresh);
    try {
      mcp.write(INIT);
      const [init] = await mcp.next(1);
      expect(init).toMatchObject({ id: 1, result: { serverInfo: { name: 'warden' } } });
      // No notifications/initialized yet: no host was looked for, none started.
      await new Promise((r) => setTimeout(r, 1500));
      expect(existsSync(join(fresh, 'host.log'))).toBe(false);
      expect(await connectToHost(fresh)).toBeNull();
      // After the handshake, a tool call gets the host (started now).
      mcp.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
      mcp.write(`${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'run', arguments: { argv: ['echo', 'ok'] } } })}\n`);
      const [, ran] = await mcp.next(2);
      expect((ran!.result as { structuredContent: { stdout: string } }).structuredContent.stdout).toBe('ok\n');
    } finally {
      mcp.child.stdin.end();
      await mcp.exited;
      await stopHost(fresh);
    }
  });

  it('answers every bad message with a JSON-RPC error, a message over 10 MiB too, and keeps serving', async () => {
    const mcp = rawMcp(dir);
    try {
      mcp.write(INIT);
      await mcp.next(1);
      mcp.write('this is not json\n');
      mcp.write('{"jsonrpc": "2.0", "id": {"no": 1}, "method": "ping"}\n');
      mcp.write('{"jsonrpc": "2.0", "id": 7, "method": 12}\n');
      mcp.write('[1, 2]\n');
      mcp.write('{"jsonrpc": "1.0", "id": true}\n');
      mcp.write('"just a string"\n');
      mcp.write('{"truncated": \n');
      mcp.write('null\n');
      // Over 10 MiB, in pieces, with an id at its start.
      mcp.write(`{"jsonrpc": "2.0", "id": 99, "method": "tools/call", "params": {"name": "run", "arguments": {"shell": "${'x'.repeat(1024 * 1024)}`);
      for (let i = 0; i < 10; i++) mcp.write('y'.repeat(1024 * 1024));
      mcp.write('"}}}\n');
      mcp.write(`${JSON.stringify({ jsonrpc: '2.0', id: 100, method: 'ping' })}\n`);
      const all = await mcp.next(11);
      const errors = all.slice(1, 10);
      expect(errors.map((e) => e.error?.code)).toEqual([-32700, -32600, -32600, -32600, -32600, -32600, -32700, -32600, -32600]);
      expect(errors.map((e) => e.id)).toEqual([null, null, 7, null, null, null, null, null, 99]);
      expect(errors[8]!.error!.message).toMatch(/over 10485760 bytes/);
      expect(all[10]).toMatchObject({ id: 100, result: {} });
      expect(mcp.child.exitCode).toBeNull();
    } finally {
      mcp.child.stdin.end();
      expect(await mcp.exited).toBe(0);
    }
  });
});
