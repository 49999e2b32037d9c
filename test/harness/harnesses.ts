// How each real agent CLI is pointed at the scripted model, given Warden, and
// driven non-interactively in a temporary HOME with its own WARDEN_STATE_DIR.

import { execa } from 'execa';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WARDEN_BIN } from '../../src/cli/testkit';

export type HarnessName = 'claude-code' | 'codex' | 'gemini';

export interface Sandbox {
  /** The temporary HOME (XDG dirs inside it). */
  home: string;
  /** Warden's state dir for this harness's runs. */
  stateDir: string;
  /** The project directory the agent works in. */
  project: string;
  /** The environment the harness runs with. */
  env: Record<string, string>;
}

/** A fresh HOME, state dir and project, with an environment that points only inside them. */
export function makeSandbox(name: HarnessName, modelUrl: string): Sandbox {
  const root = mkdtempSync(join(tmpdir(), `warden-${name}-`));
  const home = join(root, 'home');
  const stateDir = join(root, 'state');
  const project = join(root, 'project');
  for (const dir of [home, stateDir, project]) mkdirSync(dir, { recursive: true, mode: 0o700 });
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    USER: process.env.USER ?? 'root',
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    NO_COLOR: '1',
    CI: '1',
    TMPDIR: tmpdir(),
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
    WARDEN_STATE_DIR: stateDir,
    // A host the harness's warden mcp started goes away soon after the agent.
    WARDEN_HOST_IDLE: '20s',
  };
  if (name === 'claude-code') {
    Object.assign(env, {
      ANTHROPIC_BASE_URL: modelUrl,
      ANTHROPIC_API_KEY: 'sk-ant-scripted-model',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
      CLAUDE_CODE_DISABLE_TERMINAL_TITLE: '1',
      // Wait for warden mcp before the first turn (Claude Code does not by default).
      MCP_TIMEOUT: '30000',
      MCP_CONNECTION_NONBLOCKING: '0',
    });
  } else if (name === 'codex') {
    Object.assign(env, { CODEX_HOME: join(home, '.codex'), OPENAI_API_KEY: 'sk-scripted-model', RUST_LOG: 'error' });
  } else {
    Object.assign(env, {
      GEMINI_API_KEY: 'scripted-model-key',
      GOOGLE_GEMINI_BASE_URL: modelUrl,
      GEMINI_CLI_NO_RELAUNCH: 'true',
      GEMINI_TELEMETRY_ENABLED: 'false',
    });
  }
  return { home, stateDir, project, env };
}

/** `warden mcp` as a harness runs it: this Node and this checkout's bin, by absolute paths. */
export function wardenMcpCommand(): { command: string; args: string[] } {
  return { command: process.execPath, args: [WARDEN_BIN, 'mcp'] };
}

/** The harness's non-interactive settings: the scripted model, no telemetry, no update checks. */
export function configureHarness(name: HarnessName, box: Sandbox, modelUrl: string): void {
  if (name === 'claude-code') {
    writeFileSync(join(box.home, '.claude.json'), JSON.stringify({ hasCompletedOnboarding: true, autoUpdates: false }, null, 2));
    mkdirSync(join(box.home, '.claude'), { recursive: true });
  } else if (name === 'codex') {
    const dir = join(box.home, '.codex');
    mkdirSync(dir, { recursive: true });
    const lines = [
      'model = "gpt-5-codex"',
      'model_provider = "scripted"',
      'approval_policy = "never"',
      'sandbox_mode = "danger-full-access"',
      '',
      '[model_providers.scripted]',
      'name = "scripted"',
      `base_url = "${modelUrl}/v1"`,
      'env_key = "OPENAI_API_KEY"',
      'wire_api = "responses"',
      'request_max_retries = 0',
      'stream_max_retries = 0',
      '',
      '[analytics]',
      'enabled = false',
      '',
    ];
    writeFileSync(join(dir, 'config.toml'), lines.join('\n'));
  } else {
    const dir = join(box.home, '.gemini');
    mkdirSync(dir, { recursive: true });
    const settings = {
      security: { auth: { selectedType: 'gemini-api-key' }, folderTrust: { enabled: false } },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      general: { disableAutoUpdate: true, disableUpdateNag: true },
      ui: { hideTips: true, hideBanner: true },
    };
    writeFileSync(join(dir, 'settings.json'), JSON.stringify(settings, null, 2));
  }
}

