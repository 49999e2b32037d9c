// Table tests of the rules the hook applies for each harness (rules.ts):
// where Claude Code's rules come from (every settings file, the managed
// drop-ins, the agent's --allowedTools / --disallowedTools), the order deny,
// ask, allow, the modes, and Codex's and Gemini CLI's rules, each read the
// way the harness itself reads them.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBashGrammar, type BashGrammar } from './bash-grammar';
import { parseJsonc, valueOf } from '../setup/jsonc';
import { claudeRules, codexRulePrefixes, codexRulesTouch, decideClaude, decideUnread, emptyRules, geminiRestriction, touches, type RuleSet } from './rules';
import { analyzeCommand, type Analysis } from './walk';

let grammar: BashGrammar;
const root = mkdtempSync(join(tmpdir(), 'whook-rules-'));
beforeAll(async () => {
  grammar = await loadBashGrammar();
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const read = (line: string): Analysis => analyzeCommand(grammar, line)!;
let n = 0;
function tree(files: Record<string, unknown>): string {
  const dir = join(root, `t${n++}`);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), typeof content === 'string' ? content : JSON.stringify(content));
  }
  mkdirSync(dir, { recursive: true });
  return dir;
}

describe('claudeRules: every source Claude Code reads', () => {
  it('reads user, project, local and managed settings, the managed drop-ins in name order, and the agent\'s tool flags into the right lists', () => {
    const dir = tree({
      'config/settings.json': { permissions: { allow: ['Bash(user:*)'], deny: ['Bash(user-deny:*)'], defaultMode: 'acceptEdits' } },
      'project/.claude/settings.json': { permissions: { ask: ['Bash(project-ask:*)'] } },
      'project/.claude/settings.local.json': { permissions: { allow: ['Bash(local:*)'], defaultMode: 'dontAsk' } },
      'managed/managed-settings.json': { permissions: { deny: ['Bash(managed:*)'] } },
      'managed/managed-settings.d/20-b.json': { permissions: { allow: ['Bash(dropin-b:*)'] } },
      'managed/managed-settings.d/10-a.json': { permissions: { deny: ['Bash(dropin-a:*)'] }, sandbox: { enabled: true } },
      'managed/managed-settings.d/notes.txt': 'not json, not read',
    });
    const rules = claudeRules({
      configDir: join(dir, 'config'),
      projectDir: join(dir, 'project'),
      managedDir: join(dir, 'managed'),
      agentArgv: ['claude', '-p', '--allowedTools', 'Bash(flag-allow:*) Read', '--disallowedTools=Bash(flag-deny:*),Edit', '--disallowed-tools', 'Bash(flag-deny2:*)', '--model', 'x'],
    });
    expect(rules.allow).toEqual(['Bash(user:*)', 'Bash(local:*)', 'Bash(dropin-b:*)', 'Bash(flag-allow:*)', 'Read']);
    expect(rules.deny).toEqual(['Bash(user-deny:*)', 'Bash(managed:*)', 'Bash(dropin-a:*)', 'Bash(flag-deny:*)', 'Edit', 'Bash(flag-deny2:*)']);
    expect(rules.ask).toEqual(['Bash(project-ask:*)']);
    expect(rules.defaultMode).toBe('dontAsk');
    expect(rules.sandboxed).toBe(true);
    expect(rules.unreadable).toEqual([]);
  });

  it('takes rules with spaces and commas inside their parentheses whole, and both flag spellings', () => {
    const rules = claudeRules({ configDir: '/nonexistent', projectDir: '/nonexistent', managedDir: '/nonexistent', agentArgv: ['claude', '--allowed-tools', 'Bash(git commit -m "a, b":*),Bash(ls *)', 'Bash(pwd)', '-p', '--allowedTools=Read'] });
    expect(rules.allow).toEqual(['Bash(git commit -m "a, b":*)', 'Bash(ls *)', 'Bash(pwd)', 'Read']);
    expect(rules.deny).toEqual([]);
  });

  it.each<[string, string[], string[]]>([
    ['a value after --flag=, not the words after it', ['claude', '--allowedTools=Bash(ls:*)', 'fix the bug'], ['Bash(ls:*)']],
    ['a trailing comma, a comma and a space', ['claude', '--allowedTools', 'Bash(ls:*), Read,'], ['Bash(ls:*)', 'Read']],
    ['parentheses inside a rule', ['claude', '--allowedTools', 'Bash(x (y) z, w),Read'], ['Bash(x (y) z, w)', 'Read']],
    ['a stray closing parenthesis', ['claude', '--allowedTools', 'Read) Edit'], ['Read)', 'Edit']],
    ['the flag last, with no value', ['claude', '-p', 'x', '--allowedTools'], []],
    ['a lookalike flag', ['claude', '--allowedToolsX', 'Bash', '=--allowedTools', 'Bash'], []],
  ])('--allowedTools: %s', (_what, agentArgv, allow) => {
    expect(claudeRules({ configDir: '/nonexistent', projectDir: '/nonexistent', managedDir: '/nonexistent', agentArgv }).allow).toEqual(allow);
  });

  it('takes only string rules, and permissions that are an object', () => {
    const dir = tree({
      'config/settings.json': { permissions: { allow: ['Bash(ls:*)', 5, null, ['Bash']], deny: 'Bash(rm:*)' } },
      'project/.claude/settings.json': { permissions: null },
      'project/.claude/settings.local.json': { permissions: 'Bash' },
    });
    const rules = claudeRules({ configDir: join(dir, 'config'), projectDir: join(dir, 'project'), managedDir: '/nonexistent', agentArgv: [] });
    expect(rules).toEqual({ allow: ['Bash(ls:*)'], ask: [], deny: [], unreadable: [] });
  });

  it('reads the managed drop-ins in name order, whatever order the directory lists them in', () => {
    const names = ['c.json', 'a.json', 'e.json', 'b.json', 'd.json'];
    const dir = tree(Object.fromEntries(names.map((name) => [`managed/managed-settings.d/${name}`, { permissions: { allow: [`Bash(${name}:*)`] } }])));
    const rules = claudeRules({ configDir: '/nonexistent', projectDir: '/nonexistent', managedDir: join(dir, 'managed'), agentArgv: [] });
    expect(rules.allow).toEqual([...names].sort().map((name) => `Bash(${name}:*)`));
  });

  it('names a settings file it cannot read, and ignores one that is not there or holds no permissions', () => {
    const dir = tree({ 'config/settings.json': '{ not json', 'project/.claude/settings.json': { theme: 'dark' }, 'project/.claude/settings.local.json': { permissions: { allow: 'Bash' } } });
    const rules = claudeRules({ configDir: join(dir, 'config'), projectDir: join(dir, 'project'), managedDir: join(dir, 'none'), agentArgv: [] });
    expect(rules.unreadable).toEqual([join(dir, 'config', 'settings.json')]);
    expect(rules.allow).toEqual([]);
    expect(rules.sandboxed).toBeUndefined();
    const unreadable = tree({ 'config/settings.json/x': '' });
    expect(claudeRules({ configDir: join(unreadable, 'config'), projectDir: '/nonexistent', managedDir: '/nonexistent', agentArgv: [] }).unreadable).toEqual([join(unreadable, 'config', 'settings.json')]);
  });
});

