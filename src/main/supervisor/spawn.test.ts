// How a command is started: argv without a shell unless asked, its own process
// group and session, stdin from /dev/null unless given, the scope marker, cwd
// and extra environment. Real processes report on themselves. Then
// spawnCommand itself (through execa): the exact environment, output left
// whole to the engine's reader and kept nowhere else, no rejection ever, one
// failure path, and the extra pipe on fd 3.

import { mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { reaperOnce } from './reaper';
import { Supervisor } from './supervisor';
import { spawnCommand, type SpawnSpec, type Subprocess } from './spawn';

const supervisor = new Supervisor();
afterAll(async () => {
  await supervisor.shutdown();
});

async function run(request: Parameters<Supervisor['start']>[0]) {
  return supervisor.wait(supervisor.start(request).id);
}

describe('spawning', () => {
  it('runs in its own process group and session, led by the command itself', async () => {
    const r = await run({ argv: ['python3', '-c', 'import os; print(os.getpid(), os.getpgrp(), os.getsid(0), os.getppid()); print(open(f"/proc/{os.getppid()}/cmdline").read().split(chr(0))[0])'] });
    const [ids, parent] = r.stdout.trim().split('\n');
    const [pid, pgid, sid, ppid] = ids!.split(' ').map(Number);
    expect(pgid).toBe(pid);
    expect(sid).toBe(pid);
    // Its parent is Warden, or, where no cgroup can hold a run, the subreaper Warden started it under.
    if (ppid !== process.pid) expect([parent, reaperOnce()?.perl]).toEqual(['perl', 'perl']);
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

const PATH = process.env.PATH ?? '/usr/bin:/bin';

function spec(argv: string[], extra: Partial<SpawnSpec> = {}): SpawnSpec {
  return { argv, shell: false, cwd: process.cwd(), env: { PATH }, ...extra };
}

/** Reads stdout and stderr as the engine does (its own 'data' listeners) until the process has closed. */
function drain(child: Subprocess): Promise<{ stdout: Buffer; stderr: Buffer; code: number | null; signal: string | null }> {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout!.on('data', (chunk: Buffer) => out.push(chunk));
  child.stderr!.on('data', (chunk: Buffer) => err.push(chunk));
  return new Promise((resolve) => {
    let exit: [number | null, string | null] = [null, null];
    child.once('exit', (code, signal) => (exit = [code, signal]));
    child.once('close', () => resolve({ stdout: Buffer.concat(out), stderr: Buffer.concat(err), code: exit[0], signal: exit[1] }));
  });
}

/** execa's result promise, which the engine never awaits. */
function resultOf(child: Subprocess): Promise<{ stdout?: unknown; stderr?: unknown; failed: boolean; exitCode?: number }> {
  return child as unknown as Promise<{ stdout?: unknown; stderr?: unknown; failed: boolean; exitCode?: number }>;
}

describe('spawnCommand', () => {
  it('gives the command exactly the environment it is given, nothing of this process', async () => {
    const r = await drain(spawnCommand(spec(['env'], { env: { PATH, ONLY: 'this one' } })));
    expect(r.stdout.toString()).toBe(`PATH=${PATH}\nONLY=this one\n`);
  });

  it('leaves every byte to the engine\'s reader, raw, and keeps none of it in execa', async () => {
    // Invalid UTF-8 and a final newline, which decoding or stripping would change.
    const script = 'import os,sys; sys.stdout.buffer.write(b"\\xff\\xfe" * 1500000 + b"\\n"); sys.stderr.buffer.write(b"e" * 700000); sys.exit(3)';
    const child = spawnCommand(spec(['python3', '-c', script]));
    const r = await drain(child);
    expect(r.code).toBe(3);
    expect(r.stdout.length).toBe(3_000_001);
    expect(r.stdout.subarray(0, 2)).toEqual(Buffer.from([0xff, 0xfe]));
    expect(r.stdout.at(-1)).toBe(0x0a);
    expect(r.stderr.length).toBe(700_000);
    const result = await resultOf(child);
    expect(result.failed).toBe(true);
    expect(result.exitCode).toBe(3);
    expect(result.stdout).toBeUndefined();
    expect(result.stderr).toBeUndefined();
  });

  it('never rejects: not for an exit code, a signal, a command not found or one spawn() refuses', async () => {
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown) => rejections.push(reason);
    process.on('unhandledRejection', onRejection);
    try {
      const ended = [spawnCommand(spec(['sh', '-c', 'exit 7'])), spawnCommand(spec(['sh', '-c', 'kill -KILL $$']))];
      const notFound = spawnCommand(spec(['warden-no-such-command']));
      const notFoundError = new Promise((resolve) => notFound.once('error', resolve));
      const refused = spawnCommand(spec(['tr\0ue']));
      const results = await Promise.all(ended.map(drain));
      expect(results.map((r) => [r.code, r.signal])).toEqual([[7, null], [null, 'SIGKILL']]);
      await notFoundError;
      // Unhandled rejections are reported after the microtask queue drains.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(rejections).toEqual([]);
      for (const child of [...ended, notFound, refused]) expect((await resultOf(child)).failed).toBe(true);
    } finally {
      process.off('unhandledRejection', onRejection);
    }
  });

  it('reports a command spawn() refuses at once (a NUL byte) through the same \'error\' event as one not found', async () => {
    for (const argv of [['tr\0ue'], ['warden-no-such-command']]) {
      const child = spawnCommand(spec(argv));
      expect(child.pid).toBeUndefined();
      const error = await new Promise<NodeJS.ErrnoException>((resolve) => child.once('error', resolve));
      expect(error.code).toBe(argv[0] === 'tr\0ue' ? 'ERR_INVALID_ARG_VALUE' : 'ENOENT');
    }
  });

  it('with extraPipe, the child writes to fd 3 and reads what the parent writes there, then EOF when it ends it', async () => {
    const child = spawnCommand(spec(['bash', '-c', 'echo "hello from fd 3" >&3; got=$(cat <&3); echo "got [$got] then EOF"'], { extraPipe: true }));
    const fd3 = child.stdio[3] as Duplex;
    const heard: Buffer[] = [];
    fd3.on('data', (chunk: Buffer) => {
      heard.push(chunk);
      if (heard.length === 1) fd3.end('ping\npong'); // answered once, then ended: the child's cat sees EOF
    });
    const r = await drain(child);
    expect(Buffer.concat(heard).toString()).toBe('hello from fd 3\n');
    expect(r.stdout.toString()).toBe('got [ping\npong] then EOF\n');
    expect(r.code).toBe(0);
  });

  it('stays silent under NODE_DEBUG=execa: no command lines from the host on its own stderr', async () => {
    // NODE_DEBUG is read once per process, so this runs in a Node process of its own.
    const code = [
      `import { spawnCommand } from ${JSON.stringify(join(__dirname, 'spawn.ts'))};`,
      "const child = spawnCommand({ argv: ['sh', '-c', 'echo from-the-command'], shell: false, cwd: process.cwd(), env: { PATH: process.env.PATH } });",
      "let out = ''; child.stdout.on('data', (c) => (out += c)); child.once('close', () => process.stdout.write(out));",
    ].join('\n');
    const host = spawnCommand(spec([process.execPath, '--import', 'tsx', '--input-type=module', '-e', code], { env: { PATH, NODE_DEBUG: 'execa' } }));
    const r = await drain(host);
    expect(r.stdout.toString()).toBe('from-the-command\n');
    expect(r.stderr.toString()).toBe('');
    expect(r.code).toBe(0);
  });

  it('without extraPipe, the child has no fd 3 at all', async () => {
    const r = await drain(spawnCommand(spec(['python3', '-c', 'import os\ntry:\n  os.fstat(3); print("open")\nexcept OSError as e: print(e.errno)'])));
    expect(r.stdout.toString().trim()).toBe('9'); // EBADF
  });
});