/** Whether this checkout has `warden setup` (issue 17): until it does, the tests register warden mcp by hand. */
let setupExists: boolean | undefined;
async function hasSetup(box: Sandbox): Promise<boolean> {
  if (setupExists === undefined) {
    const probe = await execa(process.execPath, [WARDEN_BIN, 'setup', '--help'], { env: box.env, extendEnv: false, reject: false, timeout: 60_000 });
    setupExists = !/Unknown command "setup"/.test(probe.stderr);
  }
  return setupExists;
}

/**
 * Puts Warden into the harness: `warden setup <harness>` (with --shell for
 * the shell hook) in the sandbox's HOME, or, in a checkout without it,
 * `warden mcp` registered by hand in the harness's user config.
 */
export async function registerWarden(name: HarnessName, box: Sandbox, options: { shell: boolean }): Promise<{ viaSetup: boolean }> {
  if (await hasSetup(box)) {
    const args = [WARDEN_BIN, 'setup', name, ...(options.shell ? ['--shell'] : [])];
    const result = await execa(process.execPath, args, { cwd: box.project, env: box.env, extendEnv: false, reject: false, timeout: 60_000 });
    if (result.exitCode !== 0) throw new Error(`warden setup ${name} exited ${result.exitCode}: ${result.stderr}`);
    return { viaSetup: true };
  }
  if (options.shell) throw new Error('the shell hook needs warden setup --shell, which this checkout lacks');
  const { command, args } = wardenMcpCommand();
  if (name === 'claude-code') {
    const file = join(box.home, '.claude.json');
    const config = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    config.mcpServers = { warden: { type: 'stdio', command, args, env: {} } };
    writeFileSync(file, JSON.stringify(config, null, 2));
  } else if (name === 'codex') {
    const lines = [
      '[mcp_servers.warden]',
      `command = ${JSON.stringify(command)}`,
      `args = ${JSON.stringify(args)}`,
      // Codex passes an MCP server only a short allowlist of variables.
      `env = { WARDEN_STATE_DIR = ${JSON.stringify(box.stateDir)}, WARDEN_HOST_IDLE = "20s" }`,
      // Without it codex exec may start the first turn before warden mcp is ready, and omit its tools.
      'required = true',
      'startup_timeout_sec = 30',
      'tool_timeout_sec = 120',
      '',
    ];
    appendFileSync(join(box.home, '.codex', 'config.toml'), lines.join('\n'));
  } else {
    const file = join(box.home, '.gemini', 'settings.json');
    const settings = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    settings.mcpServers = { warden: { command, args, env: {}, trust: true, timeout: 120_000 } };
    writeFileSync(file, JSON.stringify(settings, null, 2));
  }
  return { viaSetup: false };
}

/**
 * Puts Warden into the harness as its plugin (`warden setup <harness>
 * --plugin`): the plugins run `warden` from PATH, and setup installs through
 * the harness's own command line, so a bin dir with both goes first on the
 * sandbox's PATH. Returns setup's output.
 */
export async function installPlugin(name: HarnessName, box: Sandbox, script: string, options: { remove?: boolean } = {}): Promise<string> {
  const bin = join(box.home, '..', 'bin');
  if (!existsSync(bin)) {
    mkdirSync(bin);
    if (name === 'codex') {
      // Codex's plugin server starts 3 s late: a slow start (a loaded machine) must still be waited for, never a first
      // turn without Warden's tools (seen under load before the plugin's server was marked required).
      writeFileSync(join(bin, 'warden'), `#!/bin/sh\n[ "$1" = mcp ] && sleep 3\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(WARDEN_BIN)} "$@"\n`, { mode: 0o755 });
    } else symlinkSync(WARDEN_BIN, join(bin, 'warden'));
    symlinkSync(script, join(bin, name === 'claude-code' ? 'claude' : name));
    box.env.PATH = `${bin}:${box.env.PATH}`;
  }
  const args = [WARDEN_BIN, 'setup', name, '--plugin', ...(options.remove ? ['--remove'] : [])];
  const result = await execa(process.execPath, args, { cwd: box.project, env: box.env, extendEnv: false, reject: false, timeout: 120_000 });
  if (result.exitCode !== 0) throw new Error(`warden setup ${name} --plugin${options.remove ? ' --remove' : ''} exited ${result.exitCode}: ${result.stderr}`);
  return `${result.stdout}\n${result.stderr}`;
}

