// `warden setup claude-code|codex|gemini --plugin`: installs the package's
// plugin for the harness (integrations/, plugin-tree.ts) the way the harness
// installs plugins, through its own command line, instead of editing its
// settings: Claude Code and Codex add integrations/ as a local marketplace
// and install warden@warden from it; Gemini CLI links integrations/gemini as
// an extension, its WARDEN_STATE_DIR setting filled in. --remove undoes it
// (and gives Claude Code's settings.json back byte for byte when its own
// rewrite left nothing else changed); --dry-run prints the commands.
//
// The plugins run `warden` from PATH (a harness copies a plugin into its
// cache, so no path of this package would hold): setup checks that `warden`
// is there and is this one.

import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { packageRoot } from '../../client/package-root';
import { resolveStateDir } from '../../client/state-dir';
import type { CliIo } from '../io';
import { UsageError } from '../parse';
import { HARNESS_DIRS, INTEGRATIONS_DIR, MARKETPLACE_NAME, PLUGIN_NAME, writeIntegrations } from './plugin-tree';

type Harness = keyof typeof HARNESS_DIRS;

export interface PluginOptions {
  harness: Harness;
  remove: boolean;
  dryRun: boolean;
  /** Claude Code's install scope; the others install for the user only. */
  scope: 'user' | 'project' | 'local';
}

export function parsePluginArgs(args: string[]): PluginOptions {
  const [harness, ...rest] = args;
  if (harness !== 'claude-code' && harness !== 'codex' && harness !== 'gemini') throw new UsageError(`warden setup takes claude-code, codex or gemini${harness === undefined ? '' : `, not ${JSON.stringify(harness)}`} (see warden setup --help).`);
  const options: PluginOptions = { harness, remove: false, dryRun: false, scope: 'user' };
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    if (arg === '--plugin') continue;
    if (arg === '--remove') options.remove = true;
    else if (arg === '--dry-run') options.dryRun = true;
    else if (arg === '--scope' || arg.startsWith('--scope=')) {
      const value = arg.includes('=') ? arg.slice(8) : rest[++i];
      if (value !== 'user' && value !== 'project' && value !== 'local') throw new UsageError(`--scope takes user, project or local, not ${JSON.stringify(value ?? '')}.`);
      if (value !== 'user' && harness !== 'claude-code') throw new UsageError(`--plugin for ${harness} installs for the user only (${harness === 'codex' ? 'codex plugin add' : 'gemini extensions link'} has no scope): drop --scope.`);
      options.scope = value;
    } else if (arg === '--shell' || arg === '--limit' || arg.startsWith('--limit=')) {
      throw new UsageError(`${arg.split('=')[0]} goes with the settings edits, not --plugin: the plugin has the shell hook already, and its runs take WARDEN_DEFAULT_LIMIT (default 10m).`);
    } else throw new UsageError(`warden setup: unknown argument ${JSON.stringify(arg)} (see warden setup --help).`);
  }
  return options;
}

