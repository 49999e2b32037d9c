// The plugins for the three harnesses, as one tree generated from here into
// the package's integrations/ (scripts/build-cli.mjs writes it at every build
// and for npm pack): a Claude Code plugin and a Codex plugin, each in a local
// marketplace rooted at integrations/, and a Gemini CLI extension. One skill
// text, one set of commands, each harness's own manifest around them.
//
// Plugins are copied into the harness's own cache when installed (Claude
// Code, Codex), so nothing in them names a path of this package: they run
// `warden` from PATH, as any plugin from a marketplace does (`npm install -g`
// puts it there; `warden setup HARNESS --plugin` checks it is there).
//
// Nothing here may import more than node's fs and path: the build script
// bundles this file alone.

import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The tree's directory in the package, and each harness's part of it. */
export const INTEGRATIONS_DIR = 'integrations';
export const PLUGIN_NAME = 'warden';
/** The marketplace's name (Claude Code and Codex): plugin warden@warden. */
export const MARKETPLACE_NAME = 'warden';
export const HARNESS_DIRS = { 'claude-code': 'claude-code', codex: 'codex', gemini: 'gemini' } as const;

/** Warden's settings a Codex MCP server is passed by name (Codex passes it only a short allowlist of the environment). */
export const CODEX_PASSED_SETTINGS = ['WARDEN_STATE_DIR', 'WARDEN_HOST_IDLE', 'WARDEN_EMBEDDED', 'WARDEN_CGROUPS', 'WARDEN_MODEL_STREAM_CHARS', 'WARDEN_DEFAULT_LIMIT', 'XDG_STATE_HOME'];

const DESCRIPTION = 'Run commands, builds, test suites, servers and Python scripts under Warden: time limits that keep the output, an honest verdict with advice, every process the run left ended, long output cut to size, and search over what runs printed.';

/** The shell hook, the session's end and the monitor: the same commands in every harness. */
const HOOK = (harness: string) => `warden hook ${harness}`;
const SESSION_END = "warden stop --owner agent --quiet --why 'its agent session ended'";
const MONITOR = 'warden events --ended --yielded --owner agent';

const SKILL_DESCRIPTION =
  "Run shell commands, builds, test suites, dev servers and Python scripts through Warden's MCP tools (run, wait, search, show, stop) instead of a bare shell: each run gets a time limit that keeps its output, a verdict with advice, and its leftover processes ended. Use it for anything that may hang, run long, print a lot or use much memory, and to find lines in what an earlier run printed.";

function skillBody(tool: (name: string) => string): string {
  return `# Running commands under Warden

Warden supervises what you run. Its MCP tools (the \`warden\` server) give
each run a time limit that keeps the output, a verdict that says how it
ended (completed, failed, timed-out, stopped, killed, crashed, signaled) with
advice for the next step, and end every process it left behind. The person
you work with can watch every run live in the Warden app.

## run

${tool('run')} \`{"shell": "npm test 2>&1", "limit": "10m"}\`, or \`{"argv": ["pytest", "-x", "tests/"], "limit": "5m"}\`,
or \`{"python": "import json; ..."}\` (a persistent interpreter session: variables stay for the next script).

- Always give a \`limit\` ("30s", "10m"). At the limit Warden interrupts the
  run and still answers with everything it printed.
- It answers when the run ends, or after \`yield\` (default 30s, at most 50s).
  An answer with state "running" means it goes on: its \`next\` field is the
  exact ${tool('wait')} call that continues it.
- A server or anything else that keeps running (a dev server, a database, a
  watcher): give \`ready\` (what it prints once it is up, such as its URL or
  "listening on"), and ${tool('run')} answers as soon as that appears, leaving it
  running. Stop it with ${tool('stop')} when you are done.
- \`okExit\`: exit codes that are answers, not failures (\`1\` for grep finding
  nothing, or diff finding differences).
- Long output comes cut to its head and tail around a marker naming the
  ${tool('show')} call that returns what was cut; the history keeps all of it.

## wait

${tool('wait')} \`{"id": "..."}\` returns what a running run printed since the last answer, and
its end once it ends. Call it again while it answers "running", or move on:
when a run you left ends, Warden tells you (its monitor).

## search

${tool('search')} \`{"id": "...", "pattern": "Traceback|Error:"}\` finds lines in a run's output
(a JavaScript regular expression; \`literal: true\` for plain text;
\`ignoreCase\`, \`stream\`, \`context\` lines). Without an id it looks through
the newest runs (\`since\`, \`verdict\`). It answers as \`rg -n -C\` does: each
match's line number and the offset ${tool('show')} takes, with the lines around it.
Use it instead of paging through a long log; follow its \`next\` call for more.

## show and list

${tool('show')} \`{"id": "...", "stream": "stdout", "offset": 2000}\` pages a run's output;
${tool('list')} finds runs (\`live\`, \`verdict\`, \`since\`, \`search\`).

## stop

${tool('stop')} \`{"id": "..."}\` ends a run with Warden's stop sequence (SIGINT, then SIGTERM,
then SIGKILL after its grace) and returns its final result. Runs you leave
live end when your session ends.
`;
}

