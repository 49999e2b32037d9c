// A real ssh server for the remote tests: Debian's sshd on 127.0.0.1 on a
// free port, with a host key and a user key made now (ssh-keygen), and an ssh
// wrapper (WARDEN_SSH) that uses them and trusts only that host key. A second
// state dir stands for the other machine: its `warden` is this checkout's
// bin/warden.mjs run with that WARDEN_STATE_DIR.
//
// `startSshd` answers { skip: reason } when sshd cannot run here (not
// installed, or it does not start), for the tests to skip with the reason.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { noteSuitePort } from '../../test/kit/leftovers';
import { until } from '../../test/kit/until';
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
    // Until it answers or exits (a loaded machine may take a while): never given up on by a count of tries.
    let up = false;
    await until('sshd to answer or exit', async () => child.exitCode !== null || (up = await accepts(port)), { everyMs: 50 }).catch(() => undefined);
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
      // The machine goes away: the listener and its sessions (which outlive a listener's SIGTERM
      // while a client holds them), not the commands they started (a detached host goes on).
      const sessions = sshdDescendants(child.pid!);
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      for (const pid of sessions) {
        try {
          process.kill(pid, 'SIGTERM');
        } catch {
          // ended with the listener
        }
      }
      await gone;
      await until('the sshd sessions to end', () => sessions.every((pid) => !sshdAlive(pid)));
    },
    restart: async () => {
      const again = await launch();
      if ('why' in again) throw new Error(again.why);
      child = again.child;
    },
  };
}

/** The sshd processes below `pid` (its sessions: 'sshd: user@notty', sshd-session), by their parent links in /proc. */
function sshdDescendants(pid: number): number[] {
  const parent = new Map<number, number>();
  const sshd = new Set<number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'latin1');
      parent.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
      if (readFileSync(`/proc/${entry}/comm`, 'latin1').startsWith('sshd')) sshd.add(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  const below = (p: number): boolean => {
    for (let at = parent.get(p), hops = 0; at !== undefined && at > 1 && hops < 64; at = parent.get(at), hops++) if (at === pid) return true;
    return false;
  };
  return [...sshd].filter((p) => p !== pid && below(p));
}

/** Whether an sshd process is still there (a zombie has ended). */
function sshdAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2));
  } catch {
    return false;
  }
}

/** The pid of the ssh session (ControlMaster) a remote shares, or null when none runs. */
export function masterPid(ssh: string, controlPath: string): number | null {
  const check = spawnSync(ssh, ['-o', `ControlPath=${controlPath}`, '-O', 'check', 'x'], { encoding: 'utf8' });
  const pid = /pid=(\d+)/.exec(check.stderr);
  return check.status === 0 && pid ? Number(pid[1]) : null;
}
