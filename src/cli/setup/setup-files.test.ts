// `warden setup` and the files it writes for a user (issue 27, items 3 and 5;
// issue 28's two setup defects), by bin/warden.mjs in a process:
// - root on a user's home (sudo -E, a container's entrypoint) leaves every
//   file the user's, and a link the user planted never aims root's read or
//   write at root's files;
// - a symlinked config (dotfiles) is written through and stays a link;
// - Codex's config.toml stays valid whatever form mcp_servers has;
// - --remove compares by parsed content, so an edit inside a string stays;
// - a file it cannot write is one line, never "internal error";
// - a limit set by hand in the installed lines stays; --remove names only
//   what it took out.
// The other user is nobody (65534), through setpriv, as in the other kits.

import { execa } from 'execa';
import { chmodSync, chownSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'smol-toml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cannotRunAs } from '../../main/store/store-testkit';
import { WARDEN_BIN } from '../testkit';

const NOBODY = 65534;
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
// The bundle is built once before the one-line checks (a first run after a change says so on stderr).
beforeAll(async () => void (await execa(process.execPath, [WARDEN_BIN, '--version'])), 120_000);

const isRoot = process.getuid?.() === 0;
const asNobody = isRoot ? cannotRunAs(NOBODY, WARDEN_BIN) : 'switching to another user needs root';

/** A home under /tmp (not in a private dir, so nobody can own and enter it). */
function home(files: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'wsetupf-'));
  dirs.push(dir);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text, { mode: 0o600 });
  }
  return dir;
}

async function chownR(dir: string, uid: number): Promise<void> {
  await execa('chown', ['-R', `${uid}:${uid}`, dir]);
}

async function setup(dir: string, args: string[], options: { uid?: number; env?: Record<string, string> } = {}) {
  const argv = [process.execPath, WARDEN_BIN, 'setup', ...args];
  const [command, rest] = options.uid === undefined ? [argv[0]!, argv.slice(1)] : ['setpriv', [`--reuid=${options.uid}`, `--regid=${options.uid}`, '--clear-groups', ...argv]];
  return execa(command, rest, { reject: false, cwd: dir, env: { HOME: dir, CLAUDE_CONFIG_DIR: '', CODEX_HOME: '', GEMINI_CLI_HOME: '', ...options.env }, extendEnv: true });
}

const owner = (path: string) => {
  const stat = lstatSync(path);
  return { uid: stat.uid, gid: stat.gid };
};

const CLAUDE_JSON = '{\n  "numStartups": 3,\n  "mcpServers": {"github": {"command": "gh-mcp"}}\n}\n';

