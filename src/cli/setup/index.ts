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

import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { packageRoot } from '../../client/package-root';
import { parseDuration } from '../../shared/duration';
import { UsageError } from '../parse';
import type { CliIo } from '../io';
import { shQuote } from '../hook/shell';
import { appendAt, JsonTextError, nodeAt, parseJsonc, removeItems, removeMember, sameJsonc, setAt, valueOf } from './jsonc';
import { lineDiff } from './diff';
import { asOwnerOf, readBackup, readConfig, removeFile, writeConfig } from './files';
import { addInline, blockRange, canonical, inlineServers, parseToml, removeInline, sameToml, TOML_BEGIN, TOML_END } from './toml';

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
  /** --limit was given: setup's limit replaces one the user set by hand in the installed lines. */
  limitGiven: boolean;
}

export function parseSetupArgs(args: string[]): SetupOptions | 'help' {
  if (args.includes('--help') || args.includes('-h')) return 'help';
  const [harness, ...rest] = args;
  if (!HARNESSES.includes(harness as Harness)) throw new UsageError(`warden setup takes claude-code, codex or gemini${harness === undefined ? '' : `, not ${JSON.stringify(harness)}`} (see warden setup --help).`);
  const options: SetupOptions = { harness: harness as Harness, scope: 'user', shell: false, dryRun: false, remove: false, limit: '10m', limitGiven: false };
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
      options.limitGiven = true;
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

/** The words of a hook line after `hook HARNESS`: the flags the user (or an earlier setup) put there. */
function hookFlags(command: string, harness: Harness): string {
  const at = command.indexOf(` hook ${harness}`);
  return at < 0 ? '' : command.slice(at + ` hook ${harness}`.length).trim();
}

/** `flags` without any `--limit V` / `--limit=V` (shell words as setup writes them). */
function withoutLimit(flags: string): string {
  return flags.replace(/(^|\s)--limit(=\S+|\s+\S+)/g, '').trim();
}

/**
 * The hook's command line. Without --limit, the flags already on an
 * installed line stay as they are, so a limit the user set there by hand
 * keeps working; with --limit, setup's replaces theirs. A new line carries
 * --limit only when it was given (the hook's own default is the same 10m).
 */
function hookCommand(paths: SetupPaths, harness: Harness, options: Pick<SetupOptions, 'limit' | 'limitGiven'>, installed?: string): string {
  const base = [paths.node, paths.bin, 'hook', harness].map(shQuote).join(' ');
  const kept = installed === undefined ? '' : hookFlags(installed, harness);
  const flags = options.limitGiven ? [withoutLimit(kept), `--limit ${shQuote(options.limit)}`].filter(Boolean).join(' ') : kept;
  return flags === '' ? base : `${base} ${flags}`;
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

function mcpServerChange(path: string, entry: Record<string, unknown>, limitGiven: boolean): Change {
  return {
    path,
    what: 'mcpServers.warden',
    add: (text) => {
      const current = nodeAt(parseJsonc(text), ['mcpServers', 'warden']);
      const value = current === undefined ? undefined : (valueOf(text, current) as { env?: { WARDEN_DEFAULT_LIMIT?: unknown } } | null);
      // A limit set by hand in the installed entry stays unless --limit says otherwise.
      const handLimit = value?.env?.WARDEN_DEFAULT_LIMIT;
      const wanted = !limitGiven && typeof handLimit === 'string' ? { ...entry, env: { ...(entry.env as object), WARDEN_DEFAULT_LIMIT: handLimit } } : entry;
      if (current !== undefined && JSON.stringify(value) === JSON.stringify(wanted)) return text;
      return setAt(text, ['mcpServers', 'warden'], wanted);
    },
    remove: (text, backup) => dropEmpty(removeMember(text, ['mcpServers'], 'warden'), ['mcpServers'], backup),
    has: (text) => nodeAt(parseJsonc(text), ['mcpServers', 'warden']) !== undefined,
  };
}

function hookChange(path: string, event: string, group: (installed?: string) => Record<string, unknown>, harness: Harness): Change {
  const ourCommand = (value: unknown) => ((value as { hooks?: { command?: unknown }[] }).hooks ?? []).map((h) => h?.command).find((c): c is string => typeof c === 'string' && c.includes(` hook ${harness}`));
  return {
    path,
    what: `hooks.${event}`,
    add: (text) => {
      const list = nodeAt(parseJsonc(text), ['hooks', event]);
      const values = list?.kind === 'array' ? (valueOf(text, list) as unknown[]) : [];
      const ours = values.filter((v) => isOurHookGroup(v, harness));
      const wanted = group(ours.length === 1 ? ourCommand(ours[0]) : undefined);
      if (ours.length === 1 && JSON.stringify(ours[0]) === JSON.stringify(wanted)) return text;
      return appendAt(removeItems(text, ['hooks', event], (v) => isOurHookGroup(v, harness)), ['hooks', event], wanted);
    },
    remove: (text, backup) => dropEmpty(removeItems(text, ['hooks', event], (v) => isOurHookGroup(v, harness)), ['hooks', event], backup),
    has: (text) => {
      const list = nodeAt(parseJsonc(text), ['hooks', event]);
      return list?.kind === 'array' && (valueOf(text, list) as unknown[]).some((v) => isOurHookGroup(v, harness));
    },
  };
}

/** Whether a parsed mcp_servers.warden is one setup wrote: this package's bin/warden.mjs started with `mcp`. */
function isOurCodexServer(server: unknown): boolean {
  const args = (server as { args?: unknown } | null)?.args;
  return Array.isArray(args) && args.length === 2 && typeof args[0] === 'string' && /(^|\/)warden\.mjs$/.test(args[0]) && args[1] === 'mcp';
}

function serversOf(config: Record<string, unknown>): Record<string, unknown> | undefined {
  const servers = config.mcp_servers;
  return servers !== null && typeof servers === 'object' && !Array.isArray(servers) ? (servers as Record<string, unknown>) : undefined;
}

/** An empty mcp_servers table is the same content as none: setup's own block is what made it, or it is taken out with it. */
function withoutEmptyServers(config: Record<string, unknown>): Record<string, unknown> {
  const servers = serversOf(config);
  if (servers === undefined || Object.keys(servers).length > 0) return config;
  const out = { ...config };
  delete out.mcp_servers;
  return out;
}

function codexChange(path: string, shown: string, paths: SetupPaths, options: Pick<SetupOptions, 'limit' | 'limitGiven'>): Change {
  const server = (limit: string) => ({
    command: paths.node,
    args: [paths.bin, 'mcp'],
    env_vars: PASSED_SETTINGS,
    tool_timeout_sec: CODEX_TOOL_TIMEOUT_SEC,
    startup_timeout_sec: 30,
    // Without it codex exec (0.169) starts the first turn without waiting for an optional server: seen in
    // test/harness/ under load, the model was offered no Warden tool.
    required: true,
    env: { WARDEN_DEFAULT_LIMIT: limit },
  });
  const block = (limit: string) =>
    [
      TOML_BEGIN,
      '[mcp_servers.warden]',
      `command = ${tomlString(paths.node)}`,
      `args = [${tomlString(paths.bin)}, "mcp"]`,
      `env_vars = [${PASSED_SETTINGS.map(tomlString).join(', ')}]`,
      `tool_timeout_sec = ${CODEX_TOOL_TIMEOUT_SEC}`,
      'startup_timeout_sec = 30',
      'required = true',
      '',
      '[mcp_servers.warden.env]',
      `WARDEN_DEFAULT_LIMIT = ${tomlString(limit)}`,
      TOML_END,
      '',
    ].join('\n');
  // The same server as one inline member, for an inline `mcp_servers = { ... }` that no [table] may extend.
  const inline = (limit: string) =>
    `warden = { command = ${tomlString(paths.node)}, args = [${tomlString(paths.bin)}, "mcp"], env_vars = [${PASSED_SETTINGS.map(tomlString).join(', ')}], tool_timeout_sec = ${CODEX_TOOL_TIMEOUT_SEC}, startup_timeout_sec = 30, required = true, env = { WARDEN_DEFAULT_LIMIT = ${tomlString(limit)} } }`;
  /** What the file must parse to once Warden's server is in it (or out of it: null). */
  const expected = (config: Record<string, unknown>, warden: unknown | null) => {
    const servers = { ...serversOf(config) };
    delete servers.warden;
    if (warden !== null) servers.warden = warden;
    const out: Record<string, unknown> = { ...config, mcp_servers: servers };
    return canonical(withoutEmptyServers(out));
  };
  /**
   * The text without Warden's block or inline member. Before the block go the
   * newlines setup added (blockSeparator of the file as it was): known from
   * the backup, else taken as the one of a file that ended with a newline.
   */
  const strip = (text: string, backup: string | null = null): string => {
    const range = blockRange(text);
    if (range) {
      let start = range.start;
      const added = backup !== null ? blockSeparator(backup).length : text.slice(start - 2, start) === '\n\n' ? 1 : 0;
      for (let i = 0; i < added && text[start - 1] === '\n'; i++) start--;
      return text.slice(0, start) + text.slice(range.end);
    }
    const servers = inlineServers(text);
    return servers ? removeInline(text, servers, 'warden') : text;
  };
  return {
    path,
    what: '[mcp_servers.warden]',
    add: (text) => {
      const config = parseToml(text, shown);
      const current = serversOf(config)?.warden;
      if (current !== undefined && !text.includes(TOML_BEGIN) && !isOurCodexServer(current)) {
        throw new UsageError(`${path} already has an mcp_servers.warden that warden setup did not write; remove it first (your copy stays untouched).`);
      }
      const handLimit = (current as { env?: { WARDEN_DEFAULT_LIMIT?: unknown } } | undefined)?.env?.WARDEN_DEFAULT_LIMIT;
      const limit = !options.limitGiven && typeof handLimit === 'string' ? handLimit : options.limit;
      const want = expected(config, server(limit));
      if (current !== undefined && canonical(withoutEmptyServers(config)) === want) return text;
      const without = strip(text);
      const inlineRange = inlineServers(without);
      let out: string;
      if (inlineRange) {
        out = addInline(without, inlineRange, inline(limit));
      } else {
        out = without + blockSeparator(without) + block(limit);
      }
      // Parsed again: exactly what the user had, plus Warden's server; anything else is not written.
      let check: string;
      try {
        check = canonical(withoutEmptyServers(parseToml(out, shown)));
      } catch {
        check = '';
      }
      if (check !== want) throw new UsageError(`${shown}: adding Warden's server would not give a valid config holding all you had (mcp_servers is written in a form setup cannot extend); nothing was changed. Add [mcp_servers.warden] by hand (see warden setup --help).`);
      return out;
    },
    remove: (text, backup) => {
      const config = parseToml(text, shown);
      const current = serversOf(config)?.warden;
      if (!text.includes(TOML_BEGIN) && !isOurCodexServer(current)) return text;
      const out = strip(text, backup);
      let check: string;
      try {
        check = canonical(withoutEmptyServers(parseToml(out, shown)));
      } catch {
        check = '';
      }
      if (check !== expected(config, null)) throw new UsageError(`${shown}: taking Warden's server out would change more than it; nothing was changed. Remove [mcp_servers.warden] by hand.`);
      if (backup !== null && sameToml(out, backup)) return backup;
      return out;
    },
    has: (text) => {
      if (text.includes(TOML_BEGIN)) return true;
      try {
        return isOurCodexServer(serversOf(parseToml(text, shown))?.warden);
      } catch {
        return false;
      }
    },
  };
}

/** What setup puts between a Codex config's text and the block it appends: a blank line, and no more. */
function blockSeparator(text: string): string {
  return text === '' || text.endsWith('\n\n') ? '' : text.endsWith('\n') ? '\n' : '\n\n';
}

function tomlString(text: string): string {
  return JSON.stringify(text);
}

function mcpEntry(paths: SetupPaths, limit: string, extra: Record<string, unknown>): Record<string, unknown> {
  return { ...('type' in extra ? {} : {}), command: paths.node, args: [paths.bin, 'mcp'], env: { WARDEN_DEFAULT_LIMIT: limit }, ...extra };
}

export function changesFor(options: SetupOptions, paths: SetupPaths): { changes: Change[]; notes: string[] } {
  const { harness, scope, limit } = options;
  const shownOf = (path: string) => tilde(path, paths.home);
  // --remove takes out the shell hook too: a user undoing Warden expects none of it left (with the hook
  // left in place, the harness's shell still ran through warden run; seen in test/harness/).
  const shell = options.shell || options.remove;
  const changes: Change[] = [];
  const notes: string[] = [];
  const project = paths.cwd;
  if (harness === 'claude-code') {
    const configDir = paths.env.CLAUDE_CONFIG_DIR ? resolve(paths.env.CLAUDE_CONFIG_DIR) : null;
    const mcpFile = scope === 'project' ? join(project, '.mcp.json') : join(configDir ?? paths.home, '.claude.json');
    changes.push(mcpServerChange(mcpFile, { type: 'stdio', ...mcpEntry(paths, limit, {}), alwaysLoad: true }, options.limitGiven));
    if (shell) {
      const settings = scope === 'project' ? join(project, '.claude', 'settings.json') : join(configDir ?? join(paths.home, '.claude'), 'settings.json');
      changes.push(hookChange(settings, 'PreToolUse', (installed) => ({ matcher: 'Bash', hooks: [{ type: 'command', command: hookCommand(paths, harness, options, installed), timeout: 30 }] }), harness));
    }
    if (scope === 'project') notes.push('Claude Code asks once before it uses the servers a project .mcp.json names.');
  } else if (harness === 'codex') {
    const codexHome = scope === 'project' ? join(project, '.codex') : paths.env.CODEX_HOME ? resolve(paths.env.CODEX_HOME) : join(paths.home, '.codex');
    changes.push(codexChange(join(codexHome, 'config.toml'), shownOf(join(codexHome, 'config.toml')), paths, options));
    if (shell) {
      changes.push(hookChange(join(codexHome, 'hooks.json'), 'PreToolUse', (installed) => ({ matcher: 'Bash', hooks: [{ type: 'command', command: hookCommand(paths, harness, options, installed), timeout: 30 }] }), harness));
      if (!options.remove) {
        notes.push('Codex runs a new hook only once you have reviewed and trusted it: open Codex and trust it in /hooks.');
        notes.push('The Codex hook routes commands through Warden only when Codex runs them unsandboxed (danger-full-access): a Warden host runs outside the sandbox. Sandboxed, commands run as Codex runs them.');
      }
    }
    if (scope === 'project') notes.push('Codex reads a project .codex/ only in a trusted project.');
  } else {
    const base = scope === 'project' ? join(project, '.gemini') : join(paths.env.GEMINI_CLI_HOME ? resolve(paths.env.GEMINI_CLI_HOME) : paths.home, '.gemini');
    const settings = join(base, 'settings.json');
    changes.push(mcpServerChange(settings, { ...mcpEntry(paths, limit, {}), timeout: CODEX_TOOL_TIMEOUT_SEC * 1000 }, options.limitGiven));
    if (shell) changes.push(hookChange(settings, 'BeforeTool', (installed) => ({ matcher: 'run_shell_command', hooks: [{ name: 'warden', type: 'command', command: hookCommand(paths, harness, options, installed) }] }), harness));
    notes.push('Gemini CLI loads MCP servers only in a trusted folder: trust the folder when it asks (or /permissions).');
  }
  return { changes, notes };
}

function tilde(path: string, home: string): string {
  return path.startsWith(`${home}/`) ? `~/${path.slice(home.length + 1)}` : path;
}

/** Whether two versions of a config hold the same content and comments, layout aside (never by stripping whitespace: a space inside a string is content). */
function sameContent(path: string, a: string, b: string): boolean {
  return path.endsWith('.toml') ? sameToml(a, b) : sameJsonc(a, b);
}

export function runSetup(options: SetupOptions, paths: SetupPaths, io: Pick<CliIo, 'out' | 'err'>): number {
  const { changes, notes } = changesFor(options, paths);
  // Changes to one file apply in turn to its text.
  const byFile = new Map<string, Change[]>();
  for (const change of changes) byFile.set(change.path, [...(byFile.get(change.path) ?? []), change]);
  const verb = `warden setup ${options.harness}${options.remove ? ' --remove' : ''}`;
  let changed = 0;
  for (const [path, fileChanges] of byFile) {
    // As the user whose directory it is, when root runs setup on their home (files.ts).
    changed += asOwnerOf(path, () => setupFile(path, fileChanges, options, paths, verb, io));
  }
  if (options.dryRun && changed > 0) io.out(`${verb}: --dry-run: nothing was written\n`);
  if (!options.remove && !options.dryRun) for (const note of notes) io.out(`${verb}: ${note}\n`);
  return 0;
}

/** One file's changes: read, change, check, write (or show). 1 when it changed, else 0. */
function setupFile(path: string, fileChanges: Change[], options: SetupOptions, paths: SetupPaths, verb: string, io: Pick<CliIo, 'out' | 'err'>): number {
  const shown = tilde(path, paths.home);
  const backupPath = `${path}.warden-backup`;
  const shownBackup = tilde(backupPath, paths.home);
  const before = readConfig(path, shown);
  const backup = readBackup(backupPath, shownBackup);
  let after: string | null;
  /** What --remove took out: only the changes that found something of Warden's. */
  const took: string[] = [];
  try {
    if (options.remove) {
      if (before === null) return 0;
      after = before;
      for (const change of fileChanges) {
        if (change.has(after)) took.push(change.what);
        after = change.remove(after, backup);
      }
      if (backup !== null && after !== before && sameContent(path, after, backup)) after = backup;
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
    return 0;
  }
  if (options.dryRun) {
    io.out(lineDiff(before ?? '', after ?? '', before === null ? '/dev/null' : shown, after === null ? '/dev/null' : shown));
    return 1;
  }
  if (options.remove) {
    if (after === null) removeFile(path, shown);
    else writeConfig(path, after, shown);
    if (backup !== null) removeFile(backupPath, shownBackup);
    io.out(`${verb}: ${shown}: ${after === null ? 'removed (setup had created it)' : `took out ${took.join(' and ')}`}\n`);
    return 1;
  }
  // The backup is the file as it was before Warden's first change to it.
  let backupNote = '';
  if (before !== null && (backup === null || !fileChanges.some((c) => c.has(before)))) {
    writeConfig(backupPath, before, shownBackup);
    backupNote = ` (backup: ${shownBackup})`;
  }
  writeConfig(path, after!, shown);
  io.out(`${verb}: ${shown}: ${before === null ? 'created with' : 'added'} ${fileChanges.map((c) => c.what).join(' and ')}${backupNote}\n`);
  return 1;
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