function frontmatter(fields: Record<string, string>): string {
  return `---\n${Object.entries(fields)
    .map(([key, value]) => `${key}: ${JSON.stringify(value)}`)
    .join('\n')}\n---\n`;
}

const RUNS_PROMPT = (tool: (name: string) => string) =>
  `List the Warden runs of this session and the recent ones: call ${tool('list')} with {"since": "24h"} (add "search" with the words "$ARGUMENTS" when they are not empty). Show them as a short table: id, verdict (or state while live), elapsed against its limit, and the command. For each run still live, say that ${tool('wait')} continues it and /warden:stop ID ends it; for a run that failed, give its advice.`;

const STOP_PROMPT = (tool: (name: string) => string) =>
  `Stop a Warden run. If "$ARGUMENTS" is a run id, call ${tool('stop')} with {"id": "$ARGUMENTS"} and report the verdict and what its teardown ended. If "$ARGUMENTS" is empty, call ${tool('list')} with {"live": true}, then call ${tool('stop')} for each live run this session started, and report each one's verdict. Never stop a run the user did not ask about when an id was given.`;

function readme(): string {
  return `# Warden plugins

Warden supervises the commands and scripts an AI agent runs: time limits that
keep the output, an honest verdict with advice, every leftover process ended,
long output cut to size, and search over what runs printed. These plugins give
an agent harness Warden's MCP server (\`warden mcp\`), a skill saying when to use
it, its shell hook, and commands:

- \`claude-code/\`: a Claude Code plugin (in the marketplace \`.claude-plugin/marketplace.json\`):
  the MCP server, a PreToolUse hook on Bash that runs its commands through
  Warden, a SessionEnd hook that stops the session's runs, a monitor that tells
  the model when a run it left going ends, the skill, and /warden:runs and
  /warden:stop.
- \`codex/\`: a Codex plugin (in the marketplace \`.agents/plugins/marketplace.json\`):
  the MCP server, the hooks and the skill.
- \`gemini/\`: a Gemini CLI extension: the MCP server, a setting that carries
  WARDEN_STATE_DIR to it, the BeforeTool hook, the skill and /warden:runs.

They run \`warden\` from PATH. Install them with \`warden setup claude-code --plugin\`
(or codex, gemini), which checks that, and take them out with \`--remove\`.
This tree is generated (src/cli/setup/plugin-tree.ts); do not edit it by hand.
`;
}

