// How a command is started: argv without a shell unless asked, its own process
// group and session, stdin from /dev/null unless given, the scope marker, cwd
// and extra environment. Real processes report on themselves.

import { mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Supervisor } from './registry';

const supervisor = new Supervisor();
afterAll(async () => {
  await supervisor.shutdown();
});

async function run(request: Parameters<Supervisor['start']>[0]) {
  return supervisor.wait(supervisor.start(request).id);
}

describe('spawning', () => {
  it('runs in its own process group and session, led by the command itself', async () => {
    const r = await run({ argv: ['python3', '-c', 'import os; print(os.getpid(), os.getpgrp(), os.getsid(0), os.getppid())'] });
    const [pid, pgid, sid, ppid] = r.stdout.trim().split(' ').map(Number);
    expect(pgid).toBe(pid);
    expect(sid).toBe(pid);
    expect(ppid).toBe(process.pid);
    expect(pgid).not.toBe(process.pid);
  });

  it('gives stdin from /dev/null unless input is given', async () => {
    const devnull = await run({ argv: ['bash', '-c', 'readlink /proc/self/fd/0; cat; echo end'] });
    expect(devnull.stdout).toBe('/dev/null\nend\n');
    const given = await run({ argv: ['bash', '-c', 'cat; echo; echo end'], stdin: 'line one\nline two' });
    expect(given.stdout).toBe('line one\nline two\nend\n');
  });

  it('does not fail when the command ignores the input it was given', async () => {
    const r = await run({ argv: ['true'], stdin: 'x'.repeat(1_000_000) });
    expect(r.verdict).toBe('completed');
  });

  it('passes argv words literally, and uses a shell only when asked', async () => {
    const literal = await run({ argv: ['echo', '$HOME', '*', '|', '$(id)'] });
    expect(literal.stdout).toBe('$HOME * | $(id)\n');
    const shell = await run({ argv: ['echo $((2+3)) | sed s/5/five/'], shell: true });
    expect(shell.stdout).toBe('five\n');
  });

  it('sets the scope marker, the working directory and extra environment', async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-spawn-')));
    const r = await run({ argv: ['bash', '-c', 'echo "$WARDEN_SCOPE|$PWD|$EXTRA|${HOME:+home-kept}"'], cwd: dir, env: { EXTRA: 'a b=c' } });
    expect(r.stdout.trim()).toBe(`${supervisor.hostId}.${r.id}|${dir}|a b=c|home-kept`);
    expect(r.cwd).toBe(dir);
  });

  it('overrides a WARDEN_SCOPE the caller tries to set, so teardown finds its processes', async () => {
    const r = await run({ argv: ['bash', '-c', 'echo "$WARDEN_SCOPE"'], env: { WARDEN_SCOPE: 'forged' } });
    expect(r.stdout.trim()).toBe(`${supervisor.hostId}.${r.id}`);
  });
});
