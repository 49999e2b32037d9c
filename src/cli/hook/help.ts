// `warden hook --help`, apart from the hook's code: the CLI's help table
// (src/cli/help.ts) loads it on every call, and the hook's code only when asked.

export const HOOK_HELP = `Usage: warden hook claude-code|codex|gemini [--limit D] [--yield D]

A harness's pre-tool hook (warden setup HARNESS --shell installs it): reads the
hook's JSON on stdin and rewrites the harness's own shell tool call into
  NODE BIN run --format shell-results --yield D --owner-pid AGENT [--limit L] -- bash -c COMMAND
so every command the agent runs is supervised, recorded and shown live, and
ends with the agent. The harness's timeout (ms) becomes --limit (else --limit D,
default 10m); --yield (default 50s; 6s for Codex, whose shell tool hands a
command still running after 10 s to a background session, leaving room for
Node's start and the host on a loaded machine) returns a running command's
output so far with exit status 0 and the exact command that continues it.
run_in_background / is_background commands are not yielded.

It answers with the decision the user's own rules give the original command
(Claude Code: permissions.allow, ask and deny from every settings file it
reads, and --allowedTools / --disallowedTools), and "ask" when it cannot tell.
Gemini CLI and Codex check their own rules on the rewritten call, so a command
one of their deny rules (Gemini: tools.exclude, deny or ask_user policies;
Codex: exec-policy rules) is about is left to them, unchanged; so is every
command of a sandboxed Codex, or of Claude Code with its sandbox on (a Warden
host would run it outside the sandbox).
Warden's own commands pass through untouched; if Warden cannot run here, the
original command runs as it was, and the hook says so.

Options:
  --limit D   the limit when the harness gives no timeout (default 10m)
  --yield D   how long a call waits before returning a running command
  --help      show this help`;
