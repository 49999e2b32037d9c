// Table tests of how a simple command meets a Claude Code rule (match.ts):
// every form of rule, every wrapper and its options, the generous reading
// of deny rules and the strict reading of allow rules.

import { describe, expect, it } from 'vitest';
import { allowForms, certainMatch, denyForms, globMatches, indirection, isSafeAssignment, parseRule, possibleMatch, ruleWords, unwrap, type Spec, type Words } from './match';

describe('ruleWords', () => {
  it.each([
    ['npm test', ['npm', 'test']],
    ['  git   log  ', ['git', 'log']],
    ['git commit -m "a b"', ['git', 'commit', '-m', 'a b']],
    ["echo 'x y' z", ['echo', 'x y', 'z']],
    ['echo a\\ b', ['echo', 'a b']],
    ['echo "a \\" b"', ['echo', 'a " b']],
    ["echo 'a \\ b'", ['echo', 'a \\ b']],
    ['echo ""', ['echo', '']],
    ['', []],
    ['a\\', ['a\\']],
    ['"a\\', ['a\\']],
    ['x "" y', ['x', '', 'y']],
  ])('%j', (text, words) => expect(ruleWords(text)).toEqual(words));
});

describe('parseRule', () => {
  it.each<[string, Spec | null]>([
    ['Bash', { kind: 'any' }],
    [' Bash ', { kind: 'any' }],
    ['Bash(*)', { kind: 'any' }],
    ['Bash()', { kind: 'any' }],
    ['Read', null],
    ['Bash(npm test', null],
    ['xBash(ls)', null],
    ['Bash(ls)x', null],
    ['WebFetch(domain:x)', null],
    ['Bash(npm test:*)', { kind: 'prefix', words: ['npm', 'test'] }],
    ['Bash( git status )', { kind: 'exact', words: ['git', 'status'] }],
    ['Bash(git * main)', { kind: 'glob', pattern: 'git * main', words: ['git'] }],
    ['Bash(ls *)', { kind: 'glob', pattern: 'ls *', words: ['ls'] }],
    ['Bash(rm -rf *)', { kind: 'glob', pattern: 'rm -rf *', words: ['rm', '-rf'] }],
    ['Bash(*.sh)', { kind: 'glob', pattern: '*.sh', words: [] }],
    ['Bash(npm run *:*)', { kind: 'prefix', words: ['npm', 'run', '*'] }],
  ])('%j', (rule, spec) => expect(parseRule(rule)).toEqual(spec));
});

describe('globMatches', () => {
  it.each([
    ['ls *', 'ls', true],
    ['ls *', 'ls -la', true],
    ['ls *', 'lsof', false],
    ['git * main', 'git push origin main', true],
    ['git * main', 'git push origin main2', false],
    ['a.b *', 'axb c', false],
    ['*.sh', 'run.sh', true],
    ['x * y *', 'x 1 y', false],
    ['x * y *', 'x 1 y 2', true],
    ['x * y *', 'x * y', false],
    ['ls*', 'l', false],
    ['git status *', 'git status', true],
    ['a.b *', 'a.b c', true],
    ['a+ *', 'a+ b', true],
  ])('%j against %j', (pattern, text, expected) => expect(globMatches(pattern, text)).toBe(expected));
});

const prefix = (...words: string[]): Spec => ({ kind: 'prefix', words });
const exact = (...words: string[]): Spec => ({ kind: 'exact', words });
const glob = (pattern: string): Spec => parseRule(`Bash(${pattern})`)!;

describe('certainMatch: the words as they stand', () => {
  it.each<[Spec, Words, boolean]>([
    [{ kind: 'any' }, [null], true],
    [prefix('npm', 'test'), ['npm', 'test'], true],
    [prefix('npm', 'test'), ['npm', 'test', '--watch'], true],
    [prefix('npm', 'test'), ['npm', 'tests'], false],
    [prefix('npm', 'test'), ['npm'], false],
    [prefix('npm', 'test'), ['npm', null], false],
    [prefix('npm', 'test'), ['npm', 'test', null], true],
    [prefix('npm', 'test'), ['pnpm', 'test'], false],
    [exact('git', 'status'), ['git', 'status'], true],
    [exact('git', 'status'), ['git', 'status', '-s'], false],
    [exact('git', 'status'), ['git'], false],
    [exact('git', 'status'), ['git', 'stash'], false],
    [glob('git * main'), ['git', 'push', 'origin', 'main'], true],
    [glob('git * main'), ['git', null, 'main'], false],
    [glob('ls *'), ['ls'], true],
  ])('%j on %j', (spec, words, expected) => expect(certainMatch(spec, words)).toBe(expected));
});

