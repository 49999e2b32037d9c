// `warden setup` as a user runs it: bin/warden.mjs in a process, HOME pointed
// at a temporary directory holding the user's own settings (other servers,
// comments, trailing commas, key order). What the user had must stay byte
// for byte, a backup must sit beside each changed file, a second run must
// change nothing, --dry-run must write nothing, and --remove must give the
// user's files back exactly.

import { execa } from 'execa';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { WARDEN_BIN } from '../testkit';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function home(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'wsetup-'));
  dirs.push(dir);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text, { mode: 0o600 });
  }
  return dir;
}

async function setup(dir: string, args: string[], env: Record<string, string> = {}) {
  return execa(process.execPath, [WARDEN_BIN, 'setup', ...args], { reject: false, cwd: dir, env: { HOME: dir, CLAUDE_CONFIG_DIR: '', CODEX_HOME: '', GEMINI_CLI_HOME: '', ...env }, extendEnv: true });
}

/** Every file under dir with its content, for before/after comparisons. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (sub: string) => {
    for (const name of readdirSync(join(dir, sub))) {
      const path = join(sub, name);
      if (statSync(join(dir, path)).isDirectory()) walk(path);
      else out[path] = readFileSync(join(dir, path), 'utf8');
    }
  };
  walk('');
  return out;
}

const CLAUDE_JSON = `{
  "numStartups": 12,
  "mcpServers": {
    "github": {"command": "gh-mcp", "args": ["--stdio"]}
  },
  "projects": {"/src/app": {"allowedTools": []}},
  "zLast": true
}
`;

const CLAUDE_SETTINGS = `{
  "permissions": {"allow": ["Bash(npm test:*)"]},
  "hooks": {
    "PreToolUse": [
      {"matcher": "Edit", "hooks": [{"type": "command", "command": "lint-it"}]}
    ]
  }
}
`;

const GEMINI_SETTINGS = `{
  // my theme
  "ui": {"theme": "Dracula"},
  /* servers I use */
  "mcpServers": {
    "docs": {"httpUrl": "http://127.0.0.1:9/mcp"},
  },
}
`;

const CODEX_TOML = `# my Codex settings
model = "o4-mini"
approval_policy = "on-request"

[mcp_servers.docs]
command = "docs-mcp"
args = ["serve"]   # inline comment