describe('root runs setup on a user\'s home', () => {
  it('every file it writes stays the user\'s: owner, group and mode, the backup and new files too; --remove as well', async (context) => {
    if (!isRoot) return context.skip('needs root');
    const dir = home({ '.claude.json': CLAUDE_JSON });
    await chownR(dir, NOBODY);
    const added = await setup(dir, ['claude-code', '--shell']);
    expect(added.exitCode, added.stderr).toBe(0);
    for (const file of ['.claude.json', '.claude.json.warden-backup', '.claude', '.claude/settings.json']) expect(owner(join(dir, file)), file).toEqual({ uid: NOBODY, gid: NOBODY });
    expect(statSync(join(dir, '.claude.json')).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(join(dir, '.claude.json'), 'utf8'))).toHaveProperty('mcpServers.warden');
    const removed = await setup(dir, ['claude-code', '--remove']);
    expect(removed.exitCode, removed.stderr).toBe(0);
    expect(readFileSync(join(dir, '.claude.json'), 'utf8')).toBe(CLAUDE_JSON);
    expect(owner(join(dir, '.claude.json'))).toEqual({ uid: NOBODY, gid: NOBODY });
  });

  it('a link the user planted at the config or the backup never aims root at root\'s files', async (context) => {
    if (!isRoot) return context.skip('needs root');
    const vault = home({ secret: 'root only\n' });
    chmodSync(vault, 0o755);
    const secret = join(vault, 'secret');
    const dir = home({});
    symlinkSync(secret, join(dir, '.claude.json'));
    await chownR(dir, NOBODY);
    await execa('chown', ['-h', `${NOBODY}:${NOBODY}`, join(dir, '.claude.json')]);
    const planted = await setup(dir, ['claude-code']);
    expect(planted.exitCode).toBe(125);
    expect(planted.stderr.trim().split('\n')).toHaveLength(1);
    expect(planted.stderr).toMatch(/^warden: cannot read ~\/\.claude\.json: permission denied; nothing was changed\.$/);
    expect(readFileSync(secret, 'utf8')).toBe('root only\n');
    expect(owner(secret)).toEqual({ uid: 0, gid: 0 });

    // The backup: --remove would put what it holds into the user's config.
    const other = home({ '.claude.json': CLAUDE_JSON });
    expect((await setup(other, ['claude-code'])).exitCode).toBe(0);
    rmSync(join(other, '.claude.json.warden-backup'));
    symlinkSync(secret, join(other, '.claude.json.warden-backup'));
    await chownR(other, NOBODY);
    const removed = await setup(other, ['claude-code', '--remove']);
    expect(removed.exitCode).toBe(125);
    expect(removed.stderr).toMatch(/^warden: ~\/\.claude\.json\.warden-backup is a symbolic link, which warden setup never makes; remove it and run setup again\.$/);
    expect(readFileSync(join(other, '.claude.json'), 'utf8')).not.toContain('root only');
  });
});

describe('files setup cannot write as they are', () => {
  it('as nobody: a read-only home is one line, never "internal error"', async (context) => {
    if (asNobody) return context.skip(asNobody);
    const dir = home({});
    await chownR(dir, NOBODY);
    chmodSync(dir, 0o555);
    const done = await setup(dir, ['claude-code'], { uid: NOBODY });
    expect(done.exitCode).toBe(125);
    expect(done.stderr.trim().split('\n')).toHaveLength(1);
    expect(done.stderr).toMatch(/^warden: cannot write ~\/\.claude\.json: permission denied \(in .*\); nothing was changed\.$/);
  });

  it('as nobody: a file nobody may write but does not own is refused, not taken over', async (context) => {
    if (asNobody) return context.skip(asNobody);
    const dir = home({ '.claude.json': CLAUDE_JSON });
    await chownR(dir, NOBODY);
    chownSync(join(dir, '.claude.json'), 0, 0);
    chmodSync(join(dir, '.claude.json'), 0o666);
    const done = await setup(dir, ['claude-code'], { uid: NOBODY });
    expect(done.exitCode).toBe(125);
    expect(done.stderr).toMatch(/^warden: ~\/\.claude\.json belongs to uid 0 \(group 0\); writing it as uid 65534 would change its owner, so nothing was changed\. Run warden setup as its owner\.$/m);
    expect(owner(join(dir, '.claude.json'))).toEqual({ uid: 0, gid: 0 });
    expect(readFileSync(join(dir, '.claude.json'), 'utf8')).toBe(CLAUDE_JSON);
  });
});

describe('a symlinked config (dotfiles)', () => {
  it('is written through to the real file and stays a link; --remove gives the real file back', async () => {
    const dir = home({ 'dotfiles/claude.json': CLAUDE_JSON });
    symlinkSync('dotfiles/claude.json', join(dir, '.claude.json'));
    expect((await setup(dir, ['claude-code'])).exitCode).toBe(0);
    expect(lstatSync(join(dir, '.claude.json')).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(dir, '.claude.json'))).toBe('dotfiles/claude.json');
    expect(JSON.parse(readFileSync(join(dir, 'dotfiles/claude.json'), 'utf8'))).toHaveProperty('mcpServers.warden');
    expect((await setup(dir, ['claude-code', '--remove'])).exitCode).toBe(0);
    expect(lstatSync(join(dir, '.claude.json')).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(dir, 'dotfiles/claude.json'), 'utf8')).toBe(CLAUDE_JSON);
  });
});