/** An executable named `name` in PATH's directories, or null. */
export function onPath(name: string, path: string | undefined): string | null {
  for (const dir of (path ?? '').split(delimiter)) {
    if (dir === '') continue;
    const file = join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return null;
}

function realOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** What one step runs: the harness's command line, and what it hands its stdin. */
interface Step {
  argv: string[];
  input?: string;
  /** Output that means the step had nothing to do (already there, already gone): not a failure. */
  nothingToDo?: RegExp;
}

const CLI_NAMES: Record<Harness, string> = { 'claude-code': 'claude', codex: 'codex', gemini: 'gemini' };

/** The steps that install or remove the plugin, by the harness's own command line. */
export function stepsFor(options: PluginOptions, cli: string, tree: string, stateDir: string): Step[] {
  const plugin = `${PLUGIN_NAME}@${MARKETPLACE_NAME}`;
  if (options.harness === 'claude-code') {
    return options.remove
      ? [
          { argv: [cli, 'plugin', 'uninstall', plugin, '--scope', options.scope], nothingToDo: /not found|not installed/i },
          { argv: [cli, 'plugin', 'marketplace', 'remove', MARKETPLACE_NAME], nothingToDo: /not found/i },
        ]
      : [
          { argv: [cli, 'plugin', 'marketplace', 'add', tree] },
          { argv: [cli, 'plugin', 'install', plugin, '--scope', options.scope] },
        ];
  }
  if (options.harness === 'codex') {
    return options.remove
      ? [
          { argv: [cli, 'plugin', 'remove', plugin], nothingToDo: /not (configured|installed|found)/i },
          { argv: [cli, 'plugin', 'marketplace', 'remove', MARKETPLACE_NAME], nothingToDo: /not configured|not installed|not found/i },
        ]
      : [
          { argv: [cli, 'plugin', 'marketplace', 'add', tree] },
          { argv: [cli, 'plugin', 'add', plugin] },
        ];
  }
  return options.remove
    ? [{ argv: [cli, 'extensions', 'uninstall', PLUGIN_NAME], nothingToDo: /not found|not installed/i }]
    : // Its one setting (WARDEN_STATE_DIR) is asked on stdin: this state dir.
      [{ argv: [cli, 'extensions', 'link', join(tree, HARNESS_DIRS.gemini), '--consent'], input: `${stateDir}\n`, nothingToDo: /already installed/i }];
}

function shown(argv: string[]): string {
  return argv.map((word) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`)).join(' ');
}

/** Claude Code's user settings, whose bytes its plugin commands rewrite. */
function claudeSettings(env: NodeJS.ProcessEnv, home: string): string {
  return join(env.CLAUDE_CONFIG_DIR ? resolve(env.CLAUDE_CONFIG_DIR) : join(home, '.claude'), 'settings.json');
}

/** The JSON of a text without the empty objects Claude Code leaves behind once a plugin and its marketplace are gone. */
function withoutEmptyPluginKeys(text: string): unknown {
  const value = JSON.parse(text) as Record<string, unknown>;
  for (const key of ['enabledPlugins', 'extraKnownMarketplaces']) {
    const member = value[key];
    if (typeof member === 'object' && member !== null && Object.keys(member).length === 0) delete value[key];
  }
  return value;
}

function sameJson(a: string, b: string): boolean {
  try {
    return JSON.stringify(withoutEmptyPluginKeys(a)) === JSON.stringify(withoutEmptyPluginKeys(b));
  } catch {
    return false;
  }
}

export async function pluginSetup(args: string[], io: Pick<CliIo, 'out' | 'err'>, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const options = parsePluginArgs(args);
  const root = packageRoot();
  if (root === null || !existsSync(join(root, 'bin', 'warden.mjs'))) throw new UsageError("cannot find this package's bin/warden.mjs.");
  const verb = `warden setup ${options.harness} --plugin${options.remove ? ' --remove' : ''}`;
  const tree = join(root, INTEGRATIONS_DIR);
  if (!options.remove) {
    // A checkout builds it with the CLI, a package ships it; made here when it is missing.
    try {
      const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
      if (!options.dryRun) writeIntegrations(root, version);
    } catch (error) {
      if (!existsSync(join(tree, HARNESS_DIRS[options.harness]))) throw new UsageError(`the plugins in ${tree} are missing and cannot be written there (${(error as NodeJS.ErrnoException).code ?? String(error)}); reinstall the package.`);
    }
    const warden = onPath('warden', env.PATH);
    const mine = join(root, 'bin', 'warden.mjs');
    if (warden === null) {
      throw new UsageError(`the plugin runs \`warden\` from PATH, and there is none: install this package (npm install -g), or put ${join(root, 'bin')} on PATH; or run warden setup ${options.harness} without --plugin, which writes absolute paths.`);
    }
    if (realOrSelf(warden) !== realOrSelf(mine)) io.err(`${verb}: \`warden\` on PATH is ${warden} (${realOrSelf(warden)}), not this Warden (${mine}): the plugin will run that one.\n`);
  }
  const cliName = CLI_NAMES[options.harness];
  const cli = onPath(cliName, env.PATH);
  if (cli === null) throw new UsageError(`\`${cliName}\` is not on PATH: --plugin installs through the harness's own command line. Install it, or run warden setup ${options.harness} without --plugin (settings edits).`);
  const home = env.HOME || homedir();
  const stateDir = resolveStateDir(env);
  // Codex refuses to run without its home; the default one is made as Codex would make it.
  if (options.harness === 'codex' && !options.remove && !options.dryRun && !env.CODEX_HOME) mkdirSync(join(home, '.codex'), { recursive: true, mode: 0o700 });
  const steps = stepsFor(options, cli, tree, stateDir);
  if (options.dryRun) {
    for (const step of steps) io.out(`${verb}: would run: ${shown(step.argv)}${step.input !== undefined ? ` (answering ${JSON.stringify(step.input.trim())})` : ''}\n`);
    return 0;
  }
  // Claude Code rewrites its settings.json to add the marketplace and the plugin: its bytes before, to give back on --remove.
  const settings = claudeSettings(env, home);
  const backup = `${settings}.warden-plugin-backup`;
  if (options.harness === 'claude-code' && !options.remove && !existsSync(backup)) {
    writeFileSync(backup, existsSync(settings) ? readFileSync(settings) : '', { mode: 0o600 });
  }
  for (const step of steps) {
    const ran = spawnSync(step.argv[0]!, step.argv.slice(1), { env, input: step.input ?? '', encoding: 'utf8', timeout: 120_000 });
    // Their progress lines redraw (\r, escape sequences): the last words of each are what they said.
    const said = `${ran.stdout ?? ''}\n${ran.stderr ?? ''}`
      .split('Stack backtrace:')[0]!
      // eslint-disable-next-line no-control-regex -- escape sequences are what it takes out
      .replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '')
      .split(/[\r\n]+/)
      .map((l) => l.trim())
      .filter((l) => l !== '' && !/^WARNING: proceeding/.test(l));
    // An error line says more than whatever came last.
    const last = said.find((l) => /^(Error:|✘|Failed)/.test(l)) ?? said.at(-1) ?? '';
    if (step.nothingToDo?.test(said.join('\n'))) {
      io.out(`${verb}: ${shown(step.argv)}: nothing to do (${last})\n`);
      continue;
    }
    if (ran.error || ran.status !== 0 || /^(✘|Error:|Failed)/m.test(said.join('\n'))) {
      throw new UsageError(`${shown(step.argv)} failed (${ran.error ? ran.error.message : `exit ${ran.status}`}): ${last || 'no message'}${options.remove ? '' : `; run warden setup ${options.harness} --plugin --remove to undo what was done`}.`);
    }
    io.out(`${verb}: ${shown(step.argv)}: ${last}\n`);
  }
  if (options.harness === 'claude-code' && options.remove && existsSync(backup)) {
    const before = readFileSync(backup, 'utf8');
    const now = existsSync(settings) ? readFileSync(settings, 'utf8') : null;
    if (now !== null && (before === '' ? sameJson(now, '{}') : sameJson(now, before))) {
      if (before === '') rmSync(settings, { force: true });
      else writeFileSync(settings, before);
      io.out(`${verb}: ${settings}: as it was before the plugin\n`);
    }
    rmSync(backup, { force: true });
  }
  if (!options.remove) {
    if (options.harness === 'codex') io.out(`${verb}: Codex runs the plugin's hooks once you have reviewed and trusted them (/hooks); its shell hook routes commands through Warden only when Codex runs them unsandboxed.\n`);
    if (options.harness === 'gemini') io.out(`${verb}: Gemini CLI loads MCP servers only in a trusted folder: trust the folder when it asks.\n`);
    io.out(`${verb}: the plugin's commands run \`warden\` from PATH; restart the harness to load it.\n`);
  }
  return 0;
}