[projects."/src/app"]
trust_level = "trusted"
`;

describe('warden setup claude-code', () => {
  it('adds warden mcp by absolute paths and the Bash hook, keeps the user\'s settings, backs up, is idempotent and removes exactly', async () => {
    const dir = home({ '.claude.json': CLAUDE_JSON, '.claude/settings.json': CLAUDE_SETTINGS });
    const before = snapshot(dir);
    const first = await setup(dir, ['claude-code', '--shell']);
    expect(first.exitCode, first.stderr).toBe(0);
    expect(first.stdout).toContain('~/.claude.json: added mcpServers.warden (backup: ~/.claude.json.warden-backup)');

    const claudeJson = readFileSync(join(dir, '.claude.json'), 'utf8');
    const parsed = JSON.parse(claudeJson) as { mcpServers: Record<string, unknown> };
    expect(Object.keys(parsed)).toEqual(['numStartups', 'mcpServers', 'projects', 'zLast']);
    expect(Object.keys(parsed.mcpServers)).toEqual(['github', 'warden']);
    expect(parsed.mcpServers.warden).toEqual({ type: 'stdio', command: process.execPath, args: [WARDEN_BIN, 'mcp'], env: { WARDEN_DEFAULT_LIMIT: '10m' }, alwaysLoad: true });
    // The user's text before the new member is untouched.
    expect(claudeJson.startsWith(CLAUDE_JSON.slice(0, CLAUDE_JSON.indexOf('}\n  },') + 1))).toBe(true);
    expect(statSync(join(dir, '.claude.json')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(dir, '.claude.json.warden-backup'), 'utf8')).toBe(CLAUDE_JSON);

    const settings = JSON.parse(readFileSync(join(dir, '.claude/settings.json'), 'utf8')) as { permissions: unknown; hooks: { PreToolUse: { matcher: string; hooks: { command: string }[] }[] } };
    expect(settings.permissions).toEqual({ allow: ['Bash(npm test:*)'] });
    expect(settings.hooks.PreToolUse.map((g) => g.matcher)).toEqual(['Edit', 'Bash']);
    expect(settings.hooks.PreToolUse[1]!.hooks[0]!.command).toBe(`${process.execPath} ${WARDEN_BIN} hook claude-code`);

    const afterFirst = snapshot(dir);
    const second = await setup(dir, ['claude-code', '--shell']);
    expect(second.exitCode).toBe(0);
    expect(second.stdout).toContain('already set up');
    expect(snapshot(dir)).toEqual(afterFirst);

    const removed = await setup(dir, ['claude-code', '--remove']);
    expect(removed.exitCode, removed.stderr).toBe(0);
    expect(snapshot(dir)).toEqual(before);
  });

  it('--dry-run prints the change as a diff and writes nothing', async () => {
    const dir = home({ '.claude.json': CLAUDE_JSON });
    const before = snapshot(dir);
    const result = await setup(dir, ['claude-code', '--shell', '--dry-run']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('--- ~/.claude.json\n+++ ~/.claude.json\n');
    expect(result.stdout).toContain('+    "warden": {');
    expect(result.stdout).toContain('+      "alwaysLoad": true');
    expect(result.stdout).toContain('--- /dev/null\n+++ ~/.claude/settings.json');
    expect(result.stdout).toContain('nothing was written');
    expect(snapshot(dir)).toEqual(before);
  });

  it('honours CLAUDE_CONFIG_DIR, and --scope project writes .mcp.json and .claude/settings.json here', async () => {
    const dir = home({});
    const config = join(dir, 'cfg');
    expect((await setup(dir, ['claude-code', '--shell'], { CLAUDE_CONFIG_DIR: config })).exitCode).toBe(0);
    expect(JSON.parse(readFileSync(join(config, '.claude.json'), 'utf8'))).toHaveProperty('mcpServers.warden.alwaysLoad', true);
    expect(existsSync(join(config, 'settings.json'))).toBe(true);
    expect(existsSync(join(dir, '.claude.json'))).toBe(false);

    const project = join(dir, 'proj');
    mkdirSync(project);
    const result = await execa(process.execPath, [WARDEN_BIN, 'setup', 'claude-code', '--scope', 'project', '--shell'], { cwd: project, env: { HOME: dir }, reject: false });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(project, '.mcp.json'), 'utf8'))).toHaveProperty('mcpServers.warden.command', process.execPath);
    expect(existsSync(join(project, '.claude', 'settings.json'))).toBe(true);
  });

  it('refuses a settings file that is not JSON in one line, changing nothing', async () => {
    const dir = home({ '.claude.json': '{"a": 1,, }' });
    const before = snapshot(dir);
    const result = await setup(dir, ['claude-code']);
    expect(result.exitCode).toBe(125);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/^warden: ~\/\.claude\.json is not valid JSON \(.*line 1.*\); nothing was changed\.$/m);
    expect(snapshot(dir)).toEqual(before);
  });
});

describe('warden setup gemini', () => {
  it('keeps comments and trailing commas, adds the server and the BeforeTool hook, says the folder must be trusted, and removes exactly', async () => {
    const dir = home({ '.gemini/settings.json': GEMINI_SETTINGS });
    const before = snapshot(dir);
    const result = await setup(dir, ['gemini', '--shell']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/trusted folder/);
    const text = readFileSync(join(dir, '.gemini/settings.json'), 'utf8');
    expect(text).toContain('// my theme');
    expect(text).toContain('/* servers I use */');
    expect(text).toContain('"docs": {"httpUrl": "http://127.0.0.1:9/mcp"},');
    expect(text).toContain('"command": "/');
    expect(text).toMatch(/"matcher": "run_shell_command"/);
    expect(text).toContain(`hook gemini"`);
    expect((await setup(dir, ['gemini', '--shell'])).stdout).toContain('already set up');
    expect((await setup(dir, ['gemini', '--shell', '--remove'])).exitCode).toBe(0);
    expect(snapshot(dir)).toEqual(before);
  });
});

