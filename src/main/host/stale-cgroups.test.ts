// A host that starts sweeps the run cgroups a crashed Warden left in its
// parent cgroup, and says in its log what it ended and what it left alone:
// a cgroup of a Warden in another PID namespace is never touched, its
// process lives on. REAL cgroups (root: cgroup v1's memory controller, or a
// delegated v2 subtree), in the default parent every Warden of this cgroup
// shares, so the cgroups made here carry names no other test uses.

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { detectMemoryBackend, RunCgroup } from '../supervisor/cgroup';
import { ownerTagText, ownIdentity } from '../supervisor/cgroup-owner';
import { isDead, waitDead } from '../supervisor/proc-testkit';
import { until } from '../../../test/kit/until';
import { startHost, type Host } from './host';

const detection = detectMemoryBackend();
const backend = detection.ok ? detection.backend : undefined;
const made: string[] = [];
const dirs: string[] = [];
let host: Host | undefined;

afterEach(async () => {
  await host?.shutdown();
  host = undefined;
  for (const path of made.splice(0)) {
    const cgroup = new RunCgroup(backend!.version, path, 0);
    await cgroup.killAll();
    await cgroup.remove();
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A cgroup under the default parent holding a sleep, as a run of its owner would. */
async function runCgroupWithSleep(name: string): Promise<{ path: string; sleeper: number }> {
  const path = join(backend!.parent, name);
  mkdirSync(path);
  made.push(path);
  const child = spawn('/bin/sh', ['-c', 'echo $$ > "$1/cgroup.procs" && exec sleep 300', 'x', path], { detached: true, stdio: 'ignore' });
  child.unref();
  const cgroup = new RunCgroup(backend!.version, path, 0);
  await until('the sleep in its cgroup', () => cgroup.pids().length === 1);
  return { path, sleeper: child.pid! };
}

describe.skipIf(!backend)('a host starting', () => {
  it("ends a gone Warden's leftovers, leaves another PID namespace's run alone, and logs what it left", async () => {
    const me = ownIdentity()!;
    const tag = Math.random().toString(36).slice(2, 10);
    // Both owners' pids are gone here; only the first is of this PID namespace.
    const gonePid = await new Promise<number>((resolve) => {
      const child = spawn('true');
      child.on('exit', () => resolve(child.pid!));
    });
    const leftover = await runCgroupWithSleep(`${ownerTagText({ pid: gonePid, startTicks: me.tag.startTicks, pidNs: me.tag.pidNs })}-gone${tag}`);
    const foreign = await runCgroupWithSleep(`${ownerTagText({ pid: gonePid, startTicks: me.tag.startTicks, pidNs: me.tag.pidNs + 1 })}-other${tag}`);

    const stateDir = mkdtempSync(join(tmpdir(), 'warden-stalecg-'));
    dirs.push(stateDir);
    const logged: string[] = [];
    host = await startHost({ stateDir, webRoot: null, log: (line) => logged.push(line) });

    expect(await waitDead([leftover.sleeper])).toEqual([]);
    await until('the log of what was left alone', () => logged.find((line) => line.startsWith(`left the cgroup ${foreign.path} alone: `)));
    expect(logged.find((line) => line.startsWith(`left the cgroup ${foreign.path} alone: `))).toBe(
      `left the cgroup ${foreign.path} alone: its Warden (pid ${gonePid}) runs in another PID namespace (pid:[${me.tag.pidNs + 1}], this one is pid:[${me.tag.pidNs}]), whose pids cannot be judged from here.`,
    );
    // Every Warden of this namespace sweeps the default parent, so another test's host may have ended it first: only that it is gone is certain.
    await until('the leftover cgroup removed', () => !existsSync(leftover.path));
    expect(isDead(foreign.sleeper)).toBe(false);
    expect(new RunCgroup(backend!.version, foreign.path, 0).pids()).toEqual([foreign.sleeper]);
  });
});