describe('possibleMatch: what the words could be once bash expands them', () => {
  it.each<[Spec, Words, boolean]>([
    [{ kind: 'any' }, ['ls'], true],
    [prefix('rm'), [], false],
    [prefix('rm'), [null, '-rf'], true],
    [prefix('rm'), ['/bin/rm', '-rf'], true],
    [prefix('/bin/rm'), ['rm', 'x'], true],
    [prefix('rm'), ['rmdir', 'x'], false],
    [prefix('git', 'push'), ['git', '-C', '.', 'push'], true],
    [prefix('git', 'push'), ['git', 'log', '--grep', 'x'], false],
    [prefix('git', 'push'), ['git', null], true],
    [prefix('git', 'push'), ['git'], false],
    [prefix('git', 'push', 'origin'), ['git', null], true],
    [prefix('git', 'push', 'origin'), ['git', 'push', 'x'], false],
    [prefix('git', 'push', 'origin'), ['git', 'origin', 'push'], false],
    [prefix('git', 'push', 'push'), ['git', 'push'], false],
    [prefix('git', 'push', 'push'), ['git', 'push', 'x', 'push'], true],
    [exact('rm', 'x'), ['rm', '-f', 'x'], true],
    [glob('rm -rf *'), ['rm', '-r', '-f', 'x'], false],
    [glob('rm -rf *'), ['rm', '-rf', 'x'], true],
    [glob('*.sh'), ['run.sh'], true],
    [glob('*.sh'), ['run', null], true],
    [glob('*.sh'), ['run.py'], false],
  ])('%j on %j', (spec, words, expected) => expect(possibleMatch(spec, words)).toBe(expected));
});