describe('warden setup codex', () => {
  it('appends one [mcp_servers.warden] block with env_vars and tool_timeout_sec, leaves the rest of config.toml as it was, and removes exactly', async () => {
    const dir = home({ '.codex/config.toml': CODEX_TOML });
    const before = snapshot(dir);
    const result = await setup(dir, ['codex', '--shell', '--limit', '15m']);
    expect(result.exitCode, result.stderr).toBe(0);
    const text = readFileSync(join(dir, '.codex/config.toml'), 'utf8');
    expect(text.startsWith(CODEX_TOML)).toBe(true);
    const block = text.slice(CODEX_TOML.length);
    expect(block).toContain('[mcp_servers.warden]\n');
    expect(block).toContain(`command = ${JSON.stringify(process.execPath)}\n`);
    expect(block).toContain(`args = [${JSON.stringify(WARDEN_BIN)}, "mcp"]\n`);
    expect(block).toMatch(/^env_vars = \[.*"WARDEN_STATE_DIR".*\]$/m);
    expect(block).toMatch(/^tool_timeout_sec = (\d+)$/m);
    expect(Number(/^tool_timeout_sec = (\d+)$/m.exec(block)![1])).toBeGreaterThan(50);
    expect(block).toContain('[mcp_servers.warden.env]\nWARDEN_DEFAULT_LIMIT = "15m"\n');
    const hooks = JSON.parse(readFileSync(join(dir, '.codex/hooks.json'), 'utf8')) as { hooks: { PreToolUse: { matcher: string; hooks: { command: string }[] }[] } };
    expect(hooks.hooks.PreToolUse[0]!.matcher).toBe('Bash');
    expect(hooks.hooks.PreToolUse[0]!.hooks[0]!.command).toContain('hook codex --limit 15m');
    expect(readFileSync(join(dir, '.codex/config.toml.warden-backup'), 'utf8')).toBe(CODEX_TOML);

    const again = await setup(dir, ['codex', '--shell', '--limit', '15m']);
    expect(again.stdout).toContain('config.toml: already set up');
    expect((await setup(dir, ['codex', '--shell', '--remove'])).exitCode).toBe(0);
    expect(snapshot(dir)).toEqual(before);
  });

  it('honours CODEX_HOME, and leaves a warden server it did not write alone', async () => {
    const dir = home({ 'ch/config.toml': '[mcp_servers.warden]\ncommand = "mine"\n' });
    const before = snapshot(dir);
    const result = await setup(dir, ['codex'], { CODEX_HOME: join(dir, 'ch') });
    expect(result.exitCode).toBe(125);
    expect(result.stderr).toMatch(/already has an mcp_servers\.warden that warden setup did not write/);
    expect(snapshot(dir)).toEqual(before);
  });
});

describe('warden setup and hook --help', () => {
  it('answer --help, and a bad harness or flag in one line', async () => {
    for (const args of [['setup', '--help'], ['setup', 'codex', '--help'], ['hook', '--help'], ['hook', 'gemini', '--help']]) {
      const result = await execa(process.execPath, [WARDEN_BIN, ...args], { reject: false });
      expect(result.exitCode, args.join(' ')).toBe(0);
      expect(result.stdout).toMatch(/^Usage: warden (setup|hook) /);
    }
    const bad = await execa(process.execPath, [WARDEN_BIN, 'setup', 'cursor'], { reject: false });
    expect(bad.exitCode).toBe(125);
    expect(bad.stderr).toBe('warden: warden setup takes claude-code, codex or gemini, not "cursor" (see warden setup --help).');
    const flag = await execa(process.execPath, [WARDEN_BIN, 'setup', 'codex', '--scope', 'everywhere'], { reject: false });
    expect(flag.stderr).toBe('warden: --scope takes user or project, not "everywhere".');
    const hook = await execa(process.execPath, [WARDEN_BIN, 'hook', 'cursor'], { reject: false, input: '{}' });
    expect(hook.exitCode).toBe(125);
    expect(hook.stderr).toMatch(/^warden: warden hook takes claude-code, codex or gemini, not "cursor"/);
  });
});
