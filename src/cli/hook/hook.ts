// `warden hook claude-code|codex|gemini`: a harness's pre-tool hook that
// routes its own shell tool through `warden run`. It reads the hook's JSON on
// stdin and answers on stdout, in about the time Node takes to start: no host
// contact, nothing but node:fs and this directory (its own small bundle,
// out/cli/*/hook.mjs).
//
// The rewritten command is
//   NODE BIN run --format shell-results --yield D --owner-pid AGENT [--limit L] -- bash -c ORIGINAL
// with absolute paths, so nothing needs PATH; the run ends with the agent
// process (--owner-pid), a yielded run exits 0 and prints the exact next
// command. It never widens what the user allowed (see rules.ts). It passes a
// command through untouched when it is Warden's own, when Warden cannot run
// here (saying so), and for Codex when Codex sandboxes its commands (a host
// outside the sandbox would run them unsandboxed) or has exec-policy rules
// about the command (Codex would check them against the rewritten line).

import { accessSync, constants, existsSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { parseDuration } from '../../shared/duration';
import { resolveStateDir, unsafeDirReason } from '../../client/state-dir';
import { parseJsonc, valueOf } from '../setup/jsonc';
import { claudeRules, codexRulePrefixes, codexRulesTouch, decideClaude, decideUnread, geminiRestriction, type Decision } from './rules';
import { backgroundOf, type Background } from './background';
import { askedYieldMs, codexYieldMs, readTail } from './codex-yield';
import { ruleWords } from './match';
import { shQuote } from './shell';
import { loadBashGrammar } from './bash-grammar';
import { plainLine } from './plain-line';
import { analyzeCommand, type Analysis } from './walk';

export const HARNESSES = ['claude-code', 'codex', 'gemini'] as const;
export type Harness = (typeof HARNESSES)[number];

export { HOOK_HELP } from './help';

export interface HookInput {
  tool_name?: unknown;
  tool_input?: unknown;
  permission_mode?: unknown;
  cwd?: unknown;
  [key: string]: unknown;
}

export interface HookEnv {
  env: NodeJS.ProcessEnv;
  /** The node binary and bin/warden.mjs that the rewritten command runs. */
  node: string;
  bin: string | null;
  /** Why Warden cannot run here, or null. */
  unusable: () => string | null;
  /** What bash would run for a command line (walk.ts over the bash grammar, loaded on the first call); null when it cannot be read. */
  analyze: (command: string) => Promise<Analysis | null>;
  /** How the line uses `&` (background.ts). */
  background: (command: string) => Promise<Background>;
  /** The agent process: pid and argv. */
  agent: () => { pid: number; argv: string[] } | null;
  home: string;
}

export interface HookAnswer {
  /** What to print on stdout (JSON), or '' for "go on as you were". */
  stdout: string;
  exitCode: number;
}

const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'fish', 'busybox', 'env', 'timeout', 'nice']);

function readStat(pid: number): { ppid: number; comm: string } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    const comm = stat.slice(stat.indexOf('(') + 1, close);
    const ppid = Number(stat.slice(close + 2).split(' ')[1]);
    return { ppid, comm };
  } catch {
    return null;
  }
}

function readArgv(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter((a, i, all) => a !== '' || i < all.length - 1);
  } catch {
    return [];
  }
}

/** The agent: the nearest ancestor of this hook that is not a shell the harness ran it through. */
export function findAgent(start: number = process.ppid): { pid: number; argv: string[] } | null {
  let pid = start;
  for (let depth = 0; depth < 6 && pid > 1; depth++) {
    const stat = readStat(pid);
    if (!stat) return null;
    const argv = readArgv(pid);
    const name = basename(argv[0] ?? stat.comm);
    if (!SHELLS.has(stat.comm) && !SHELLS.has(name)) return { pid, argv };
    pid = stat.ppid;
  }
  return null;
}

