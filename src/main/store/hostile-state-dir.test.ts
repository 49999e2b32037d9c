// Issue 18, item 2: a state dir someone else controls is refused, not used.
// As root (skipped otherwise), with real `warden` processes (bin/warden.mjs)
// and a fake host: a Python listener on the state dir's socket, run as
// nobody through setpriv, that counts every byte it receives. Planted links
// (the token, history.db-shm) are refused and their targets left untouched.

import { execa, type ResultPromise } from 'execa';
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { stopBackgroundHosts, WARDEN_BIN } from '../../cli/testkit';

const NOBODY = 65534;
const isRoot = process.getuid?.() === 0;
const root = isRoot ? mkdtempSync(join(tmpdir(), 'whost-')) : '';
const dirs: string[] = [];
const listeners: ResultPromise[] = [];

/** A listener that accepts on `socket` and writes the bytes received so far to `count` after each read. */
const LISTENER = `
import os, socket, sys
path, count = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path)
if len(sys.argv) > 3: os.chown(path, int(sys.argv[3]), int(sys.argv[3]))
s.listen(16)
open(count, 'w').write('0')
print('listening', flush=True)
total = 0
while True:
    c, _ = s.accept()
    c.settimeout(5)
    try:
        while True:
            data = c.recv(65536)
            if not data: break
            total += len(data)
            open(count, 'w').write(str(total))
    except Exception:
        pass
    c.close()
`;

/** A fake host: answers every request 200 with {"pid": PID}, and logs each request head's first line and body to `log`. */
const RESPONDER = `
import socket, sys
path, log, pid = sys.argv[1], sys.argv[2], sys.argv[3]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path)
s.listen(16)
open(log, 'w').close()
print('listening', flush=True)
body = ('{"pid": %s, "hostId": "fake", "version": "x", "stateDir": "x", "startedAt": "x", "accepting": true, "history": true, "port": null}' % pid).encode()
while True:
    c, _ = s.accept()
    c.settimeout(2)
    data = b''
    try:
        while True:
            chunk = c.recv(65536)
            if not chunk: break
            data += chunk
            if b'\\r\\n\\r\\n' in data:
                head, _, rest = data.partition(b'\\r\\n\\r\\n')
                open(log, 'a').write(head.split(b'\\r\\n')[0].decode() + ' ' + rest.decode(errors='replace') + '\\n')
                c.sendall(b'HTTP/1.1 200 OK\\r\\nContent-Type: application/json\\r\\nContent-Length: ' + str(len(body)).encode() + b'\\r\\n\\r\\n' + body)
                data = b''
    except Exception:
        pass
    c.close()
`;

async function listen(socketPath: string, count: string, as: 'nobody' | 'root', chownTo?: number): Promise<void> {
  const argv = [existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3', '-c', LISTENER, socketPath, count, ...(chownTo !== undefined ? [String(chownTo)] : [])];
  const child = as === 'nobody' ? execa('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', ...argv], { reject: false }) : execa(argv[0]!, argv.slice(1), { reject: false });
  listeners.push(child);
  await new Promise<void>((resolvePromise, reject) => {
    child.stdout!.on('data', (c: Buffer) => c.toString().includes('listening') && resolvePromise());
    void child.then((r) => reject(new Error(`the listener exited: ${r.stderr}`)));
  });
}

function warden(stateDir: string, args: string[], extraEnv: Record<string, string> = {}) {
  dirs.push(stateDir);
  return execa(process.execPath, [WARDEN_BIN, ...args], {
    reject: false,
    cwd: '/',
    env: { WARDEN_STATE_DIR: stateDir, WARDEN_HOST_IDLE: '20s', ...extraEnv },
    stdin: 'ignore',
    timeout: 60_000,
  });
}

/** A directory of nobody's (0700) holding run/ of nobody's: what another local user can make. */
function nobodysStateDir(): string {
  const dir = join(root, `nobody-${dirs.length}-${Math.random().toString(36).slice(2, 8)}`);
  mkdirSync(join(dir, 'run'), { recursive: true, mode: 0o700 });
  chownSync(dir, NOBODY, NOBODY);
  chownSync(join(dir, 'run'), NOBODY, NOBODY);
  return dir;
}

function myStateDir(): string {
  const dir = mkdtempSync(join(root, 'mine-'));
  chmodSync(dir, 0o700);
  return dir;
}

const oneLine = (stderr: string) => stderr.trim().split('\n');

beforeAll(() => {
  if (!isRoot) return;
  chmodSync(root, 0o755); // nobody must reach its own dirs inside
  // Built now, as root: the refusals below must not be a build's output.
  execFileSync(process.execPath, [WARDEN_BIN, '--version'], { stdio: 'pipe' });
});

afterEach(async () => {
  for (const child of listeners.splice(0)) {
    child.kill('SIGKILL');
    await child;
  }
  await stopBackgroundHosts(dirs.splice(0));
});

afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

