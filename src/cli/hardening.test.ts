// Issue 18, items 7, 8 and 9 as a person meets them, through the real bin:
// an env file Node must not read itself, terminal escapes in the history
// written visibly by `list` and `show`, and `--yield 0s` returning at once.

import { execa } from 'execa';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { RunResult } from '../shared/result';
import { YIELDED_STATUS } from './host-verbs';
import { stopBackgroundHosts, WARDEN_BIN } from './testkit';

const root = mkdtempSync(join(tmpdir(), 'whard-'));
const dirs: string[] = [];

function stateDir(): string {
  const dir = mkdtempSync(join(root, 's-'));
  dirs.push(dir);
  return dir;
}

/** PATH with this Node first: the bin's #! line finds `node` through env. */
const PATH = `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? '/usr/bin:/bin'}`;

afterEach(async () => {
  await stopBackgroundHosts(dirs.splice(0));
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('warden run --python FILE or -: read with a bound', () => {
  const python = (args: string[], input?: Buffer | string) =>
    execa(process.execPath, [WARDEN_BIN, 'run', '--embedded', '--python', ...args], { reject: false, env: { PATH, WARDEN_STATE_DIR: stateDir() }, extendEnv: false, timeout: 60_000, ...(input !== undefined ? { input } : { stdin: 'ignore' as const }) });

  it('/dev/zero and 9 MB on stdin are one line and 125, never read without end; a pipe (<(...)) still runs', async () => {
    const zero = await python(['/dev/zero']);
    expect(zero.exitCode).toBe(125);
    expect(zero.stderr.trim().split('\n').pop()).toBe('warden: The script /dev/zero is larger than 8 MiB; nothing was run.');
    const stdin = await python(['-'], Buffer.alloc(9_000_000, 0x20));
    expect(stdin.exitCode).toBe(125);
    expect(stdin.stderr.trim().split('\n').pop()).toBe('warden: The script on stdin is larger than 8 MiB; nothing was run.');
    const fifo = await execa('bash', ['-c', `"${process.execPath}" "${WARDEN_BIN}" run --embedded --python <(echo 'print("from a pipe")')`], { reject: false, env: { PATH, WARDEN_STATE_DIR: stateDir() }, extendEnv: false, timeout: 60_000 });
    expect(fifo.exitCode, fifo.stderr).toBe(0);
    expect(fifo.stdout).toBe('from a pipe');
  }, 120_000);
});

describe('warden run --env-file', () => {
  // A NODE_OPTIONS line that makes any Node reading the file run a probe, which leaves a mark.
  function envFile(): { file: string; mark: string } {
    const dir = mkdtempSync(join(root, 'env-'));
    const probe = join(dir, 'probe.cjs');
    const mark = join(dir, 'probe-ran');
    writeFileSync(probe, `require('node:fs').writeFileSync(${JSON.stringify(mark)}, 'ran in pid ' + process.pid);\n`);
    const file = join(dir, 'vars.env');
    writeFileSync(file, `NODE_OPTIONS=--require ${probe}\nGREETING=hello from the file\n`);
    return { file, mark };
  }

  it('started as `warden` (its #! line), Node does not read the file: no probe runs in Warden, and the command gets the variables', async () => {
    const { file, mark } = envFile();
    const r = await execa(WARDEN_BIN, ['run', '--embedded', '--json', '--env-file', file, '--', 'sh', '-c', 'echo "$GREETING"'], {
      reject: false,
      env: { PATH, WARDEN_STATE_DIR: stateDir() },
      extendEnv: false,
      stdin: 'ignore',
      timeout: 60_000,
    });
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    expect((JSON.parse(r.stdout) as RunResult).stdout).toBe('hello from the file\n');
    // sh ran with NODE_OPTIONS in its environment, as the file asks; no Node read it, so no probe ran.
    expect(existsSync(mark)).toBe(false);
  });

  it('started as `node bin/warden.mjs` (Node has read the file before Warden runs): one line, exit 125, and nothing is run', async () => {
    const { file } = envFile();
    const marker = join(root, `ran-${process.pid}`);
    const r = await execa(process.execPath, [WARDEN_BIN, 'run', '--embedded', '--env-file', file, '--', 'touch', marker], {
      reject: false,
      env: { PATH, WARDEN_STATE_DIR: stateDir() },
      extendEnv: false,
      stdin: 'ignore',
      timeout: 60_000,
    });
    expect(r.exitCode).toBe(125);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^warden: Node itself read the --env-file/);
    expect(existsSync(marker)).toBe(false);
  });
});

describe('list and show write terminal escapes visibly', () => {
  it('an ESC, a BEL, a CR and a C1 CSI in a command and its output reach the terminal as \\xNN', async () => {
    const dir = stateDir();
    const env = { WARDEN_STATE_DIR: dir, WARDEN_EMBEDDED: '1' };
    // Clear the screen, set the title, a clipboard write (OSC 52), and a CR that would overwrite the line.
    const payload = '\x1b[2J\x1b]0;pwned\x07\x1b]52;c;cm0gLXJmIH4=\x07safe\rEVIL\u009b31m';
    const ran = await execa(process.execPath, [WARDEN_BIN, 'run', '--json', '--', 'printf', '%s\\n', payload], { reject: false, env, stdin: 'ignore', timeout: 60_000 });
    expect(ran.exitCode).toBe(0);
    const id = (JSON.parse(ran.stdout) as RunResult).id;

    const list = await execa(process.execPath, [WARDEN_BIN, 'list'], { reject: false, env, stdin: 'ignore', timeout: 60_000 });
    expect(list.exitCode).toBe(0);
    expect(list.stdout).toContain(id);
    expect(list.stdout).toContain('\\x1b[2J\\x1b]0;pwned\\x07');
    const show = await execa(process.execPath, [WARDEN_BIN, 'show', id], { reject: false, env, stdin: 'ignore', timeout: 60_000, stripFinalNewline: false });
    expect(show.exitCode).toBe(0);
    expect(show.stdout).toContain('\\x1b]52;c;cm0gLXJmIH4=\\x07safe\\x0dEVIL\\x9b31m\n');
    for (const text of [list.stdout, show.stdout]) {
      // eslint-disable-next-line no-control-regex -- looking for control characters is the point
      expect(text).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
    }
    // --json stays the exact text, for programs.
    const json = await execa(process.execPath, [WARDEN_BIN, 'show', id, '--json'], { reject: false, env, stdin: 'ignore', timeout: 60_000 });
    expect((JSON.parse(json.stdout) as RunResult).stdout).toBe(`${payload}\n`);
  });

  it('show --stream writes a page visibly to a terminal (a real pty, through script) and exactly to a pipe', async () => {
    const dir = stateDir();
    const env = { WARDEN_STATE_DIR: dir, WARDEN_EMBEDDED: '1' };
    const payload = '\x1b]0;pwned\x07\x1b[2Jsafe';
    const ran = await execa(process.execPath, [WARDEN_BIN, 'run', '--json', '--', 'printf', '%s', payload], { reject: false, env, stdin: 'ignore', timeout: 60_000 });
    const id = (JSON.parse(ran.stdout) as RunResult).id;
    const piped = await execa(process.execPath, [WARDEN_BIN, 'show', id, '--stream', 'stdout'], { reject: false, env, stdin: 'ignore', timeout: 60_000 });
    expect(piped.exitCode).toBe(0);
    expect(piped.stdout).toBe(payload);
    // script(1) gives the command a pseudo-terminal and copies what it writes there.
    const command = [process.execPath, WARDEN_BIN, 'show', id, '--stream', 'stdout'].map((w) => `'${w}'`).join(' ');
    const tty = await execa('script', ['-qec', command, '/dev/null'], { reject: false, env, stdin: 'ignore', timeout: 60_000 });
    expect(tty.exitCode).toBe(0);
    expect(tty.stdout).toContain('\\x1b]0;pwned\\x07\\x1b[2Jsafe');
    // eslint-disable-next-line no-control-regex -- looking for control characters is the point
    expect(tty.stdout).not.toMatch(/[\x07\x1b]/);
  });
});

describe('--yield 0s', () => {
  it('returns at once with the running run (exit 75), and the run goes on in the host', async () => {
    const dir = stateDir();
    const env = { WARDEN_STATE_DIR: dir };
    const r = await execa(process.execPath, [WARDEN_BIN, 'run', '--yield', '0s', '--json', '--', 'sh', '-c', 'sleep 1; echo done'], { reject: false, env, stdin: 'ignore', timeout: 60_000 });
    expect(r.stderr).not.toMatch(/takes a duration/);
    expect(r.exitCode).toBe(YIELDED_STATUS);
    const snapshot = JSON.parse(r.stdout) as RunResult;
    expect(snapshot.state).not.toBe('ended');
    const done = await execa(process.execPath, [WARDEN_BIN, 'wait', snapshot.id, '--json'], { reject: false, env, stdin: 'ignore', timeout: 60_000 });
    expect(done.exitCode).toBe(0);
    expect(JSON.parse(done.stdout)).toMatchObject({ id: snapshot.id, verdict: 'completed', stdout: 'done\n' });
  });
});
