// `warden mcp`: an MCP server over stdio for agents (Claude Code, Codex,
// Gemini CLI, ...). A client of the Warden host of the state dir: it connects
// to the running host or starts a background one, and keeps an event stream
// open while the agent is attached so that host does not idle out. It
// answers initialize first and finds or starts the host after the handshake
// (a tool call waits for it). Runs until stdin closes (the agent went away),
// then exits 0; the runs it started belong to this process, so the host
// stops those still live once it is gone (unless started with detach: true).

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CliIo } from '../cli/io';
import { defaultLimitFrom, UsageError } from '../cli/args';
import { envStreamChars, DEFAULT_STREAM_CHARS, StreamCharsError } from '../shared/model-answer';
import { resolveStateDir, unwritableReason } from '../client/state-dir';
import { connectToHost, NodeTransport } from '../client/transport';
import { HttpWardenApi } from '../shared/http-api';
import { processStartTime } from '../main/host/owner-pids';
import { embeddedFromEnv, ensureHost } from '../client/autostart';
import { HostLink } from './host-link';
import { loadRemotes, RemoteError, remoteLink } from '../client/remotes';
import type { HostLinks } from './tools';
import { createMcpServer } from './server';
import { BoundedStdioTransport } from './stdio';
import { newSession } from './tools';
import { cliExitOf } from '../shared/errors';

