// For tests that start warden commands: the background hosts they started,
// found by their command line and environment, and stopped at the end.

import { execa, type ResultPromise } from 'execa';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

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

/** SIGTERM to each background host of the dirs (live runs are stopped and recorded), then waits until all are gone. */
export async function stopBackgroundHosts(dirs: string[]): Promise<void> {
  for (const dir of dirs) {
    for (const pid of backgroundHostPids(dir)) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // Already gone.
      }
    }
  }
  for (let i = 0; i < 300 && dirs.some((dir) => backgroundHostPids(dir).length > 0); i++) await new Promise((r) => setTimeout(r, 100));
  const left = dirs.flatMap(backgroundHostPids);
  if (left.length > 0) throw new Error(`background hosts still running after SIGTERM: ${left.join(', ')}`);
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
