// The remote commands trust their state dir exactly as serve, run and mcp do
// (issue 27, item 2): `remote add|list|remove`, `--remote NAME`, `dial-stdio`
// and the ssh ControlPath refuse a state dir, a remotes.json or a run/ dir
// that another user owns or can write, before they read a command from it or
// forward a byte; `dial-stdio` checks the host that answers as every client
// does. And `remote add` holds a lock: twenty at once keep twenty.
//
// The other user is nobody (65534), through setpriv, as in the other kits;
// those tests need root and are skipped (with the reason) otherwise.

import { execa } from 'execa';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cannotRunAs } from '../main/store/store-testkit';
import { stopBackgroundHosts, WARDEN_BIN } from './testkit';

const NOBODY = 65534;
const dirs: string[] = [];
/** A fresh dir under /tmp (other users may enter /tmp itself, not this dir unless it is chowned). */
function freshDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

// The bundle is built once before the one-line checks (a first run after a change says so on stderr).
beforeAll(async () => void (await execa(process.execPath, [WARDEN_BIN, '--version'])), 120_000);

afterAll(async () => {
  await stopBackgroundHosts(dirs);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}, 60_000);

function warden(stateDir: string, args: string[], options: { input?: string; env?: Record<string, string>; uid?: number } = {}) {
  const argv = [process.execPath, WARDEN_BIN, ...args];
  const [command, rest] = options.uid === undefined ? [argv[0]!, argv.slice(1)] : ['setpriv', [`--reuid=${options.uid}`, `--regid=${options.uid}`, '--clear-groups', ...argv]];
  return execa(command, rest, {
    reject: false,
    cwd: '/',
    env: { WARDEN_STATE_DIR: stateDir, WARDEN_HOST_IDLE: '60s', ...options.env },
    extendEnv: true,
    ...(options.input !== undefined ? { input: options.input } : { stdin: 'ignore' as const }),
    timeout: 60_000,
  });
}

/** A state dir holding a remotes.json whose --command remote would leave a mark when run. */
function plantedStateDir(mark: string): string {
  const dir = join(freshDir('wremstate-'), 'state');
  mkdirSync(dir, { mode: 0o700 });
  writeFileSync(join(dir, 'remotes.json'), JSON.stringify({ remotes: [{ name: 'box', command: `touch ${mark}` }] }), { mode: 0o600 });
  return dir;
}

const rootOnly = () => (process.getuid?.() === 0 ? null : 'needs root, to be the other user\'s victim and to make nobody\'s files');
const asNobody = process.getuid?.() === 0 ? cannotRunAs(NOBODY, WARDEN_BIN) : 'switching to another user needs root';

