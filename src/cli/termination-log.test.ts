// `warden run --termination-log [PATH]`: the run's end as compact JSON within
// Kubernetes' 4,096-byte termination message, and the exit statuses a Job's
// podFailurePolicy keys on (docs/kubernetes.md), from real runs through the
// host and embedded.

import { execa } from 'execa';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunResult } from '../shared/result';
import { parseAnyRunArgs, refusedRunChoices } from './args';
import { terminationMessage, TERMINATION_LOG_BYTES, type TerminationMessage } from './termination-log';
import { stopBackgroundHosts, WARDEN_BIN } from './testkit';

const dir = mkdtempSync(join(tmpdir(), 'wtermlog-'));
afterAll(async () => {
  await stopBackgroundHosts([join(dir, 'state')]);
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

let n = 0;
async function run(args: string[], command: string[]): Promise<{ exitCode: number; message: TerminationMessage; bytes: number; stderr: string }> {
  const path = join(dir, `termination-${++n}.log`);
  const done = await execa(process.execPath, [WARDEN_BIN, 'run', ...args, '--termination-log', path, '--', ...command], {
    reject: false,
    env: { WARDEN_STATE_DIR: join(dir, 'state'), WARDEN_HOST_IDLE: '60s' },
    extendEnv: true,
    stdin: 'ignore',
    timeout: 60_000,
  });
  const text = readFileSync(path, 'utf8');
  return { exitCode: done.exitCode ?? -1, message: JSON.parse(text) as TerminationMessage, bytes: Buffer.byteLength(text), stderr: done.stderr };
}

describe('warden run --termination-log', () => {
  it('a failure: verdict, exit, elapsed and the last whole lines of a long output, within 4,096 bytes', async () => {
    const script = 'for i in $(seq 1 5000); do echo "out line $i"; done; for i in $(seq 1 500); do echo "err line $i" >&2; done; exit 3';
    for (const mode of [[], ['--embedded']]) {
      const { exitCode, message, bytes } = await run(mode, ['bash', '-c', script]);
      expect(exitCode).toBe(3);
      expect(bytes).toBeLessThanOrEqual(TERMINATION_LOG_BYTES);
      expect(bytes).toBeGreaterThan(TERMINATION_LOG_BYTES - 200); // the room is used
      expect(message).toMatchObject({ verdict: 'failed', state: 'ended', exit: 3, exitCode: 3, signal: null, oom: null });
      expect(message.elapsedMs).toBeGreaterThan(0);
      // The newest lines, whole: the last one is there and the first kept one starts at a line's start.
      expect(message.stdout.endsWith('out line 5000\n')).toBe(true);
      expect(message.stderr.endsWith('err line 500\n')).toBe(true);
      expect(message.stdout).toMatch(/^out line \d+\n/);
      expect(message.stderr).toMatch(/^err line \d+\n/);
    }
  }, 60_000);

  it('timed out is 124, a crash signal 128+n, OOM confirmed in its memory limit 137 with oom true', async (context) => {
    const timedOut = await run(['--limit', '300ms'], ['sleep', '30']);
    expect(timedOut.exitCode).toBe(124);
    expect(timedOut.message).toMatchObject({ verdict: 'timed-out', exit: 124, limitMs: 300 });

    const crashed = await run([], ['bash', '-c', 'kill -SEGV $$']);
    expect(crashed.exitCode).toBe(139);
    expect(crashed.message).toMatchObject({ verdict: 'crashed', exit: 139, signal: 'SIGSEGV' });

    const ok = await run(['--memory', '256M'], ['true']);
    if (ok.exitCode !== 0) return context.skip(`no writable memory cgroup here: ${ok.stderr.split('\n')[0]}`);
    expect(ok.message).toMatchObject({ verdict: 'completed', exit: 0, oom: false });
    const oom = await run(['--memory', '64M'], ['python3', '-c', 'a = []\nwhile True: a.append(bytearray(10**6))']);
    expect(oom.exitCode).toBe(137);
    expect(oom.message).toMatchObject({ verdict: 'killed', exit: 137, signal: 'SIGKILL', oom: true });
  }, 60_000);

  it('a run that never starts leaves why and the status Warden exits with', async () => {
    const path = join(dir, 'not-started.log');
    // No process has this pid (above Linux's largest pid_max), so the run is refused before it starts.
    const done = await execa(process.execPath, [WARDEN_BIN, 'run', '--owner-pid', '4194305', '--termination-log', path, '--', 'true'], { reject: false, env: { WARDEN_STATE_DIR: join(dir, 'state') }, extendEnv: true, stdin: 'ignore', timeout: 60_000 });
    expect(done.exitCode).toBe(125);
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({ verdict: null, state: 'not-started', exit: 125, exitCodes: 'standard/v1', error: '--owner-pid 4194305: no such process is running.' });
  }, 60_000);

  it('a file that cannot be written is one line, and the run\'s own status stands', async () => {
    const done = await execa(process.execPath, [WARDEN_BIN, 'run', '--embedded', '--termination-log', join(dir, 'no', 'such', 'dir'), '--', 'bash', '-c', 'exit 5'], { reject: false, env: { WARDEN_STATE_DIR: join(dir, 'state') }, extendEnv: true, stdin: 'ignore' });
    expect(done.exitCode).toBe(5);
    expect(done.stderr).toMatch(/^warden: cannot write the termination log .*no\/such\/dir: ENOENT$/m);
  }, 60_000);
});

describe('a command line warden run refuses', () => {
  /** `warden run WORDS` (which name the termination log); its status, stderr and the file's JSON (null: none). */
  async function refused(words: (path: string) => string[], env: Record<string, string> = {}) {
    const path = join(dir, `refused-${++n}.log`);
    const done = await execa(process.execPath, [WARDEN_BIN, 'run', ...words(path)], { reject: false, env: { WARDEN_STATE_DIR: join(dir, 'state'), KUBERNETES_SERVICE_HOST: '', ...env }, extendEnv: true, stdin: 'ignore', timeout: 60_000 });
    let message: unknown = null;
    try {
      message = JSON.parse(readFileSync(path, 'utf8'));
    } catch {
      // not written
    }
    return { exitCode: done.exitCode, stderr: done.stderr, message, path };
  }
  const notStarted = (error: string, exitCodes = 'standard/v1') => ({ verdict: null, state: 'not-started', exit: 125, exitCodes, error });

  it.each([
    ['--owner-pid with --embedded', (p: string) => ['--embedded', '--owner-pid', '2', '--termination-log', p, '--', 'true'], '--owner-pid needs the host, so the run can outlive this command: drop --embedded (or WARDEN_EMBEDDED).'],
    ['an unknown option before it', (p: string) => ['--bogus', `--termination-log=${p}`, 'true'], 'Unknown option --bogus for warden run (see warden run --help).'],
    ['a limit that is no duration', (p: string) => [`--termination-log=${p}`, '--limit', 'soon', '--', 'true'], '--limit takes a duration such as 500ms, 30s, 2m or 1h, not "soon".'],
    ['no command', (p: string) => ['--termination-log', p, '--'], 'No command given: warden run [options] -- COMMAND [ARGS...]'],
    ['a Python script with options after its FILE', (p: string) => ['--python', 'a.py', `--termination-log=${p}`, '--shell'], '--shell is for commands, not with --python.'],
  ])('%s: the one-line error, exit 125, and the termination message', async (_what, words, error) => {
    const r = await refused(words);
    expect(r.exitCode).toBe(125);
    expect(r.stderr).toBe(`warden: ${error}`);
    expect(r.message).toEqual(notStarted(error));
  }, 60_000);

  it('names the k8s contract when its words choose it, or when it runs in a pod', async () => {
    const chosen = await refused((p) => ['--exit-codes', 'k8s', '--embedded', '--detach', '--termination-log', p, '--', 'true']);
    expect(chosen.exitCode).toBe(125);
    expect(chosen.message).toEqual(notStarted('--detach needs the host, so the run can outlive this command: drop --embedded (or WARDEN_EMBEDDED).', 'k8s/v1'));
    const inPod = await refused((p) => [`--termination-log=${p}`, '--limit', 'soon', 'true'], { KUBERNETES_SERVICE_HOST: '10.0.0.1' });
    expect(inPod.message).toEqual(notStarted('--limit takes a duration such as 500ms, 30s, 2m or 1h, not "soon".', 'k8s/v1'));
    // Choices that contradict each other: the message goes without a contract.
    const torn = await refused((p) => ['--exit-codes', 'standard', '--oom-exit-code', '75', `--termination-log=${p}`, 'true']);
    expect(torn.message).toEqual({ verdict: null, state: 'not-started', exit: 125, error: '--oom-exit-code goes with --exit-codes k8s: the standard contract gives an OOM kill 137, as any SIGKILL.' });
  }, 60_000);

  it('a remote that cannot be had (WARDEN_REMOTE) is refused with its termination message', async () => {
    const r = await refused((p) => ['--termination-log', p, '--', 'true'], { WARDEN_REMOTE: 'no-such-remote' });
    expect(r.exitCode).toBe(125);
    const error = r.stderr.replace(/^warden: /, '');
    expect(error).toMatch(/no-such-remote/);
    expect(r.message).toEqual(notStarted(error));
  }, 60_000);

  it('writes nothing where its words name no termination log, or only as a command\'s word', async () => {
    const bare = await refused(() => ['--bogus', '--', 'true']);
    expect(bare.exitCode).toBe(125);
    expect(bare.message).toBeNull();
    const commandsOwn = await refused((p) => ['--limit', 'soon', 'echo', `--termination-log=${p}`]);
    expect(commandsOwn.exitCode).toBe(125);
    expect(commandsOwn.message).toBeNull();
    const empty = await refused(() => ['--termination-log=', '--', 'true']);
    expect(empty.stderr).toBe('warden: --termination-log takes a file path (bare, it is /dev/termination-log).');
    expect(empty.message).toBeNull();
  }, 60_000);

  it('keeps the file rules: never through a symbolic link, one more line, still 125', async () => {
    const target = join(dir, 'precious-refused');
    writeFileSync(target, 'keep me\n');
    const link = join(dir, 'refused-link.log');
    symlinkSync(target, link);
    const r = await refused(() => ['--embedded', '--owner-pid', '2', '--termination-log', link, '--', 'true']);
    expect(r.exitCode).toBe(125);
    expect(readFileSync(target, 'utf8')).toBe('keep me\n');
    expect(r.stderr.split('\n')).toEqual([
      `warden: cannot write the termination log ${link}: it is a symbolic link, which Warden never writes through`,
      'warden: --owner-pid needs the host, so the run can outlive this command: drop --embedded (or WARDEN_EMBEDDED).',
    ]);
  }, 60_000);
});

describe('refusedRunChoices', () => {
  it.each([
    [['--termination-log', '--', 'true'], { terminationLog: '/dev/termination-log' }],
    [['--termination-log', 'end.json', '--', 'true'], { terminationLog: 'end.json' }],
    [['--termination-log', 'true'], { terminationLog: '/dev/termination-log' }],
    [['--bogus', '--termination-log=/tmp/x', 'true'], { terminationLog: '/tmp/x' }],
    [['--termination-log=/a', '--termination-log=/b', 'x'], { terminationLog: '/b' }],
    [['--termination-log='], {}],
    [['--json', '--', 'echo', '--termination-log=/x'], {}],
    [['echo', '--termination-log=/x'], {}],
    // The value of another option, as the parser splits it.
    [['--cwd', '--termination-log=/x', 'true'], {}],
    [['--python', 'a.py', '--termination-log=/x'], { terminationLog: '/x' }],
    [['--python', '--', 'a.py', '--termination-log=/x'], {}],
    [['--exit-codes', 'k8s', '--oom-exit-code', '75', '--termination-log=/x', 'true'], { terminationLog: '/x', exitCodes: 'k8s', oomExitCode: 75 }],
    [['--exit-codes=nope', '--oom-exit-code', '0', '--termination-log=/x'], { terminationLog: '/x' }],
    [['--exit-codes', 'standard', 'true', '--exit-codes', 'k8s'], { exitCodes: 'standard' }],
    [[], {}],
  ])('%j', (words, want) => {
    expect(refusedRunChoices(words)).toEqual(want);
  });
});

describe('--termination-log at a path that is not a plain file of the caller\'s', () => {
  const NOBODY = 65534;
  const embedded = (path: string) =>
    execa(process.execPath, [WARDEN_BIN, 'run', '--embedded', '--termination-log', path, '--', 'bash', '-c', 'exit 5'], { reject: false, env: { WARDEN_STATE_DIR: join(dir, 'state') }, extendEnv: true, stdin: 'ignore', timeout: 30_000 });

  it('a symbolic link is never written through: its target stays, one line, the run\'s status stands', async () => {
    const target = join(dir, 'precious');
    writeFileSync(target, 'keep me\n');
    const link = join(dir, 'link.log');
    symlinkSync(target, link);
    const done = await embedded(link);
    expect(done.exitCode).toBe(5);
    expect(readFileSync(target, 'utf8')).toBe('keep me\n');
    expect(done.stderr).toMatch(/^warden: cannot write the termination log .*link\.log: it is a symbolic link, which Warden never writes through$/m);
  }, 60_000);

  it('a FIFO does not block the CLI, with or without a reader, and is not written', async () => {
    const fifo = join(dir, 'fifo.log');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const alone = await embedded(fifo);
    expect(alone.timedOut).toBe(false);
    expect(alone.exitCode).toBe(5);
    expect(alone.stderr).toMatch(/cannot write the termination log .*fifo\.log: it is a FIFO or socket, not a file$/m);
    // A reader holds it open: the open succeeds, and fstat refuses it.
    const reader = execa('cat', [fifo], { reject: false });
    const read = await embedded(fifo);
    expect(read.exitCode).toBe(5);
    expect(read.stderr).toMatch(/cannot write the termination log .*fifo\.log: it is a FIFO, not a file$/m);
    reader.kill('SIGTERM');
    expect((await reader).stdout).toBe('');
  }, 60_000);

  it('as root, a file another user left in a sticky /tmp-like directory is refused; a link that user planted there too', async (context) => {
    if (process.getuid?.() !== 0) return context.skip('needs root, to be the privileged writer');
    // Beside the test's private dir, which nobody could not enter.
    const sticky = mkdtempSync(join(tmpdir(), 'wtermlog-sticky-'));
    context.onTestFinished(() => rmSync(sticky, { recursive: true, force: true }));
    chmodSync(sticky, 0o1777);
    const theirs = join(sticky, 'theirs.log');
    writeFileSync(theirs, 'their file\n');
    chownSync(theirs, NOBODY, NOBODY);
    const planted = await embedded(theirs);
    expect(planted.exitCode).toBe(5);
    expect(readFileSync(theirs, 'utf8')).toBe('their file\n');
    expect(planted.stderr).toMatch(/cannot write the termination log .*theirs\.log: it belongs to uid 65534 and sits in the sticky directory/m);
    // A link nobody planted (protected_symlinks is 0 on this machine's kind, where the kernel does not stop it).
    const rootsFile = join(dir, 'roots-file');
    writeFileSync(rootsFile, 'root data\n');
    const link = join(sticky, 'link.log');
    expect(spawnSync('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', 'ln', '-s', rootsFile, link]).status).toBe(0);
    const followed = await embedded(link);
    expect(followed.exitCode).toBe(5);
    expect(readFileSync(rootsFile, 'utf8')).toBe('root data\n');
    // Root's own file in the same directory is written.
    const mine = join(sticky, 'mine.log');
    expect((await embedded(mine)).exitCode).toBe(5);
    expect(JSON.parse(readFileSync(mine, 'utf8'))).toMatchObject({ exit: 5 });
  }, 60_000);
});

describe('terminationMessage', () => {
  const base: RunResult = {
    id: 'abc123', kind: 'command', argv: ['x'], cwd: '/', state: 'ended', verdict: 'failed', exitCode: 1, signal: null,
    startedAt: '2026-01-01T00:00:00.000Z', endedAt: '2026-01-01T00:00:01.000Z', elapsedMs: 1000, limitMs: null, advice: 'a'.repeat(1000), notes: [],
    stdout: '', stderr: '', stdoutTruncated: 0, stderrTruncated: 0,
  } as RunResult;

  it('stays within the limit when escapes make every character many bytes, keeping the newest', () => {
    const line = `${'\u0001é"\\'.repeat(40)}\n`;
    const message = terminationMessage({ ...base, stdout: line.repeat(200) + 'LAST\n', stderr: line.repeat(200) }, 1);
    const bytes = Buffer.byteLength(JSON.stringify(message));
    expect(bytes).toBeLessThanOrEqual(TERMINATION_LOG_BYTES);
    expect(message.stdout.endsWith('LAST\n')).toBe(true);
    expect(message.advice?.length).toBe(400);
  });

  it('one line longer than the room keeps its end; a newline first is no trouble', () => {
    const message = terminationMessage({ ...base, advice: null, stdout: `\n${'x'.repeat(100_000)}END`, stderr: '\n\n' }, 1);
    expect(Buffer.byteLength(JSON.stringify(message))).toBeLessThanOrEqual(TERMINATION_LOG_BYTES);
    expect(message.stdout).toMatch(/^x{3000,}END$/);
    expect(message.stderr).toBe('\n\n');
  });

  it('a short run is whole', () => {
    const message = terminationMessage({ ...base, stdout: 'hi\n', stderr: 'oops\n', advice: null }, 1);
    expect(message).toEqual({ id: 'abc123', verdict: 'failed', state: 'ended', exit: 1, kind: 'command', argv: ['x'], startedAt: '2026-01-01T00:00:00.000Z', exitCode: 1, signal: null, elapsedMs: 1000, limitMs: null, oom: null, stderr: 'oops\n', stdout: 'hi\n' });
    expect(terminationMessage({ ...base, advice: null }, 1, TERMINATION_LOG_BYTES, 'k8s/v1')).toMatchObject({ exit: 1, exitCodes: 'k8s/v1' });
  });
});

describe('--termination-log [PATH]', () => {
  it('bare is /dev/termination-log; a PATH word only when -- marks the command; =PATH always', () => {
    expect(parseAnyRunArgs(['--termination-log', '--', 'true'])).toMatchObject({ terminationLog: '/dev/termination-log', request: { argv: ['true'] } });
    expect(parseAnyRunArgs(['--termination-log', 'end.json', '--', 'true'])).toMatchObject({ terminationLog: 'end.json', request: { argv: ['true'] } });
    expect(parseAnyRunArgs(['--termination-log', 'true'])).toMatchObject({ terminationLog: '/dev/termination-log', request: { argv: ['true'] } });
    expect(parseAnyRunArgs(['--termination-log=/tmp/x', 'true'])).toMatchObject({ terminationLog: '/tmp/x', request: { argv: ['true'] } });
    expect(parseAnyRunArgs(['--json', '--', 'echo', '--termination-log'])).not.toHaveProperty('terminationLog');
  });
});
