// Table tests of what `warden setup` adds and `--remove` takes out again
// (index.ts over jsonc.ts and toml.ts), in this process on real files, for
// the cases where the backup cannot hide the removal's own arithmetic: the
// file changed after setup (so the backup is not put back), no final
// newline, CRLF line ends, comments and trailing commas, another server or
// hook beside Warden's. The invariant: setup, the user's edit, --remove
// gives the user's file with their edit, byte for byte.

import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseSetupArgs, runSetup, type SetupOptions } from './index';
import { TOML_BEGIN, TOML_END } from './toml';

const root = mkdtempSync(join(tmpdir(), 'wsetup-edits-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const NODE = '/usr/bin/node';
const BIN = '/opt/warden/bin/warden.mjs';
let n = 0;

function home(files: Record<string, string>): string {
  const dir = join(root, `h${n++}`);
  mkdirSync(dir);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

/** `warden setup ARGS` in this process on the home dir; what it printed. */
function setup(dir: string, args: string[]): string {
  const out: string[] = [];
  const options = parseSetupArgs(args) as SetupOptions;
  expect(runSetup(options, { node: NODE, bin: BIN, home: dir, cwd: dir, env: {} }, { out: (text) => void out.push(text), err: (text) => void out.push(`stderr: ${text}`) })).toBe(0);
  return out.join('');
}

const read = (dir: string, path: string) => readFileSync(join(dir, path), 'utf8');
const edit = (dir: string, path: string, change: (text: string) => string) => writeFileSync(join(dir, path), change(read(dir, path)));

/** [what, setup's arguments, the file, its text before setup, the user's edit after setup, the text --remove must leave]. */
type Row = [string, string[], string, string, (text: string) => string, string];

const server = '"github": {"command": "gh"}';

describe('--remove after the user edited the file since setup', () => {
  it.each<Row>([
    [
      'no final newline, one line',
      ['claude-code'],
      '.claude.json',
      `{"numStartups": 3, "mcpServers": {${server}}}`,
      (t) => t.replace('"numStartups": 3', '"numStartups": 4'),
      `{"numStartups": 4, "mcpServers": {${server}}}`,
    ],
    [
      'no final newline, no mcpServers before',
      ['claude-code'],
      '.claude.json',
      '{\n  "numStartups": 3\n}',
      (t) => t.replace('"numStartups": 3', '"numStartups": 4'),
      '{\n  "numStartups": 4\n}',
    ],
    [
      'CRLF line ends',
      ['claude-code'],
      '.claude.json',
      `{\r\n  "numStartups": 3,\r\n  "mcpServers": {\r\n    ${server}\r\n  }\r\n}\r\n`,
      (t) => t.replace('"numStartups": 3', '"numStartups": 4'),
      `{\r\n  "numStartups": 4,\r\n  "mcpServers": {\r\n    ${server}\r\n  }\r\n}\r\n`,
    ],
    [
      'CRLF, an empty mcpServers the user had',
      ['claude-code'],
      '.claude.json',
      '{\r\n  "mcpServers": {},\r\n  "numStartups": 3\r\n}\r\n',
      (t) => t.replace('"numStartups": 3', '"numStartups": 4'),
      '{\r\n  "mcpServers": {},\r\n  "numStartups": 4\r\n}\r\n',
    ],
    [
      'another server the user added after Warden\'s',
      ['claude-code'],
      '.claude.json',
      `{\n  "mcpServers": {\n    ${server}\n  }\n}\n`,
      (t) => t.replace(/\n {2}}\n}\n$/, ',\n    "linear": {"command": "lin"}\n  }\n}\n'),
      `{\n  "mcpServers": {\n    ${server},\n    "linear": {"command": "lin"}\n  }\n}\n`,
    ],
    [
      'CRLF, another server the user added after Warden\'s',
      ['claude-code'],
      '.claude.json',
      `{\r\n  "mcpServers": {\r\n    ${server}\r\n  }\r\n}\r\n`,
      (t) => t.replace(/\r\n {2}}\r\n}\r\n$/, ',\r\n    "linear": {"command": "lin"}\r\n  }\r\n}\r\n'),
      `{\r\n  "mcpServers": {\r\n    ${server},\r\n    "linear": {"command": "lin"}\r\n  }\r\n}\r\n`,
    ],
    [
      'CRLF written around Warden\'s server, another server after it',
      ['claude-code'],
      '.claude.json',
      `{\r\n  "mcpServers": {\r\n    ${server}\r\n  }\r\n}\r\n`,
      (t) => t.replace(/\n/g, '\r\n').replace(/\r\r\n/g, '\r\n').replace(/\r\n {2}}\r\n}\r\n$/, ',\r\n    "linear": {"command": "lin"}\r\n  }\r\n}\r\n'),
      `{\r\n  "mcpServers": {\r\n    ${server},\r\n    "linear": {"command": "lin"}\r\n  }\r\n}\r\n`,
    ],
    [
      'another server the user added after Warden\'s, on the same line as its brace',
      ['claude-code'],
      '.claude.json',
      `{\n  "mcpServers": {\n    ${server}\n  }\n}\n`,
      (t) => t.replace(/\n {2}}\n}\n$/, ', "linear": {"command": "lin"}\n  }\n}\n'),
      `{\n  "mcpServers": {\n    ${server}, "linear": {"command": "lin"}\n  }\n}\n`,
    ],
    [
      'another server the user added before Warden\'s, with a trailing comment',
      ['claude-code'],
      '.claude.json',
      `{\n  "mcpServers": {\n    ${server}\n  }\n}\n`,
      (t) => t.replace(`${server},`, `${server},\n    "linear": {"command": "lin"}, // mine`),
      `{\n  "mcpServers": {\n    ${server},\n    "linear": {"command": "lin"} // mine\n  }\n}\n`,
    ],
    [
      'Warden\'s server alone in a file the user then added to',
      ['claude-code'],
      '.claude.json',
      '{}\n',
      (t) => t.replace(/^\{/, '{\n  "theme": "dark",'),
      '{\n  "theme": "dark"\n}\n',
    ],
    [
      'a hook of the user\'s added after Warden\'s',
      ['claude-code', '--shell'],
      '.claude/settings.json',
      '{\n  "hooks": {\n    "PreToolUse": [\n      {"matcher": "Edit", "hooks": []}\n    ]\n  }\n}\n',
      (t) => t.replace(/\n {4}\]\n {2}\}\n\}\n$/, ',\n      {"matcher": "Write", "hooks": []}\n    ]\n  }\n}\n'),
      '{\n  "hooks": {\n    "PreToolUse": [\n      {"matcher": "Edit", "hooks": []},\n      {"matcher": "Write", "hooks": []}\n    ]\n  }\n}\n',
    ],
    [
      'comments and trailing commas (Gemini CLI)',
      ['gemini', '--shell'],
      '.gemini/settings.json',
      '{\n  // mine\n  "theme": "dark", /* keep */\n  "mcpServers": {\n    "github": {"command": "gh"}, // gh\n  },\n}\n',
      (t) => t.replace('"dark"', '"light"'),
      '{\n  // mine\n  "theme": "light", /* keep */\n  "mcpServers": {\n    "github": {"command": "gh"}, // gh\n  },\n}\n',
    ],
    [
      'Codex: another server, comments, no final newline',
      ['codex'],
      '.codex/config.toml',
      'model = "o3" # mine\n\n[mcp_servers.github]\ncommand = "gh"',
      (t) => t.replace('"o3"', '"o4"'),
      'model = "o4" # mine\n\n[mcp_servers.github]\ncommand = "gh"',
    ],
    [
      'Codex: a final newline',
      ['codex'],
      '.codex/config.toml',
      'model = "o3"\n',
      (t) => t.replace('"o3"', '"o4"'),
      'model = "o4"\n',
    ],
    [
      'Codex: a blank line of the user\'s before Warden\'s block',
      ['codex'],
      '.codex/config.toml',
      'model = "o3"\n\n',
      (t) => t.replace('"o3"', '"o4"'),
      'model = "o4"\n\n',
    ],
    [
      'Codex: CRLF, and a table the user added after Warden\'s block',
      ['codex'],
      '.codex/config.toml',
      'model = "o3"\r\n',
      (t) => `${t}\r\n[tui]\r\nnotifications = true\r\n`,
      'model = "o3"\r\n\r\n[tui]\r\nnotifications = true\r\n',
    ],
    [
      'Codex: an inline mcp_servers table',
      ['codex'],
      '.codex/config.toml',
      'mcp_servers = { github = { command = "gh" } }\nmodel = "o3"\n',
      (t) => t.replace('"o3"', '"o4"'),
      'mcp_servers = { github = { command = "gh" } }\nmodel = "o4"\n',
    ],
  ])('%s', (_what, args, path, before, change, expected) => {
    const dir = home({ [path]: before });
    setup(dir, args);
    expect(read(dir, path)).not.toBe(before);
    expect(read(dir, `${path}.warden-backup`)).toBe(before);
    edit(dir, path, change);
    const said = setup(dir, [args[0]!, '--remove']);
    expect(said).toMatch(/took out/);
    expect(read(dir, path)).toBe(expected);
    expect(existsSync(join(dir, `${path}.warden-backup`))).toBe(false);
  });
});