describe('the remote commands refuse a state dir another user owns', () => {
  it('as root: remote list, add, remove and --remote box list refuse nobody\'s state dir in one line and run nothing from it', async (context) => {
    const skip = rootOnly();
    if (skip) return context.skip(skip);
    const mark = join(freshDir('wremmark-'), 'ran');
    const dir = plantedStateDir(mark);
    chownSync(dir, NOBODY, NOBODY);
    chownSync(join(dir, 'remotes.json'), NOBODY, NOBODY);
    for (const args of [['remote', 'list'], ['remote', 'add', 'other', 'ssh://h'], ['remote', 'remove', 'box'], ['--remote', 'box', 'list'], ['--remote', 'box', 'run', '--', 'true']]) {
      const done = await warden(dir, args);
      expect(done.exitCode, args.join(' ')).toBe(125);
      expect(done.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(done.stderr).toMatch(/^warden: Warden's state directory .* belongs to uid 65534, not to you \(uid 0\) or root/);
    }
    expect(existsSync(mark)).toBe(false);
    expect(JSON.parse(readFileSync(join(dir, 'remotes.json'), 'utf8'))).toEqual({ remotes: [{ name: 'box', command: `touch ${mark}` }] });
  }, 120_000);

  it('as nobody: a state dir another user owns is refused the same way', async (context) => {
    if (asNobody) return context.skip(asNobody);
    const mark = join(freshDir('wremmark-'), 'ran');
    chmodSync(join(mark, '..'), 0o777);
    const parent = freshDir('wremnobody-');
    chmodSync(parent, 0o755);
    const dir = join(parent, 'state');
    mkdirSync(dir, { mode: 0o755 });
    writeFileSync(join(dir, 'remotes.json'), JSON.stringify({ remotes: [{ name: 'box', command: `touch ${mark}` }] }), { mode: 0o644 });
    chownSync(dir, 4242, 4242);
    chownSync(join(dir, 'remotes.json'), 4242, 4242);
    for (const args of [['remote', 'list'], ['--remote', 'box', 'list']]) {
      const done = await warden(dir, args, { uid: NOBODY });
      expect(done.exitCode, args.join(' ')).toBe(125);
      expect(done.stderr, args.join(' ')).toMatch(/^warden: Warden's state directory .* belongs to uid 4242, not to you \(uid 65534\) or root/);
    }
    expect(existsSync(mark)).toBe(false);
  }, 120_000);

  it('a remotes.json that is a link, another user\'s, or writable by others is refused; its commands never run', async () => {
    const mark = join(freshDir('wremmark-'), 'ran');
    const dir = plantedStateDir(mark);
    const file = join(dir, 'remotes.json');
    chmodSync(file, 0o666);
    let done = await warden(dir, ['--remote', 'box', 'list']);
    expect(done.exitCode).toBe(125);
    expect(done.stderr).toMatch(/remotes\.json can be written by others \(mode 0666\), so its commands may not be yours/);
    chmodSync(file, 0o600);
    const elsewhere = join(freshDir('wremelse-'), 'remotes.json');
    writeFileSync(elsewhere, readFileSync(file));
    rmSync(file);
    symlinkSync(elsewhere, file);
    done = await warden(dir, ['remote', 'list']);
    expect(done.exitCode).toBe(125);
    expect(done.stderr).toMatch(/remotes\.json is a symbolic link; Warden never reads its remotes through one/);
    if (process.getuid?.() === 0) {
      rmSync(file);
      writeFileSync(file, readFileSync(elsewhere), { mode: 0o600 });
      chownSync(file, NOBODY, NOBODY);
      done = await warden(dir, ['--remote', 'box', 'list']);
      expect(done.exitCode).toBe(125);
      expect(done.stderr).toMatch(/remotes\.json belongs to uid 65534, not to you \(uid 0\) or root, so its commands are not yours/);
    }
    expect(existsSync(mark)).toBe(false);
  }, 120_000);

  it('the ssh ControlPath dir: a run/ that is a link or another user\'s is refused before ssh runs', async (context) => {
    const dir = join(freshDir('wremctl-'), 'state');
    mkdirSync(dir, { mode: 0o700 });
    const mark = join(freshDir('wremmark-'), 'ssh-ran');
    const ssh = join(dir, '..', 'fake-ssh');
    writeFileSync(ssh, `#!/bin/sh\ntouch ${mark}\nexit 255\n`, { mode: 0o755 });
    expect((await warden(dir, ['remote', 'add', 'box', 'ssh://example.invalid'])).exitCode).toBe(0);
    const theirs = freshDir('wremtheirs-');
    symlinkSync(theirs, join(dir, 'run'));
    let done = await warden(dir, ['--remote', 'box', 'list'], { env: { WARDEN_SSH: ssh } });
    expect(done.exitCode).toBe(125);
    expect(done.stderr).toMatch(/^warden: Warden's directory .*\/run is not a plain directory \(a link or a file\); Warden will not use it/);
    expect(existsSync(mark)).toBe(false);
    if (process.getuid?.() !== 0) return context.skip('the other user\'s run/ needs root');
    rmSync(join(dir, 'run'));
    mkdirSync(join(dir, 'run'), { mode: 0o700 });
    chownSync(join(dir, 'run'), NOBODY, NOBODY);
    done = await warden(dir, ['--remote', 'box', 'list'], { env: { WARDEN_SSH: ssh } });
    expect(done.exitCode).toBe(125);
    expect(done.stderr).toMatch(/run belongs to uid 65534, not to you \(uid 0\) or root/);
    expect(existsSync(mark)).toBe(false);
  }, 120_000);
});

/** A unix socket server in python that records every byte it is sent, answering `reply` to each request. */
function recordingListener(socketPath: string, record: string, reply: string, uid?: number) {
  const script = `
import os, socket, sys
path, record, reply = sys.argv[1], sys.argv[2], sys.argv[3].encode()
s = socket.socket(socket.AF_UNIX); s.bind(path); s.listen(8)
print("listening", flush=True)
while True:
    c, _ = s.accept()
    data = c.recv(65536)
    with open(record, "ab") as f: f.write(data)
    try: c.sendall(reply)
    except OSError: pass
    c.close()
`;
  const argv = ['/usr/bin/python3', '-c', script, socketPath, record, reply];
  const child = uid === undefined ? execa(argv[0]!, argv.slice(1), { reject: false }) : execa('setpriv', [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', ...argv], { reject: false });
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('listening') && resolve());
    void child.then((r) => reject(new Error(`the listener exited: ${String(r.stderr)}`)));
  });
  return { child, ready };
}

describe('warden dial-stdio checks what it forwards to', () => {
  const SECRET = 'GET /api/v1/runs HTTP/1.1\r\nHost: localhost\r\nX-Secret: hunter2\r\n\r\n';
  const httpReply = (body: unknown) => {
    const text = JSON.stringify(body);
    return `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`;
  };

  it('as root: nobody\'s state dir and the listener there get nothing of root\'s', async (context) => {
    const skip = rootOnly();
    if (skip) return context.skip(skip);
    const parent = freshDir('wdialnobody-');
    chmodSync(parent, 0o755);
    const dir = join(parent, 'state');
    mkdirSync(join(dir, 'run'), { recursive: true, mode: 0o700 });
    spawnSync('chown', ['-R', `${NOBODY}:${NOBODY}`, dir]);
    const record = join(parent, 'record');
    writeFileSync(record, '');
    chownSync(record, NOBODY, NOBODY);
    const listener = recordingListener(join(dir, 'run', 'warden.sock'), record, httpReply({ pid: 1 }), NOBODY);
    try {
      await listener.ready;
      const done = await warden(dir, ['dial-stdio'], { input: SECRET });
      expect(done.exitCode).toBe(125);
      expect(done.stderr.trim().split('\n')).toHaveLength(1);
      expect(done.stderr).toMatch(/^warden: Warden's state directory .* belongs to uid 65534/);
      expect(readFileSync(record, 'utf8')).toBe('');
    } finally {
      listener.child.kill('SIGKILL');
    }
  }, 120_000);

  it('a listener that is not the Warden host it claims to be gets only the probe, never the caller\'s bytes', async () => {
    const dir = join(freshDir('wdialfake-'), 'state');
    mkdirSync(join(dir, 'run'), { recursive: true, mode: 0o700 });
    const record = join(dir, '..', 'record');
    writeFileSync(record, '');
    // It answers GET /host naming pid 1, which does not hold its socket.
    const listener = recordingListener(join(dir, 'run', 'warden.sock'), record, httpReply({ pid: 1 }));
    try {
      await listener.ready;
      const done = await warden(dir, ['dial-stdio'], { input: SECRET });
      expect(done.exitCode).toBe(125);
      expect(done.stderr).toMatch(/^warden: Warden will not talk to the host at .*warden\.sock: what answers there says it is pid 1, and that process does not hold the socket/);
      const seen = readFileSync(record, 'utf8');
      expect(seen).not.toContain('hunter2');
      expect(seen).toMatch(/^GET \/api\/v1\/host HTTP\/1\.1\r\n/);
    } finally {
      listener.child.kill('SIGKILL');
    }
  }, 120_000);
});

describe('warden remote add under a lock', () => {
  it('twenty at once keep twenty, and as many removes at once leave none', async () => {
    const dir = join(freshDir('wremlock-'), 'state');
    const names = Array.from({ length: 20 }, (_, i) => `box${i}`);
    const added = await Promise.all(names.map((name) => warden(dir, ['remote', 'add', name, `ssh://${name}.example`])));
    expect(added.map((r) => r.exitCode)).toEqual(names.map(() => 0));
    const listed = JSON.parse((await warden(dir, ['remote', 'list', '--json'])).stdout) as { name: string }[];
    expect(listed.map((r) => r.name).sort()).toEqual([...names].sort());
    const removed = await Promise.all(names.map((name) => warden(dir, ['remote', 'remove', name])));
    expect(removed.map((r) => r.exitCode)).toEqual(names.map(() => 0));
    expect((await warden(dir, ['remote', 'list', '--json'])).stdout.trim()).toBe('[]');
    expect(existsSync(join(dir, 'remotes.json.lock'))).toBe(false);
  }, 120_000);

  it('a lock left by a command that died is taken over', async () => {
    const dir = join(freshDir('wremstale-'), 'state');
    mkdirSync(dir, { mode: 0o700 });
    // A pid above any pid_max: no such process.
    writeFileSync(join(dir, 'remotes.json.lock'), '4194305\n');
    const done = await warden(dir, ['remote', 'add', 'box', 'ssh://box.example']);
    expect(done.exitCode).toBe(0);
    expect(existsSync(join(dir, 'remotes.json.lock'))).toBe(false);
  }, 60_000);
});
