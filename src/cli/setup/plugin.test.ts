// The plugins' tree (plugin-tree.ts) and `warden setup HARNESS --plugin`'s
// plain parts: the words, the harness commands it runs, PATH. The plugins
// validated and used by the real harness CLIs are test/harness/'s.

import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { onPath, parsePluginArgs, stepsFor } from './plugin';
import { integrationFiles, writeIntegrations } from './plugin-tree';

describe('the plugins tree', () => {
  const files = integrationFiles('9.8.7');

  it('has each harness its manifest, MCP server, hooks, skill and commands, and each JSON file parses', () => {
    expect([...files.keys()].sort()).toEqual([
      '.agents/plugins/marketplace.json',
      '.claude-plugin/marketplace.json',
      'README.md',
      'claude-code/.claude-plugin/plugin.json',
      'claude-code/.mcp.json',
      'claude-code/README.md',
      'claude-code/commands/runs.md',
      'claude-code/commands/stop.md',
      'claude-code/hooks/hooks.json',
      'claude-code/monitors/monitors.json',
      'claude-code/skills/warden/SKILL.md',
      'codex/.codex-plugin/plugin.json',
      'codex/.mcp.json',
      'codex/README.md',
      'codex/hooks.json',
      'codex/skills/warden/SKILL.md',
      'gemini/commands/warden/runs.toml',
      'gemini/commands/warden/stop.toml',
      'gemini/gemini-extension.json',
      'gemini/hooks/hooks.json',
      'gemini/skills/warden/SKILL.md',
    ]);
    for (const [path, text] of files) if (path.endsWith('.json')) expect(() => JSON.parse(text), path).not.toThrow();
  });

  const parsed = (path: string) => JSON.parse(files.get(path)!) as Record<string, unknown>;

  it('names the version and runs warden from PATH, never a path of this package', () => {
    expect(parsed('claude-code/.claude-plugin/plugin.json')).toMatchObject({ name: 'warden', version: '9.8.7' });
    expect(parsed('codex/.codex-plugin/plugin.json')).toMatchObject({ name: 'warden', version: '9.8.7', skills: './skills/', mcpServers: './.mcp.json', hooks: './hooks.json' });
    expect(parsed('gemini/gemini-extension.json')).toMatchObject({ name: 'warden', version: '9.8.7' });
    expect(parsed('.claude-plugin/marketplace.json')).toMatchObject({ name: 'warden', plugins: [{ name: 'warden', source: './claude-code', version: '9.8.7' }] });
    expect(parsed('.agents/plugins/marketplace.json')).toMatchObject({ name: 'warden', plugins: [{ name: 'warden', source: { source: 'local', path: './codex' } }] });
    for (const path of ['claude-code/.mcp.json', 'codex/.mcp.json']) expect((parsed(path).mcpServers as Record<string, unknown>).warden).toMatchObject({ command: 'warden', args: ['mcp'] });
    expect((parsed('gemini/gemini-extension.json').mcpServers as Record<string, unknown>).warden).toMatchObject({ command: 'warden', args: ['mcp'] });
    for (const [path, text] of files) expect(text, path).not.toMatch(/\/work\/|node_modules|bin\/warden\.mjs/);
  });

  it('carries Warden settings past each harness: Codex env_vars, Gemini a WARDEN_STATE_DIR setting', () => {
    expect((parsed('codex/.mcp.json').mcpServers as Record<string, { env_vars: string[]; tool_timeout_sec: number }>).warden).toMatchObject({ env_vars: expect.arrayContaining(['WARDEN_STATE_DIR', 'XDG_STATE_HOME']), tool_timeout_sec: 120 });
    expect(parsed('gemini/gemini-extension.json').settings).toEqual([expect.objectContaining({ envVar: 'WARDEN_STATE_DIR' })]);
  });

  it('hooks the shell tool and the session end in each harness; Claude Code also monitors ends of runs left going', () => {
    expect(parsed('claude-code/hooks/hooks.json')).toEqual({
      hooks: {
        PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'warden hook claude-code', timeout: 30 }] }],
        SessionEnd: [{ hooks: [{ type: 'command', command: "warden stop --owner agent --quiet --why 'its agent session ended'", timeout: 60 }] }],
      },
    });
    expect(JSON.stringify(parsed('codex/hooks.json'))).toContain('"command":"warden hook codex"');
    expect(JSON.stringify(parsed('gemini/hooks/hooks.json'))).toContain('"matcher":"run_shell_command","hooks":[{"name":"warden","type":"command","command":"warden hook gemini"}]');
    for (const path of ['codex/hooks.json', 'gemini/hooks/hooks.json']) expect(files.get(path), path).toContain('warden stop --owner agent --quiet');
    expect(JSON.parse(files.get('claude-code/monitors/monitors.json')!)).toEqual([{ name: 'warden-runs', command: 'warden events --ended --yielded --owner agent', description: expect.any(String), when: 'always' }]);
  });

  it("the skill says when to use run (with ready for servers), wait, search and stop, in each harness's copy", () => {
    const skills = ['claude-code', 'codex', 'gemini'].map((h) => files.get(`${h}/skills/warden/SKILL.md`)!);
    expect(new Set(skills).size).toBe(1);
    const skill = skills[0]!;
    expect(skill).toMatch(/^---\nname: "warden"\ndescription: ".+"\n---\n/);
    for (const words of ['## run', '`limit`', '`ready`', '## wait', '## search', '## stop', '`okExit`', '`next`']) expect(skill).toContain(words);
  });

  it('has /warden:runs and /warden:stop for Claude Code and Gemini CLI, arguments in each harness\'s own form', () => {
    expect(files.get('claude-code/commands/runs.md')).toMatch(/^---\ndescription: ".+"\nargument-hint: ".+"\n---\n\nList the Warden runs/);
    expect(files.get('claude-code/commands/stop.md')).toContain('{"id": "$ARGUMENTS"}');
    expect(files.get('gemini/commands/warden/stop.toml')).toContain('{\\"id\\": \\"{{args}}\\"}');
    expect(files.get('gemini/commands/warden/runs.toml')).not.toContain('$ARGUMENTS');
  });

  it('is written only when it differs, and swapped in whole', () => {
    const root = mkdtempSync(join(tmpdir(), 'wtree-'));
    expect(writeIntegrations(root, '1.0.0')).toBe(true);
    expect(writeIntegrations(root, '1.0.0')).toBe(false);
    expect(readFileSync(join(root, 'integrations', 'claude-code', '.claude-plugin', 'plugin.json'), 'utf8')).toContain('"version": "1.0.0"');
    writeFileSync(join(root, 'integrations', 'stray.txt'), 'x');
    expect(writeIntegrations(root, '1.0.1')).toBe(true);
    expect(readdirSync(join(root, 'integrations'))).not.toContain('stray.txt');
    expect(readdirSync(root)).toEqual(['integrations']);
  });
});

