// Table tests of what `warden remote add` takes from the user (remotes.ts):
// a remote's name, the ssh URL (ports, users, IPv6 brackets, names that look
// like options), a --command line split without a shell, and the ssh argv
// built from them (its options first, `--`, then the destination).

import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkName, controlPath, describeRemote, dialArgv, makeCommandRemote, makeSshRemote, parseSshUrl, RemoteError, splitCommand, sshProgram, sshUrl, SSH_PERSIST, type SshTarget } from './remotes';

const dir = mkdtempSync(join(tmpdir(), 'wremotes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The error's one line, or the value. */
function outcome<T>(f: () => T): T | string {
  try {
    return f();
  } catch (error) {
    expect(error).toBeInstanceOf(RemoteError);
    expect((error as RemoteError).kind).toBe('bad-input');
    return (error as Error).message;
  }
}

describe('parseSshUrl', () => {
  it.each<[string, SshTarget]>([
    ['ssh://box', { host: 'box' }],
    ['ssh://box/', { host: 'box' }],
    ['ssh://box.example.com', { host: 'box.example.com' }],
    ['ssh://_b-o.x', { host: '_b-o.x' }],
    ['ssh://10.0.0.1:2222', { host: '10.0.0.1', port: 2222 }],
    ['ssh://me@box', { host: 'box', user: 'me' }],
    ['ssh://me.you_2-x@box:22', { host: 'box', user: 'me.you_2-x', port: 22 }],
    ['ssh://box:1', { host: 'box', port: 1 }],
    ['ssh://box:65535', { host: 'box', port: 65535 }],
    ['ssh://box:00022', { host: 'box', port: 22 }],
    ['ssh://[::1]', { host: '::1' }],
    ['ssh://[::1]/', { host: '::1' }],
    ['ssh://[fe80::1:AbCd]:2200', { host: 'fe80::1:AbCd', port: 2200 }],
    ['ssh://root@[::ffff:10.0.0.1]:22', { host: '::ffff:10.0.0.1', user: 'root', port: 22 }],
    [`ssh://${'u'.repeat(64)}@${'h'.repeat(253)}`, { host: 'h'.repeat(253), user: 'u'.repeat(64) }],
  ])('%s', (url, target) => expect(parseSshUrl(url)).toEqual(target));

  it.each<[string, string]>([
    ['box', 'it must start with ssh://'],
    ['ssh:/box', 'it must start with ssh://'],
    ['SSH://box', 'it must start with ssh://'],
    ['ssh://box/path', 'a path, query or space is not allowed'],
    ['ssh://box?x=1', 'a path, query or space is not allowed'],
    ['ssh://box#x', 'a path, query or space is not allowed'],
    ['ssh://b ox', 'a path, query or space is not allowed'],
    ['ssh://box\t', 'a path, query or space is not allowed'],
    ['ssh://box//', 'a path, query or space is not allowed'],
    ['ssh://box:22x', 'the port "22x" is not 1 to 65535'],
    ['ssh://box:x22', 'the port "x22" is not 1 to 65535'],
    ['ssh://box:', 'the port "" is not 1 to 65535'],
    ['ssh://box:0', 'the port "0" is not 1 to 65535'],
    ['ssh://box:65536', 'the port "65536" is not 1 to 65535'],
    ['ssh://box:100000', 'the port "100000" is not 1 to 65535'],
    ['ssh://box:000022', 'the port "000022" is not 1 to 65535'],
    ['ssh://box:-22', 'the port "-22" is not 1 to 65535'],
    ['ssh://box:2e3', 'the port "2e3" is not 1 to 65535'],
    ['ssh://box:0x16', 'the port "0x16" is not 1 to 65535'],
    ['ssh://box:22:23', 'the port "22:23" is not 1 to 65535'],
    ['ssh://[::1]:22x', 'the port "22x" is not 1 to 65535'],
    ['ssh://[::1]:', 'the port "" is not 1 to 65535'],
    ['ssh://-oProxyCommand=x', 'the host "-oProxyCommand=x" is not a host name or address'],
    ['ssh://-oProxyCommand', 'the host "-oProxyCommand" is not a host name or address'],
    ['ssh://me@-oProxyCommand', 'the host "-oProxyCommand" is not a host name or address'],
    ['ssh://-l@box', 'the user "-l" is not a plain user name'],
    ['ssh://.me@box', 'the user ".me" is not a plain user name'],
    ['ssh://@box', 'the user "" is not a plain user name'],
    ['ssh://me:secret@box', 'the user "me:secret" is not a plain user name'],
    ['ssh://a@b@box', 'the user "a@b" is not a plain user name'],
    [`ssh://${'u'.repeat(65)}@box`, `the user "${'u'.repeat(65)}" is not a plain user name`],
    ['ssh://me@', 'the host "" is not a host name or address'],
    ['ssh://', 'the host "" is not a host name or address'],
    ['ssh://:22', 'the host "" is not a host name or address'],
    ['ssh://.box', 'the host ".box" is not a host name or address'],
    ['ssh://b;ox', 'the host "b;ox" is not a host name or address'],
    ['ssh://b$ox', 'the host "b$ox" is not a host name or address'],
    [`ssh://${'h'.repeat(254)}`, `the host "${'h'.repeat(254)}" is not a host name or address`],
    ['ssh://::1', 'the host "" is not a host name or address'],
    ['ssh://[::1', 'an IPv6 address needs its closing ]'],
    ['ssh://[]', 'the address in [] is not an IPv6 address'],
    ['ssh://[-oProxyCommand=x]', 'the address in [] is not an IPv6 address'],
    ['ssh://[::1%eth0]', 'the address in [] is not an IPv6 address'],
    ['ssh://[box]', 'the address in [] is not an IPv6 address'],
    ['ssh://[::1]x', 'only :port may follow the address'],
    ['ssh://[::1]]:22', 'only :port may follow the address'],
  ])('%j is refused: %s', (url, why) => {
    expect(outcome(() => parseSshUrl(url))).toBe(`${JSON.stringify(url)} is not a destination: ${why} (ssh://[user@]host[:port]).`);
  });
});

describe('sshUrl, the URL written back to remotes.json', () => {
  it.each<[SshTarget, string]>([
    [{ host: 'box' }, 'ssh://box'],
    [{ host: 'box', user: 'me' }, 'ssh://me@box'],
    [{ host: 'box', port: 2222 }, 'ssh://box:2222'],
    [{ host: '::1', user: 'me', port: 22 }, 'ssh://me@[::1]:22'],
    [{ host: 'fe80::1' }, 'ssh://[fe80::1]'],
  ])('%j', (target, url) => {
    expect(sshUrl(target)).toBe(url);
    // What is written reads back as the same target.
    expect(parseSshUrl(url)).toEqual(target);
  });
});

describe('checkName', () => {
  it.each<[string, string]>([
    ['box', 'box'],
    ['b', 'b'],
    ['Box-1_a.b', 'Box-1_a.b'],
    ['x'.repeat(32), 'x'.repeat(32)],
    ['local', `"local" names this machine's host; pick another name for a remote.`],
    ['', `A remote's name is 1 to 32 letters, digits, '_', '.' or '-', starting with a letter or digit, not "".`],
    ['-oProxyCommand', `A remote's name is 1 to 32 letters, digits, '_', '.' or '-', starting with a letter or digit, not "-oProxyCommand".`],
    ['_x', `A remote's name is 1 to 32 letters, digits, '_', '.' or '-', starting with a letter or digit, not "_x".`],
    ['a/b', `A remote's name is 1 to 32 letters, digits, '_', '.' or '-', starting with a letter or digit, not "a/b".`],
    ['x'.repeat(33), `A remote's name is 1 to 32 letters, digits, '_', '.' or '-', starting with a letter or digit, not "${'x'.repeat(33)}".`],
  ])('%j', (name, expected) => expect(outcome(() => checkName(name))).toBe(expected));
});

describe('splitCommand: a --command line as words, without a shell', () => {
  it.each<[string, string[] | string]>([
    ['kubectl exec -i pod -- warden dial-stdio', ['kubectl', 'exec', '-i', 'pod', '--', 'warden', 'dial-stdio']],
    ['  a   b  ', ['a', 'b']],
    ['a\tb', '--command takes one line of command, not "a\\tb".'],
    ["a 'b c' d", ['a', 'b c', 'd']],
    ["a'b'c", ['abc']],
    ["''", ['']],
    ["'|;&$'", ['|;&$']],
    ['"a b" c', ['a b', 'c']],
    ['""', ['']],
    ['x"y"z', ['xyz']],
    ['"a\\"b"', ['a"b']],
    ['"a\\\\b"', ['a\\b']],
    ['"a\\\\\\\\b"', ['a\\\\b']],
    ['"a\\\\\\"b"', ['a\\"b']],
    ['"a\\b"', ['a\\b']],
    ['"\\\'"', ["\\'"]],
    ['a\\ b', ['a b']],
    ['a\\|b', ['a|b']],
    ['\\"', ['"']],
    ["sh -c 'a | b'", ['sh', '-c', 'a | b']],
    ["'a", '--command has an unclosed single quote.'],
    ['"a', '--command has an unclosed double quote.'],
    ['"a\\"', '--command has an unclosed double quote.'],
    ['a\\', '--command ends with a lone backslash.'],
    ['a | b', `--command runs one program without a shell; for shell syntax (|) use --command "sh -c '...'".`],
    ['a;b', `--command runs one program without a shell; for shell syntax (;) use --command "sh -c '...'".`],
    ['a &', `--command runs one program without a shell; for shell syntax (&) use --command "sh -c '...'".`],
    ['a < f', `--command runs one program without a shell; for shell syntax (<) use --command "sh -c '...'".`],
    ['a > f', `--command runs one program without a shell; for shell syntax (>) use --command "sh -c '...'".`],
    ['echo $HOME', `--command runs one program without a shell; for shell syntax ($) use --command "sh -c '...'".`],
    ['echo `x`', `--command runs one program without a shell; for shell syntax (\`) use --command "sh -c '...'".`],
    ['(a)', `--command runs one program without a shell; for shell syntax (() use --command "sh -c '...'".`],
    ['a)', `--command runs one program without a shell; for shell syntax ()) use --command "sh -c '...'".`],
    ['', '--command takes one line of command, not "".'],
    ['   ', '--command takes one line of command, not "   ".'],
    ['a\nb', '--command takes one line of command, not "a\\nb".'],
    ['a\x7f', '--command takes one line of command, not "a\x7f".'],
    ['a\x1f', '--command takes one line of command, not "a\\u001f".'],
  ])('%j', (text, expected) => expect(outcome(() => splitCommand(text))).toEqual(expected));
});

describe('makeSshRemote and makeCommandRemote', () => {
  it('check every part', () => {
    expect(makeSshRemote('box', 'ssh://me@box:2222')).toEqual({ name: 'box', ssh: { host: 'box', user: 'me', port: 2222 }, warden: 'warden' });
    expect(makeSshRemote('box', 'ssh://box', '/opt/warden/bin/warden')).toEqual({ name: 'box', ssh: { host: 'box' }, warden: '/opt/warden/bin/warden' });
    expect(outcome(() => makeSshRemote('-x', 'ssh://box'))).toMatch(/^A remote's name is/);
    expect(outcome(() => makeSshRemote('box', 'ssh://-x'))).toMatch(/the host "-x"/);
    expect(outcome(() => makeSshRemote('box', 'ssh://box', 'warden\nrm -rf ~'))).toBe('--warden takes one line of command, not "warden\\nrm -rf ~".');
    expect(outcome(() => makeSshRemote('box', 'ssh://box', ' '))).toBe('--warden takes one line of command, not " ".');
    expect(makeCommandRemote('pod', 'kubectl exec -i p -- warden dial-stdio')).toEqual({ name: 'pod', command: 'kubectl exec -i p -- warden dial-stdio' });
    expect(outcome(() => makeCommandRemote('pod', 'a | b'))).toMatch(/without a shell/);
    expect(outcome(() => makeCommandRemote('local', 'a'))).toMatch(/names this machine's host/);
  });
});

describe('describeRemote', () => {
  it.each<[Parameters<typeof describeRemote>[0], string]>([
    [{ name: 'a', ssh: { host: 'box', port: 22 }, warden: 'warden' }, 'ssh://box:22'],
    [{ name: 'a', ssh: { host: '::1', user: 'u' }, warden: '/opt/w' }, 'ssh://u@[::1] (warden: /opt/w)'],
    [{ name: 'a', command: 'kubectl exec -i p -- warden dial-stdio' }, 'command: kubectl exec -i p -- warden dial-stdio'],
  ])('%j', (remote, text) => expect(describeRemote(remote)).toBe(text));
});

describe('the ssh argv: options, --, the destination', () => {
  it('sshProgram: WARDEN_SSH, else ssh', () => {
    expect(sshProgram({ WARDEN_SSH: '/usr/local/bin/myssh' })).toBe('/usr/local/bin/myssh');
    expect(sshProgram({ WARDEN_SSH: '' })).toBe('ssh');
    expect(sshProgram({})).toBe('ssh');
  });

  it('controlPath: in the private run dir, when it fits a unix socket', () => {
    expect(controlPath('/s', 'box')).toBe('/s/run/ssh-box');
    // 104 bytes is the socket path's bound; ssh adds 17 characters while creating it.
    // A 75-character state dir: 87 characters with /run/ssh-box, 104 once ssh adds its 17: too long.
    expect(controlPath(`/${'d'.repeat(74)}`, 'box')).toBeNull();
    // One shorter: 103, which fits.
    const under = `/${'d'.repeat(73)}`;
    expect(controlPath(under, 'box')).toBe(`${under}/run/ssh-box`);
  });

  it('puts the port, the user and every option before --, the destination after it, and makes the run dir private', () => {
    const state = join(dir, 'state');
    const argv = dialArgv(state, makeSshRemote('box', 'ssh://me@[::1]:2222', '/opt/w'), { WARDEN_SSH: '/bin/myssh' });
    const control = join(state, 'run', 'ssh-box');
    expect(argv).toEqual(['/bin/myssh', '-T', '-o', 'ConnectTimeout=15', '-o', 'ControlMaster=auto', '-o', `ControlPath=${control}`, '-o', `ControlPersist=${SSH_PERSIST}`, '-p', '2222', '-l', 'me', '--', '::1', '/opt/w dial-stdio']);
    expect(statSync(join(state, 'run')).mode & 0o777).toBe(0o700);
    expect(dialArgv(state, makeSshRemote('b', 'ssh://box'), {})).toEqual(['ssh', '-T', '-o', 'ConnectTimeout=15', '-o', 'ControlMaster=auto', '-o', `ControlPath=${join(state, 'run', 'ssh-b')}`, '-o', `ControlPersist=${SSH_PERSIST}`, '--', 'box', 'warden dial-stdio']);
  });

  it('shares no session where the control socket would not fit, and makes no run dir for one', () => {
    const deep = join(dir, 'd'.repeat(100));
    expect(dialArgv(deep, makeSshRemote('box', 'ssh://box'), {})).toEqual(['ssh', '-T', '-o', 'ConnectTimeout=15', '--', 'box', 'warden dial-stdio']);
    expect(existsSync(join(deep, 'run'))).toBe(false);
  });

  it('refuses a run dir that is not its own plain directory', () => {
    const state = join(dir, 'linked');
    mkdirSync(state, { mode: 0o700 });
    mkdirSync(join(dir, 'elsewhere'));
    symlinkSync(join(dir, 'elsewhere'), join(state, 'run'));
    expect(() => dialArgv(state, makeSshRemote('box', 'ssh://box'), {})).toThrow(expect.objectContaining({ kind: 'denied', message: expect.stringContaining('is not a plain directory (a link or a file)') }));
  });

  it('a command remote is its words, no ssh at all', () => {
    expect(dialArgv(join(dir, 'unused'), makeCommandRemote('pod', "kubectl exec -i 'my pod' -- warden dial-stdio"), { WARDEN_SSH: '/bin/myssh' })).toEqual(['kubectl', 'exec', '-i', 'my pod', '--', 'warden', 'dial-stdio']);
  });
});