describe('from each source to the decision', () => {
  // One rule placed in one source, with `Bash` allowed from the user's settings: what the hook answers for `rm -rf x` and for `ls`.
  const context = (files: Record<string, unknown>, agentArgv: string[] = []) => {
    const dir = tree({ 'config/settings.json': { permissions: { allow: ['Bash'] } }, ...files });
    return claudeRules({ configDir: join(dir, 'config'), projectDir: join(dir, 'project'), managedDir: join(dir, 'managed'), agentArgv });
  };
  it.each<[string, Record<string, unknown>, string[], 'allow' | 'ask' | 'deny']>([
    ['a deny rule in the project\'s settings', { 'project/.claude/settings.json': { permissions: { deny: ['Bash(rm:*)'] } } }, [], 'deny'],
    ['a deny rule in the local settings', { 'project/.claude/settings.local.json': { permissions: { deny: ['Bash(rm:*)'] } } }, [], 'deny'],
    ['a deny rule in the managed settings', { 'managed/managed-settings.json': { permissions: { deny: ['Bash(rm:*)'] } } }, [], 'deny'],
    ['a deny rule in a managed drop-in', { 'managed/managed-settings.d/50-policy.json': { permissions: { deny: ['Bash(rm:*)'] } } }, [], 'deny'],
    ['a drop-in that is not .json', { 'managed/managed-settings.d/50-policy.json.bak': { permissions: { deny: ['Bash(rm:*)'] } } }, [], 'allow'],
    ['--disallowedTools on the agent\'s command line', {}, ['claude', '--disallowedTools', 'Bash(rm:*)'], 'deny'],
    ['--disallowed-tools=', {}, ['claude', '--disallowed-tools=Bash(rm:*)'], 'deny'],
    ['an ask rule in a managed drop-in', { 'managed/managed-settings.d/a.json': { permissions: { ask: ['Bash(rm:*)'] } } }, [], 'ask'],
    ['an ask rule from the project, an allow from --allowedTools', { 'project/.claude/settings.json': { permissions: { ask: ['Bash(rm:*)'] } } }, ['claude', '--allowedTools', 'Bash(rm:*)'], 'ask'],
    ['a managed drop-in that cannot be read', { 'managed/managed-settings.d/a.json': '{ nope' }, [], 'ask'],
    ['nothing but the user\'s Bash', {}, [], 'allow'],
  ])('%s', (_what, files, argv, decision) => {
    const rules = context(files, argv);
    expect(decideClaude(read('rm -rf x'), rules, undefined).decision).toBe(decision);
    // The rule is about rm alone: ls beside it is allowed unless a file could not be read.
    expect(decideClaude(read('ls'), rules, undefined).decision).toBe(rules.unreadable.length > 0 ? 'ask' : 'allow');
  });

  it('a compound command is denied by a rule about any of its parts, whichever source it comes from', () => {
    const rules = context({}, ['claude', '--allowedTools', 'Bash(ls:*)', '--disallowedTools', 'Bash(curl:*)']);
    expect(decideClaude(read('ls && curl x | sh'), rules, undefined)).toEqual({ decision: 'deny', reason: 'denied by your Claude Code rule Bash(curl:*) (curl x)' });
    expect(decideClaude(read('(cd a; ls $(curl y))'), rules, undefined).decision).toBe('deny');
    expect(decideClaude(read('ls; echo ok'), rules, undefined).decision).toBe('allow');
  });

  it('--allowedTools alone allows only what it names', () => {
    const rules = claudeRules({ configDir: '/nonexistent', projectDir: '/nonexistent', managedDir: '/nonexistent', agentArgv: ['claude', '--allowedTools', 'Bash(git status),Bash(ls:*)'] });
    expect(decideClaude(read('git status'), rules, undefined).decision).toBe('allow');
    expect(decideClaude(read('ls -la && git status'), rules, undefined).decision).toBe('allow');
    expect(decideClaude(read('git push'), rules, undefined).decision).toBe('ask');
    expect(decideClaude(read('ls; rm x'), rules, 'dontAsk').decision).toBe('deny');
  });
});

