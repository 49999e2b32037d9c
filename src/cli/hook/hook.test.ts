// `warden hook` as each harness calls it: a process reading the harness's
// hook JSON on stdin, started through `sh -c` as Claude Code, Codex and
// Gemini CLI start hooks, with the user's settings in a temporary HOME. The
// answer must carry the harness's own format, copy every other field, take
// the decision the user's rules give the ORIGINAL command, pass Warden's own
// commands and anything it cannot route through untouched, and name this
// test's process (the "agent" above the shell) as the run's owner.

import { execa } from 'execa';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { WARDEN_BIN } from '../testkit';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function home(files: Record<string, unknown> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'whook-'));
  dirs.push(dir);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), typeof content === 'string' ? content : JSON.stringify(content));
  }
  return dir;
}

interface HookOutput {
  systemMessage?: string;
  hookSpecificOutput?: { hookEventName: string; permissionDecision?: string; permissionDecisionReason?: string; updatedInput?: Record<string, unknown>; tool_input?: Record<string, unknown> };
}

/** Runs the hook as a harness does (through sh -c), in HOME dir; '' output means "go on unchanged". */
async function hook(harness: string, input: unknown, dir: string, env: Record<string, string> = {}): Promise<{ out: HookOutput | null; raw: string; exitCode: number | undefined; stderr: string }> {
  const result = await execa('sh', ['-c', `"${process.execPath}" "${WARDEN_BIN}" hook ${harness} --limit 10m`], {
    input: typeof input === 'string' ? input : JSON.stringify(input),
    reject: false,
    cwd: dir,
    env: { HOME: dir, WARDEN_STATE_DIR: join(dir, 'state'), CLAUDE_CONFIG_DIR: '', CLAUDE_PROJECT_DIR: join(dir, 'project'), CODEX_HOME: '', WARDEN_CLAUDE_MANAGED_DIR: join(dir, 'managed'), ...env },
  });
  return { out: result.stdout.trim() === '' ? null : (JSON.parse(result.stdout) as HookOutput), raw: result.stdout, exitCode: result.exitCode, stderr: result.stderr };
}

const q = (path: string) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(path) ? path : `'${path}'`);
const PREFIX = `${q(process.execPath)} ${q(WARDEN_BIN)} run --format shell-results`;

function claudeInput(command: string, extra: Record<string, unknown> = {}, mode = 'default') {
  return { session_id: 's1', transcript_path: '/tmp/t.jsonl', cwd: '/tmp', permission_mode: mode, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command, ...extra }, tool_use_id: 'toolu_1' };
}

