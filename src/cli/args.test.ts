import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDuration } from '../shared/duration';
import { MAX_ENV_FILE_BYTES, parseAnyRunArgs, parseRunArgs, type PythonRunCommand } from './args';

describe('durations', () => {
  it.each([
    ['500ms', 500], ['30s', 30_000], ['1.5s', 1500], ['2m', 120_000], ['1h', 3_600_000], ['10', 10_000], ['.5s', 500],
    // timeout(1) takes d; anything above 0 is at least 1 ms; 0 is 0.
    ['1d', 86_400_000], ['1.5d', 129_600_000], ['0.0001', 1], ['0.4ms', 1], ['0', 0], ['0s', 0],
  ])('%s is %d ms', (text, ms) => expect(parseDuration(text)).toBe(ms));
  it.each(['', 's', '5x', '-1s', '1s2', 'abc', '1e3s'])('%j is not a duration', (text) => expect(parseDuration(text)).toBeUndefined());
});

describe('warden run arguments', () => {
  it('reads options up to -- and keeps the command words as given', () => {
    const { request, format } = parseRunArgs(['--limit', '30s', '--grace=2s', '--keep-descendants', '--json', '--', 'python3', '--limit', '-c', 'x']);
    expect(format).toBe('json');
    expect(request).toEqual({ argv: ['python3', '--limit', '-c', 'x'], limitMs: 30_000, graceMs: 2000, keepDescendants: true });
  });
  it('reads --core for a command, and refuses it with --python', () => {
    expect(parseRunArgs(['--core', '--', 'true']).request).toEqual({ argv: ['true'], core: true });
    expect(parseRunArgs(['true']).request).not.toHaveProperty('core');
    expect(() => parseAnyRunArgs(['--python', '--core', '-c', 'x'])).toThrow('--core is for commands, not with --python.');
  });
  it('takes the first word that is not an option as the command without --', () => {
    expect(parseRunArgs(['--limit', '1s', 'sleep', '5']).request.argv).toEqual(['sleep', '5']);
  });
  it('reads --limit 0 as no limit, as timeout(1) does, and a sub-millisecond limit as 1 ms', () => {
    expect(parseRunArgs(['--limit', '0', '--', 'true']).request.limitMs).toBeNull();
    expect(parseRunArgs(['--limit=0s', 'true']).request.limitMs).toBeNull();
    expect(parseRunArgs(['--limit', '0.0001', 'true']).request.limitMs).toBe(1);
    expect(parseAnyRunArgs(['--python', '--limit', '0', '-c', 'x']).request.limitMs).toBeNull();
  });
  it('takes --env NAME from this environment and --env-file lines, so secrets need not be in argv', () => {
    const dir = mkdtempSync(join(tmpdir(), 'wenv-'));
    const file = join(dir, 'secrets.env');
    writeFileSync(file, '# for the build\nexport API_KEY="sk-test"\nEMPTY=\n\nQUOTED=\'a b\'\n');
    process.env.WARDEN_TEST_FROM_HERE = 'here';
    try {
      expect(parseRunArgs(['--env', 'WARDEN_TEST_FROM_HERE', '--env-file', file, '--env', 'X=1', 'true']).request.env).toEqual({ WARDEN_TEST_FROM_HERE: 'here', API_KEY: 'sk-test', EMPTY: '', QUOTED: 'a b', X: '1' });
    } finally {
      delete process.env.WARDEN_TEST_FROM_HERE;
    }
    expect(() => parseRunArgs(['--env', 'WARDEN_TEST_NOT_SET_ANYWHERE', 'true'])).toThrow('--env WARDEN_TEST_NOT_SET_ANYWHERE: WARDEN_TEST_NOT_SET_ANYWHERE is not set in this environment.');
    writeFileSync(file, 'A=1\nnot a pair\n');
    expect(() => parseRunArgs(['--env-file', file, 'true'])).toThrow(`--env-file ${file}: line 2 is not NAME=VALUE.`);
    expect(() => parseRunArgs(['--env-file', join(dir, 'none'), 'true'])).toThrow(`--env-file ${join(dir, 'none')}: no such file.`);
  });
  it('reads at most 1 MiB of a regular file for --env-file, and refuses a device, a FIFO, a directory or more, in one line without blocking', () => {
    const dir = mkdtempSync(join(tmpdir(), 'wenv-'));
    const fifo = join(dir, 'fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    mkdirSync(join(dir, 'sub'));
    const line = 'A=1\n';
    const exact = join(dir, 'exact.env');
    writeFileSync(exact, `${'#'.repeat(MAX_ENV_FILE_BYTES - line.length - 1)}\n${line}`);
    expect(parseRunArgs(['--env-file', exact, 'true']).request.env).toEqual({ A: '1' });
    const over = join(dir, 'over.env');
    writeFileSync(over, `#${'#'.repeat(MAX_ENV_FILE_BYTES - line.length - 1)}\n${line}`);
    expect(() => parseRunArgs(['--env-file', over, 'true'])).toThrow(`--env-file ${over}: it is larger than 1048576 bytes; an env file holds NAME=VALUE lines.`);
    expect(() => parseRunArgs(['--env-file', '/dev/zero', 'true'])).toThrow('--env-file /dev/zero: it is a device; give a regular file.');
    expect(() => parseRunArgs(['--env-file', fifo, 'true'])).toThrow(`--env-file ${fifo}: it is a FIFO (a pipe); give a regular file.`);
    expect(() => parseRunArgs(['--env-file', join(dir, 'sub'), 'true'])).toThrow(`--env-file ${join(dir, 'sub')}: it is a directory; give a regular file.`);
  });
  it('takes --output-cap up to the maximum a run may keep in memory, and refuses more in one line', () => {
    expect(parseRunArgs(['--output-cap', '10000000', 'true']).request.outputCapChars).toBe(10_000_000);
    expect(() => parseRunArgs(['--output-cap', '10000001', 'true'])).toThrow('--output-cap takes a number of characters from 2 to 10000000 (what one run may keep in memory per stream), not "10000001".');
  });
  it.each([
    [['--ok-exit', '1'], [1]],
    [['--ok-exit', '1,2'], [1, 2]],
    [['--ok-exit', '2', '--ok-exit=1', '--ok-exit', '2'], [2, 1]],
    [['--ok-exit', ' 3 , 255'], [3, 255]],
  ])('--ok-exit %j gives okExitCodes %j', (flags, codes) => {
    expect(parseRunArgs([...flags, '--', 'grep', 'x', 'f']).request.okExitCodes).toEqual(codes);
  });
  it.each([
    ['0', '--ok-exit lists exit codes besides 0, which always means success.'],
    ['256', '--ok-exit takes exit codes from 1 to 255 (repeat it, or give 1,2), not "256".'],
    ['1,,2', '--ok-exit takes exit codes from 1 to 255 (repeat it, or give 1,2), not "1,,2".'],
    ['-1', '--ok-exit takes exit codes from 1 to 255 (repeat it, or give 1,2), not "-1".'],
    ['1.0', '--ok-exit takes exit codes from 1 to 255 (repeat it, or give 1,2), not "1.0".'],
    ['0001', '--ok-exit takes exit codes from 1 to 255 (repeat it, or give 1,2), not "0001".'],
  ])('--ok-exit %j is refused in one line', (value, message) => {
    expect(() => parseRunArgs([`--ok-exit=${value}`, 'true'])).toThrow(message);
  });
  it('refuses --ok-exit with --python: a script has no exit code of its own to excuse', () => {
    expect(() => parseAnyRunArgs(['--python', '--ok-exit', '1', '-c', 'x'])).toThrow('--ok-exit is for commands, not with --python.');
  });
  it('joins words into one shell string with --shell', () => {
    expect(parseRunArgs(['--shell', '--', 'echo', 'a', '|', 'cat']).request).toMatchObject({ argv: ['echo a | cat'], shell: true });
  });
});

describe('warden run --python arguments', () => {
  it('reads -c CODE with the session, limit and grace', () => {
    expect(parseAnyRunArgs(['--python', '--session', 'work', '--limit', '1s', '--grace=500ms', '--json', '-c', 'print(1)'])).toEqual({
      request: { session: 'work', limitMs: 1000, graceMs: 500 },
      source: { code: 'print(1)' },
      format: 'json',
    });
  });
  it('reads FILE, and - for stdin, with --python anywhere before --', () => {
    const source = (args: string[]) => (parseAnyRunArgs(args) as PythonRunCommand).source;
    expect(source(['script.py', '--python'])).toEqual({ file: 'script.py' });
    expect(source(['--python', '-'])).toEqual({ file: '-' });
    expect(source(['--python', '--', '-weird.py'])).toEqual({ file: '-weird.py' });
    expect(parseAnyRunArgs(['--', 'python3', '--python'])).toMatchObject({ request: { argv: ['python3', '--python'] } });
  });
  it.each([
    [['--python', '--shell', '-c', 'x'], /--shell is for commands, not with --python/],
    [['--python', '--stdin', 'a', '-c', 'x'], /--stdin is for commands/],
    [['--python', '-c', 'x', 'file.py'], /-c CODE or FILE, not both/],
    [['--python', 'a.py', 'b.py'], /one FILE, not 2/],
    [['--python'], /No script given/],
    [['--python', '-c'], /-c needs a value/],
    [['--python', '--session', 'no/slash', '-c', 'x'], /--session takes/],
    [['--python', '--on-busy', 'wait', '-c', 'x'], /--on-busy takes queue or refuse/],
    [['--session', 'x', '--', 'true'], /--session is for Python scripts: add --python/],
    [['-c', 'x'], /-c is for Python scripts: add --python/],
  ])('%j is a usage error', (args, message) => {
    expect(() => parseAnyRunArgs(args)).toThrow(message);
  });
});
