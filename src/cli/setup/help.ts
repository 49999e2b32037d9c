// `warden setup --help`, apart from setup's code: the CLI's help table
// (src/cli/help.ts) loads it on every call, and setup's code only when asked.

export const SETUP_HELP = `Usage: warden setup claude-code|codex|gemini [options]
       warden setup claude-code|codex|gemini --plugin [--remove] [--dry-run] [--scope user|project|local]

Registers warden mcp with the agent harness in its own config files, by
absolute paths (this Node and this package's bin/warden.mjs), so nothing needs
to be on PATH. What you had in those files stays as it was; a backup of each
file as it was before Warden's first change is kept beside it
(FILE.warden-backup); running it again changes nothing. Run by root on
a user's home, it reads and writes as that user, so their files stay theirs.

  claude-code  ~/.claude.json mcpServers.warden (alwaysLoad), or .mcp.json with
               --scope project; --shell: a PreToolUse hook on Bash in
               ~/.claude/settings.json (or .claude/settings.json).
               $CLAUDE_CONFIG_DIR is honoured.
  codex        [mcp_servers.warden] in ~/.codex/config.toml (or .codex/config.toml),
               with env_vars for Warden's settings and tool_timeout_sec;
               --shell: a PreToolUse hook on Bash in ~/.codex/hooks.json.
               $CODEX_HOME is honoured.
  gemini       ~/.gemini/settings.json mcpServers.warden (or .gemini/settings.json);
               --shell: a BeforeTool hook on run_shell_command.
               $GEMINI_CLI_HOME is honoured.

Options:
  --scope user|project  the user's config (default) or this directory's
  --shell               also route the harness's own shell tool through
                        warden run (warden hook HARNESS --help)
  --limit D             the default limit of the agent's runs (default 10m;
                        WARDEN_DEFAULT_LIMIT of the server, --limit of the hook);
                        without it, a limit you set by hand there stays
  --dry-run             print the change as a diff; write nothing
  --remove              take out what setup added (the server and the hook)
  --plugin              instead of editing settings, install the package's plugin
                        (integrations/) as the harness installs plugins, through
                        its own command line: Claude Code and Codex add it as a
                        local marketplace and install warden@warden (the MCP
                        server, the shell hook, a SessionEnd hook stopping the
                        session's runs, a skill; Claude Code also a monitor of
                        runs that ended and /warden:runs, /warden:stop); Gemini
                        CLI links it as an extension (its WARDEN_STATE_DIR
                        setting filled in, the BeforeTool hook, /warden:runs).
                        The plugin runs \`warden\` from PATH, which must be there.
                        With --remove: uninstalls it; --dry-run: prints the
                        commands. --scope: Claude Code only.
  --help                show this help`;