/**
 * Claude Code interactive, in a pseudo-terminal (script(1)): what arms a
 * plugin's monitors, which a -p session never does. Its first prompt is the
 * scripted model's cue; the session is left once `done()` holds (or after
 * timeoutMs) with /exit, then killed with its group.
 */
export async function driveInteractive(script: string, box: Sandbox, prompt: string, done: () => boolean, timeoutMs = 90_000): Promise<{ screen: string; done: boolean }> {
  const config = join(box.home, '.claude.json');
  const settings = JSON.parse(readFileSync(config, 'utf8')) as Record<string, unknown>;
  // What the first screens would ask: the folder's trust, and whether to use the API key of the environment.
  settings.projects = { [box.project]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true } };
  settings.customApiKeyResponses = { approved: [box.env.ANTHROPIC_API_KEY!.slice(-20)], rejected: [] };
  settings.theme = 'dark';
  writeFileSync(config, JSON.stringify(settings, null, 2));
  const native = !/\.(c|m)?js$/.test(script);
  const line = `${native ? '' : `"${process.execPath}" `}"${script}" '${prompt.replace(/'/g, "'\\''")}' --model claude-sonnet-4-5 --allowedTools mcp__plugin_warden_warden Bash`;
  const child = execa('script', ['-qfec', line, '/dev/null'], { cwd: box.project, env: { ...box.env, TERM: 'xterm-256color' }, extendEnv: false, stdin: 'pipe', reject: false, detached: true, timeout: timeoutMs + 20_000, killSignal: 'SIGKILL' });
  let screen = '';
  child.stdout!.on('data', (chunk: Buffer) => (screen += chunk.toString()));
  const until = Date.now() + timeoutMs;
  while (!done() && Date.now() < until) await new Promise((r) => setTimeout(r, 200));
  const reached = done();
  child.stdin!.write('/exit\r');
  const exited = await Promise.race([child.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 5000))]);
  if (!exited && child.pid) {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  await child;
  // eslint-disable-next-line no-control-regex -- escape sequences are what it takes out
  return { screen: screen.replace(/\x1b\[[0-9;?<>=]*[A-Za-z]/g, ''), done: reached };
}

export interface Drive {
  exitCode: number | undefined;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  pid: number | undefined;
}

/** Runs the harness once, non-interactively, on a prompt; killed (with its group) after timeoutMs. */
export async function driveHarness(name: HarnessName, script: string, box: Sandbox, prompt: string, timeoutMs = 120_000): Promise<Drive> {
  const args =
    name === 'claude-code'
      ? // mcp__plugin_warden_warden: the same server when the plugin brings it (warden setup --plugin).
        [script, '-p', prompt, '--model', 'claude-sonnet-4-5', '--allowedTools', 'mcp__warden', 'mcp__plugin_warden_warden', 'Bash', '--output-format', 'text']
      : name === 'codex'
        ? // Codex runs a hook only once the user trusted it (its /hooks review); the tests vet Warden's hook themselves.
          [script, 'exec', '--skip-git-repo-check', '--dangerously-bypass-hook-trust', '--color', 'never', prompt]
        : [script, '-p', prompt, '--model', 'gemini-2.5-pro', '--approval-mode', 'yolo'];
  // A bin is a Node script (Codex, Gemini CLI) or a native executable (Claude Code 2.1.x).
  const native = !/\.(c|m)?js$/.test(script) && !readFileSync(script).subarray(0, 64).toString('latin1').startsWith('#!/usr/bin/env node');
  const child = execa(native ? script : process.execPath, native ? args.slice(1) : args, {
    cwd: box.project,
    env: box.env,
    extendEnv: false,
    stdin: 'ignore',
    reject: false,
    timeout: timeoutMs,
    killSignal: 'SIGKILL',
    detached: true,
    all: false,
  });
  const result = await child;
  return { exitCode: result.exitCode, stdout: String(result.stdout), stderr: String(result.stderr), timedOut: result.timedOut === true, pid: child.pid };
}