describe('warden setup --plugin', () => {
  it.each<[string[], ReturnType<typeof parsePluginArgs>]>([
    [['claude-code', '--plugin'], { harness: 'claude-code', remove: false, dryRun: false, scope: 'user' }],
    [['claude-code', '--plugin', '--scope', 'project', '--remove'], { harness: 'claude-code', remove: true, dryRun: false, scope: 'project' }],
    [['codex', '--plugin', '--dry-run'], { harness: 'codex', remove: false, dryRun: true, scope: 'user' }],
    [['gemini', '--plugin', '--scope=user'], { harness: 'gemini', remove: false, dryRun: false, scope: 'user' }],
  ])('%j', (args, options) => expect(parsePluginArgs(args)).toEqual(options));

  it.each<[string[], string]>([
    [['vim', '--plugin'], 'warden setup takes claude-code, codex or gemini, not "vim" (see warden setup --help).'],
    [['codex', '--plugin', '--scope', 'project'], '--plugin for codex installs for the user only (codex plugin add has no scope): drop --scope.'],
    [['claude-code', '--plugin', '--scope', 'everywhere'], '--scope takes user, project or local, not "everywhere".'],
    [['claude-code', '--plugin', '--shell'], '--shell goes with the settings edits, not --plugin: the plugin has the shell hook already, and its runs take WARDEN_DEFAULT_LIMIT (default 10m).'],
    [['gemini', '--plugin', '--limit=5m'], '--limit goes with the settings edits, not --plugin'],
    [['gemini', '--plugin', '--bogus'], 'warden setup: unknown argument "--bogus" (see warden setup --help).'],
  ])('%j is refused: %s', (args, message) => expect(() => parsePluginArgs(args)).toThrow(message));

  it.each<[string, boolean, string[][]]>([
    ['claude-code', false, [['claude', 'plugin', 'marketplace', 'add', '/pkg/integrations'], ['claude', 'plugin', 'install', 'warden@warden', '--scope', 'user']]],
    ['claude-code', true, [['claude', 'plugin', 'uninstall', 'warden@warden', '--scope', 'user'], ['claude', 'plugin', 'marketplace', 'remove', 'warden']]],
    ['codex', false, [['codex', 'plugin', 'marketplace', 'add', '/pkg/integrations'], ['codex', 'plugin', 'add', 'warden@warden']]],
    ['codex', true, [['codex', 'plugin', 'remove', 'warden@warden'], ['codex', 'plugin', 'marketplace', 'remove', 'warden']]],
    ['gemini', false, [['gemini', 'extensions', 'link', '/pkg/integrations/gemini', '--consent']]],
    ['gemini', true, [['gemini', 'extensions', 'uninstall', 'warden']]],
  ])('%s (remove %s) runs the harness\'s own commands', (harness, remove, argvs) => {
    const steps = stepsFor({ ...parsePluginArgs([harness, '--plugin']), remove }, harness === 'claude-code' ? 'claude' : harness, '/pkg/integrations', '/state');
    expect(steps.map((s) => s.argv)).toEqual(argvs);
    // Gemini asks for the extension's one setting on stdin: the state dir.
    if (harness === 'gemini' && !remove) expect(steps[0]!.input).toBe('/state\n');
  });

  it('finds an executable on PATH, the first in order, never one that cannot be run', () => {
    const root = mkdtempSync(join(tmpdir(), 'wpath-'));
    for (const [dir, mode] of [['a', 0o644], ['b', 0o755], ['c', 0o755]] as const) {
      mkdirSync(join(root, dir));
      writeFileSync(join(root, dir, 'warden'), '#!/bin/sh\n');
      chmodSync(join(root, dir, 'warden'), mode);
    }
    expect(onPath('warden', [join(root, 'a'), join(root, 'b'), join(root, 'c')].join(':'))).toBe(join(root, 'b', 'warden'));
    expect(onPath('warden', `::${join(root, 'c')}`)).toBe(join(root, 'c', 'warden'));
    expect(onPath('warden', join(root, 'a'))).toBeNull();
    expect(onPath('warden', undefined)).toBeNull();
  });
});