/** Why `warden run` cannot work from here (no bundle, no writable state dir), or null. */
export function whyUnusable(bin: string | null, env: NodeJS.ProcessEnv): string | null {
  if (bin === null) return 'its package (bin/warden.mjs) was not found';
  const root = dirname(dirname(bin));
  const cli = [join(root, 'out', 'cli', 'dist', 'warden.mjs'), join(root, 'out', 'cli', 'current', 'warden.mjs'), join(root, 'src', 'cli', 'main.ts')];
  if (!cli.some((path) => existsSync(path))) return `its CLI is not built in ${root} (npm run build:cli)`;
  const stateDir = resolveStateDir(env);
  // The nearest existing directory must let this user create or use the state dir, and be one Warden trusts
  // (`warden run` refuses one another user owns or may write, as ssh refuses such a ~/.ssh).
  let dir = stateDir;
  for (let i = 0; i < 32; i++) {
    try {
      if (!statSync(dir).isDirectory()) return `its state dir ${stateDir} is not a directory`;
      const unsafe = dir === stateDir ? unsafeDirReason(dir) : unsafeDirReason(dir, stateDir);
      if (unsafe !== null) return unsafe.replace(/; Warden will not use it\..*$/s, '');
      accessSync(dir, constants.W_OK | constants.X_OK);
      return null;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOTDIR') return `its state dir ${stateDir} cannot be made: a file stands in its path`;
      if (code !== 'ENOENT') return `its state dir ${stateDir} is not writable (${code ?? 'error'})`;
    }
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return `its state dir ${stateDir} cannot be created`;
}

/** Whether a command line is Warden's own (warden ..., npx warden ..., NODE .../bin/warden.mjs ...): the harness then judges it as it is. */
export function isWardenCommand(command: string, bin: string | null): boolean {
  if (bin !== null && command.includes(bin)) return true;
  // Only the first line's first command matters, and a wrong answer only leaves the harness to judge the command itself.
  let words = ruleWords(command.split(/[;&|\n]/)[0] ?? '');
  while (words.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0] ?? '')) words = words.slice(1);
  const name = basename(words[0] ?? '');
  if (name === 'warden') return true;
  if (name === 'npx' && words.slice(1).find((w) => !w.startsWith('-')) === 'warden') return true;
  if ((name === 'node' || name === 'nodejs') && (words[1] ?? '').endsWith('bin/warden.mjs')) return true;
  return false;
}

function durationText(ms: number): string {
  return `${Math.round(ms)}ms`;
}

/** The `warden run` line that runs command, as one string for the harness's shell. */
export function wardenLine(options: { node: string; bin: string; command: string; limitMs?: number; yieldMs?: number; ownerPid?: number; defaultLimit: string }): string {
  const words = [options.node, options.bin, 'run', '--format', 'shell-results'];
  if (options.yieldMs !== undefined) words.push('--yield', durationText(options.yieldMs));
  if (options.ownerPid !== undefined) words.push('--owner-pid', String(options.ownerPid));
  words.push('--limit', options.limitMs !== undefined ? durationText(options.limitMs) : options.defaultLimit);
  words.push('--', 'bash', '-c', options.command);
  return words.map(shQuote).join(' ');
}

/** A service's answer comes when it listens; one that does not yet answers "running" after this (an & in a call the model waits on). */
const SERVICE_YIELD_MS = 20_000;
/** The same in the harness's own background (run_in_background, is_background), where nobody waits on the answer. */
const SERVICE_BACKGROUND_YIELD_MS = 60_000;

/**
 * The `warden run` line of work the agent sent to the background: a service
 * of the agent, ready once its processes listen on a port (its ports in the
 * answer), kept running when it never does (a watcher, a long job), with a
 * lease and no limit, owned by the agent (ended with it), so it neither
 * escapes nor is torn down with the call.
 */
export function serviceLine(options: { node: string; bin: string; command: string; yieldMs: number; ownerPid?: number }): string {
  const words = [options.node, options.bin, 'run', '--format', 'shell-results', '--ready', 'port', '--ready-timeout', '10m', '--on-not-ready', 'keep', '--lease', '2h', '--yield', durationText(options.yieldMs)];
  if (options.ownerPid !== undefined) words.push('--owner-pid', String(options.ownerPid));
  words.push('--', 'bash', '-c', options.command);
  return words.map(shQuote).join(' ');
}

