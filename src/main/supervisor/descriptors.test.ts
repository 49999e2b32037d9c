// Descriptor exhaustion never takes Warden down: a supervisor whose every
// descriptor is taken (a real RLIMIT_NOFILE, set by prlimit on a Node process
// of its own) fails each spawn path (a command, one under the subreaper, one
// through the cgroup wrapper, a Python interpreter) as spawn-failed with a
// line that names the limit, and goes on running once descriptors are free.

import { execa } from 'execa';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { memoryBackendOnce } from './memory';

/** Runs `request` in a supervisor of its own under RLIMIT_NOFILE `limit`, with every descriptor taken while it starts. */
async function underFullTable(request: object, env: Record<string, string>) {
  const code = [
    `import { Supervisor } from ${JSON.stringify(join(__dirname, 'registry.ts'))};`,
    "import { closeSync, openSync } from 'node:fs';",
    'const supervisor = new Supervisor({ sampleRateHz: 0 });',
    `const request = ${JSON.stringify(request)};`,
    // Once with descriptors, so what loads lazily (the reaper probe, the cgroup backend, modules) has loaded.
    "const warm = await supervisor.wait(supervisor.start({ ...request, session: request.session ? 'warm' : undefined }).id);",
    'const held = [];',
    "try { for (;;) held.push(openSync('/dev/null', 'r')); } catch {}",
    // Two left: enough to make a cgroup (one file at a time), not for a child's pipes.
    'closeSync(held.pop()); closeSync(held.pop());',
    'const failed = await supervisor.wait(supervisor.start(request).id);',
    'for (const fd of held) closeSync(fd);',
    "const after = await supervisor.wait(supervisor.start({ argv: ['echo', 'still here'] }).id);",
    'await supervisor.shutdown();',
    'process.stdout.write(JSON.stringify({ warm: warm.verdict, held: held.length, failed, after }));',
  ].join('\n');
  const child = await execa('prlimit', ['--nofile=256:256', process.execPath, '--import', 'tsx', '--input-type=module', '-e', code], {
    reject: false,
    env: { ...env },
    timeout: 60_000,
  });
  if (process.env.SHOW) console.log(child.stdout);
  expect(child.stderr).toBe('');
  expect(child.exitCode).toBe(0);
  return JSON.parse(child.stdout) as { warm: string; held: number; failed: { verdict: string; spawnError?: string; stderr: string; notes: string[] }; after: { verdict: string; stdout: string } };
}

const cgroups = memoryBackendOnce().ok;

describe('with no descriptor left', () => {
  const paths: [string, object, Record<string, string>][] = [
    ['a command', { argv: ['true'] }, { WARDEN_CGROUPS: '0', WARDEN_REAPER: '0' }],
    ['a command under the subreaper', { argv: ['true'] }, { WARDEN_CGROUPS: '0' }],
    ['a Python interpreter', { code: 'print(1)', session: 'fresh' }, { WARDEN_CGROUPS: '0', WARDEN_REAPER: '0' }],
  ];
  if (cgroups) {
    paths.push(['a command through the cgroup wrapper', { argv: ['true'], memory: '64M' }, {}]);
    paths.push(['a Python interpreter through the cgroup wrapper', { code: 'print(1)', session: 'fresh', memory: '64M' }, {}]);
  }
  it.each(paths)('%s ends spawn-failed naming the limit, and Warden goes on', async (_name, request, env) => {
    const r = await underFullTable(request, env);
    expect(r.warm).toBe('completed');
    expect(r.held).toBeGreaterThan(100);
    expect(r.failed.verdict).toBe('spawn-failed');
    expect(JSON.stringify(r.failed, null, 1)).toMatch(/EMFILE: its limit RLIMIT_NOFILE is 256/);
    expect(r.after).toMatchObject({ verdict: 'completed', stdout: 'still here\n' });
  });
});
