// A real ssh server for the remote tests: Debian's sshd on 127.0.0.1 on a
// free port, with a host key and a user key made now (ssh-keygen), and an ssh
// wrapper (WARDEN_SSH) that uses them and trusts only that host key. A second
// state dir stands for the other machine: its `warden` is this checkout's
// bin/warden.mjs run with that WARDEN_STATE_DIR.
//
// `startSshd` answers { skip: reason } when sshd cannot run here (not
// installed, or it does not start), for the tests to skip with the reason.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { noteSuitePort } from '../../test/kit/leftovers';
import { WARDEN_BIN } from './testkit';

export const SSHD = '/usr/sbin/sshd';

export interface Sshd {
  /** The temp dir holding keys, config and the ssh wrapper. */
  dir: string;
  port: number;
  user: string;
  /** An ssh program (for WARDEN_SSH) that uses the generated keys. */
  ssh: string;
  /** The state dir standing for the other machine. */
  remoteStateDir: string;
  /** `--warden` for `warden remote add`: this checkout's warden with the other state dir. */
  warden: string;
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
  /** Starts sshd again on the same port, after stop(). */
  restart(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('data', () => {
      socket.destroy();
      resolve(true); // the SSH banner
    });
    socket.once('error', () => resolve(false));
    socket.setTimeout(1000, () => {
      socket.destroy();
      resolve(false);
    });
  });
}

function keygen(path: string): void {
  const made = spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path], { encoding: 'utf8' });
  if (made.status !== 0) throw new Error(`ssh-keygen failed: ${made.stderr}`);
}

export async function startSshd(): Promise<Sshd | { skip: string }> {
  if (!existsSync(SSHD)) return { skip: `${SSHD} is not installed (apt-get install openssh-server; .ci/run does)` };
  if (spawnSync('ssh', ['-V']).status !== 0) return { skip: 'no ssh client' };
  const dir = mkdtempSync(join(tmpdir(), 'wsshd-'));
  chmodSync(dir, 0o700);
  const user = userInfo().username;
  keygen(join(dir, 'host_key'));
  keygen(join(dir, 'user_key'));
  writeFileSync(join(dir, 'authorized_keys'), readFileSync(join(dir, 'user_key.pub')), { mode: 0o600 });
  const port = await freePort();
  // Its sessions rewrite their command lines over the suite's marker: the port tells them apart after the suite.
  noteSuitePort(port);
  const config = join(dir, 'sshd_config');
  writeFileSync(
    config,
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${join(dir, 'host_key')}`,
      `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
      `PidFile ${join(dir, 'sshd.pid')}`,
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'PubkeyAuthentication yes',
      'PermitRootLogin prohibit-password',
      'StrictModes no',
      'UsePAM no',
      'MaxSessions 50',
      'MaxStartups 50',
      'LogLevel ERROR',
      '',
    ].join('\n'),
  );
  // sshd wants its privilege separation directory when started as root.
  if (process.getuid?.() === 0) mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  const known = join(dir, 'known_hosts');
  writeFileSync(known, `[127.0.0.1]:${port} ${readFileSync(join(dir, 'host_key.pub'), 'utf8')}`);
  const clientConfig = join(dir, 'ssh_config');
  writeFileSync(
    clientConfig,
    [`IdentityFile ${join(dir, 'user_key')}`, 'IdentitiesOnly yes', `UserKnownHostsFile ${known}`, 'StrictHostKeyChecking yes', 'BatchMode yes', 'LogLevel ERROR', ''].join('\n'),
  );
  const ssh = join(dir, 'ssh');
  writeFileSync(ssh, `#!/bin/sh\nexec ssh -F ${clientConfig} "$@"\n`, { mode: 0o700 });
  const launch = async (): Promise<{ child: ChildProcess } | { why: string }> => {
    const child = spawn(SSHD, ['-D', '-e', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    child.stderr!.on('data', (chunk: Buffer) => void (log += chunk.toString()));
    let up = false;
    for (let i = 0; i < 100 && child.exitCode === null && !up; i++) {
      await new Promise((r) => setTimeout(r, 50));
      up = await accepts(port);
    }
    if (up) return { child };
    child.kill('SIGKILL');
    return { why: `sshd did not start: ${log.trim().split('\n').pop() ?? 'no reason given'}` };
  };
  const first = await launch();
  if ('why' in first) return { skip: first.why };
  let child = first.child;
  const remoteStateDir = mkdtempSync(join(tmpdir(), 'wremote-'));
  return {
    dir,
    port,
    user,
    ssh,
    remoteStateDir,
    warden: `env WARDEN_STATE_DIR=${remoteStateDir} WARDEN_HOST_IDLE=60s ${process.execPath} ${WARDEN_BIN}`,
    url: `ssh://${user}@127.0.0.1:${port}`,
    get child() {
      return child;
    },
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await gone;
    },
    restart: async () => {
      const again = await launch();
      if ('why' in again) throw new Error(again.why);
      child = again.child;
    },
  };
}

/** The pid of the ssh session (ControlMaster) a remote shares, or null when none runs. */
export function masterPid(ssh: string, controlPath: string): number | null {
  const check = spawnSync(ssh, ['-o', `ControlPath=${controlPath}`, '-O', 'check', 'x'], { encoding: 'utf8' });
  const pid = /pid=(\d+)/.exec(check.stderr);
  return check.status === 0 && pid ? Number(pid[1]) : null;
}