describe('Codex config.toml in every form of mcp_servers', () => {
  it.each([
    ['an inline table', 'model = "o4"\nmcp_servers = { docs = { command = "docs-mcp", args = ["serve"] } }\n\n[projects."/src"]\ntrust_level = "trusted"\n'],
    ['an empty inline table', 'mcp_servers = {}\n'],
    ['dotted keys', 'mcp_servers.docs.command = "docs-mcp"\nmcp_servers.docs.args = ["serve"]\n'],
    ['a [mcp_servers] table with inline members', '[mcp_servers]\ndocs = { command = "docs-mcp" }\n'],
    ['[mcp_servers.NAME] tables', '# mine\n[mcp_servers.docs]\ncommand = "docs-mcp" # inline comment\n'],
    ['no mcp_servers at all', 'model = "o4"\n'],
  ])('%s: the result parses, holds both servers, and --remove gives the file back', async (_name, toml) => {
    const dir = home({ '.codex/config.toml': toml });
    const before = parse(toml) as { mcp_servers?: Record<string, unknown> };
    const added = await setup(dir, ['codex']);
    expect(added.exitCode, added.stderr).toBe(0);
    const text = readFileSync(join(dir, '.codex/config.toml'), 'utf8');
    const after = parse(text) as { mcp_servers: Record<string, { args?: string[]; env?: unknown }> };
    expect(Object.keys(after.mcp_servers).sort()).toEqual([...Object.keys(before.mcp_servers ?? {}), 'warden'].sort());
    expect(after.mcp_servers.warden!.args).toEqual([WARDEN_BIN, 'mcp']);
    expect(after.mcp_servers.warden!.env).toEqual({ WARDEN_DEFAULT_LIMIT: '10m' });
    expect((await setup(dir, ['codex'])).stdout).toContain('already set up');
    const removed = await setup(dir, ['codex', '--remove']);
    expect(removed.exitCode, removed.stderr).toBe(0);
    expect(readFileSync(join(dir, '.codex/config.toml'), 'utf8')).toBe(toml);
  });

  it('a config.toml that is not TOML is one line, and nothing changes', async () => {
    const dir = home({ '.codex/config.toml': 'model = \n' });
    const done = await setup(dir, ['codex']);
    expect(done.exitCode).toBe(125);
    expect(done.stderr).toMatch(/^warden: ~\/\.codex\/config\.toml is not valid TOML \(line 1: .*\); nothing was changed\.$/);
    expect(readFileSync(join(dir, '.codex/config.toml'), 'utf8')).toBe('model = \n');
  });

  it('a warden server written inline by someone else is left alone', async () => {
    const dir = home({ '.codex/config.toml': 'mcp_servers = { warden = { command = "mine" } }\n' });
    const done = await setup(dir, ['codex']);
    expect(done.exitCode).toBe(125);
    expect(done.stderr).toMatch(/already has an mcp_servers\.warden that warden setup did not write/);
  });
});