export const MCP_HELP = `Usage: warden mcp

Serves the Model Context Protocol over stdio, for an agent to run commands and
Python scripts under Warden's supervision. Register it with the agent, e.g.:

  claude mcp add warden -- npx warden mcp
  codex mcp add warden -- npx warden mcp
  gemini mcp add warden npx warden mcp

Tools: run (a command, a shell line or a Python script, with a limit; returns
when it ends or after its yield, default 30s, at most 50s), wait, stop, extend,
list, show (a page of a run's output), search (lines of runs' output that match
a pattern, as rg -n -C prints them, with the call that goes on) and sessions.
Resources: warden://runs/ID (a run's result) and warden://runs/ID/stdout and
/stderr, the newest runs listed (Claude Code's @warden: mentions).
Every run answer is sized for a model, in both forms
(Claude Code and Codex show the model structuredContent, Gemini CLI the text):
verdict, exit code or signal, elapsed against the limit, advice and notes
first, then each stream cut to its head and tail (8000 characters per stream:
WARDEN_MODEL_STREAM_CHARS, or the call's streamChars) around a marker naming
how much was cut and the show call that pages it; the history keeps it all.

Runs end with their agent: a run started here belongs to this warden mcp, and
when it exits (the agent closed stdin, exited, crashed or was killed) the host
stops the runs still live, with a note saying why; detach: true keeps a run.
A run given no limit gets WARDEN_DEFAULT_LIMIT (default 10m; 0 or none: no
limit). A shell tool's timeout argument (milliseconds) is taken as the limit;
wait_for_previous (Gemini CLI) is accepted and ignored.

It always goes through a Warden host (--embedded and WARDEN_EMBEDDED do not
apply): the one running for the state dir ($WARDEN_STATE_DIR, default
~/.local/state/warden; the app or warden serve), else a background host it
starts (log in <state dir>/host.log), which exits once idle (WARDEN_HOST_IDLE,
default 10m) after the last client left. So a person sees the agent's runs live
in the app or the web UI, and a run outlives the call that started it. Where
the state dir is not writable and no host runs there, it supervises its runs
itself (no history; each run answer says so).

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
    return cliExitOf('bad-input');
  }
  if (embeddedFromEnv()) io.err('warden mcp: WARDEN_EMBEDDED is ignored: the MCP server always uses a Warden host.\n');

  let defaultLimit: string | null;
  try {
    defaultLimit = defaultLimitFrom(process.env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.err(`warden mcp: ${error.message} Using 10m.\n`);
    defaultLimit = '10m';
  }
  let streamChars = DEFAULT_STREAM_CHARS;
  try {
    streamChars = envStreamChars(process.env);
  } catch (error) {
    if (!(error instanceof StreamCharsError)) throw error;
    io.err(`warden mcp: ${error.message} Using ${DEFAULT_STREAM_CHARS}.\n`);
  }
  // warden --remote NAME mcp (or WARDEN_REMOTE): this server's host is that remote's.
  const stateDir = resolveStateDir();
  const remoteName = process.env.WARDEN_REMOTE || undefined;
  let hosts: HostLinks;
  try {
    hosts = remoteHostLinks(stateDir);
    if (remoteName !== undefined && !hosts.names().includes(remoteName)) throw new RemoteError(`No remote named ${JSON.stringify(remoteName)} (see warden remote list).`, 'not-found');
  } catch (error) {
    if (!(error instanceof RemoteError)) throw error;
    io.err(`warden mcp: ${error.message}\n`);
    // Serving a remote needs it; this machine's host does not need the others.
    if (remoteName !== undefined) return cliExitOf(error.kind);
    hosts = { names: () => [], link: () => new HostLink(stateDir) };
  }
  const link = remoteName !== undefined ? hosts.link(remoteName) : localLink(stateDir, io);
  const startTime = processStartTime(process.pid);
  let server: ReturnType<typeof createMcpServer> | null = null;
  const clientName = () => server?.getClientVersion()?.name;
  const session = newSession({
    clientName,
    owner: () => (startTime === null ? null : { pid: process.pid, startTime, label: `warden mcp for ${clientName() ?? 'an MCP client'}` }),
    streamChars,
    defaultLimit,
    hosts,
    runHosts: new Map(),
    ...(remoteName !== undefined ? { remote: remoteName } : {}),
  });
  server = createMcpServer(link, packageVersion(), session);
  // Never die of one bad moment: a stray error is logged on stderr (stdout carries the protocol alone).
  const onStray = (error: unknown) => io.err(`warden mcp: ${error instanceof Error ? error.message : String(error)}\n`);
  process.on('uncaughtException', onStray);
  process.on('unhandledRejection', onStray);
  server.onerror = (error) => io.err(`warden mcp: ${error.message}\n`);
  // The host is found (or started) once the handshake is done, so initialize is answered at once; a tool call waits for it.
  server.oninitialized = () => {
    link.api().catch((error: unknown) => io.err(`warden mcp: ${error instanceof Error ? error.message : String(error)} (tool calls try again)\n`));
  };

  let stopSignal: (() => void) | null = null;
  const signalled = new Promise<void>((resolve) => (stopSignal = resolve));
  const unregister = io.onSignal(() => stopSignal?.());
  const transportClosed = new Promise<void>((resolve) => (server.onclose = resolve));
  try {
    await server.connect(new BoundedStdioTransport());
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

/**
 * The state dir's host, as every client finds it; where the state dir
 * cannot hold one (not writable) and none runs there, a host in this
 * process on a temporary dir (cli/private-host.ts), said once on stderr and
 * in every run answer, rather than no run at all.
 */
function localLink(stateDir: string, io: CliIo): HostLink {
  const link: HostLink = new HostLink(stateDir, async (dir) => {
    const why = unwritableReason(dir);
    // Read-only or not this user's to write; a path that cannot be a directory at all (a file in the way) is a mistake to say.
    if (why === null || !['EACCES', 'EPERM', 'EROFS'].includes(why)) return ensureHost(dir);
    const running = await connectToHost(dir);
    if (running) return running;
    const { startPrivateHost } = await import('../cli/private-host');
    const host = await startPrivateHost(packageVersion(), (line) => io.err(`warden mcp: ${line}\n`));
    link.notice = `Warden's state directory ${dir} is not writable (${why}), so no Warden host can run for it: this warden mcp supervises its runs itself, and they are not recorded in the history. Set WARDEN_STATE_DIR to a writable directory to keep one.`;
    io.err(`warden mcp: ${link.notice}\n`);
    return new HttpWardenApi(new NodeTransport({ socketPath: host.socketPath }, { peerChecked: true }));
  });
  return link;
}

/** The configured remotes' hosts, each linked at first use (an MCP HostLink over its ssh link) and kept. */
function remoteHostLinks(stateDir: string): HostLinks {
  const names = loadRemotes(stateDir).map((r) => r.name);
  const links = new Map<string, HostLink>();
  return {
    names: () => names,
    link: (name) => {
      let link = links.get(name);
      if (!link) links.set(name, (link = new HostLink(stateDir, async () => remoteLink(stateDir, name).api)));
      return link;
    },
  };
}