function objectOf(value: unknown): Record<string, unknown> | null {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

const SHELL_TOOLS: Record<Harness, string[]> = {
  'claude-code': ['Bash'],
  codex: ['Bash', 'shell', 'exec_command', 'local_shell'],
  gemini: ['run_shell_command'],
};

// Codex: at 8 s, a loaded machine (load 15) took 10.2 s to answer, past Codex's 10 s (seen in test/harness/).
const DEFAULT_YIELD_MS: Record<Harness, number> = { 'claude-code': 50_000, codex: 6_000, gemini: 50_000 };
/** Claude Code stops a Bash call at its timeout; the client must outlast the yield, the stop sequence and the answer. */
const CLAUDE_MIN_TIMEOUT_MS = 90_000;
const CLAUDE_MAX_TIMEOUT_MS = 600_000;
/** The longest limit `warden run` takes (shared/schemas.ts MAX_RUN_LIMIT_MS, not imported: it would bring zod into the hook). */
export const WARDEN_MAX_LIMIT_MS = 10 * 365 * 24 * 3_600_000;

/** The longest timeout the harness itself gives a shell call: Claude Code's BASH_MAX_TIMEOUT_MS (10 min unless set); Warden's own longest limit elsewhere. */
export function harnessMaxTimeoutMs(harness: Harness, env: NodeJS.ProcessEnv): number {
  if (harness !== 'claude-code') return WARDEN_MAX_LIMIT_MS;
  const set = Number(env.BASH_MAX_TIMEOUT_MS);
  return Number.isFinite(set) && set > 0 ? Math.min(set, WARDEN_MAX_LIMIT_MS) : CLAUDE_MAX_TIMEOUT_MS;
}

function formatMs(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

function notice(harness: Harness, message: string): HookAnswer {
  // Every harness shows systemMessage to the user; the command itself goes on unchanged.
  void harness;
  return { stdout: `${JSON.stringify({ systemMessage: `warden: ${message}` })}\n`, exitCode: 0 };
}

const PASS: HookAnswer = { stdout: '', exitCode: 0 };

/** Codex's sandbox for this session, from its command line and config.toml: 'off', 'on' or 'unknown'. */
export function codexSandbox(argv: string[], codexHome: string): 'off' | 'on' | 'unknown' {
  let mode: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--dangerously-bypass-approvals-and-sandbox' || arg === '--yolo') return 'off';
    if (arg === '--full-auto') mode = 'workspace-write';
    if (arg === '-s' || arg === '--sandbox') mode = argv[i + 1];
    if (arg.startsWith('--sandbox=')) mode = arg.slice('--sandbox='.length);
    if (arg === '-p' || arg === '--profile' || arg.startsWith('--profile=')) return 'unknown';
    const config = arg === '-c' || arg === '--config' ? argv[i + 1] : arg.startsWith('--config=') ? arg.slice(9) : undefined;
    const set = config !== undefined ? /^sandbox_mode\s*=\s*["']?([a-z-]+)["']?$/.exec(config.trim()) : null;
    if (set) mode = set[1];
  }
  if (mode === undefined) {
    try {
      const text = readFileSync(join(codexHome, 'config.toml'), 'utf8');
      const top = text.split(/^\s*\[/m)[0] ?? '';
      if (/^\s*profile\s*=/m.test(top)) return 'unknown';
      mode = /^\s*sandbox_mode\s*=\s*["']([a-z-]+)["']/m.exec(top)?.[1];
    } catch {
      // No config: Codex's default sandbox.
    }
  }
  return mode === 'danger-full-access' ? 'off' : 'on';
}

export async function runHook(harness: Harness, args: { limit: string; yieldMs?: number }, raw: string, context: HookEnv): Promise<HookAnswer> {
  let input: HookInput;
  try {
    input = JSON.parse(raw) as HookInput;
  } catch {
    return notice(harness, 'the hook input is not JSON; the command runs as it was, without Warden.');
  }
  const toolInput = objectOf(input.tool_input);
  if (!toolInput || typeof input.tool_name !== 'string' || !SHELL_TOOLS[harness].includes(input.tool_name)) return PASS;
  const rawCommand = toolInput.command;
  const command = typeof rawCommand === 'string' ? rawCommand : Array.isArray(rawCommand) && rawCommand.every((w) => typeof w === 'string') ? (rawCommand as string[]).map(shQuote).join(' ') : null;
  if (command === null || command.trim() === '') return PASS;
  if (isWardenCommand(command, context.bin)) return PASS;

  let decision: Decision | undefined;
  let reason = '';
  if (harness === 'claude-code') {
    const configDir = context.env.CLAUDE_CONFIG_DIR || join(context.home, '.claude');
    const projectDir = context.env.CLAUDE_PROJECT_DIR || (typeof input.cwd === 'string' ? input.cwd : process.cwd());
    const agent = context.agent();
    const rules = claudeRules({ configDir, projectDir, managedDir: context.env.WARDEN_CLAUDE_MANAGED_DIR || '/etc/claude-code', agentArgv: agent?.argv ?? [] });
    // Claude Code's own sandbox would hold the warden client, not the command the host runs for it: leave sandboxed commands to Claude Code.
    if (rules.sandboxed === true && toolInput.dangerouslyDisableSandbox !== true) return PASS;
    const mode = typeof input.permission_mode === 'string' ? input.permission_mode : undefined;
    // Reading the line costs loading the bash grammar: only when the rules could judge its parts differently.
    const verdict = decideUnread(rules, mode) ?? decideClaude(await context.analyze(command), rules, mode);
    ({ decision, reason } = verdict);
    if (decision === 'deny') {
      return { stdout: `${JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: reason } })}\n`, exitCode: 0 };
    }
    // What a person is asked about, and what a refusal records (permission_denials), is their own command, not
    // Warden's line around it: asked, the command goes unchanged and, once approved, runs as written.
    if (decision === 'ask') {
      return { stdout: `${JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'ask', permissionDecisionReason: `warden: ${reason}; approved, it runs as written, outside Warden` } })}\n`, exitCode: 0 };
    }
  }
  if (harness === 'codex') {
    const codexHome = context.env.CODEX_HOME || join(context.home, '.codex');
    const agent = context.agent();
    if (codexSandbox(agent?.argv ?? [], codexHome) !== 'off') return PASS;
    const projectDir = typeof input.cwd === 'string' ? input.cwd : process.cwd();
    const prefixes = codexRulePrefixes([join(codexHome, 'rules'), join(projectDir, '.codex', 'rules')]);
    if (prefixes === null || (prefixes.length > 0 && codexRulesTouch(await context.analyze(command), prefixes))) return PASS;
    decision = 'allow';
    reason = 'Codex checks its own approval policy on the rewritten command';
  }

  if (harness === 'gemini') {
    const projectDir = typeof input.cwd === 'string' ? input.cwd : process.cwd();
    const geminiHome = join(context.env.GEMINI_CLI_HOME || context.home, '.gemini');
    const systemSettings = context.env.GEMINI_CLI_SYSTEM_SETTINGS_PATH || '/etc/gemini-cli/settings.json';
    const restriction = await geminiRestriction(
      () => context.analyze(command),
      [join(geminiHome, 'settings.json'), join(projectDir, '.gemini', 'settings.json'), systemSettings],
      [join(geminiHome, 'policies'), join(projectDir, '.gemini', 'policies'), join(dirname(systemSettings), 'policies')],
      (text) => {
        const root = parseJsonc(text);
        return root === null ? {} : valueOf(text, root);
      },
    );
    // Gemini checks its policy on the call as the hook leaves it: a rule about the original must see the original.
    if (restriction !== null) return PASS;
  }

  const why = context.unusable();
  if (why !== null || context.bin === null) return notice(harness, `Warden cannot run here (${why ?? 'no package'}); the command runs as it was, without Warden.`);
  const agent = context.agent();
  // Work sent to the background (the harness's own flag, or a line that ends in &) is a service of the agent.
  const flagged = toolInput.run_in_background === true || toolInput.is_background === true;
  const amp = await context.background(command);
  const background = flagged || amp.kind === 'whole';
  const asked = typeof toolInput.timeout === 'number' && Number.isFinite(toolInput.timeout) && toolInput.timeout > 0 ? toolInput.timeout : undefined;
  // A timeout past what the harness itself allows (a model's 1e20) is the harness's maximum, said to the user.
  const maxTimeout = harnessMaxTimeoutMs(harness, context.env);
  const timeout = asked === undefined ? undefined : Math.min(asked, maxTimeout);
  const capped = asked !== undefined && asked > maxTimeout ? `the call's timeout (${asked} ms) is past ${harness === 'claude-code' ? "Claude Code's own maximum" : "Warden's longest limit"}, so the run's limit is ${formatMs(maxTimeout)}` : null;
  let yieldMs = flagged ? undefined : (args.yieldMs ?? DEFAULT_YIELD_MS[harness]);
  if (harness === 'codex' && yieldMs !== undefined && typeof input.transcript_path === 'string' && typeof input.tool_use_id === 'string') {
    // The call's own yield_time_ms, from Codex's transcript; a --yield given to the hook stays the longest.
    const fitted = codexYieldMs(askedYieldMs(readTail(input.transcript_path), input.tool_use_id), DEFAULT_YIELD_MS.codex);
    yieldMs = args.yieldMs === undefined ? fitted : Math.min(args.yieldMs, fitted);
  }
  const line = background
    ? serviceLine({
        node: context.node,
        bin: context.bin,
        command: amp.kind === 'whole' ? amp.command : command,
        // In the harness's own background the answer may wait longer; an & in a call the model waits on answers sooner.
        yieldMs: flagged ? SERVICE_BACKGROUND_YIELD_MS : Math.min(SERVICE_YIELD_MS, yieldMs ?? DEFAULT_YIELD_MS[harness]),
        ...(agent ? { ownerPid: agent.pid } : {}),
      })
    : wardenLine({ node: context.node, bin: context.bin, command, ...(timeout !== undefined ? { limitMs: timeout } : {}), ...(yieldMs !== undefined ? { yieldMs } : {}), ...(agent ? { ownerPid: agent.pid } : {}), defaultLimit: args.limit });
  const updated: Record<string, unknown> = { ...toolInput, command: line };

  if (harness === 'claude-code') {
    if (!flagged) updated.timeout = Math.min(CLAUDE_MAX_TIMEOUT_MS, Math.max(timeout ?? 0, CLAUDE_MIN_TIMEOUT_MS, (yieldMs ?? 0) + 40_000));
    return { stdout: `${JSON.stringify({ ...(capped ? { systemMessage: `warden: ${capped}.` } : {}), hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: decision, permissionDecisionReason: `warden: ${reason}`, updatedInput: updated } })}\n`, exitCode: 0 };
  }
  if (harness === 'codex') {
    return { stdout: `${JSON.stringify({ ...(capped ? { systemMessage: `warden: ${capped}.` } : {}), hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', updatedInput: updated } })}\n`, exitCode: 0 };
  }
  return { stdout: `${JSON.stringify({ ...(capped ? { systemMessage: `warden: ${capped}.` } : {}), hookSpecificOutput: { hookEventName: 'BeforeTool', tool_input: updated } })}\n`, exitCode: 0 };
}

/** Parses `warden hook` arguments; a usage problem is a string. */
export function parseHookArgs(args: string[]): { harness: Harness; limit: string; yieldMs?: number } | string {
  const [harness, ...rest] = args;
  if (!HARNESSES.includes(harness as Harness)) return `warden hook takes claude-code, codex or gemini${harness === undefined ? '' : `, not ${JSON.stringify(harness)}`} (see warden hook --help).`;
  let limit = '10m';
  let yieldMs: number | undefined;
  for (let i = 0; i < rest.length; i++) {
    const flag = rest[i];
    const value = rest[i + 1];
    if ((flag === '--limit' || flag === '--yield') && value !== undefined) {
      const ms = parseDuration(value);
      if (ms === undefined || ms <= 0) return `${flag} takes a duration such as 30s or 10m, not ${JSON.stringify(value)}.`;
      if (flag === '--limit') limit = value;
      else yieldMs = ms;
      i++;
      continue;
    }
    return `warden hook: unknown argument ${JSON.stringify(flag)} (it takes --limit D and --yield D).`;
  }
  return { harness: harness as Harness, limit, ...(yieldMs !== undefined ? { yieldMs } : {}) };
}

/** This package's bin/warden.mjs, found upward from this module (src/cli/hook or out/cli/<build>). */
export function findBin(from: string): string | null {
  let dir = from;
  for (let i = 0; i < 6; i++) {
    const bin = join(dir, 'bin', 'warden.mjs');
    if (existsSync(bin) && existsSync(join(dir, 'package.json'))) return bin;
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return null;
}

export function defaultHookEnv(moduleDir: string): HookEnv {
  const bin = findBin(moduleDir);
  let agent: { pid: number; argv: string[] } | null | undefined;
  return {
    env: process.env,
    node: process.execPath,
    bin,
    unusable: () => whyUnusable(bin, process.env),
    // A line of plain words is read without the grammar (plain-line.ts): most lines, at a fraction of the cost.
    analyze: async (command) => plainLine(command) ?? analyzeCommand(await loadBashGrammar({ shortLived: true }), command),
    // Only a line with an & in it can send work to the background: the grammar is not loaded for the others.
    background: async (command) => (command.includes('&') ? ((await loadBashGrammar({ shortLived: true })).withTree(command, (root) => backgroundOf(root, command)) ?? { kind: 'none' }) : { kind: 'none' }),
    agent: () => (agent === undefined ? (agent = findAgent()) : agent),
    home: process.env.HOME || homedir(),
  };
}
