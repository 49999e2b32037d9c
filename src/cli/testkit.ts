// For tests that start warden commands: the background hosts they started,
// found by their command line and environment, and stopped at the end.

import { readdirSync, readFileSync } from 'node:fs';

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