describe('unwrap: the wrappers Claude Code looks through', () => {
  it.each<[Words, Words | null]>([
    [['time', 'ls'], ['ls']],
    [['time', '-p', 'ls'], ['ls']],
    [['nohup', 'ls', '-l'], ['ls', '-l']],
    [['nice', 'ls'], ['ls']],
    [['nice', '-n', '5', 'ls'], ['ls']],
    [['nice', '-n', '-5', 'ls'], ['ls']],
    [['nice', '-n', 'x', 'ls'], null],
    [['nice', '-n', '5x', 'ls'], null],
    [['nice', '-n', 'x5', 'ls'], null],
    [['nice', '-n', '15', 'ls'], ['ls']],
    [['nice', '-n'], null],
    [['nice', 'x-5', 'ls'], ['x-5', 'ls']],
    [['nice', '-5x', 'ls'], ['-5x', 'ls']],
    [['nice', '-15', 'ls'], ['ls']],
    [['nice', '-n15', 'ls'], ['ls']],
    [['nice', '-n5x', 'ls'], ['-n5x', 'ls']],
    [['nice', '--adjustment=13', 'ls'], ['ls']],
    [['nice', '--adjustment=3x', 'ls'], ['--adjustment=3x', 'ls']],
    [['nice', 'x--adjustment=3', 'ls'], ['x--adjustment=3', 'ls']],
    [['nice', '-n', null, 'ls'], null],
    [['nice', '-5', 'ls'], ['ls']],
    [['nice', '-n5', 'ls'], ['ls']],
    [['nice', '--adjustment=3', 'ls'], ['ls']],
    [['timeout', '5', 'ls'], ['ls']],
    [['timeout', '2.5s', 'ls'], ['ls']],
    [['timeout', '1m', 'ls'], ['ls']],
    [['timeout', '-s', 'KILL', '5', 'ls'], ['ls']],
    [['timeout', '-s', null, '5', 'ls'], null],
    [['timeout', '-s'], null],
    [['timeout', '-sKILL', '5', 'ls'], ['ls']],
    [['timeout', '--signal=KILL', '5', 'ls'], ['ls']],
    [['timeout', '-k', '1', '5', 'ls'], ['ls']],
    [['timeout', '--kill-after', '1', '5', 'ls'], ['ls']],
    [['timeout', '--signal', 'TERM', '5', 'ls'], ['ls']],
    [['timeout', '-k', null, '5', 'ls'], null],
    [['timeout', '-s', 'KILL', null, 'ls'], null],
    [['timeout', '-k1', '5', 'ls'], ['ls']],
    [['timeout', '--kill-after=1', '5', 'ls'], ['ls']],
    [['timeout', 'x--signal=1', '5', 'ls'], null],
    [['timeout', '5x', 'ls'], null],
    [['timeout', 'x5', 'ls'], null],
    [['timeout', '15', 'ls'], ['ls']],
    [['timeout', '1.25', 'ls'], ['ls']],
    [['timeout', '1.', 'ls'], null],
    [['timeout', '--preserve-status', '--foreground', '-v', '5', 'ls'], ['ls']],
    [['timeout', '--verbose', '5', 'ls'], ['ls']],
    [['timeout', 'x', 'ls'], null],
    [['timeout', null, 'ls'], null],
    [['timeout', '5'], null],
    [['stdbuf', '-oL', 'ls'], ['ls']],
    [['stdbuf', '-oL', '-e0', '-i0', 'ls'], ['ls']],
    [['stdbuf', '--output=L', 'ls'], ['ls']],
    [['stdbuf', 'ls'], null],
    [['stdbuf', '-o', 'ls'], null],
    [['stdbuf', '-oL', null, 'ls'], [null, 'ls']],
    [['stdbuf', '-oLx', 'ls'], ['ls']],
    [['stdbuf', '--output=', 'ls'], null],
    [['stdbuf', 'x-oL', 'ls'], null],
    [['stdbuf', '--output=Lx', 'ls'], ['ls']],
    [['stdbuf', '--output=L', '--bogus', 'ls'], ['--bogus', 'ls']],
    [['/usr/bin/timeout', '5', 'ls'], ['ls']],
    [['ls', 'timeout'], null],
    [[null, 'ls'], null],
    [[], null],
  ])('%j', (words, inner) => expect(unwrap(words)).toEqual(inner));
});

describe('isSafeAssignment', () => {
  it.each([
    ['NODE_ENV', true],
    ['LC_ALL', true],
    ['LANG', true],
    ['PORT', true],
    ['PATH', false],
    ['LD_PRELOAD', false],
    ['NODE_ENVX', false],
    ['XNODE_ENV', false],
    ['GIT_SSH_COMMAND', false],
  ])('%s', (name, safe) => expect(isSafeAssignment(name)).toBe(safe));
});

describe('indirection: commands that run what their words do not show', () => {
  it.each<[Words, RegExp | null]>([
    [[], null],
    [['ls', '-l'], null],
    [[null, '-rf'], /not plain text/],
    [['bash', 'x.sh'], /bash runs commands/],
    [['/bin/sh', '-c', 'x'], /sh runs commands/],
    [['command', '-v', 'node'], null],
    [['command', '-V', 'node'], null],
    [['command', 'rm'], /command runs a command/],
    [['env'], null],
    [['env', 'rm'], /env runs/],
    [['mapfile', '-C', 'f', 'a'], /-C runs a command/],
    [['readarray', null], /-C runs a command/],
    [['mapfile', 'a'], null],
    [['find', '.', '-exec', 'rm', '{}', ';'], /find runs a command/],
    [['find', '.', '-okdir', 'rm'], /find runs a command/],
    [['find', '.', null], /find runs a command/],
    [['find', '.', '-name', 'x'], null],
    [['eval', 'x'], /eval runs text/],
    [['sudo', 'ls'], /as another user/],
    [['.', 'f'], /runs the commands of a file/],
    [['timeout', '5', 'eval', 'x'], /eval runs text/],
    [['timeout', '5', 'ls'], null],
    [['timeout', 'x', 'ls'], /timeout runs a command Warden cannot read/],
    [['nohup', null], /not plain text/],
    [['nohup'], null],
    [['echo', 'eval'], null],
  ])('%j', (words, why) => {
    const reason = indirection(words);
    if (why === null) expect(reason).toBeNull();
    else expect(reason).toMatch(why);
  });
});