describe('warden hook claude-code', () => {
  it('rewrites an allowed command into warden run with absolute paths, the timeout as --limit, this agent as owner, and every other field copied', async () => {
    const dir = home({ '.claude/settings.json': { permissions: { allow: ['Bash(npm test:*)'] } } });
    const { out, exitCode } = await hook('claude-code', claudeInput('npm test -- --grep "a b"', { timeout: 2000, description: 'Run the tests', dangerouslyDisableSandbox: false }), dir);
    expect(exitCode).toBe(0);
    const specific = out!.hookSpecificOutput!;
    expect(specific.hookEventName).toBe('PreToolUse');
    expect(specific.permissionDecision).toBe('allow');
    expect(specific.updatedInput).toEqual({
      command: `${PREFIX} --yield 50000ms --owner-pid ${process.pid} --limit 2000ms -- bash -c 'npm test -- --grep "a b"'`,
      // Long enough for the yield, the stop sequence and the answer: Claude Code would kill the client at its own timeout.
      timeout: 90000,
      description: 'Run the tests',
      dangerouslyDisableSandbox: false,
    });
  });

  it('starts work sent to the background as a service of the agent: run_in_background, or a line ending in &', async () => {
    const dir = home({ '.claude/settings.json': { permissions: { allow: ['Bash'] } } });
    const SERVICE = `${PREFIX} --ready port --ready-timeout 10m --on-not-ready keep --lease 2h`;
    // The harness's own background: its timeout left as it was, a longer yield (nobody waits on the answer).
    const flagged = await hook('claude-code', claudeInput('npm run dev', { run_in_background: true, timeout: 5000 }), dir);
    expect(flagged.out!.hookSpecificOutput!.updatedInput).toEqual({ command: `${SERVICE} --yield 60000ms --owner-pid ${process.pid} -- bash -c 'npm run dev'`, run_in_background: true, timeout: 5000 });
    // A line that ends in &: the line without it, answered within 20 s (ready, or still running).
    const amp = await hook('claude-code', claudeInput('cd app && npm run dev > dev.log 2>&1 &'), dir);
    expect(amp.out!.hookSpecificOutput!.updatedInput!.command).toBe(`${SERVICE} --yield 20000ms --owner-pid ${process.pid} -- bash -c 'cd app && npm run dev > dev.log 2>&1'`);
    // A job inside a longer line runs with the line; && and &> are no background.
    for (const line of ['npm run dev & sleep 1; curl -s localhost:5173', 'make && make test', 'make &> log']) {
      expect((await hook('claude-code', claudeInput(line), dir)).out!.hookSpecificOutput!.updatedInput!.command, line).toMatch(/ run --format shell-results --yield 50000ms --owner-pid \d+ --limit 10m -- /);
    }
  });

  it('answers with the decision the user\'s rules give the original command', async () => {
    const dir = home({
      '.claude/settings.json': { permissions: { allow: ['Bash(npm test:*)', 'Bash(git status)', 'Bash(ls *)'], deny: ['Bash(rm:*)'] } },
      'project/.claude/settings.json': { permissions: { ask: ['Bash(git push:*)'] } },
      'project/.claude/settings.local.json': { permissions: { allow: ['Bash(make build)'] } },
      'managed/managed-settings.json': { permissions: { deny: ['Bash(curl:*)'] } },
    });
    const decide = async (command: string, mode = 'default') => (await hook('claude-code', claudeInput(command, {}, mode), dir)).out!.hookSpecificOutput!;
    expect((await decide('npm test')).permissionDecision).toBe('allow');
    expect((await decide('git status && npm test')).permissionDecision).toBe('allow');
    expect((await decide('ls -la')).permissionDecision).toBe('allow');
    expect((await decide('make build')).permissionDecision).toBe('allow');
    // A rule for a prefix does not cover another command joined to it, a substitution, or a redirection to a file.
    expect((await decide('npm test && npm publish')).permissionDecision).toBe('ask');
    expect((await decide('npm test $(cat args)')).permissionDecision).toBe('ask');
    expect((await decide('npm test > out.txt')).permissionDecision).toBe('ask');
    expect((await decide('npm test 2>&1')).permissionDecision).toBe('allow');
    expect((await decide('git push origin main')).permissionDecision).toBe('ask');
    expect((await decide('python3 x.py')).permissionDecision).toBe('ask');
    const denied = await decide('cd /tmp && FOO=1 sudo rm -rf build');
    expect(denied.permissionDecision).toBe('deny');
    expect(denied.permissionDecisionReason).toContain('Bash(rm:*)');
    expect(denied.updatedInput).toBeUndefined();
    expect((await decide('curl https://example.com')).permissionDecision).toBe('deny');
    expect((await decide('/bin/rm -rf build')).permissionDecision).toBe('deny');
    // A deny rule's words inside something it cannot judge: not allowed without asking.
    expect((await decide('bash -c "rm -rf /"')).permissionDecision).toBe('ask');
    // Modes: bypassPermissions allows what no deny or ask rule caught; dontAsk denies what no rule allowed.
    expect((await decide('python3 x.py', 'bypassPermissions')).permissionDecision).toBe('allow');
    expect((await decide('rm x', 'bypassPermissions')).permissionDecision).toBe('deny');
    expect((await decide('git push', 'bypassPermissions')).permissionDecision).toBe('ask');
    expect((await decide('python3 x.py', 'dontAsk')).permissionDecision).toBe('deny');
    expect((await decide('npm test', 'dontAsk')).permissionDecision).toBe('allow');
  });

  it('leaves commands to Claude Code\'s own sandbox when it is on (the host would run them outside it)', async () => {
    const dir = home({ '.claude/settings.json': { permissions: { allow: ['Bash'] }, sandbox: { enabled: true } } });
    expect((await hook('claude-code', claudeInput('make'), dir)).raw).toBe('');
    const unsandboxed = await hook('claude-code', claudeInput('make', { dangerouslyDisableSandbox: true }), dir);
    expect(unsandboxed.out!.hookSpecificOutput!.permissionDecision).toBe('allow');
  });

  it('asks when a settings file cannot be read', async () => {
    const dir = home({ '.claude/settings.json': '{ not json', 'project/.claude/settings.json': { permissions: { allow: ['Bash'] } } });
    const { out } = await hook('claude-code', claudeInput('ls'), dir);
    expect(out!.hookSpecificOutput!.permissionDecision).toBe('ask');
    expect(out!.hookSpecificOutput!.permissionDecisionReason).toMatch(/could not read .*settings\.json/);
  });

  it('passes Warden\'s own commands, other tools and non-JSON input through', async () => {
    const dir = home();
    for (const command of [`${q(process.execPath)} ${q(WARDEN_BIN)} wait abc123 --yield 50s --format shell-results`, 'warden stop abc123', 'npx warden list --live', `node /x/bin/warden.mjs show 1`]) {
      const { raw, exitCode } = await hook('claude-code', claudeInput(command), dir);
      expect(exitCode).toBe(0);
      expect(raw, command).toBe('');
    }
    expect((await hook('claude-code', { ...claudeInput('x'), tool_name: 'Read', tool_input: { file_path: '/etc/hosts' } }, dir)).raw).toBe('');
    const garbage = await hook('claude-code', 'not json', dir);
    expect(garbage.exitCode).toBe(0);
    expect(garbage.out!.systemMessage).toMatch(/not JSON; the command runs as it was/);
  });

  it('lets the original command through unchanged, and says so, when Warden cannot run', async () => {
    const dir = home({ '.claude/settings.json': { permissions: { allow: ['Bash'] } } });
    writeFileSync(join(dir, 'file'), '');
    const { out, exitCode } = await hook('claude-code', claudeInput('ls'), dir, { WARDEN_STATE_DIR: join(dir, 'file', 'state') });
    expect(exitCode).toBe(0);
    expect(out!.hookSpecificOutput).toBeUndefined();
    expect(out!.systemMessage).toMatch(/^warden: Warden cannot run here \(its state dir .*file\/state cannot be made: a file stands in its path\); the command runs as it was, without Warden\.$/);
  });

  it('lets the command run untouched, and says why, when its state dir is one warden run would refuse (others may write it, or another user owns it)', async () => {
    // Before, the hook rewrote the call and `warden run` then refused the state dir: the command failed with 125.
    const dir = home({ '.claude/settings.json': { permissions: { allow: ['Bash'] } } });
    const open = join(dir, 'open');
    mkdirSync(open);
    chmodSync(open, 0o777);
    const first = await hook('claude-code', claudeInput('ls'), dir, { WARDEN_STATE_DIR: join(open, 'state') });
    expect(first.out!.hookSpecificOutput).toBeUndefined();
    expect(first.out!.systemMessage).toMatch(/^warden: Warden cannot run here \(.*open, above Warden's state directory .* is writable by every user \(mode 0777\).*\); the command runs as it was, without Warden\.$/);
    if (process.getuid?.() !== 0) return;
    const theirs = join(dir, 'theirs');
    mkdirSync(theirs, { mode: 0o700 });
    chownSync(theirs, 65534, 65534);
    const second = await hook('claude-code', claudeInput('ls'), dir, { WARDEN_STATE_DIR: theirs });
    expect(second.out!.hookSpecificOutput).toBeUndefined();
    expect(second.out!.systemMessage).toMatch(/Warden's state directory .*theirs belongs to uid 65534, not to you \(uid 0\) or root/);
  });

  it('caps a timeout past Claude Code\'s own maximum at that maximum, and says so', async () => {
    // Before, `timeout: 1e20` became `--limit 100000000000000000000ms`, which warden run refuses.
    const dir = home({ '.claude/settings.json': { permissions: { allow: ['Bash'] } } });
    const { out } = await hook('claude-code', claudeInput('make', { timeout: 1e20 }), dir);
    expect(out!.hookSpecificOutput!.updatedInput!.command).toContain(' --limit 600000ms -- ');
    expect(out!.hookSpecificOutput!.updatedInput!.timeout).toBe(600_000);
    expect(out!.systemMessage).toBe("warden: the call's timeout (100000000000000000000 ms) is past Claude Code's own maximum, so the run's limit is 10 min.");
    const raised = await hook('claude-code', claudeInput('make', { timeout: 7_200_000 }), dir, { BASH_MAX_TIMEOUT_MS: '3600000' });
    expect(raised.out!.hookSpecificOutput!.updatedInput!.command).toContain(' --limit 3600000ms -- ');
    expect(raised.out!.systemMessage).toContain('so the run\'s limit is 1 h');
    const fine = await hook('claude-code', claudeInput('make', { timeout: 5000 }), dir);
    expect(fine.out!.systemMessage).toBeUndefined();
    expect(fine.out!.hookSpecificOutput!.updatedInput!.command).toContain(' --limit 5000ms -- ');
  });

  it('asks about the user\'s own command, not Warden\'s line around it, so the prompt and permission_denials name it', async () => {
    const dir = home({ '.claude/settings.json': { permissions: { allow: ['Bash(ls:*)'] } } });
    const { out } = await hook('claude-code', claudeInput('npm publish', { description: 'publish' }), dir);
    expect(out!.hookSpecificOutput).toEqual({ hookEventName: 'PreToolUse', permissionDecision: 'ask', permissionDecisionReason: 'warden: no Claude Code rule allows npm publish as written; approved, it runs as written, outside Warden' });
  });
});

describe('warden hook gemini', () => {
  it('answers tool_input with every field kept; a background command is a service of the agent', async () => {
    const dir = home();
    const input = { session_id: 's', cwd: dir, hook_event_name: 'BeforeTool', timestamp: 'now', tool_name: 'run_shell_command', tool_input: { command: "echo 'it''s'", description: 'say', dir_path: 'sub' } };
    const { out } = await hook('gemini', input, dir);
    expect(out).toEqual({ hookSpecificOutput: { hookEventName: 'BeforeTool', tool_input: { command: `${PREFIX} --yield 50000ms --owner-pid ${process.pid} --limit 10m -- bash -c 'echo '\\''it'\\'''\\''s'\\'''`, description: 'say', dir_path: 'sub' } } });
    const background = await hook('gemini', { ...input, tool_input: { command: 'sleep 100', is_background: true } }, dir);
    expect(background.out!.hookSpecificOutput!.tool_input).toEqual({ command: `${PREFIX} --ready port --ready-timeout 10m --on-not-ready keep --lease 2h --yield 60000ms --owner-pid ${process.pid} -- bash -c 'sleep 100'`, is_background: true });
    expect((await hook('gemini', { ...input, tool_name: 'read_file', tool_input: { path: 'x' } }, dir)).raw).toBe('');
  });
});

describe('warden hook gemini and Gemini\'s own rules', () => {
  const input = (command: string, cwd: string) => ({ session_id: 's', cwd, hook_event_name: 'BeforeTool', tool_name: 'run_shell_command', tool_input: { command } });

  it('leaves a command that a tools.exclude entry, a deny or ask_user policy rule, or a tools.core list is about to Gemini, which checks its policy on the rewritten call', async () => {
    const dir = home({
      '.gemini/settings.json': '{\n  // mine\n  "tools": {"exclude": ["run_shell_command(rm)"]},\n}\n',
      '.gemini/policies/mine.toml': '[[rule]]\ntoolName = "run_shell_command"\ncommandPrefix = ["git push", "npm publish"]\ndecision = "deny"\npriority = 500\n\n[[rule]]\ntoolName = "run_shell_command"\ncommandPrefix = "git status"\ndecision = "allow"\npriority = 100\n',
      'project/.gemini/policies/ask.toml': '[[rule]]\ntoolName = "run_shell_command"\ncommandPrefix = "docker"\ndecision = "ask_user"\npriority = 200\n',
    });
    const project = join(dir, 'project');
    for (const command of ['rm -rf build', 'cd x && sudo rm y', 'git push origin main', 'make && npm publish --dry-run', 'docker ps']) {
      expect((await hook('gemini', input(command, project), dir)).raw, command).toBe('');
    }
    for (const command of ['git status', 'ls -la', 'npm test']) {
      expect((await hook('gemini', input(command, project), dir)).out?.hookSpecificOutput?.tool_input?.command, command).toContain(' run --format shell-results ');
    }
    const core = home({ '.gemini/settings.json': JSON.stringify({ tools: { core: ['run_shell_command(git)', 'read_file'] } }) });
    expect((await hook('gemini', input('ls', core), core)).raw).toBe('');
  });
});

describe('warden hook codex', () => {
  const input = (command: string) => ({ session_id: 's', turn_id: 't', transcript_path: null, cwd: '/tmp', hook_event_name: 'PreToolUse', model: 'm', permission_mode: 'bypassPermissions', tool_name: 'Bash', tool_input: { command }, tool_use_id: 'c1' });

  it('leaves a sandboxed Codex\'s commands alone: a Warden host would run them outside the sandbox', async () => {
    const dir = home({ '.codex/config.toml': 'sandbox_mode = "workspace-write"\n' });
    expect((await hook('codex', input('cargo build'), dir)).raw).toBe('');
    const none = home();
    expect((await hook('codex', input('cargo build'), none)).raw).toBe('');
  });

  it('rewrites with permissionDecision allow (Codex takes updatedInput only with it) when Codex runs unsandboxed, unless its exec-policy rules name the command', async () => {
    const dir = home({ '.codex/config.toml': 'sandbox_mode = "danger-full-access"\n\n[mcp_servers.x]\nsandbox_mode = "read-only"\n', '.codex/rules/default.rules': 'prefix_rule(\n  pattern = ["git", "push"],\n  decision = "forbidden",\n)\n' });
    const { out } = await hook('codex', input('cargo build 2>&1 | tail -5'), dir);
    expect(out).toEqual({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', updatedInput: { command: `${PREFIX} --yield 6000ms --owner-pid ${process.pid} --limit 10m -- bash -c 'cargo build 2>&1 | tail -5'` } } });
    expect((await hook('codex', input('cd x && git push --force'), dir)).raw).toBe('');
  });
});

// The audit of issue 27 found each of these answered "allow" (Claude Code) or
// rewritten past the harness's own rules (Gemini CLI, Codex), and running the
// returned line deleted the directories. Each is now asked, or left to the
// harness, by the real hook process.
describe('the hook never widens a permission: the audit\'s cases', () => {
  const DIR = 'DIR';
  const hidden = {
    'a comment with a quote hides a line': `echo hi # it's\nrm -rf ${DIR}/a\n# '`,
    'an ANSI-C string hides what follows': `echo $'\\''; rm -rf ${DIR}/b; echo \\'`,
  };

  it('Claude Code with only Bash(echo:*) allowed asks for each, naming the command no rule allows', async () => {
    const dir = home({ '.claude/settings.json': { permissions: { allow: ['Bash(echo:*)'] } } });
    for (const [name, command] of Object.entries(hidden)) {
      const answer = (await hook('claude-code', claudeInput(command), dir)).out!.hookSpecificOutput!;
      expect(answer.permissionDecision, name).toBe('ask');
      expect(answer.permissionDecisionReason, name).toContain(`rm -rf ${DIR}`);
    }
    expect((await hook('claude-code', claudeInput('echo hi # fine'), dir)).out!.hookSpecificOutput!.permissionDecision).toBe('allow');
  });

  it('Claude Code with a bare Bash allowed and Bash(rm:*) or Bash(git push:*) denied asks for each disguise', async () => {
    const dir = home({ '.claude/settings.json': { permissions: { allow: ['Bash'], deny: ['Bash(rm:*)', 'Bash(git push:*)'] } } });
    for (const command of [`$'\\x72m' -rf x`, 'X=r; Y=m; $X$Y -rf x', '/bin/r? -rf x', 'eval "r""m -rf x"', 'git -C . push', ...Object.values(hidden)]) {
      const answer = (await hook('claude-code', claudeInput(command), dir)).out!.hookSpecificOutput!;
      expect(answer.permissionDecision, command).not.toBe('allow');
    }
    expect((await hook('claude-code', claudeInput('ls -la; git status'), dir)).out!.hookSpecificOutput!.permissionDecision).toBe('allow');
  });

  it('Gemini CLI with a deny policy on rm, and Codex with a forbidden rule on rm, judge each themselves', async () => {
    const gemini = home({ '.gemini/policies/deny.toml': '[[rule]]\ntoolName = "run_shell_command"\ncommandPrefix = "rm"\ndecision = "deny"\npriority = 500\n' });
    const codex = home({ '.codex/config.toml': 'sandbox_mode = "danger-full-access"\n', '.codex/rules/default.rules': 'prefix_rule(pattern = ["rm"], decision = "forbidden")\n' });
    for (const command of [...Object.values(hidden), `$'\\x72m' -rf x`, 'eval "r""m -rf x"']) {
      const geminiInput = { session_id: 's', cwd: gemini, hook_event_name: 'BeforeTool', tool_name: 'run_shell_command', tool_input: { command } };
      expect((await hook('gemini', geminiInput, gemini)).raw, command).toBe('');
      const codexInput = { session_id: 's', cwd: '/tmp', hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command } };
      expect((await hook('codex', codexInput, codex)).raw, command).toBe('');
    }
    const plain = { session_id: 's', cwd: gemini, hook_event_name: 'BeforeTool', tool_name: 'run_shell_command', tool_input: { command: 'echo hi # rm' } };
    expect((await hook('gemini', plain, gemini)).out?.hookSpecificOutput?.tool_input?.command).toContain(' run --format shell-results ');
  });
});
