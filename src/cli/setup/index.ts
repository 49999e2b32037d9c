// `warden setup claude-code|codex|gemini`: registers `warden mcp` with an
// agent harness (and, with --shell, `warden hook` on its shell tool) in the
// harness's own config files. Every file is edited as text (jsonc.ts, or one
// marked block appended to a TOML file), so what the user had stays as it
// was, byte for byte and in order; a backup of the file as it was before
// Warden's first change sits beside it (FILE.warden-backup); running it again
// changes nothing; --remove takes out exactly what it added (and restores the
// backup byte for byte when the rest of the file is unchanged since);
// --dry-run prints the change as a diff and writes nothing. Paths are
// absolute (the Node running this and this package's bin/warden.mjs), so
// nothing needs to be on PATH.

import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { packageRoot } from '../../client/package-root';
import { parseDuration } from '../../shared/duration';
import { UsageError } from '../parse';
import type { CliIo } from '../io';
import { shQuote } from '../hook/shell';
import { appendAt, JsonTextError, nodeAt, parseJsonc, removeItems, removeMember, setAt, valueOf } from './jsonc';
import { lineDiff } from './diff';

import { SETUP_HELP } from './help';

export { SETUP_HELP };

const HARNESSES = ['claude-code', 'codex', 'gemini'] as const;
type Harness = (typeof HARNESSES)[number];

/** Warden's settings a Codex MCP server must be passed by name (Codex passes only a short allowlist of the environment). */
export const PASSED_SETTINGS = ['WARDEN_STATE_DIR', 'WARDEN_HOST_IDLE', 'WARDEN_EMBEDDED', 'WARDEN_CGROUPS', 'WARDEN_MODEL_STREAM_CHARS', 'XDG_STATE_HOME'];
/** Longer than the longest a Warden tool call blocks (a yield of at most 50 s, plus the stop sequence and the answer). */
export const CODEX_TOOL_TIMEOUT_SEC = 120;

export interface SetupOptions {
  harness: Harness;
  scope: 'user' | 'project';
  shell: boolean;
  dryRun: boolean;
  remove: boolean;
  limit: string;
}

export function parseSetupArgs(args: string[]): SetupOptions | 'help' {
  if (args.includes('--help') || args.includes('-h')) return 'help';
  const [harness, ...rest] = args;
  if (!HARNESSES.includes(harness as Harness)) throw new UsageError(`warden setup takes claude-code, codex or gemini${harness === undefined ? '' : `, not ${JSON.stringify(harness)}`} (see warden setup --help).`);
  const options: SetupOptions = { harness: harness as Harness, scope: 'user', shell: false, dryRun: false, remove: false, limit: '10m' };
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] ?? '';
    if (arg === '--shell') options.shell = true;
    else if (arg === '--dry-run') options.dryRun = true;
    else if (arg === '--remove') options.remove = true;
    else if (arg === '--scope' || arg.startsWith('--scope=')) {
      const value = arg.includes('=') ? arg.slice(8) : rest[++i];
      if (value !== 'user' && value !== 'project') throw new UsageError(`--scope takes user or project, not ${JSON.stringify(value ?? '')}.`);
      options.scope = value;
    } else if (arg === '--limit' || arg.startsWith('--limit=')) {
      const value = arg.includes('=') ? arg.slice(8) : rest[++i];
      const ms = value === undefined ? undefined : parseDuration(value);
      if (ms === undefined || ms <= 0) throw new UsageError(`--limit takes a duration such as 10m or 1h, not ${JSON.stringify(value ?? '')}.`);
      options.limit = value!;
    } else throw new UsageError(`warden setup: unknown argument ${JSON.stringify(arg)} (see warden setup --help).`);
  }
  return options;
}

