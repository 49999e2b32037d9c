// The pool of prepared run cgroups (cgroup-pool.ts): what goes through a
// helper is run exactly as a direct spawn runs it (environment, directory,
// argv, exit status, output, the exact cause of a command that cannot
// start), born in its own cgroup named for the run, torn down through it;
// and nothing of the pool outlives its Warden: shutdown ends the helpers and
// removes their cgroups, and a crashed Warden's pool is swept by the next.
// Real cgroups (v1, as root here), real processes; poolScript's table runs
// everywhere.

import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { until } from '../../../test/kit/until';
import { detectMemoryBackend, type MemoryBackend } from './cgroup';
import { CgroupPool, hostPoolSize, poolScript, POOL_HELPER_NAME, quoteWord, scriptDirectory } from './cgroup-pool';
import { Harness, isDead, waitDead } from './proc-testkit';
import type { SpawnSpec } from './spawn';

const detection = detectMemoryBackend();
const backend: MemoryBackend | undefined = detection.ok && detection.backend.version === 1 && process.env.WARDEN_CGROUPS !== '0' ? detection.backend : undefined;
if (!backend) console.log(`cgroup pool tests skipped: ${detection.ok ? 'not cgroup v1, or WARDEN_CGROUPS=0' : detection.reason}`);

const spec = (over: Partial<SpawnSpec> = {}): SpawnSpec => ({ argv: ['true'], shell: false, cwd: '/tmp', env: { PATH: '/usr/bin:/bin' }, ...over });

describe('poolScript', () => {
  it.each<[string, Partial<SpawnSpec>]>([
    ['stdin text', { stdin: 'x' }],
    ['an empty stdin text', { stdin: '' }],
    ['a stdin pipe', { stdinPipe: true }],
    ['an extra pipe', { extraPipe: true }],
    ['no command', { argv: [] }],
    ['an empty command', { argv: [''] }],
    ['a command starting with -', { argv: ['-x'] }],
    ['a bare name without PATH', { env: { HOME: '/root' } }],
    ['a name a shell cannot export', { env: { PATH: '/bin', 'A-B': '1' } }],
    ['a name starting with a digit', { env: { PATH: '/bin', '1A': '1' } }],
    ['IFS', { env: { PATH: '/bin', IFS: ' ' } }],
    ['OPTIND', { env: { PATH: '/bin', OPTIND: '1' } }],
    ['OPTARG', { env: { PATH: '/bin', OPTARG: '1' } }],
    ['PPID', { env: { PATH: '/bin', PPID: '1' } }],
    ['LINENO', { env: { PATH: '/bin', LINENO: '1' } }],
    ['PS1', { env: { PATH: '/bin', PS1: '$ ' } }],
    ['PS2', { env: { PATH: '/bin', PS2: '> ' } }],
    ['PS4', { env: { PATH: '/bin', PS4: '+ ' } }],
    ['ENV', { env: { PATH: '/bin', ENV: '/x' } }],
  ])('leaves %s to a direct spawn', (_, over) => {
    expect(poolScript(spec(over))).toBeUndefined();
  });

  it('quotes every word and runs the argv with exec', () => {
    const script = poolScript(spec({ argv: ['/bin/echo', "it's", '$HOME', 'a\nb'], cwd: "/tmp/a b'c", env: { PATH: '/bin', _X: "v'w", EMPTY: '', GONE: undefined } }));
    expect(script!.split('\n')).toEqual([
      'exec 3<&-',
      `cd -P -- '/tmp/a b'\\''c' || exit 126`,
      'unset PWD OLDPWD',
      "export PATH='/bin'",
      `export _X='v'\\''w'`,
      "export EMPTY=''",
      `exec '/bin/echo' 'it'\\''s' '$HOME' 'a`,
      `b'`,
    ]);
  });

  it('takes a path as the command without PATH, and runs --shell through /bin/sh -c', () => {
    expect(poolScript(spec({ argv: ['./x'], env: {} }))).toContain("exec './x'");
    expect(poolScript(spec({ argv: ['echo', 'a', '&&', 'true'], shell: true }))).toContain(`exec '/bin/sh' '-c' 'echo a && true'`);
  });

  it.each([
    ['', "''"],
    ['plain', "'plain'"],
    ["'", `''\\'''`],
    ["a'b'c", `'a'\\''b'\\''c'`],
  ])('quoteWord(%j) is %s', (word, quoted) => {
    expect(quoteWord(word)).toBe(quoted);
  });
});

