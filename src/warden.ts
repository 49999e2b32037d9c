// The `warden` command's entry (bundled by scripts/build-cli.mjs): the CLI's
// commands, plus `warden mcp`, which builds on the CLI's parsing and rendering
// and so sits above src/cli rather than inside it (docs/architecture.md, "Layout").

import { main as cliMain, type CliIo } from './cli/main';

/** Runs `warden ARGS...` and returns its exit status. */
export function main(args: string[], io?: CliIo): Promise<number> {
  return cliMain(args, io, { mcp: async (rest, commandIo) => (await import('./mcp/index')).mcpCommand(rest, commandIo) });
}
