// `warden run` as an agent calls it: the real bin in a child process, real
// commands, and the exit status and output formats of docs/architecture.md.

import { execa } from 'execa';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunResult } from '../shared/result';

const BIN = resolve(__dirname, '../../bin/warden.mjs');

// The history of these runs goes to a directory of this file's own, not the user's.
const STATE_DIR = mkdtempSync(join(tmpdir(), 'warden-cli-state-'));

function warden(args: string[], options: { cwd?: string; input?: string } = {}) {
  return execa(process.execPath, [BIN, ...args], {
    reject: false,
    env: { WARDEN_STATE_DIR: STATE_DIR, WARDEN_EMBEDDED: '1' }, // the engine in the command: these are about what a run does, not the host
    ...(options.input !== undefined ? { input: options.input } : { stdin: 'ignore' as const }),
    cwd: options.cwd,
    timeout: 60_000,
    stripFinalNewline: false,
  });
}

const CONTRACT_FIELDS = [
  'id', 'kind', 'argv', 'cwd', 'state', 'verdict', 'exitCode', 'signal', 'startedAt', 'endedAt', 'elapsedMs', 'limitMs',
  'advice', 'notes', 'stdout', 'stderr', 'stdoutTruncated', 'stderrTruncated', 'teardown',
];

describe('warden run', () => {
  it('--format shell-results carries no control character XML cannot hold: they are written as \\xNN', async () => {
    const r = await warden(['run', '--format', 'shell-results', '--', 'printf', 'a\\000b\\033[1mc\\007d\\te\\n']);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('<stdout>a\\x00b\\x1b[1mc\\x07d\te\n</stdout>');
    // eslint-disable-next-line no-control-regex -- looking for control characters is the point
    expect(r.stdout).not.toMatch(/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/);
  });
  it('--json prints exactly one result object with the contract fields', async () => {
    const r = await warden(['run', '--json', '--', 'bash', '-c', 'echo out; echo err >&2; exit 3']);
    expect(r.exitCode).toBe(3);
    const result = JSON.parse(r.stdout) as RunResult;
    // peak is there when the run had a cgroup (its counter) or a sample: optional, and never zero when there.
    const { peak, ...always } = result;
    expect(Object.keys(always).sort()).toEqual([...CONTRACT_FIELDS].sort());
    if (peak) expect(peak.rssBytes).toBeGreaterThan(0);
    expect(result).toMatchObject({ kind: 'command', state: 'ended', verdict: 'failed', exitCode: 3, signal: null, stdout: 'out\n', stderr: 'err\n', limitMs: null });
    expect(new Date(result.startedAt).toISOString()).toBe(result.startedAt);
    expect(r.stderr).toBe('');
  });

  it('exits 124 when the limit stopped it, and keeps the output printed before', async () => {
    const r = await warden(['run', '--limit', '500ms', '--json', '--', 'bash', '-c', 'echo before; sleep 30']);
    expect(r.exitCode).toBe(124);
    const result = JSON.parse(r.stdout) as RunResult;
    expect(result.verdict).toBe('timed-out');
    expect(result.stdout).toBe('before\n');
    expect(result.stop).toMatchObject({ reason: 'deadline', endedBy: 'interrupt' });
  });

  it('exits 128+n when a signal ended it, and says a SIGKILL before the limit is no timeout', async () => {
    const r = await warden(['run', '--limit', '10s', '--format', 'shell-results', '--', 'bash', '-c', 'echo partial; sleep 0.3; kill -9 $$']);
    expect(r.exitCode).toBe(137);
    expect(r.stdout).toContain('<verdict>killed</verdict>');
    expect(r.stdout).toContain('<signal>SIGKILL</signal>');
    expect(r.stdout).toContain('<stdout>partial\n</stdout>');
    expect(r.stdout).toMatch(/<note>Killed by SIGKILL after [\d.]+ s, before the 10 s limit/);
    expect(r.stdout).not.toContain('timed-out');
  });

  it('escapes only & and < in shell-results (all a reader needs to find the tags)', async () => {
    const r = await warden(['run', '--format=shell-results', '--', 'bash', '-c', `echo '<tag> & "q" '"'"'s'; echo '</stdout>' >&2`]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('<stdout>&lt;tag> &amp; "q" \'s\n</stdout>');
    expect(r.stdout).toContain('<stderr>&lt;/stdout>\n</stderr>');
    expect(r.stdout.match(/<\/stdout>/g)).toHaveLength(1);
  });

  it('exits 127 for a missing command and 126 for a missing cwd or a file that cannot run', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warden-cli-'));
    writeFileSync(join(dir, 'script.sh'), 'echo hi\n', { mode: 0o644 });
    const missing = await warden(['run', '--', 'warden-no-such-command']);
    expect(missing.exitCode).toBe(127);
    expect(missing.stderr).toContain('warden-no-such-command not found on PATH');
    const cwd = await warden(['run', '--cwd', join(dir, 'nope'), '--', 'true']);
    expect(cwd.exitCode).toBe(126);
    expect(cwd.stderr).toContain('does not exist');
    const notExecutable = await warden(['run', '--', './script.sh'], { cwd: dir });
    expect(notExecutable.exitCode).toBe(126);
    expect(notExecutable.stderr).toContain('not executable');
  });

  it('streams the command output live by default and summarises on stderr', async () => {
    const r = await warden(['run', '--', 'bash', '-c', 'echo line1; echo problem >&2']);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('line1\n');
    expect(r.stderr).toContain('problem\n');
    expect(r.stderr).toMatch(/warden: completed, exit 0/);
  });

  it('runs through a shell only when asked', async () => {
    const plain = await warden(['run', '--json', '--', 'echo', '$HOME', '|', 'cat']);
    expect((JSON.parse(plain.stdout) as RunResult).stdout).toBe('$HOME | cat\n');
    const shell = await warden(['run', '--json', '--shell', '--', 'echo $((6*7)) | cat']);
    const result = JSON.parse(shell.stdout) as RunResult;
    expect(result.stdout).toBe('42\n');
    expect(result.argv).toEqual(['/bin/sh', '-c', 'echo $((6*7)) | cat']);
  });

  it.each([
    [['run', '--limit', 'soon', '--', 'true'], /--limit takes a duration/],
    [['run', '--limit'], /--limit needs a value/],
    [['run', '--bogus', '--', 'true'], /Unknown option --bogus/],
    [['run', '--json'], /No command given/],
    [['run', '--env', 'NOEQUALS', '--', 'true'], /--env NOEQUALS: NOEQUALS is not set in this environment/],
    [['run', '--env', '=x', '--', 'true'], /--env takes NAME=value or NAME/],
    [['frobnicate'], /Unknown command "frobnicate"/],
  ])('bad arguments %j get one line and status 125', async (args, message) => {
    const r = await warden(args);
    expect(r.exitCode).toBe(125);
    expect(r.stderr).toMatch(message);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('passes --env and --cwd to the command, and the scope marker', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warden-cli-'));
    const r = await warden(['run', '--json', '--env', 'GREETING=hello there', '--cwd', dir, '--', 'bash', '-c', 'echo "$GREETING"; pwd; echo "$WARDEN_SCOPE"']);
    const result = JSON.parse(r.stdout) as RunResult;
    const [greeting, cwd, scope] = result.stdout.trim().split('\n');
    expect(greeting).toBe('hello there');
    expect(cwd).toBe(dir);
    expect(scope).toMatch(new RegExp(`^[0-9a-f]+\\.${result.id}$`));
  });
});

const PYTHON_CONTRACT_FIELDS = CONTRACT_FIELDS.filter((f) => f !== 'argv').concat(['code', 'session']);

describe('warden run --python', () => {
  it('--json prints the contract with kind python and the session; exit 0', async () => {
    const r = await warden(['run', '--python', '--session', 'cli', '--json', '-c', 'x = 6 * 7\nprint(x)']);
    expect(r.exitCode).toBe(0);
    const result = JSON.parse(r.stdout) as RunResult;
    expect(Object.keys(result).sort()).toEqual([...PYTHON_CONTRACT_FIELDS].sort());
    expect(result).toMatchObject({ kind: 'python', session: 'cli', code: 'x = 6 * 7\nprint(x)', verdict: 'completed', exitCode: 0, stdout: '42\n' });
    expect(r.stderr).toBe('');
  });

  it('exits 124 when the limit stopped the script, with the line and the output so far', async () => {
    const r = await warden(['run', '--python', '--limit', '500ms', '--json', '-c', 'import time\nprint("so far")\ntime.sleep(30)']);
    expect(r.exitCode).toBe(124);
    const result = JSON.parse(r.stdout) as RunResult;
    expect(result).toMatchObject({ verdict: 'timed-out', signal: 'SIGINT', stdout: 'so far\n', stop: { reason: 'deadline', endedBy: 'interrupt' } });
    expect(result.stderr).toContain('File "<script>", line 3');
    expect(result.notes[0]).toMatch(/^Stopped at the 0\.5 s limit/);
  });

  it('kills after --grace a script that will not stop, and exits 124', async () => {
    const code = 'import time\nwhile True:\n    try:\n        time.sleep(30)\n    except KeyboardInterrupt:\n        pass';
    const r = await warden(['run', '--python', '--limit', '300ms', '--grace', '300ms', '--json', '-c', code]);
    expect(r.exitCode).toBe(124);
    expect(JSON.parse(r.stdout)).toMatchObject({ verdict: 'timed-out', signal: 'SIGKILL', stop: { endedBy: 'kill' } });
  });

  it('reads FILE, and the script from stdin for -; exits 1 for an exception and 128+n for a signal', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warden-cli-py-'));
    writeFileSync(join(dir, 'fail.py'), 'print("from file")\nraise ValueError("bad")\n');
    const fromFile = await warden(['run', '--python', 'fail.py'], { cwd: dir });
    expect(fromFile.exitCode).toBe(1);
    expect(fromFile.stdout).toBe('from file\n');
    expect(fromFile.stderr).toContain('ValueError: bad');
    expect(fromFile.stderr).toMatch(/warden: failed, exit 1/);
    const fromStdin = await warden(['run', '--python', '--json', '-'], { input: 'print("from stdin")\n' });
    expect(fromStdin.exitCode).toBe(0);
    expect((JSON.parse(fromStdin.stdout) as RunResult).stdout).toBe('from stdin\n');
    const signaled = await warden(['run', '--python', '-c', 'import os, signal\nos.kill(os.getpid(), signal.SIGTERM)']);
    expect(signaled.exitCode).toBe(143);
    expect(signaled.stderr).toContain('for example with os.kill()');
  });

  it.each([
    [['run', '--python', '--shell', '-c', 'pass'], /--shell is for commands/],
    [['run', '--python', '-c', 'pass', 'file.py'], /not both/],
    [['run', '--python', 'no-such-script.py'], /Cannot read the script no-such-script\.py: no such file/],
  ])('bad --python arguments %j get one line and status 125', async (args, message) => {
    const r = await warden(args);
    expect(r.exitCode).toBe(125);
    expect(r.stderr).toMatch(message);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });
});