const rules = (r: Partial<RuleSet>): RuleSet => ({ ...emptyRules(), ...r });

describe('decideClaude: deny, then ask, then allow', () => {
  it.each<[string, Partial<RuleSet>, string | undefined, 'allow' | 'ask' | 'deny', RegExp]>([
    ['rm -rf x', { deny: ['Bash(rm:*)'], ask: ['Bash(rm:*)'], allow: ['Bash(rm:*)'] }, undefined, 'deny', /denied by your Claude Code rule Bash\(rm:\*\) \(rm -rf x\)/],
    ['rm -rf x', { ask: ['Bash(rm:*)'], allow: ['Bash(rm:*)'] }, undefined, 'ask', /rule Bash\(rm:\*\) asks first/],
    ['rm -rf x', { allow: ['Bash(rm:*)'] }, undefined, 'allow', /allowed by your Claude Code rules/],
    ['ls && rm -rf x', { allow: ['Bash(ls:*)'] }, undefined, 'ask', /no Claude Code rule allows rm -rf x as written/],
    ['ls && rm -rf x', { allow: ['Bash(ls:*)', 'Bash(rm:*)'] }, undefined, 'allow', /rules/],
    ['ls', { allow: ['Bash(ls:*)'], unreadable: ['/x/settings.json'] }, undefined, 'ask', /could not read \/x\/settings.json/],
    ['rm x', { deny: ['Bash(rm:*)'], unreadable: ['/x/settings.json'] }, undefined, 'deny', /denied/],
    ['git -C . push', { allow: ['Bash'], deny: ['Bash(git push:*)'] }, undefined, 'ask', /deny rule Bash\(git push:\*\) may apply to git -C \. push/],
    ['git push', { allow: ['Bash'], ask: ['Bash'] }, undefined, 'ask', /rule Bash asks first/],
    ['eval x', { allow: ['Bash'], ask: ['Bash(curl:*)'] }, undefined, 'ask', /eval runs text as commands \(eval x\), so Warden cannot check your deny and ask rules/],
    ['PATH=. ls', { allow: ['Bash'], deny: ['Bash(curl:*)'] }, undefined, 'ask', /sets PATH.*so Warden cannot check/],
    ['eval x', { allow: ['Bash'] }, undefined, 'allow', /rule Bash/],
    ['python3 x.py', {}, 'bypassPermissions', 'allow', /bypassed/],
    ['python3 x.py', { defaultMode: 'bypassPermissions' }, undefined, 'allow', /bypassed/],
    ['python3 x.py', { defaultMode: 'bypassPermissions' }, 'default', 'ask', /no Claude Code rule allows python3 x\.py/],
    ['rm x', { deny: ['Bash(rm:*)'] }, 'bypassPermissions', 'deny', /denied/],
    ['python3 x.py', {}, 'dontAsk', 'deny', /does not ask/],
    ['python3 x.py', { defaultMode: 'dontAsk' }, undefined, 'deny', /does not ask/],
    ['ls', { allow: ['Bash(ls:*)'] }, 'dontAsk', 'allow', /rules/],
    ['ls > out', { allow: ['Bash(ls:*)'] }, undefined, 'ask', /writes to a file/],
    ['ls > out', { allow: ['Bash'] }, undefined, 'allow', /rule Bash/],
    ['x=1; echo $((x))', { allow: ['Bash(echo:*)'] }, undefined, 'ask', /arithmetic.*so no rule can vouch for it/],
    ['# a comment', { allow: ['Bash(ls:*)'] }, undefined, 'ask', /no Claude Code rule allows this command as written/],
    ['timeout 5 ls', { allow: ['Bash(ls:*)'] }, undefined, 'allow', /rules/],
    ['NODE_ENV=test npm test', { allow: ['Bash(npm test:*)'] }, undefined, 'allow', /rules/],
    ['FOO=1 npm test', { allow: ['Bash(npm test:*)'] }, undefined, 'ask', /no Claude Code rule allows/],
    ['sudo ls', { allow: ['Bash(sudo:*)', 'Bash(ls:*)'] }, undefined, 'ask', /no Claude Code rule allows sudo ls/],
    ['ls', { allow: ['Read', 'Bash(ls)'] }, undefined, 'allow', /rules/],
    // A rule about rm is about /bin/rm too, in each list.
    ['/bin/rm -rf x', { deny: ['Bash(rm:*)'], allow: ['Bash'] }, undefined, 'deny', /denied by your Claude Code rule Bash\(rm:\*\) \(\/bin\/rm -rf x\)/],
    ['/bin/rm $X', { deny: ['Bash(rm -rf:*)'], allow: ['Bash'] }, undefined, 'ask', /deny rule Bash\(rm -rf:\*\) may apply to \/bin\/rm \$X/],
    ['/bin/rm x', { ask: ['Bash(rm:*)'], allow: ['Bash'] }, undefined, 'ask', /rule Bash\(rm:\*\) asks first/],
    // A rule about rm is about rm run through a wrapper too.
    ['timeout 5 rm $X', { deny: ['Bash(rm -rf:*)'], allow: ['Bash'] }, undefined, 'ask', /deny rule Bash\(rm -rf:\*\) may apply to timeout 5 rm \$X/],
    ['timeout 5 rm x', { ask: ['Bash(rm:*)'], allow: ['Bash'] }, undefined, 'ask', /rule Bash\(rm:\*\) asks first/],
    // An ask rule about one part of a compound command asks.
    ['ls && rm x', { ask: ['Bash(rm:*)'], allow: ['Bash'] }, undefined, 'ask', /rule Bash\(rm:\*\) asks first/],
    // A bare Bash ask rule asks even for a line that runs nothing.
    ['# nothing', { ask: ['Bash'], allow: ['Bash'] }, undefined, 'ask', /rule Bash asks first/],
    // Deny and ask rules that cannot apply, and nothing in doubt: the allow rules decide.
    ['ls', { deny: ['Bash(rm:*)'], allow: ['Bash'] }, undefined, 'allow', /rule Bash$/],
    ['ls', { ask: ['Bash(rm:*)'], allow: ['Bash(ls)'] }, undefined, 'allow', /rules$/],
    // Its reason shows the command on one line.
    ['rm   -rf\tx', { deny: ['Bash(rm:*)'] }, undefined, 'deny', /\(rm -rf x\)$/],
  ])('%j with %j in mode %s: %s', (line, given, mode, decision, reason) => {
    const verdict = decideClaude(read(line), rules(given), mode);
    expect(verdict.decision).toBe(decision);
    expect(verdict.reason).toMatch(reason);
  });

  it('asks for a line too long to read', () => {
    expect(decideClaude(null, rules({ allow: ['Bash'] }), undefined)).toEqual({ decision: 'ask', reason: 'the command is too long for Warden to read' });
  });

  it('shortens a long command in its reason, and only one longer than 60 characters', () => {
    const long = `rm ${'x'.repeat(100)}`;
    expect(decideClaude(read(long), rules({ deny: ['Bash(rm:*)'] }), undefined).reason).toBe(`denied by your Claude Code rule Bash(rm:*) (rm ${'x'.repeat(54)}...)`);
    const sixty = `rm ${'x'.repeat(57)}`;
    expect(decideClaude(read(sixty), rules({ deny: ['Bash(rm:*)'] }), undefined).reason).toBe(`denied by your Claude Code rule Bash(rm:*) (${sixty})`);
  });
});

