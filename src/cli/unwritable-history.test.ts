// A history that cannot be opened or written never stops a run: the run
// happens, its result is printed, and one line on stderr says the history is
// not being written and why. Real `warden` processes (bin/warden.mjs) on a
// real read-only file system (a tmpfs remounted ro: root only) and on a
// history.db of mode 0400 as a user that cannot write it (nobody, through
// setpriv: root only, and only where nobody can read this checkout);
// skipped with the reason otherwise.

import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunResult } from '../shared/result';
import { cannotRunAs } from '../main/store/store-testkit';
import { stopBackgroundHosts, WARDEN_BIN } from './testkit';

const NOBODY = 65534;
const dirs: string[] = [];
let mnt = '';
let cannotMount: string | null = null;

/** `warden ARGS` with the state dir, optionally as another user. */
async function warden(stateDir: string, args: string[], uid?: number) {
  const argv = [process.execPath, WARDEN_BIN, ...args];
  const [command, rest] = uid === undefined ? [argv[0]!, argv.slice(1)] : ['setpriv', [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', ...argv]];
  return execa(command, rest, { reject: false, cwd: '/', env: { WARDEN_STATE_DIR: stateDir, WARDEN_HOST_IDLE: '20s' }, stdin: 'ignore', timeout: 60_000 });
}

/** The stderr lines about the history: the promise is exactly one. */
const historyLines = (stderr: string) => stderr.split('\n').filter((line) => /histor/i.test(line));

beforeAll(() => {
  // Builds the bundle now if the sources changed, as this user: nobody could not write out/cli.
  execFileSync(process.execPath, [WARDEN_BIN, '--version'], { stdio: 'pipe' });
  if (process.getuid?.() !== 0) {
    cannotMount = 'mounting a tmpfs needs root';
    return;
  }
  mnt = mkdtempSync(join(tmpdir(), 'wro-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16m,mode=0700', 'tmpfs', mnt], { stdio: 'pipe' });
  } catch (error) {
    cannotMount = `mount -t tmpfs is not permitted here (${(error as Error).message.split('\n')[0]})`;
  }
});

afterAll(async () => {
  await stopBackgroundHosts(dirs);
  if (mnt && cannotMount === null) execFileSync('umount', ['-l', mnt]);
  if (mnt) rmSync(mnt, { recursive: true, force: true });
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('a read-only state dir (a tmpfs remounted ro)', () => {
  it('runs the command, prints its result, and says in one line that the history is not written', async (context) => {
    if (cannotMount) {
      console.log(`skipped: ${cannotMount}`);
      context.skip();
    }
    const stateDir = join(mnt, 'state');
    // A history that was written once, then the disk went read-only.
    const before = await warden(stateDir, ['run', '--embedded', '--json', '--', 'echo', 'before']);
    expect(before.exitCode).toBe(0);
    const beforeId = (JSON.parse(before.stdout) as RunResult).id;
    execFileSync('mount', ['-o', 'remount,ro', mnt]);

    // list and show still read it, and say in one line that it is read-only.
    const listed = await warden(stateDir, ['list']);
    expect(listed.exitCode).toBe(0);
    expect(listed.stdout).toContain(beforeId);
    expect(historyLines(listed.stderr)).toHaveLength(1);
    expect(historyLines(listed.stderr)[0]).toMatch(/^warden: the history is read-only here, shown as it is \(.*read-only/);
    const shown = await warden(stateDir, ['show', beforeId, '--json']);
    expect(shown.exitCode).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ id: beforeId, stdout: 'before\n' });
    expect(historyLines(shown.stderr)).toHaveLength(1);

    const through = await warden(stateDir, ['run', '--', 'echo', 'hi']);
    expect(through.exitCode).toBe(0);
    expect(through.stdout).toBe('hi');
    expect(historyLines(through.stderr)).toHaveLength(1);
    expect(historyLines(through.stderr)[0]).toMatch(/^warden: the history is not being written: the state dir .* is not writable \(EROFS\)/);
    expect(through.stderr).toMatch(/warden: completed, exit 0/);

    const json = await warden(stateDir, ['run', '--json', '--', 'sh', '-c', 'echo out; exit 3']);
    expect(json.exitCode).toBe(3);
    expect(JSON.parse(json.stdout) as RunResult).toMatchObject({ verdict: 'failed', exitCode: 3, stdout: 'out\n' });
    expect(historyLines(json.stderr)).toHaveLength(1);

    const embedded = await warden(stateDir, ['run', '--embedded', '--', 'echo', 'hi']);
    expect(embedded.exitCode).toBe(0);
    expect(embedded.stdout).toBe('hi');
    expect(historyLines(embedded.stderr)).toHaveLength(1);
    expect(historyLines(embedded.stderr)[0]).toMatch(/^warden: history is off for this run: .*read-only/);

    // A host cannot serve it at all: warden serve says why in one line, no stack and no "internal error".
    const serve = await warden(stateDir, ['serve', '--no-tcp']);
    expect(serve.exitCode).toBe(125);
    expect(serve.stderr.split('\n').at(-1)).toMatch(/^warden: Cannot make the host's directory .*\/run \(EROFS\), so no host can serve .*; set WARDEN_STATE_DIR to a writable directory\.$/);
    expect(serve.stderr).not.toMatch(/internal error|\n\s+at /);
  }, 90_000);
});

describe('a history.db of mode 0400, as a user who cannot write it', () => {
  it('runs the command embedded and through a host, and says in one line that the history is not written', async (context) => {
    const reason = cannotRunAs(NOBODY, WARDEN_BIN);
    if (reason) {
      console.log(`skipped: ${reason}`);
      context.skip();
    }
    const base = mkdtempSync(join(tmpdir(), 'w0400-'));
    dirs.push(base);
    chmodSync(base, 0o755);
    const stateDir = join(base, 'state');
    dirs.push(stateDir);
    mkdirSync(stateDir, { mode: 0o700 });
    chownSync(stateDir, NOBODY, NOBODY);
    expect((await warden(stateDir, ['run', '--embedded', '--', 'echo', 'before'], NOBODY)).exitCode).toBe(0);
    chmodSync(join(stateDir, 'history.db'), 0o400);
    rmSync(join(stateDir, 'history.db-wal'), { force: true });
    rmSync(join(stateDir, 'history.db-shm'), { force: true });
    expect(spawnSync('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', 'test', '-w', join(stateDir, 'history.db')]).status).not.toBe(0);

    const embedded = await warden(stateDir, ['run', '--embedded', '--', 'echo', 'hi'], NOBODY);
    expect(embedded.exitCode, embedded.stderr).toBe(0);
    expect(embedded.stdout).toBe('hi');
    expect(historyLines(embedded.stderr)).toHaveLength(1);
    expect(historyLines(embedded.stderr)[0]).toMatch(/^warden: history is off for this run: .*history\.db/);

    const through = await warden(stateDir, ['run', '--', 'echo', 'hi'], NOBODY);
    expect(through.exitCode, through.stderr).toBe(0);
    expect(through.stdout).toBe('hi');
    expect(historyLines(through.stderr)).toHaveLength(1);
    expect(historyLines(through.stderr)[0]).toMatch(/^warden: the history is not being written: the host \(pid \d+\) has none \(.*readonly/);
  }, 90_000);
});