function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** Every file of the tree: its path under integrations/ and its text. */
export function integrationFiles(version: string): Map<string, string> {
  const files = new Map<string, string>();
  const author = { name: 'Warden' };
  files.set('README.md', readme());

  // ------------------------------------------------------------ Claude Code
  const claude = HARNESS_DIRS['claude-code'];
  const claudeTool = (name: string) => `\`${name}\``;
  files.set('.claude-plugin/marketplace.json', json({ name: MARKETPLACE_NAME, owner: author, description: DESCRIPTION, plugins: [{ name: PLUGIN_NAME, source: `./${claude}`, description: DESCRIPTION, version }] }));
  files.set(`${claude}/.claude-plugin/plugin.json`, json({ name: PLUGIN_NAME, version, description: DESCRIPTION, author, license: 'MIT', keywords: ['supervisor', 'timeout', 'mcp', 'process-tree', 'agents'] }));
  files.set(`${claude}/README.md`, readme());
  // alwaysLoad: Claude Code (2.1.332) otherwise defers a server's tools behind ToolSearch and, interactive, may start
  // the first turn before the server is up; an alwaysLoad server is joined before the first input.
  files.set(`${claude}/.mcp.json`, json({ mcpServers: { warden: { type: 'stdio', command: 'warden', args: ['mcp'], alwaysLoad: true } } }));
  files.set(
    `${claude}/hooks/hooks.json`,
    json({
      hooks: {
        PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: HOOK('claude-code'), timeout: 30 }] }],
        SessionEnd: [{ hooks: [{ type: 'command', command: SESSION_END, timeout: 60 }] }],
      },
    }),
  );
  files.set(`${claude}/monitors/monitors.json`, json([{ name: 'warden-runs', command: MONITOR, description: 'Warden: runs of this session that ended after you left them going', when: 'always' }]));
  files.set(`${claude}/skills/warden/SKILL.md`, `${frontmatter({ name: 'warden', description: SKILL_DESCRIPTION })}\n${skillBody(claudeTool)}`);
  files.set(`${claude}/commands/runs.md`, `${frontmatter({ description: "List this session's Warden runs and how each ended", 'argument-hint': '[words to look for]' })}\n${RUNS_PROMPT(claudeTool)}\n`);
  files.set(`${claude}/commands/stop.md`, `${frontmatter({ description: 'Stop a Warden run, or every live run of this session', 'argument-hint': '[run id]' })}\n${STOP_PROMPT(claudeTool)}\n`);

  // ------------------------------------------------------------ Codex
  const codex = HARNESS_DIRS.codex;
  const codexTool = claudeTool;
  files.set(
    '.agents/plugins/marketplace.json',
    json({
      name: MARKETPLACE_NAME,
      interface: { displayName: 'Warden' },
      plugins: [{ name: PLUGIN_NAME, source: { source: 'local', path: `./${codex}` }, policy: { installation: 'AVAILABLE', authentication: 'ON_INSTALL' }, category: 'Coding' }],
    }),
  );
  files.set(
    `${codex}/.codex-plugin/plugin.json`,
    json({
      name: PLUGIN_NAME,
      version,
      description: DESCRIPTION,
      author,
      license: 'MIT',
      skills: './skills/',
      mcpServers: './.mcp.json',
      hooks: './hooks.json',
      interface: { displayName: 'Warden', shortDescription: 'Supervised runs for the agent: limits, verdicts, search', category: 'Coding' },
    }),
  );
  files.set(`${codex}/README.md`, readme());
  // Codex passes an MCP server a short allowlist of the environment: Warden's settings are named; a Warden tool call
  // blocks up to 50 s (a yield), then the stop sequence and the answer. Required: codex exec (0.169-0.171) starts the
  // first turn without waiting for an optional server that is slow to start (a loaded machine), and the model is
  // offered no Warden tool (test/harness starts the plugin's server 3 s late).
  files.set(`${codex}/.mcp.json`, json({ mcpServers: { warden: { command: 'warden', args: ['mcp'], env_vars: CODEX_PASSED_SETTINGS, startup_timeout_sec: 30, tool_timeout_sec: 120, required: true } } }));
  files.set(
    `${codex}/hooks.json`,
    json({
      hooks: {
        PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: HOOK('codex'), timeout: 30 }] }],
        SessionEnd: [{ hooks: [{ type: 'command', command: SESSION_END, timeout: 60 }] }],
      },
    }),
  );
  files.set(`${codex}/skills/warden/SKILL.md`, `${frontmatter({ name: 'warden', description: SKILL_DESCRIPTION })}\n${skillBody(codexTool)}`);

  // ------------------------------------------------------------ Gemini CLI
  const gemini = HARNESS_DIRS.gemini;
  const geminiTool = claudeTool;
  files.set(
    `${gemini}/gemini-extension.json`,
    json({
      name: PLUGIN_NAME,
      version,
      description: DESCRIPTION,
      mcpServers: { warden: { command: 'warden', args: ['mcp'], timeout: 120_000 } },
      // An extension's MCP server gets a scrubbed environment (strictly so in CI): the state dir comes as a setting.
      settings: [{ name: 'Warden state dir', description: "Where Warden keeps its history and its host's socket (WARDEN_STATE_DIR); warden setup gemini --plugin fills it in.", envVar: 'WARDEN_STATE_DIR' }],
    }),
  );
  files.set(
    `${gemini}/hooks/hooks.json`,
    json({
      hooks: {
        BeforeTool: [{ matcher: 'run_shell_command', hooks: [{ name: 'warden', type: 'command', command: HOOK('gemini') }] }],
        SessionEnd: [{ hooks: [{ name: 'warden-stop', type: 'command', command: SESSION_END }] }],
      },
    }),
  );
  files.set(`${gemini}/skills/warden/SKILL.md`, `${frontmatter({ name: 'warden', description: SKILL_DESCRIPTION })}\n${skillBody(geminiTool)}`);
  files.set(`${gemini}/commands/warden/runs.toml`, `description = ${JSON.stringify("List this session's Warden runs and how each ended")}\nprompt = ${JSON.stringify(RUNS_PROMPT(geminiTool).replace(/\$ARGUMENTS/g, '{{args}}'))}\n`);
  files.set(`${gemini}/commands/warden/stop.toml`, `description = ${JSON.stringify('Stop a Warden run, or every live run of this session')}\nprompt = ${JSON.stringify(STOP_PROMPT(geminiTool).replace(/\$ARGUMENTS/g, '{{args}}'))}\n`);
  return files;
}