describe('decideUnread: a decision the line cannot change', () => {
  it.each<[Partial<RuleSet>, string | undefined, string | null]>([
    [{ allow: ['Bash'] }, undefined, 'allow'],
    [{ allow: ['Bash(*)'] }, 'default', 'allow'],
    [{}, 'bypassPermissions', 'allow'],
    [{ defaultMode: 'bypassPermissions' }, undefined, 'allow'],
    [{ allow: ['Bash'], deny: ['Bash(rm:*)'] }, undefined, null],
    [{ allow: ['Bash'], ask: ['Bash(rm:*)'] }, undefined, null],
    [{ allow: ['Bash'], deny: ['Read'] }, undefined, 'allow'],
    [{ allow: ['Bash'], unreadable: ['/x'] }, undefined, null],
    [{ allow: ['Bash(ls:*)'] }, undefined, null],
    [{}, 'dontAsk', null],
  ])('%j in mode %s', (given, mode, decision) => {
    expect(decideUnread(rules(given), mode)?.decision ?? null).toBe(decision);
  });

  it('says why', () => {
    expect(decideUnread(rules({}), 'bypassPermissions')).toEqual({ decision: 'allow', reason: 'permissions are bypassed in this session' });
    expect(decideUnread(rules({ allow: ['Bash'] }), undefined)).toEqual({ decision: 'allow', reason: 'allowed by your Claude Code rule Bash' });
  });
});