describe('scriptDirectory', () => {
  it('is $XDG_RUNTIME_DIR when it is an absolute, writable directory, else /dev/shm or the temp dir', () => {
    const dir = mkdtempSync(join(tmpdir(), 'warden-xdg-'));
    try {
      const fallback = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
      expect(scriptDirectory({ XDG_RUNTIME_DIR: dir })).toBe(dir);
      expect(scriptDirectory({ XDG_RUNTIME_DIR: 'relative/dir' })).toBe(fallback);
      expect(scriptDirectory({ XDG_RUNTIME_DIR: join(dir, 'missing') })).toBe(fallback);
      writeFileSync(join(dir, 'file'), '');
      expect(scriptDirectory({ XDG_RUNTIME_DIR: join(dir, 'file') })).toBe(fallback);
      expect(scriptDirectory({})).toBe(fallback);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

const scriptsLeft = (dir: string) => readdirSync(dir).filter((name) => name.startsWith(`warden-pool-${process.pid}-`));

let harness: Harness | undefined;
let direct: Harness | undefined;
const pools: CgroupPool[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await harness?.cleanup();
  await direct?.cleanup();
  harness = direct = undefined;
  for (const pool of pools.splice(0)) await pool.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function poolReady(h: Harness, n = 1): Promise<void> {
  await until(`${n} prepared cgroup(s) ready`, () => (h.supervisor.cgroupPoolStats()?.ready ?? 0) >= n);
}

describe.skipIf(!backend)('a run through the pool', () => {
  it('runs as a direct spawn does, born in a cgroup named for the run', async () => {
    harness = new Harness({ cgroupPool: 1 });
    direct = new Harness();
    const cwd = mkdtempSync(join(tmpdir(), 'warden-pool-'));
    dirs.push(cwd);
    const request = {
      argv: ['bash', '-c', 'printf "q=[%s]\\n" "$QUOTES"; env | grep -v "^WARDEN_SCOPE=" | sort; echo "cwd=$(pwd -P)"; echo "argv=$0|$1"; echo err >&2; exit 3', "a'b", '$HOME "x"\nline'],
      cwd,
      env: { QUOTES: `it's "q" $HOME \\ \n next`, EMPTY: '' },
    };
    await poolReady(harness);
    const pooled = await harness.run({ ...request, argv: [...request.argv.slice(0, 2), `grep :memory: /proc/$$/cgroup; ${request.argv[2]}`, ...request.argv.slice(3)] });
    expect(harness.supervisor.cgroupPoolStats()!.taken).toBe(1);
    const plain = await direct.run({ ...request, argv: [...request.argv.slice(0, 2), `grep -c :memory: /proc/$$/cgroup >/dev/null; ${request.argv[2]}`, ...request.argv.slice(3)] });
    const [cgroupLine, ...rest] = pooled.stdout.split('\n');
    expect(cgroupLine).toMatch(new RegExp(`-${pooled.id}$`));
    expect(rest.join('\n')).toBe(plain.stdout);
    expect(plain.stdout).toContain(`q=[it's "q" $HOME \\ \n next]\n`);
    expect(plain.stdout).toContain(`cwd=${cwd}\n`);
    expect(plain.stdout).toContain(`argv=a'b|$HOME "x"\nline\n`);
    expect(pooled.stderr).toBe('err\n');
    expect([pooled.verdict, pooled.exitCode]).toEqual([plain.verdict, plain.exitCode]);
    expect(pooled.exitCode).toBe(3);
    // The script held the run's environment for an instant only.
    expect(scriptsLeft(scriptDirectory())).toEqual([]);
  });

  it('never runs nor writes through a file someone put where its script goes: that helper is dropped', async () => {
    harness = new Harness({ cgroupPool: 1 });
    await poolReady(harness);
    const pool = (harness.supervisor as unknown as { pool: CgroupPool }).pool;
    const [entry] = pool.idle();
    writeFileSync(entry!.script, 'echo planted; exit 7\n', { mode: 0o600 });
    try {
      const result = await harness.run({ argv: ['echo', 'mine'] });
      expect([result.stdout, result.exitCode]).toEqual(['mine\n', 0]);
      expect(harness.supervisor.cgroupPoolStats()).toMatchObject({ taken: 0, missed: 1 });
      expect(readFileSync(entry!.script, 'utf8')).toBe('echo planted; exit 7\n');
      expect(await waitDead([entry!.pid])).toEqual([]);
      await until('its cgroup removed', () => !existsSync(entry!.path));
    } finally {
      rmSync(entry!.script, { force: true });
    }
  });

  it('says why a command cannot start, as a direct spawn does', async () => {
    harness = new Harness({ cgroupPool: 1 });
    direct = new Harness();
    await poolReady(harness);
    for (const argv of [['no-such-command-warden-pool'], ['/etc/passwd'], ['/tmp']]) {
      const pooled = await harness.run({ argv });
      const plain = await direct.run({ argv });
      expect([pooled.verdict, pooled.exitCode, pooled.notes]).toEqual([plain.verdict, plain.exitCode, plain.notes]);
    }
    // Refused before a helper is taken: the prepared one is still there.
    expect(harness.supervisor.cgroupPoolStats()).toMatchObject({ taken: 0, ready: 1 });
  });

  it('tears down through the cgroup what the run left behind, and its cgroup goes', async () => {
    harness = new Harness({ cgroupPool: 1 });
    await poolReady(harness);
    const result = await harness.run({ argv: ['bash', '-c', 'setsid env -u WARDEN_SCOPE sleep 300 </dev/null >/dev/null 2>&1 & echo $!; grep :memory: /proc/$$/cgroup'] });
    const [pid, cgroupLine] = result.stdout.trim().split('\n');
    expect(harness.supervisor.cgroupPoolStats()!.taken).toBe(1);
    expect(result.teardown?.killed.map((p) => p.pid)).toContain(Number(pid));
    expect(await waitDead([Number(pid)])).toEqual([]);
    const path = join(backend!.mount!, cgroupLine!.split(':')[2]!);
    expect(path.endsWith(`-${result.id}`)).toBe(true);
    expect(existsSync(path)).toBe(false);
  });

  it('is made again once runs pause, and shutdown ends every helper and removes its cgroup', async () => {
    harness = new Harness({ cgroupPool: 2 });
    await poolReady(harness, 2);
    await harness.run({ argv: ['true'] });
    await poolReady(harness, 2);
    const pool = (harness.supervisor as unknown as { pool: CgroupPool }).pool;
    const idle = pool.idle();
    expect(idle).toHaveLength(2);
    for (const entry of idle) {
      expect(readFileSync(`/proc/${entry.pid}/cmdline`, 'utf8')).toContain(POOL_HELPER_NAME);
      expect(readFileSync(join(entry.path, 'cgroup.procs'), 'utf8')).toContain(`${entry.pid}\n`);
    }
    await harness.supervisor.shutdown();
    expect(await waitDead(idle.map((e) => e.pid))).toEqual([]);
    for (const entry of idle) expect(existsSync(entry.path)).toBe(false);
    expect(harness.supervisor.cgroupPoolStats()).toBeNull();
  });
});

describe.skipIf(!backend)("a crashed Warden's pool", () => {
  it('ends on its own and is swept by the next Warden', async () => {
    // A Warden in a process of its own, killed once its pool is ready.
    const script = `
      import { Supervisor } from ${JSON.stringify(join(__dirname, 'supervisor.ts'))};
      const s = new Supervisor({ cgroupPool: 2 });
      const look = setInterval(() => {
        const pool = s['pool'];
        const idle = pool ? pool.idle() : [];
        if (idle.length === 2 && idle.every((e) => e.ready)) { clearInterval(look); console.log(JSON.stringify(idle)); }
      }, 20);`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const idle = JSON.parse(await until('the child Warden\'s pool ready', () => (out.includes('\n') ? out : undefined))) as { path: string; pid: number }[];
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    // Its end of fd 3 closed with it: the idle helpers exit, and the cgroups are left to the sweep.
    expect(await waitDead(idle.map((e) => e.pid))).toEqual([]);
    for (const entry of idle) expect(existsSync(entry.path)).toBe(true);
    const sweep = await backend!.removeStaleCgroups({ kill: true });
    for (const entry of idle) {
      expect(sweep.removed).toContain(entry.path);
      expect(existsSync(entry.path)).toBe(false);
    }
    expect(idle.every((e) => isDead(e.pid))).toBe(true);
  });
});

describe('the host pool size from WARDEN_CGROUP_POOL', () => {
  it.each([
    [undefined, 0],
    ['', 0],
    ['0', 0],
    ['1', 1],
    ['2', 2],
    ['8', 8],
    ['9', 0],
    ['10', 0],
    ['-1', 0],
    ['2x', 0],
    [' 2', 0],
    ['1.5', 0],
  ])('%j gives %i', (text, size) => {
    expect(hostPoolSize(text === undefined ? {} : { WARDEN_CGROUP_POOL: text })).toBe(size);
  });
});
