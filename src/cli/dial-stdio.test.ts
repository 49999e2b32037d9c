// `warden dial-stdio`: stdin and stdout become a connection to the state
// dir's host (started in the background when none runs), carrying HTTP and
// its event streams; and a remote reached with --command (as `kubectl exec -i
// POD -- warden dial-stdio` would be) runs commands in that host. No ssh here:
// remote-ssh.test.ts has that.

import { execa, type ResultPromise } from 'execa';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunResult } from '../shared/result';
import { backgroundHostPids, stopBackgroundHosts, WARDEN_BIN } from './testkit';

const dirs: string[] = [];
function stateDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

afterAll(async () => {
  await stopBackgroundHosts(dirs);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}, 60_000);

function warden(dir: string, args: string[], options: { stdin?: 'pipe' | 'ignore' } = {}): ResultPromise<{ reject: false }> {
  return execa(process.execPath, [WARDEN_BIN, ...args], { reject: false, env: { WARDEN_STATE_DIR: dir, WARDEN_HOST_IDLE: '60s' }, extendEnv: true, stdin: options.stdin ?? 'ignore', timeout: 60_000, buffer: true }) as ResultPromise<{ reject: false }>;
}

/** Reads the child's stdout until `done(text)` holds. */
function readUntil(child: ResultPromise, done: (text: string) => boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString('utf8');
      if (done(text)) {
        child.stdout!.off('data', onData);
        resolve(text);
      }
    };
    child.stdout!.on('data', onData);
    void child.then((r) => reject(new Error(`dial-stdio exited (${r.exitCode}) before the answer: ${text} ${String(r.stderr)}`)));
  });
}

describe('warden dial-stdio', () => {
  it('carries HTTP to the host it starts, and an event stream on the same stdio; stdin closing ends it', async () => {
    const dir = stateDir('wdial-');
    expect(backgroundHostPids(dir)).toEqual([]);
    const bridge = warden(dir, ['dial-stdio'], { stdin: 'pipe' });
    bridge.stdin!.write('GET /api/v1/host HTTP/1.1\r\nHost: localhost\r\n\r\n');
    const answer = await readUntil(bridge, (t) => /\r\n\r\n\{.*\}$/s.test(t));
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    const info = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { pid: number };
    expect(backgroundHostPids(dir)).toEqual([info.pid]);
    // Keep-alive: the event stream on the same connection, then a run's events on it.
    const streamed = readUntil(bridge, (t) => t.includes('over the bridge'));
    bridge.stdin!.write('GET /api/v1/events HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n');
    const started = await warden(dir, ['run', '--json', '--', 'echo', 'over the bridge']);
    expect(started.exitCode).toBe(0);
    const stream = await streamed;
    expect(stream).toMatch(/text\/event-stream/);
    bridge.stdin!.end();
    const ended = await bridge;
    expect(ended.exitCode).toBe(0);
    // The host outlives the bridge: it was started in its own session.
    expect(backgroundHostPids(dir)).toEqual([info.pid]);
  }, 60_000);

  it('takes no arguments', async () => {
    const refused = await warden(stateDir('wdial-'), ['dial-stdio', '--port', '1']);
    expect(refused.exitCode).toBe(125);
    expect(refused.stderr).toBe('warden: warden dial-stdio takes no arguments ("--port").');
  });
});

describe('a remote reached with --command', () => {
  it('runs there, with live output here and the result recorded there alone', async () => {
    const here = stateDir('wcmd-here-');
    const there = stateDir('wcmd-there-');
    const command = `env WARDEN_STATE_DIR=${there} WARDEN_HOST_IDLE=60s ${process.execPath} ${WARDEN_BIN} dial-stdio`;
    expect((await warden(here, ['remote', 'add', 'pod', '--command', command])).exitCode).toBe(0);
    const listed = await warden(here, ['remote', 'list']);
    expect(listed.stdout).toBe(`pod              command: ${command}`);
    const done = await warden(here, ['--remote', 'pod', 'run', '--', 'bash', '-c', 'echo "in $WARDEN_STATE_DIR"; exit 4']);
    expect(done.exitCode).toBe(4);
    expect(done.stdout).toBe(`in ${there}`);
    const id = /\[run ([0-9a-f]+)\]/.exec(done.stderr)![1]!;
    const recorded = await warden(there, ['show', id, '--json']);
    expect((JSON.parse(recorded.stdout) as RunResult).exitCode).toBe(4);
    expect((await warden(here, ['show', id])).exitCode).toBe(125);
    expect(backgroundHostPids(here)).toEqual([]);
  }, 60_000);

  it('a command that cannot run is one line naming it', async () => {
    const here = stateDir('wcmd-here-');
    expect((await warden(here, ['remote', 'add', 'gone', '--command', '/nonexistent/kubectl exec -i pod -- warden dial-stdio'])).exitCode).toBe(0);
    const failed = await warden(here, ['--remote', 'gone', 'list']);
    expect(failed.exitCode).toBe(125);
    expect(failed.stderr).toBe('warden: Cannot reach the remote host: cannot run the command of remote gone: no such program. Its runs go on there; the same command connects again.');
    const unknown = await warden(here, ['--remote', 'nosuch', 'list']);
    expect(unknown.stderr).toBe('warden: No remote named "nosuch" (see warden remote list).');
    expect(unknown.exitCode).toBe(125);
  }, 60_000);
});