describe('every command that runs what its words do not show, by name', () => {
  const RUNNERS = ['eval', 'source', '.', 'exec', 'command', 'builtin', 'env', 'xargs', 'sudo', 'doas', 'su', 'runuser', 'pkexec', 'trap', 'alias', 'enable', 'hash', 'coproc', 'fc', 'bind', 'complete', 'compgen', 'setsid', 'chroot', 'ionice', 'chrt', 'taskset', 'flock', 'watch', 'strace', 'ltrace', 'unshare', 'nsenter', 'systemd-run', 'script', 'parallel'];
  const SHELLS = ['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'fish', 'busybox', 'csh', 'tcsh', 'ash', 'yash', 'rbash'];
  it.each(RUNNERS)('%s', (name) => expect(indirection([name, 'x'])).toMatch(new RegExp(`^${name.replace('.', '\\.')} [a-z]`)));
  it.each(SHELLS)('the shell %s', (name) => expect(indirection([`/usr/bin/${name}`, '-c', 'x'])).toBe(`${name} runs commands Warden does not see`));
  it.each(['time', 'nohup', 'nice', 'timeout', 'stdbuf'])('%s with a command it cannot read', (name) => expect(indirection([name, '--bogus-option=%', 'ls'])).toBe(name === 'nohup' || name === 'time' || name === 'nice' ? null : `${name} runs a command Warden cannot read`));
  it('the exceptions: command -v, a bare env, mapfile without -C, find without -exec', () => {
    expect(indirection(['command', '-v', 'x'])).toBeNull();
    expect(indirection(['command', '-p', 'x'])).toMatch(/^command /);
    expect(indirection(['env', '-i'])).toMatch(/^env /);
    expect(indirection(['mapfile', 'x-C'])).toBeNull();
    expect(indirection(['mapfile', '-Cf'])).toMatch(/^mapfile -C/);
    expect(indirection(['find', '.', 'x-exec'])).toBeNull();
    expect(indirection(['find', '.', '-execx'])).toBeNull();
    expect(indirection(['finder', '.', '-exec'])).toBeNull();
  });
});

describe('allowForms and denyForms', () => {
  it('allow: as written, and through each wrapper; nothing with an assignment that could change what runs', () => {
    expect(allowForms(['ls'], [])).toEqual([['ls']]);
    expect(allowForms(['ls'], [{ name: 'NODE_ENV' }])).toEqual([['ls']]);
    expect(allowForms(['ls'], [{ name: 'NODE_ENV' }, { name: 'PATH' }])).toEqual([]);
    expect(allowForms(['nice', 'timeout', '5', 'ls'], [])).toEqual([['nice', 'timeout', '5', 'ls'], ['timeout', '5', 'ls'], ['ls']]);
  });

  it('deny: as written, through each wrapper, each tail of a command that runs another, and by the name\'s last part', () => {
    expect(denyForms(['ls', 'rm'])).toEqual([['ls', 'rm']]);
    expect(denyForms(['/bin/rm', 'x'])).toEqual([['/bin/rm', 'x'], ['rm', 'x']]);
    expect(denyForms(['nohup', 'rm', 'x'])).toEqual([['nohup', 'rm', 'x'], ['rm', 'x'], ['rm', 'x'], ['x']]);
    expect(denyForms(['sudo', '-u', 'me', '/bin/rm'])).toEqual([['sudo', '-u', 'me', '/bin/rm'], ['-u', 'me', '/bin/rm'], ['me', '/bin/rm'], ['/bin/rm'], ['rm']]);
    expect(denyForms([null, 'x'])).toEqual([[null, 'x']]);
  });
});
