// Services through the `warden` command and a real background host: run
// --ready answering as soon as the server is ready (the ready line and ports
// first, exit 0) with the run going on; the hook's form (--owner-pid, a
// lease, bash -c) and its owner going away freeing the port; not ready
// (exit 3, the port freed); wait --until after an edit; send answering a
// prompt; ports, list and show; bad words refused in one line.

import { execa } from 'execa';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { accepts, fixture, freePort, until } from '../main/supervisor/services-testkit';
import { stopBackgroundHosts } from './testkit';

const BIN = resolve(__dirname, '../../bin/warden.mjs');
const dirs: string[] = [];

function tempDir(prefix = 'wsvccli-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

const stateDir = tempDir();
const node = process.execPath;

function warden(args: string[], env: Record<string, string> = {}) {
  return execa(process.execPath, [BIN, ...args], { reject: false, env: { WARDEN_STATE_DIR: stateDir, WARDEN_HOST_IDLE: '60s', ...env }, stdin: 'ignore', timeout: 60_000, stripFinalNewline: false });
}

const idIn = (text: string) => /\b(?:wait|stop|send|run) ([0-9a-f]{12})\b/.exec(text)?.[1] ?? /"id": "([0-9a-f]{12})"/.exec(text)?.[1];

afterAll(async () => {
  await stopBackgroundHosts([stateDir]);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}, 60_000);

describe('warden run --ready', { timeout: 90_000 }, () => {
  it('answers once the dev server is ready: the ready line and its ports first, exit 0, the server still up', async () => {
    const port = await freePort();
    const ran = await warden(['run', '--ready', 'port', '--ready', 'log:/Local:\\s+http/', '--format', 'shell-results', '--', node, fixture('dev-server.mjs'), '--port', String(port), '--delay', '300']);
    expect(ran.exitCode, ran.stderr).toBe(0);
    const lines = ran.stdout.split('\n');
    expect(lines[0]).toBe('<shell_results>');
    expect(lines[1]).toMatch(new RegExp(`^<ready>ready after [\\d.]+ (ms|s), listening on ${port}; it printed: ➜  Local:   http://localhost:${port}/</ready>$`));
    expect(lines[2]).toMatch(new RegExp(`^<ports>${port} \\((127\\.0\\.0\\.1:${port}|http://localhost:${port}/)\\)</ports>$`));
    expect(lines[3]).toBe('<verdict>running</verdict>');
    expect(ran.stdout).toMatch(/<advice>It is ready and keeps running in Warden, leased until 2 h/);
    expect(await accepts(port)).toBe(true);
    const id = idIn(ran.stdout)!;
    // Its ports, with the process and the URL once it answered HTTP.
    await until('warden ports names the port with its URL', async () => (await warden(['ports', id])).stdout.includes(`http://localhost:${port}/`));
    const ports = await warden(['ports', '--json']);
    expect(JSON.parse(ports.stdout)[id]).toEqual([{ port, address: '127.0.0.1', pid: expect.any(Number), http: true }]);
    expect((await warden(['list', '--live'])).stdout).toContain(`[ready]  [listening on ${port}]`);
    const shown = await warden(['show', id]);
    expect(shown.stdout).toMatch(new RegExp(`warden: listening on ${port} \\(http://localhost:${port}/\\)`));
    const stopped = await warden(['stop', id, '--json']);
    expect(JSON.parse(stopped.stdout)).toMatchObject({ verdict: 'stopped', ready: { ports: [{ port }] } });
    expect(await accepts(port)).toBe(false);
    expect((await warden(['ports', id])).stdout).toMatch(new RegExp(`^Run ${id} is not live \\(stopped\\); it listened on ${port} when it was ready\\.\\n$`));
  });

  it("in the hook's form answers ready, and the port is free within 5 s of its owner going away", async () => {
    const port = await freePort();
    const owner = spawn('sleep', ['300'], { stdio: 'ignore' });
    try {
      const ran = await warden(['run', '--ready', 'port', '--lease', '10m', '--owner-pid', String(owner.pid), '--format', 'shell-results', '--', 'bash', '-c', `"${node}" "${fixture('dev-server.mjs')}" --port ${port}`]);
      expect(ran.exitCode, ran.stderr).toBe(0);
      expect(ran.stdout.split('\n')[1]).toMatch(new RegExp(`^<ready>ready after .*, listening on ${port}</ready>$`));
      expect(ran.stdout.split('\n')[2]).toMatch(new RegExp(`^<ports>${port} `));
      expect(ran.stdout).toContain('(no limit)</elapsed>');
      expect(await accepts(port)).toBe(true);
      const id = idIn(ran.stdout)!;
      const shown = JSON.parse((await warden(['show', id, '--json'])).stdout);
      expect(shown).toMatchObject({ limitMs: null, lease: { ms: 600_000 } });
      owner.kill('SIGKILL');
      const gone = performance.now();
      await until('the port refuses connections', async () => !(await accepts(port)), 5_000);
      console.log(`the owner gone, the port refused connections ${Math.round(performance.now() - gone)} ms later`);
      const ended = JSON.parse((await warden(['wait', id, '--json'])).stdout);
      expect(ended).toMatchObject({ verdict: 'stopped', stop: { reason: 'owner' } });
    } finally {
      owner.kill('SIGKILL');
    }
  });

  it('exits 3 when it is not ready in time, the run stopped and its port freed', async () => {
    const port = await freePort();
    const never = await freePort();
    const ran = await warden(['run', '--ready', `tcp:${never}`, '--ready-timeout', '1500ms', '--format', 'shell-results', '--', node, fixture('dev-server.mjs'), '--port', String(port)]);
    expect(ran.exitCode, ran.stderr).toBe(3);
    expect(ran.stdout.split('\n')[1]).toMatch(new RegExp(`^<ready>not ready in time: tcp:${never} \\(connection refused, \\d+ tries\\)</ready>$`));
    expect(ran.stdout).toContain('<verdict>stopped</verdict>');
    expect(await accepts(port)).toBe(false);
  });

  it('says, for a person, that it is ready and how it goes on', async () => {
    const port = await freePort();
    const ran = await warden(['run', '--ready', `http://127.0.0.1:${port}/`, '--', node, fixture('dev-server.mjs'), '--port', String(port)]);
    expect(ran.exitCode, ran.stderr).toBe(0);
    expect(ran.stdout).toContain('VITE');
    expect(ran.stderr).toMatch(/^warden: ready after [\d.]+ (ms|s), listening on \d+\nwarden: listening on /m);
    expect(ran.stderr).toMatch(/warden: run [0-9a-f]{12} goes on in the host \(leased until 2 h of its clock; warden extend [0-9a-f]{12} DURATION renews it\); .* stop [0-9a-f]{12} ends it/);
    await warden(['stop', idIn(ran.stderr)!]);
  });

  it('ends with the verdict of a server that exits before it is ready', async () => {
    const ran = await warden(['run', '--ready', 'port', '--format', 'shell-results', '--', node, fixture('exit-early.mjs')]);
    expect(ran.exitCode).toBe(1);
    expect(ran.stdout.split('\n')[1]).toMatch(/^<ready>never ready: it ended first \(port \(its processes hold no listening TCP socket yet(, \d+ tries)?\)\)<\/ready>$/);
    expect(ran.stdout).toContain('<verdict>failed</verdict>');
  });
});

describe('warden wait --until and warden send', { timeout: 90_000 }, () => {
  it('waits for the line an edit makes, and exits 0 on it', async () => {
    const dir = tempDir();
    const file = join(dir, 'main.ts');
    writeFileSync(file, 'one');
    const port = await freePort();
    const ran = await warden(['run', '--ready', 'port', '--json', '--', node, fixture('dev-server.mjs'), '--port', String(port), '--watch', file]);
    const id = JSON.parse(ran.stdout).id as string;
    const waiting = warden(['wait', id, '--until', 'log:/Compiled successfully|error TS\\d+/', '--yield', '30s']);
    // Only lines printed after the wait's call count, and when it is in place is not seen from here: edit until it answers.
    let edits = 0;
    const editing = setInterval(() => writeFileSync(file, `edit ${++edits}`), 400);
    const waited = await waiting.finally(() => clearInterval(editing));
    expect(waited.exitCode, waited.stderr).toBe(0);
    expect(waited.stderr).toMatch(/^warden: matched log:\/Compiled successfully\|error TS\\d\+\/: Compiled successfully in \d+ ms$/m);
    const fromStart = await warden(['wait', id, '--until', 'log:/VITE/', '--since', 'start', '--format', 'shell-results']);
    expect(fromStart.exitCode).toBe(0);
    await warden(['stop', id]);
  });

  it('answers a prompt with send, and refuses a run without a stdin pipe', async () => {
    const started = await warden(['run', '--stdin-pipe', '--yield', '0s', '--json', '--', node, fixture('ask.mjs')]);
    const id = JSON.parse(started.stdout).id as string;
    const asked = await warden(['wait', id, '--until', 'log:/\\[y\\/N\\]/', '--json']);
    expect(JSON.parse(asked.stdout).until).toMatchObject({ met: true, line: 'Install the missing packages? [y/N]' });
    const sent = await warden(['send', id, 'y']);
    expect(sent.exitCode, sent.stderr).toBe(0);
    expect(sent.stderr).toMatch(new RegExp(`^warden: sent 2 characters to run ${id} \\((running|ended)\\)\\n$`));
    const ended = await warden(['wait', id, '--json']);
    expect(JSON.parse(ended.stdout)).toMatchObject({ verdict: 'completed', exitCode: 0 });
    expect(JSON.parse(ended.stdout).stdout).toContain('You said: y');
    const timeline = JSON.parse((await warden(['show', id, '--json'])).stdout);
    expect(timeline.stdinPipe).toBe('closed');

    const plain = JSON.parse((await warden(['run', '--yield', '0s', '--json', '--', 'sleep', '5'])).stdout).id as string;
    const refused = await warden(['send', plain, 'y']);
    expect(refused.exitCode).toBe(125);
    expect(refused.stderr).toBe(`warden: Run ${plain} has no stdin pipe: its stdin is /dev/null. Start it with --stdin-pipe (MCP stdinPipe: true) to send it input.\n`);
    await warden(['stop', plain]);
  });
});

describe('bad words', () => {
  it.each([
    [['run', '--ready-timeout', '5s', '--', 'true'], '--ready-timeout goes with --ready PROBE (e.g. --ready port).'],
    [['run', '--ready', 'nope', '--', 'true'], 'The readiness probe "nope" is not one Warden knows: tcp:[HOST:]PORT, http://... or https://..., log:/REGEX/[flags], exec:CMD, file:PATH, port or port:PORT'],
    [['run', '--ready', 'port', '--on-not-ready', 'wait', '--', 'true'], '--on-not-ready takes stop or keep, not "wait".'],
    [['run', '--stdin', 'x', '--stdin-pipe', '--', 'cat'], '--stdin (text given at once) and --stdin-pipe (input sent later with warden send) exclude each other.'],
    [['run', '--ready', 'port', '--embedded', '--', 'true'], '--ready needs the host, so the service goes on after warden run answers that it is ready: drop --embedded (or WARDEN_EMBEDDED).'],
    [['run', '--python', '--ready', 'port', '-c', 'pass'], '--ready is for commands, not with --python.'],
    [['wait', 'abcdef123456', '--until', 'Compiled'], '--until takes ready or log:/REGEX/[flags], not "Compiled".'],
    [['wait', 'abcdef123456', '--since', 'start'], '--since goes with --until log:/REGEX/.'],
    [['send', 'abcdef123456'], 'warden send needs the text to send (warden send ID TEXT), or --eof to close its stdin.'],
    [['send', 'nope', 'y'], '"nope" is not a run id (6 to 32 hex characters; see warden list).'],
    [['ports', 'a', 'b'], 'warden ports takes at most one run id.'],
  ])('%j', async (args, line) => {
    const ran = await warden(args);
    expect(ran.exitCode).toBe(125);
    expect(ran.stderr.startsWith(`warden: ${line}`), ran.stderr).toBe(true);
    expect(ran.stderr.trimEnd().split('\n')).toHaveLength(1);
  });

  it('every new command and flag has its help', async () => {
    for (const [args, words] of [
      [['run', '--help'], ['--ready PROBE', '--ready-timeout', '--ready-interval', '--ready-delay', '--ready-status', '--on-not-ready', '--lease', '--stdin-pipe']],
      [['ports', '--help'], ['Usage: warden ports [ID] [--json]']],
      [['send', '--help'], ['Usage: warden send ID TEXT...', '--no-newline', '--eof']],
      [['wait', '--help'], ['--until ready|log:/REGEX/', '--since start']],
      [['extend', '--help'], ['lease']],
      [['--help'], ['ports [ID]', 'send ID TEXT', '--until ready']],
    ] as const) {
      const ran = await warden([...args]);
      expect(ran.exitCode).toBe(0);
      for (const word of words) expect(ran.stdout, `${args.join(' ')} lacks ${word}`).toContain(word);
    }
  });
});