describe('--remove compares by parsed content', () => {
  it('an edit inside a string after setup stays (the backup is not put back over it)', async () => {
    const dir = home({ '.claude.json': '{\n  "motd": "a b",\n  "x": 1\n}\n' });
    expect((await setup(dir, ['claude-code'])).exitCode).toBe(0);
    const path = join(dir, '.claude.json');
    writeFileSync(path, readFileSync(path, 'utf8').replace('"a b"', '"a  b"'));
    expect((await setup(dir, ['claude-code', '--remove'])).exitCode).toBe(0);
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({ motd: 'a  b', x: 1 });
  });

  it('a Codex edit inside a string stays too; layout alone restores the backup byte for byte', async () => {
    const toml = 'model = "o4 mini"\n';
    const dir = home({ '.codex/config.toml': toml });
    expect((await setup(dir, ['codex'])).exitCode).toBe(0);
    const path = join(dir, '.codex/config.toml');
    writeFileSync(path, readFileSync(path, 'utf8').replace('"o4 mini"', '"o4  mini"'));
    expect((await setup(dir, ['codex', '--remove'])).exitCode).toBe(0);
    expect(readFileSync(path, 'utf8')).toBe('model = "o4  mini"\n');
    // Only spacing changed: the backup, as it was.
    const other = home({ '.codex/config.toml': toml });
    expect((await setup(other, ['codex'])).exitCode).toBe(0);
    const otherPath = join(other, '.codex/config.toml');
    writeFileSync(otherPath, readFileSync(otherPath, 'utf8').replace('model = "o4 mini"', 'model   =   "o4 mini"'));
    expect((await setup(other, ['codex', '--remove'])).exitCode).toBe(0);
    expect(readFileSync(otherPath, 'utf8')).toBe(toml);
  });
});

describe('issue 28: the installed lines and what --remove says', () => {
  it('a limit set by hand in the hook line and the server entry works and survives setup again; --limit replaces it', async () => {
    const dir = home({});
    expect((await setup(dir, ['claude-code', '--shell'])).exitCode).toBe(0);
    const settingsPath = join(dir, '.claude/settings.json');
    const hookLine = () => (JSON.parse(readFileSync(settingsPath, 'utf8')) as { hooks: { PreToolUse: { hooks: { command: string }[] }[] } }).hooks.PreToolUse[0]!.hooks[0]!.command;
    // Setup's own line carries no --limit, so one the user puts anywhere in it is the one the hook reads.
    expect(hookLine()).not.toContain('--limit');
    writeFileSync(settingsPath, readFileSync(settingsPath, 'utf8').replace(' hook claude-code', ' hook claude-code --limit 30m'));
    const claudePath = join(dir, '.claude.json');
    writeFileSync(claudePath, readFileSync(claudePath, 'utf8').replace('"WARDEN_DEFAULT_LIMIT": "10m"', '"WARDEN_DEFAULT_LIMIT": "30m"'));
    const again = await setup(dir, ['claude-code', '--shell']);
    expect(again.stdout).toContain('~/.claude/settings.json: already set up');
    expect(again.stdout).toContain('~/.claude.json: already set up');
    expect(hookLine()).toMatch(/ hook claude-code --limit 30m$/);
    // The hook reads it: its answer's warden run line carries 30m (a session that allows the command: an ask leaves the call as it was).
    const answer = await execa('sh', ['-c', hookLine()], { input: JSON.stringify({ hook_event_name: 'PreToolUse', tool_name: 'Bash', permission_mode: 'bypassPermissions', tool_input: { command: 'true' } }), reject: false, env: { HOME: dir } });
    expect(answer.stdout).toContain('--limit 30m');
    const given = await setup(dir, ['claude-code', '--shell', '--limit', '20m']);
    expect(given.exitCode).toBe(0);
    expect(hookLine()).toMatch(/ hook claude-code --limit 20m$/);
    expect(JSON.parse(readFileSync(claudePath, 'utf8'))).toHaveProperty('mcpServers.warden.env.WARDEN_DEFAULT_LIMIT', '20m');
  });

  it('setup gemini --remove after a setup without --shell names only the server it took out', async () => {
    const dir = home({ '.gemini/settings.json': '{"ui": {"theme": "x"}}\n' });
    expect((await setup(dir, ['gemini'])).exitCode).toBe(0);
    const removed = await setup(dir, ['gemini', '--remove']);
    expect(removed.exitCode).toBe(0);
    expect(removed.stdout).toMatch(/~\/\.gemini\/settings\.json: took out mcpServers\.warden$/m);
    expect(removed.stdout).not.toContain('BeforeTool');
  });
});