describe('touches: whether a harness\'s prefix rule could be about a line', () => {
  it.each<[string | null, string[], boolean]>([
    ['ls -la', ['rm'], false],
    ['ls; rm x', ['rm'], true],
    ['/bin/rm x', ['rm'], true],
    ['git -C . push', ['git', 'push'], true],
    ['git status', ['git', 'push'], false],
    ['eval ls', ['rm'], true],
    ['$X y', ['rm'], true],
    ['PATH=. ls', ['rm'], true],
    ['ls', [], true],
    ['# nothing', [], true],
    ['# nothing', ['rm'], false],
    ['timeout 5 rm x', ['rm'], true],
    [null, ['rm'], true],
  ])('%j and %j', (line, prefix, expected) => expect(touches(line === null ? null : read(line), prefix)).toBe(expected));

  it('codexRulesTouch: by each rule\'s first word', () => {
    expect(codexRulesTouch(read('git status'), [['git', 'push']])).toBe(true);
    expect(codexRulesTouch(read('ls'), [['git', 'push'], ['rm']])).toBe(false);
    expect(codexRulesTouch(read('ls'), [])).toBe(false);
  });
});

describe('codexRulePrefixes', () => {
  it('reads each prefix_rule pattern of every .rules file, and says it cannot when a file or a pattern cannot be read', () => {
    const dir = tree({
      'a/default.rules': 'prefix_rule(\n  pattern = ["git", "push"],\n  decision = "forbidden",\n)\nprefix_rule(pattern = [\'rm\'], decision = "prompt")\n',
      'a/notes.txt': 'prefix_rule(pattern = ["ignored"])',
      'b/more.rules': 'prefix_rule(pattern = ["npm", "publish"])\n',
    });
    expect(codexRulePrefixes([join(dir, 'a'), join(dir, 'b'), join(dir, 'none')])).toEqual([['git', 'push'], ['rm'], ['npm', 'publish']]);
    const odd = tree({ 'c/x.rules': 'prefix_rule(pattern = some_list)\n' });
    expect(codexRulePrefixes([join(odd, 'c')])).toBeNull();
    const dirAsRules = tree({ 'd/x.rules/inner': '' });
    expect(codexRulePrefixes([join(dirAsRules, 'd')])).toBeNull();
    // Spacing as Starlark allows, a file with no rule, an empty pattern.
    const spaced = tree({ 'e/a.rules': 'prefix_rule (pattern=["rm"])\nprefix_rule(\n  pattern  =  [ "git" , \'push\' ])\n', 'e/b.rules': '# nothing yet\n', 'e/c.rules': 'prefix_rule(pattern = [])\n' });
    expect(codexRulePrefixes([join(spaced, 'e')])).toEqual([['rm'], ['git', 'push']]);
    const unreadSpaced = tree({ 'f/a.rules': 'prefix_rule (pattern = some_list)\n' });
    expect(codexRulePrefixes([join(unreadSpaced, 'f')])).toBeNull();
  });
});

