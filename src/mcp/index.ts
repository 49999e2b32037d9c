// `warden mcp`: an MCP server over stdio for agents (Claude Code, Codex,
// Gemini CLI, ...). A client of the Warden host of the state dir: it connects
// to the running host or starts a background one, and keeps an event stream
// open while the agent is attached so that host does not idle out. Runs until
// stdin closes (the agent went away), then exits 0; runs it started go on in
// the host under their limits.

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { CliIo } from '../cli/io';
import { resolveStateDir } from '../client/state-dir';
import { embeddedFromEnv } from '../client/autostart';
import { HostLink } from './host-link';
import { createMcpServer } from './server';

export const MCP_HELP = `Usage: warden mcp

Serves the Model Context Protocol over stdio, for an agent to run commands and
Python scripts under Warden's supervision. Register it with the agent, e.g.:

  claude mcp add warden -- npx warden mcp
  codex mcp add warden -- npx warden mcp
  gemini mcp add warden npx warden mcp

Tools: run (a command, a shell line or a Python script, with a limit; returns
when it ends or after its yield, default 30s, at most 50s), wait, stop, extend,
list, show and sessions. Every run answer is a <shell_results> block for the
model and the result contract (as warden run --json prints it) as
structuredContent.

It always goes through a Warden host (--embedded and WARDEN_EMBEDDED do not
apply): the one running for the state dir ($WARDEN_STATE_DIR, default
~/.local/state/warden; the app or warden serve), else a background host it
starts (log in <state dir>/host.log), which exits once idle (WARDEN_HOST_IDLE,
default 10m) after the last client left. So a person sees the agent's runs live
in the app or the web UI, and a run outlives the call that started it.

It runs until stdin closes, then exits 0.

Options:
  --help      show this help`;

/** The package's version, from the package.json above this module (src/mcp/ or a bundle under out/). */
function packageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      try {
        const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
        if (pkg.name === 'warden' && pkg.version) return pkg.version;
      } catch {
        // Not ours or unreadable: look further up.
      }
    }
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return '0.0.0';
}

/** Resolves when stdin ends or closes: the client went away. */
function stdinClosed(): Promise<void> {
  return new Promise((resolve) => {
    if (process.stdin.readableEnded || process.stdin.destroyed) return resolve();
    process.stdin.once('end', () => resolve());
    process.stdin.once('close', () => resolve());
  });
}

export async function mcpCommand(args: string[], io: CliIo): Promise<number> {
  for (const arg of args) {
    if (arg === '--help' || arg === '-h') {
      io.out(`${MCP_HELP}\n`);
      return 0;
    }
  }
  const first = args[0];
  if (first !== undefined) {
    if (first === '--embedded') {
      io.err('warden: warden mcp always uses a Warden host (it starts one when none runs); --embedded does not apply.\n');
    } else if (first.startsWith('-')) {
      io.err(`warden: Unknown option ${first.split('=')[0]} for warden mcp (see warden mcp --help).\n`);
    } else {
      io.err(`warden: warden mcp takes no words (${JSON.stringify(first)}); see warden mcp --help.\n`);
    }
    return 125;
  }
  if (embeddedFromEnv()) io.err('warden mcp: WARDEN_EMBEDDED is ignored: the MCP server always uses a Warden host.\n');

  const link = new HostLink(resolveStateDir());
  const server = createMcpServer(link, packageVersion());
  // Never die of one bad moment: a stray error is logged on stderr (stdout carries the protocol alone).
  const onStray = (error: unknown) => io.err(`warden mcp: ${error instanceof Error ? error.message : String(error)}\n`);
  process.on('uncaughtException', onStray);
  process.on('unhandledRejection', onStray);
  server.onerror = (error) => io.err(`warden mcp: ${error.message}\n`);

  let stopSignal: (() => void) | null = null;
  const signalled = new Promise<void>((resolve) => (stopSignal = resolve));
  const unregister = io.onSignal(() => stopSignal?.());
  const transportClosed = new Promise<void>((resolve) => (server.onclose = resolve));
  try {
    await server.connect(new StdioServerTransport());
    // Connect to (or start) the host now, so the first tool call does not wait for it; a failure is retried by that call.
    link.api().catch((error: unknown) => io.err(`warden mcp: ${error instanceof Error ? error.message : String(error)} (tool calls try again)\n`));
    await Promise.race([stdinClosed(), signalled, transportClosed]);
  } finally {
    unregister();
    link.close();
    await server.close().catch(() => undefined);
    process.off('uncaughtException', onStray);
    process.off('unhandledRejection', onStray);
    // A tool call still waiting on the host holds a connection open: the client is gone, so do not wait for it.
    setTimeout(() => process.exit(process.exitCode ?? 0), 1000).unref();
  }
  return 0;
}