/** The files of a tree on disk, as integrationFiles gives them (null when it is not there). */
function readTree(dir: string): Map<string, string> | null {
  const files = new Map<string, string>();
  const walk = (sub: string) => {
    for (const entry of readdirSync(join(dir, sub), { withFileTypes: true })) {
      const path = sub === '' ? entry.name : `${sub}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else files.set(path, readFileSync(join(dir, path), 'utf8'));
    }
  };
  try {
    if (!statSync(dir).isDirectory()) return null;
    walk('');
  } catch {
    return null;
  }
  return files;
}

/**
 * Writes the tree into `root`/integrations when what is there differs: a new
 * tree beside it, then swapped in by renames, so a reader never sees half of
 * one. Returns whether it wrote.
 */
export function writeIntegrations(root: string, version: string): boolean {
  const target = join(root, INTEGRATIONS_DIR);
  const files = integrationFiles(version);
  const current = readTree(target);
  if (current && current.size === files.size && [...files].every(([path, text]) => current.get(path) === text)) return false;
  const fresh = join(root, `.${INTEGRATIONS_DIR}-${process.pid}-${Date.now().toString(36)}`);
  const old = `${fresh}-old`;
  try {
    for (const [path, text] of files) {
      mkdirSync(dirname(join(fresh, path)), { recursive: true });
      writeFileSync(join(fresh, path), text);
    }
    if (current) renameSync(target, old);
    renameSync(fresh, target);
  } finally {
    rmSync(fresh, { recursive: true, force: true });
    rmSync(old, { recursive: true, force: true });
  }
  return true;
}