describe('geminiRestriction', () => {
  // As hook.ts reads Gemini's settings (JSON with comments).
  const parse = (text: string) => {
    const root = parseJsonc(text);
    return root === null ? {} : valueOf(text, root);
  };
  const check = (line: string, files: string[], dirs: string[]) => geminiRestriction(async () => read(line), files, dirs, parse);

  it('names the tools.exclude entry, the deny or ask_user policy rule, or the tools.core list that could be about the line', async () => {
    const dir = tree({
      'settings.json': { tools: { exclude: ['run_shell_command(rm)', 'read_file'] } },
      'core.json': { tools: { core: ['run_shell_command(git)'] } },
      'whole.json': { tools: { exclude: ['ShellTool'] } },
      'policies/p.toml': '[[rule]]\ntoolName = "run_shell_command"\ncommandPrefix = ["git push", "npm publish"]\ndecision = "deny"\n\n[[rule]]\ntoolName = "run_shell_command"\ncommandPrefix = "docker"\ndecision = "ask_user"\n\n[[rule]]\ntoolName = "run_shell_command"\ncommandPrefix = "ls"\ndecision = "allow"\n',
      'other/q.toml': '[[rule]]\ntoolName = "read_file"\ndecision = "deny"\n',
      'all/r.toml': '[[rule]]\ndecision = "deny"\n',
    });
    const settings = join(dir, 'settings.json');
    const policies = join(dir, 'policies');
    expect(await check('ls -la', [settings], [policies])).toBeNull();
    expect(await check('cd x && rm y', [settings], [policies])).toBe(`tools.exclude run_shell_command(rm) in ${settings}`);
    expect(await check('git -C . push', [settings], [policies])).toBe(`a deny rule in ${join(policies, 'p.toml')}`);
    expect(await check('docker ps', [settings], [policies])).toBe(`a ask_user rule in ${join(policies, 'p.toml')}`);
    expect(await check('eval ls', [settings], [policies])).not.toBeNull();
    expect(await check('ls', [join(dir, 'core.json')], [])).toBe(`tools.core limits shell commands in ${join(dir, 'core.json')}`);
    expect(await check('ls', [join(dir, 'whole.json')], [])).toBe(`tools.exclude ShellTool in ${join(dir, 'whole.json')}`);
    expect(await check('ls', [], [join(dir, 'other')])).toBeNull();
    expect(await check('ls', [], [join(dir, 'all')])).toBe(`a deny rule in ${join(dir, 'all', 'r.toml')}`);
    expect(await check('ls', [join(dir, 'missing.json')], [join(dir, 'missing')])).toBeNull();
  });

  it.each<[string, Record<string, string>, string | null]>([
    ['exclude as a string, not a list', { 's.json': '{"tools": {"exclude": "run_shell_command"}}' }, null],
    ['exclude entries that are not strings', { 's.json': '{"tools": {"exclude": [5, null, "run_shell_command(rm)"]}}' }, 'tools.exclude run_shell_command(rm) in S'],
    ['settings that are null', { 's.json': 'null' }, null],
    ['settings without tools', { 's.json': '{"theme": "dark"}' }, null],
    ['a tool whose name only contains the shell tool\'s', { 's.json': '{"tools": {"exclude": ["my_run_shell_command", "run_shell_commands", "ShellTool2(rm)"]}}' }, null],
    ['the shell tool with spaces around it', { 's.json': '{"tools": {"exclude": ["  ShellTool  "]}}' }, 'tools.exclude   ShellTool   in S'],
    ['core naming only other tools', { 's.json': '{"tools": {"core": ["read_file", "my_run_shell_command(ls)"]}}' }, null],
    ['core with the shell tool spaced', { 's.json': '{"tools": {"core": [" run_shell_command (ls)"]}}' }, 'tools.core limits shell commands in S'],
    ['a policy in a file that is not .toml', { 'p/notes.txt': '[[rule]]\ndecision = "deny"\n' }, null],
    ['a deny rule with a single-quoted prefix', { 'p/a.toml': "[[rule]]\ntoolName = 'run_shell_command'\ncommandPrefix = 'rm -rf'\ndecision = 'deny'\n" }, 'a deny rule in P/a.toml'],
    ['a single-quoted prefix about something else', { 'p/a.toml': "[[rule]]\ncommandPrefix = ['git push']\ndecision = 'deny'\n" }, null],
    ['a rule for several tools, the shell among them', { 'p/a.toml': '[[rule]]\ntoolName = ["read_file", "run_shell_command"]\ndecision = "deny"\n' }, 'a deny rule in P/a.toml'],
    ['a rule for every tool', { 'p/a.toml': '[[rule]]\ntoolName = "*"\ndecision = "ask_user"\n' }, 'a ask_user rule in P/a.toml'],
    ['a header indented and spaced', { 'p/a.toml': '  [[ rule ]]  \ndecision = "deny"\n' }, 'a deny rule in P/a.toml'],
    ['a header with a comment after it', { 'p/a.toml': '[[rule]] # no rm\ndecision = "deny"\ncommandPrefix = "rm"\n' }, 'a deny rule in P/a.toml'],
    ['a decision that belongs to the next table', { 'p/a.toml': '[[rule]]\ntoolName = "run_shell_command"\n  [other]\ndecision = "deny"\n' }, null],
    ['a policy file that cannot be read', { 'p/a.toml/x': '' }, 'P/a.toml cannot be read'],
    ['keys before the first rule', { 'p/a.toml': 'decision = "deny"\n' }, null],
    ['a comment that names a rule header', { 'p/a.toml': '[other] # see [[rule]]\ndecision = "deny"\n' }, null],
  ])('%s', async (_what, files, expected) => {
    const dir = tree(files);
    const S = join(dir, 's.json');
    const P = join(dir, 'p');
    const answer = await geminiRestriction(async () => read('rm -rf x'), [S], [P], parse);
    expect(answer).toBe(expected === null ? null : expected.replace(/\bS\b/, S).replace(/\bP\//, `${P}/`).replace(/^P\//, `${P}/`));
  });

  it('says it cannot tell when a settings file does not parse', async () => {
    const dir = tree({ 'bad.json': '{ nope' });
    expect(await check('ls', [join(dir, 'bad.json')], [])).toBe(`${join(dir, 'bad.json')} cannot be read`);
  });

  it('reads the line only when a rule needs it', async () => {
    const dir = tree({ 'settings.json': { tools: { exclude: ['read_file'] } } });
    let reads = 0;
    const counted = async () => {
      reads++;
      return read('ls');
    };
    expect(await geminiRestriction(counted, [join(dir, 'settings.json')], [], parse)).toBeNull();
    expect(reads).toBe(0);
    // A policy rule without a commandPrefix is about every command: no need to read it.
    const policy = tree({ 'p/a.toml': '[[rule]]\ntoolName = "run_shell_command"\ndecision = "deny"\n' });
    expect(await geminiRestriction(counted, [], [join(policy, 'p')], parse)).toBe(`a deny rule in ${join(policy, 'p', 'a.toml')}`);
    expect(reads).toBe(0);
  });
});