describe('--remove right after setup gives the file back byte for byte', () => {
  it.each<[string, string[], string, string]>([
    ['no final newline', ['claude-code'], '.claude.json', `{"numStartups": 3, "mcpServers": {${server}}}`],
    ['CRLF', ['claude-code', '--shell'], '.claude/settings.json', '{\r\n  "permissions": {"allow": []}\r\n}\r\n'],
    ['comments (Gemini CLI)', ['gemini', '--shell'], '.gemini/settings.json', '// top\n{\n  "theme": "dark", // mine\n}'],
    ['Codex, no final newline', ['codex', '--shell'], '.codex/config.toml', 'model = "o3"'],
  ])('%s', (_what, args, path, before) => {
    const dir = home({ [path]: before });
    setup(dir, args);
    setup(dir, [args[0]!, '--remove']);
    expect(read(dir, path)).toBe(before);
  });
});

describe('what setup writes beside the user\'s text', () => {
  it('keeps every byte of the user\'s file before its insertion, in the file\'s own indentation', () => {
    const before = '{\n\t"numStartups": 3,\n\t"mcpServers": {\n\t\t"github": {"command": "gh"}\n\t}\n}\n';
    const dir = home({ '.claude.json': before });
    expect(setup(dir, ['claude-code'])).toBe('warden setup claude-code: ~/.claude.json: added mcpServers.warden (backup: ~/.claude.json.warden-backup)\n');
    expect(read(dir, '.claude.json')).toBe(
      '{\n\t"numStartups": 3,\n\t"mcpServers": {\n\t\t"github": {"command": "gh"},\n\t\t"warden": {\n\t\t\t"type": "stdio",\n\t\t\t"command": "/usr/bin/node",\n\t\t\t"args": [\n\t\t\t\t"/opt/warden/bin/warden.mjs",\n\t\t\t\t"mcp"\n\t\t\t],\n\t\t\t"env": {\n\t\t\t\t"WARDEN_DEFAULT_LIMIT": "10m"\n\t\t\t},\n\t\t\t"alwaysLoad": true\n\t\t}\n\t}\n}\n',
    );
  });

  it('appends the Codex block after one blank line, whatever the file ends with', () => {
    for (const [before, sep] of [
      ['model = "o3"', '\n\n'],
      ['model = "o3"\n', '\n'],
      ['model = "o3"\n\n', ''],
      ['', ''],
    ] as const) {
      const dir = home({ '.codex/config.toml': before });
      setup(dir, ['codex']);
      const text = read(dir, '.codex/config.toml');
      expect(text.startsWith(`${before}${sep}${TOML_BEGIN}\n`), JSON.stringify(before)).toBe(true);
      expect(text.endsWith(`${TOML_END}\n`)).toBe(true);
    }
  });

  it('a setup that created the file removes it; one the user then wrote in keeps it', () => {
    const dir = home({});
    expect(setup(dir, ['claude-code', '--shell'])).toBe(
      'warden setup claude-code: ~/.claude.json: created with mcpServers.warden\nwarden setup claude-code: ~/.claude/settings.json: created with hooks.PreToolUse\n',
    );
    edit(dir, '.claude/settings.json', (t) => t.replace(/^\{/, '{\n  "theme": "dark",'));
    expect(setup(dir, ['claude-code', '--remove'])).toBe(
      'warden setup claude-code --remove: ~/.claude.json: removed (setup had created it)\nwarden setup claude-code --remove: ~/.claude/settings.json: took out hooks.PreToolUse\n',
    );
    expect(existsSync(join(dir, '.claude.json'))).toBe(false);
    expect(read(dir, '.claude/settings.json')).toBe('{\n  "theme": "dark"\n}\n');
    expect(setup(dir, ['claude-code', '--remove'])).toBe('warden setup claude-code --remove: ~/.claude/settings.json: nothing of Warden in it\n');
  });
});
