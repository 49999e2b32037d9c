// For tests that start warden commands: the background hosts they started,
// found by their command line and environment, and stopped at the end.

import { execa, type ResultPromise } from 'execa';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { until } from '../../test/kit/until';

/** Background hosts of a state dir: `warden serve --background` processes whose environment names it. */
export function backgroundHostPids(dir: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (!cmdline.includes('serve') || !cmdline.includes('--background')) continue;
      const environ = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0');
      if (environ.includes(`WARDEN_STATE_DIR=${dir}`)) pids.push(Number(entry));
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return pids;
}

/** Warden processes of a state dir other than its background hosts (a CLI, a dial-stdio): any may start a host. */
function clientPids(dir: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (!cmdline.some((arg) => arg.endsWith('warden.mjs')) || cmdline.includes('--background')) continue;
      if (/\) Z/.test(readFileSync(`/proc/${entry}/stat`, 'latin1'))) continue;
      const environ = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0');
      if (environ.includes(`WARDEN_STATE_DIR=${dir}`)) pids.push(Number(entry));
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return pids;
}

/**
 * SIGTERM to each background host of the dirs (live runs are stopped and
 * recorded), then waits until all are gone. A client of the dir still
 * running (a dial-stdio over an ssh session that just closed) may start a
 * host after a look, so it looks again until neither is left.
 */
export async function stopBackgroundHosts(dirs: string[]): Promise<void> {
  const signalled = new Set<number>();
  await until('the background hosts to stop', () => {
    const hosts = dirs.flatMap(backgroundHostPids);
    for (const pid of hosts.filter((pid) => !signalled.has(pid))) {
      signalled.add(pid);
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // Already gone.
      }
    }
    return hosts.length === 0 && dirs.every((dir) => clientPids(dir).length === 0);
  }, { everyMs: 100 });
}

/** bin/warden.mjs of this checkout. */
export const WARDEN_BIN = resolve(dirname(fileURLToPath(import.meta.url)), '../../bin/warden.mjs');

/**
 * Starts `warden serve --no-tcp` for the state dir and resolves once it
 * listens; the child goes into `servers`, for the caller's afterEach to stop.
 * (Wrapped: a ResultPromise is itself awaitable.)
 */
export async function serveFor(dir: string, servers: ResultPromise[]): Promise<{ child: ResultPromise }> {
  const child = execa(process.execPath, [WARDEN_BIN, 'serve', '--no-tcp'], { reject: false, env: { WARDEN_STATE_DIR: dir }, stdin: 'ignore', buffer: true });
  servers.push(child);
  await new Promise<void>((resolvePromise, reject) => {
    let text = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      if (text.includes('control socket')) resolvePromise();
    });
    void child.then((r) => reject(new Error(`warden serve exited early (${r.exitCode}): ${text}`)));
  });
  return { child };
}