export interface SetupPaths {
  node: string;
  bin: string;
  home: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/** One file setup changes: what it adds, and how to take it out again. */
interface Change {
  path: string;
  what: string;
  add: (text: string) => string;
  remove: (text: string, backup: string | null) => string;
  /** Whether the text holds what setup adds (so the file as it is is not a pre-setup backup). */
  has: (text: string) => boolean;
}

function hookCommand(paths: SetupPaths, harness: Harness, limit: string): string {
  return [paths.node, paths.bin, 'hook', harness, '--limit', limit].map(shQuote).join(' ');
}

function isOurHookGroup(value: unknown, harness: Harness): boolean {
  const hooks = (value as { hooks?: unknown } | null)?.hooks;
  return Array.isArray(hooks) && hooks.some((h) => typeof (h as { command?: unknown })?.command === 'string' && /warden\.mjs'? hook /.test((h as { command: string }).command) && (h as { command: string }).command.includes(` hook ${harness}`));
}

/** Whether the pre-setup file (the backup) had the container at path: an empty one setup leaves behind is removed otherwise. */
function hadIn(backup: string | null, path: string[]): boolean {
  if (backup === null) return false;
  try {
    return nodeAt(parseJsonc(backup), path) !== undefined;
  } catch {
    return true;
  }
}

function dropEmpty(text: string, path: string[], backup: string | null): string {
  for (let depth = path.length; depth >= 1; depth--) {
    const sub = path.slice(0, depth);
    const node = nodeAt(parseJsonc(text), sub);
    const empty = node !== undefined && ((node.kind === 'object' && node.members.length === 0) || (node.kind === 'array' && node.items.length === 0));
    if (!empty || hadIn(backup, sub)) return text;
    text = removeMember(text, sub.slice(0, -1), sub[sub.length - 1]!);
  }
  return text;
}

function mcpServerChange(path: string, entry: Record<string, unknown>): Change {
  return {
    path,
    what: 'mcpServers.warden',
    add: (text) => {
      const current = nodeAt(parseJsonc(text), ['mcpServers', 'warden']);
      if (current !== undefined && JSON.stringify(valueOf(text, current)) === JSON.stringify(entry)) return text;
      return setAt(text, ['mcpServers', 'warden'], entry);
    },
    remove: (text, backup) => dropEmpty(removeMember(text, ['mcpServers'], 'warden'), ['mcpServers'], backup),
    has: (text) => nodeAt(parseJsonc(text), ['mcpServers', 'warden']) !== undefined,
  };
}

function hookChange(path: string, event: string, group: Record<string, unknown>, harness: Harness): Change {
  return {
    path,
    what: `hooks.${event}`,
    add: (text) => {
      const list = nodeAt(parseJsonc(text), ['hooks', event]);
      const values = list?.kind === 'array' ? (valueOf(text, list) as unknown[]) : [];
      const ours = values.filter((v) => isOurHookGroup(v, harness));
      if (ours.length === 1 && JSON.stringify(ours[0]) === JSON.stringify(group)) return text;
      return appendAt(removeItems(text, ['hooks', event], (v) => isOurHookGroup(v, harness)), ['hooks', event], group);
    },
    remove: (text, backup) => dropEmpty(removeItems(text, ['hooks', event], (v) => isOurHookGroup(v, harness)), ['hooks', event], backup),
    has: (text) => {
      const list = nodeAt(parseJsonc(text), ['hooks', event]);
      return list?.kind === 'array' && (valueOf(text, list) as unknown[]).some((v) => isOurHookGroup(v, harness));
    },
  };
}

const TOML_BEGIN = '# warden setup: begin (warden setup codex --remove takes this block out)';
const TOML_END = '# warden setup: end';

function tomlString(text: string): string {
  return JSON.stringify(text);
}

function tomlBlockRange(text: string): { start: number; end: number } | null {
  const start = text.indexOf(TOML_BEGIN);
  if (start < 0) return null;
  const endMark = text.indexOf(TOML_END, start);
  if (endMark < 0) throw new UsageError(`the Warden block in the Codex config has no end line (${TOML_END}); fix it by hand.`);
  let end = endMark + TOML_END.length;
  if (text[end] === '\n') end++;
  return { start, end };
}

function codexChange(path: string, paths: SetupPaths, limit: string): Change {
  const block = [
    TOML_BEGIN,
    '[mcp_servers.warden]',
    `command = ${tomlString(paths.node)}`,
    `args = [${tomlString(paths.bin)}, "mcp"]`,
    `env_vars = [${PASSED_SETTINGS.map(tomlString).join(', ')}]`,
    `tool_timeout_sec = ${CODEX_TOOL_TIMEOUT_SEC}`,
    'startup_timeout_sec = 30',
    // Without it codex exec (0.169) starts the first turn without waiting for an optional server: seen in
    // test/harness/ under load, the model was offered no Warden tool.
    'required = true',
    '',
    '[mcp_servers.warden.env]',
    `WARDEN_DEFAULT_LIMIT = ${tomlString(limit)}`,
    TOML_END,
    '',
  ].join('\n');
  return {
    path,
    what: '[mcp_servers.warden]',
    add: (text) => {
      const range = tomlBlockRange(text);
      if (range) return text.slice(0, range.start) + block + text.slice(range.end);
      if (/^\s*\[\s*mcp_servers\s*\.\s*"?warden"?\s*\]/m.test(text) || /^\s*\[\s*mcp_servers\s*\]/m.test(text) && /^\s*warden\s*=/m.test(text.split(/^\s*\[\s*mcp_servers\s*\]/m)[1]?.split(/^\s*\[/m)[0] ?? '')) {
        throw new UsageError(`${path} already has an mcp_servers.warden that warden setup did not write; remove it first (your copy stays untouched).`);
      }
      const sep = text === '' ? '' : text.endsWith('\n\n') ? '' : text.endsWith('\n') ? '\n' : '\n\n';
      return text + sep + block;
    },
    remove: (text, backup) => {
      const range = tomlBlockRange(text);
      if (!range) return text;
      let start = range.start;
      // The blank line setup put before the block.
      if (start >= 2 && text.slice(start - 2, start) === '\n\n') start--;
      const out = text.slice(0, start) + text.slice(range.end);
      if (backup !== null && out.trimEnd() === backup.trimEnd()) return backup;
      return out;
    },
    has: (text) => text.includes(TOML_BEGIN),
  };
}

function mcpEntry(paths: SetupPaths, limit: string, extra: Record<string, unknown>): Record<string, unknown> {
  return { ...('type' in extra ? {} : {}), command: paths.node, args: [paths.bin, 'mcp'], env: { WARDEN_DEFAULT_LIMIT: limit }, ...extra };
}

export function changesFor(options: SetupOptions, paths: SetupPaths): { changes: Change[]; notes: string[] } {
  const { harness, scope, limit } = options;
  // --remove takes out the shell hook too: a user undoing Warden expects none of it left (with the hook
  // left in place, the harness's shell still ran through warden run; seen in test/harness/).
  const shell = options.shell || options.remove;
  const changes: Change[] = [];
  const notes: string[] = [];
  const project = paths.cwd;
  if (harness === 'claude-code') {
    const configDir = paths.env.CLAUDE_CONFIG_DIR ? resolve(paths.env.CLAUDE_CONFIG_DIR) : null;
    const mcpFile = scope === 'project' ? join(project, '.mcp.json') : join(configDir ?? paths.home, '.claude.json');
    changes.push(mcpServerChange(mcpFile, { type: 'stdio', ...mcpEntry(paths, limit, {}), alwaysLoad: true }));
    if (shell) {
      const settings = scope === 'project' ? join(project, '.claude', 'settings.json') : join(configDir ?? join(paths.home, '.claude'), 'settings.json');
      changes.push(hookChange(settings, 'PreToolUse', { matcher: 'Bash', hooks: [{ type: 'command', command: hookCommand(paths, harness, limit), timeout: 30 }] }, harness));
    }
    if (scope === 'project') notes.push('Claude Code asks once before it uses the servers a project .mcp.json names.');
  } else if (harness === 'codex') {
    const codexHome = scope === 'project' ? join(project, '.codex') : paths.env.CODEX_HOME ? resolve(paths.env.CODEX_HOME) : join(paths.home, '.codex');
    changes.push(codexChange(join(codexHome, 'config.toml'), paths, limit));
    if (shell) {
      changes.push(hookChange(join(codexHome, 'hooks.json'), 'PreToolUse', { matcher: 'Bash', hooks: [{ type: 'command', command: hookCommand(paths, harness, limit), timeout: 30 }] }, harness));
      if (!options.remove) {
        notes.push('Codex runs a new hook only once you have reviewed and trusted it: open Codex and trust it in /hooks.');
        notes.push('The Codex hook routes commands through Warden only when Codex runs them unsandboxed (danger-full-access): a Warden host runs outside the sandbox. Sandboxed, commands run as Codex runs them.');
      }
    }
    if (scope === 'project') notes.push('Codex reads a project .codex/ only in a trusted project.');
  } else {
    const base = scope === 'project' ? join(project, '.gemini') : join(paths.env.GEMINI_CLI_HOME ? resolve(paths.env.GEMINI_CLI_HOME) : paths.home, '.gemini');
    const settings = join(base, 'settings.json');
    changes.push(mcpServerChange(settings, { ...mcpEntry(paths, limit, {}), timeout: CODEX_TOOL_TIMEOUT_SEC * 1000 }));
    if (shell) changes.push(hookChange(settings, 'BeforeTool', { matcher: 'run_shell_command', hooks: [{ name: 'warden', type: 'command', command: hookCommand(paths, harness, limit) }] }, harness));
    notes.push('Gemini CLI loads MCP servers only in a trusted folder: trust the folder when it asks (or /permissions).');
  }
  return { changes, notes };
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new UsageError(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}.`);
  }
}

/** Writes through a temporary file and a rename, keeping the file's mode (0600 for ~/.claude.json). */
function writeText(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  let mode = 0o600;
  try {
    mode = statSync(path).mode & 0o777;
  } catch {
    // A new file: the user's alone.
  }
  const temp = `${path}.warden-${process.pid}.tmp`;
  writeFileSync(temp, text, { mode });
  chmodSync(temp, mode);
  renameSync(temp, path);
}

function tilde(path: string, home: string): string {
  return path.startsWith(`${home}/`) ? `~/${path.slice(home.length + 1)}` : path;
}

export function runSetup(options: SetupOptions, paths: SetupPaths, io: Pick<CliIo, 'out' | 'err'>): number {
  const { changes, notes } = changesFor(options, paths);
  // Changes to one file apply in turn to its text.
  const byFile = new Map<string, Change[]>();
  for (const change of changes) byFile.set(change.path, [...(byFile.get(change.path) ?? []), change]);
  const verb = `warden setup ${options.harness}${options.remove ? ' --remove' : ''}`;
  let changed = 0;
  for (const [path, fileChanges] of byFile) {
    const shown = tilde(path, paths.home);
    const before = readText(path);
    const backupPath = `${path}.warden-backup`;
    const backup = readText(backupPath);
    let after: string | null;
    try {
      if (options.remove) {
        if (before === null) continue;
        after = before;
        for (const change of fileChanges) after = change.remove(after, backup);
        if (backup !== null && after !== before && normalize(after) === normalize(backup)) after = backup;
        if (backup === null && after !== before && /^\s*(\{\s*\})?\s*$/.test(after)) after = null;
      } else {
        after = before ?? '';
        for (const change of fileChanges) after = change.add(after);
      }
    } catch (error) {
      if (error instanceof JsonTextError) throw new UsageError(`${shown} is not valid JSON (${error.message}); nothing was changed.`);
      throw error;
    }
    if (after === before || (before === null && after === '')) {
      io.out(`${verb}: ${shown}: ${options.remove ? 'nothing of Warden in it' : 'already set up'}\n`);
      continue;
    }
    changed++;
    if (options.dryRun) {
      io.out(lineDiff(before ?? '', after ?? '', before === null ? '/dev/null' : shown, after === null ? '/dev/null' : shown));
      continue;
    }
    if (options.remove) {
      if (after === null) rmSync(path, { force: true });
      else writeText(path, after);
      if (backup !== null) rmSync(backupPath, { force: true });
      io.out(`${verb}: ${shown}: ${after === null ? 'removed (setup had created it)' : `took out ${fileChanges.map((c) => c.what).join(' and ')}`}\n`);
    } else {
      // The backup is the file as it was before Warden's first change to it.
      let backupNote = '';
      if (before !== null && (backup === null || !fileChanges.some((c) => c.has(before)))) {
        writeText(backupPath, before);
        backupNote = ` (backup: ${tilde(backupPath, paths.home)})`;
      }
      writeText(path, after!);
      io.out(`${verb}: ${shown}: ${before === null ? 'created with' : 'added'} ${fileChanges.map((c) => c.what).join(' and ')}${backupNote}\n`);
    }
  }
  if (options.dryRun && changed > 0) io.out(`${verb}: --dry-run: nothing was written\n`);
  if (!options.remove && !options.dryRun) for (const note of notes) io.out(`${verb}: ${note}\n`);
  return 0;
}

/** The text with its whitespace collapsed: a removal that leaves the user's file as it was, spacing aside, restores the backup itself. */
function normalize(text: string): string {
  return text.replace(/\s+/g, '');
}

export async function setupCommand(args: string[], io: CliIo): Promise<number> {
  // The plugin instead of settings edits (plugin.ts).
  if (args.includes('--plugin') && !args.includes('--help') && !args.includes('-h')) return (await import('./plugin')).pluginSetup(args, io);
  const options = parseSetupArgs(args);
  if (options === 'help') {
    io.out(`${SETUP_HELP}\n`);
    return 0;
  }
  const root = packageRoot();
  if (root === null || !existsSync(join(root, 'bin', 'warden.mjs'))) throw new UsageError('cannot find this package\'s bin/warden.mjs to register.');
  const bin = join(root, 'bin', 'warden.mjs');
  // npx runs packages from a cache it may clear: the paths written would stop working.
  if (!options.remove && bin.includes('/_npx/')) io.err(`warden setup: this warden runs from npx's cache (${root}), which npm may clear; install it (npm install -g) and run warden setup again so the paths last.\n`);
  return runSetup(options, { node: process.execPath, bin, home: process.env.HOME || homedir(), cwd: process.cwd(), env: process.env }, io);
}