describe.skipIf(!isRoot)('a state dir another user controls (as root)', () => {
  it("a fake host on nobody's socket in nobody's dir gets nothing: run and list refuse with one line, and nothing is written there", async () => {
    const dir = nobodysStateDir();
    const counts = mkdtempSync(join(root, 'counts-'));
    chownSync(counts, NOBODY, NOBODY);
    const count = join(counts, 'count');
    await listen(join(dir, 'run', 'warden.sock'), count, 'nobody');
    const ran = await warden(dir, ['run', '--json', '--', 'true'], { SECRET_OF_ROOT: 'hunter2' });
    expect(ran.exitCode).toBe(125);
    expect(oneLine(ran.stderr)).toHaveLength(1);
    expect(ran.stderr).toMatch(/^warden: .*belongs to uid 65534, not to you \(uid 0\) or root/);
    const listed = await warden(dir, ['list']);
    expect(listed.exitCode).toBe(125);
    expect(oneLine(listed.stderr)).toHaveLength(1);
    expect(listed.stderr).toMatch(/belongs to uid 65534/);
    const served = await warden(dir, ['serve', '--no-tcp']);
    expect(served.exitCode).toBe(125);
    expect(served.stderr.trim().split('\n').at(-1)).toMatch(/^warden: Warden's state directory .* belongs to uid 65534/);
    expect(served.stderr).not.toMatch(/internal error/);
    expect(readFileSync(count, 'utf8')).toBe('0');
    // Nothing of root's was made in nobody's dir: no history, no log, no token.
    expect(readdirSync(dir).sort()).toEqual(['run']);
    expect(readdirSync(join(dir, 'run'))).toEqual(['warden.sock']);
  });

  it("a fake host in root's own dir that claims another process's pid gets the probe only: no run, no environment", async () => {
    const dir = myStateDir();
    mkdirSync(join(dir, 'run'), { mode: 0o700 });
    const log = join(root, `requests-${dirs.length}`);
    const python = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
    const child = execa(python, ['-c', RESPONDER, join(dir, 'run', 'warden.sock'), log, String(process.pid)], { reject: false });
    listeners.push(child);
    await new Promise<void>((resolvePromise, reject) => {
      child.stdout!.on('data', (c: Buffer) => c.toString().includes('listening') && resolvePromise());
      void child.then((r) => reject(new Error(`the responder exited: ${r.stderr}`)));
    });
    const ran = await warden(dir, ['run', '--', 'true'], { SECRET_OF_ROOT: 'hunter2' });
    expect(ran.exitCode).toBe(125);
    expect(oneLine(ran.stderr)).toHaveLength(1);
    expect(ran.stderr).toMatch(new RegExp(`says it is pid ${process.pid}, and that process does not hold the socket`));
    const requests = readFileSync(log, 'utf8').trim().split('\n');
    expect(requests.every((line) => line.startsWith('GET /api/v1/host '))).toBe(true);
    expect(readFileSync(log, 'utf8')).not.toContain('hunter2');
  });

  it("a socket of nobody's in root's own dir gets nothing either", async () => {
    const dir = myStateDir();
    mkdirSync(join(dir, 'run'), { mode: 0o700 });
    const count = join(root, `count-own-${dirs.length}`);
    // Bound by root, then handed to nobody: what the client can see of who listens is the socket's owner.
    await listen(join(dir, 'run', 'warden.sock'), count, 'root', NOBODY);
    expect(statSync(join(dir, 'run', 'warden.sock')).uid).toBe(NOBODY);
    const ran = await warden(dir, ['run', '--', 'true'], { SECRET_OF_ROOT: 'hunter2' });
    expect(ran.exitCode).toBe(125);
    expect(oneLine(ran.stderr)).toHaveLength(1);
    expect(ran.stderr).toMatch(/the socket belongs to uid 65534/);
    expect(readFileSync(count, 'utf8')).toBe('0');
  });

  it('a state dir under a directory every user can write (not sticky) is refused with one line', async () => {
    const open = join(root, `open-${dirs.length}`);
    mkdirSync(open);
    chmodSync(open, 0o777);
    const ran = await warden(join(open, 'state'), ['run', '--embedded', '--', 'true']);
    // The run still runs, unrecorded (as with any history that cannot be used); the line says why.
    expect(ran.stderr).toMatch(/writable by every user \(mode 0777\)/);
    expect(existsSync(join(open, 'state', 'history.db'))).toBe(false);
    const listed = await warden(join(open, 'state'), ['list']);
    expect(listed.exitCode).toBe(125);
    expect(oneLine(listed.stderr)).toHaveLength(1);
    expect(listed.stderr).toMatch(/writable by every user/);
  });

  it("a token planted as a link to root's file: the host refuses with one line, and the file is untouched", async () => {
    const dir = myStateDir();
    mkdirSync(join(dir, 'run'), { mode: 0o700 });
    const victim = join(root, `victim-token-${dirs.length}`);
    writeFileSync(victim, 'precious\n', { mode: 0o644 });
    chmodSync(victim, 0o644);
    symlinkSync(victim, join(dir, 'run', 'token'));
    const served = await warden(dir, ['serve', '--port', '0']);
    expect(served.exitCode).not.toBe(0);
    expect(served.stderr).toMatch(/token.*symbolic link/);
    expect(served.stderr.split('\n').filter((l) => /symbolic link/.test(l))).toHaveLength(1);
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
    expect(statSync(victim).mode & 0o777).toBe(0o644);
  });

  it("history.db-shm planted as a link: list refuses with one line, and the target's mode and bytes stay", async () => {
    const dir = myStateDir();
    const victim = join(root, `victim-shm-${dirs.length}`);
    writeFileSync(victim, 'precious\n', { mode: 0o644 });
    chmodSync(victim, 0o644);
    symlinkSync(victim, join(dir, 'history.db-shm'));
    const listed = await warden(dir, ['list']);
    expect(listed.exitCode).toBe(125);
    expect(oneLine(listed.stderr)).toHaveLength(1);
    expect(listed.stderr).toMatch(/history\.db-shm is a symbolic link/);
    const ran = await warden(dir, ['run', '--embedded', '--', 'true']);
    expect(ran.exitCode).toBe(0);
    expect(ran.stderr).toMatch(/history is off for this run: .*history\.db-shm is a symbolic link/);
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
    expect(statSync(victim).mode & 0o777).toBe(0o644);
  });
});
