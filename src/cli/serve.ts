// `warden serve`: a headless host (engine, history, control socket, and with a
// port the web UI and the token-guarded TCP API). Runs until SIGINT/SIGTERM,
// then stops live runs with the stop sequence, records them and exits.

import type { CliIo } from './io';
import { parseDuration } from '../shared/duration';
import { cliExitOf } from '../shared/errors';
import { tokensOf, UsageError, type OptionSpec } from './parse';
import { HostError, HostRunningError, shutdownLine, startHost } from '../main/host/host';
import { NodeTransport, socketPathFor } from '../client/transport';
import { LOGIN_LINK_ROUTE } from '../main/host/server';
import { resolveStateDir } from '../client/state-dir';

export const DEFAULT_PORT = 7373;

export interface ServeArgs {
  port: number | null;
  open: boolean;
  /** Exit after this long with no live run and no client; null: never. */
  idleExitMs: number | null;
  /** Started by a client (src/client/autostart.ts): log lines are timestamped, and losing the race to another host is no error. */
  background: boolean;
}

export function parseServeArgs(args: string[]): ServeArgs {
  let port: number | null = DEFAULT_PORT;
  let open = false;
  let noTcp = false;
  let idleExitMs: number | null = null;
  let background = false;
  const spec: Record<string, OptionSpec> = { port: { type: 'string' }, open: { type: 'boolean' }, 'no-tcp': { type: 'boolean' }, 'idle-exit': { type: 'string' }, background: { type: 'boolean' } };
  for (const token of tokensOf(args, spec, 'serve')) {
    if (token.kind === 'positional') throw new UsageError(`warden serve takes no words (${JSON.stringify(token.value)}); see warden serve --help.`);
    if (token.kind !== 'option') continue;
    const text = token.value ?? '';
    if (token.name === 'port') {
      const n = Number(text);
      if (!/^\d+$/.test(text) || n > 65535) throw new UsageError(`--port takes a port number from 0 to 65535, not ${JSON.stringify(text)}.`);
      port = n;
    } else if (token.name === 'open') open = true;
    else if (token.name === 'no-tcp') noTcp = true;
    else if (token.name === 'background') background = true;
    else if (token.name === 'idle-exit') {
      const ms = parseDuration(text);
      if (ms === undefined || ms <= 0) throw new UsageError(`--idle-exit takes a duration such as 30s or 10m, not ${JSON.stringify(text)}.`);
      idleExitMs = ms;
    }
  }
  if (noTcp && open) throw new UsageError('--open needs the web UI, which --no-tcp turns off.');
  return { port: noTcp ? null : port, open, idleExitMs, background };
}

export async function serve(args: string[], io: CliIo, version: string): Promise<number> {
  const { port, open, idleExitMs, background } = parseServeArgs(args);
  const stamp = () => (background ? `${new Date().toISOString()} ` : '');
  let host;
  try {
    host = await startHost({ port, version, log: (line) => io.err(`${stamp()}warden: ${line}\n`), ...(idleExitMs !== null ? { idleExitMs } : {}) });
  } catch (error) {
    if (error instanceof HostRunningError && background) {
      // Two clients started a host at once: the other one listens, and both use it.
      io.err(`${stamp()}warden: ${error.message}\n`);
      return 0;
    }
    if (error instanceof HostRunningError && open) {
      // The user wants the web UI of the host already running: a fresh login link from it.
      const link = await loginLinkFromRunningHost(resolveStateDir());
      if (link) {
        io.err(`warden: a host is already running for this state dir (pid ${error.other?.pid ?? '?'}); a login link for it:\n`);
        io.out(`${link}\n`);
        return 0;
      }
    }
    if (error instanceof HostRunningError && error.other && typeof error.other.idleExitMs === 'number') {
      // The host a warden command started in the background: say what it is and how to replace it.
      const { pid, idleExitMs } = error.other;
      io.err(
        `warden: a background Warden host (pid ${pid}, started by a warden command; it exits after ${Math.round(idleExitMs / 1000)} s with nothing to do) already serves ${error.other.stateDir}${port !== null ? ' without the web UI' : ''}. To serve it here, stop that one first (kill ${pid}: its live runs are stopped and recorded), then run warden serve again.\n`,
      );
      return cliExitOf(error.kind);
    }
    if (error instanceof HostError) {
      io.err(`warden: ${error.message}\n`);
      return cliExitOf(error.kind);
    }
    throw error;
  }
  io.err(`${stamp()}warden: host ${host.supervisor.hostId} (pid ${process.pid}) for ${host.stateDir}\n`);
  io.err(`${stamp()}warden: control socket ${host.socketPath}\n`);
  if (host.tcp) {
    io.err(`warden: API and web UI on ${host.tcp.url} (token in ${host.tcp.tokenPath})\n`);
    if (open) io.out(`${host.loginUrl()}\n`);
  }
  let signals = 0;
  // A host answers the signals that mean "stop" (HUP: its terminal went away); nothing else.
  const unregister = io.onSignal((signal) => {
    signals += 1;
    if (signals === 1) {
      const live = host.supervisor.list().filter((r) => r.state !== 'ended').length;
      io.err(`warden: ${signal}: shutting down${live > 0 ? `, stopping ${live} live run(s) with the stop sequence (again to kill them now)` : ''}\n`);
      void host.shutdown();
    } else {
      for (const run of host.supervisor.list()) if (run.state !== 'ended') host.supervisor.stop(run.id, { reason: 'shutdown', force: true });
    }
  }, ['SIGINT', 'SIGTERM', 'SIGHUP']);
  const report = await host.closed;
  unregister();
  io.err(`${stamp()}warden: ${shutdownLine(report)}\n`);
  return 0;
}

async function loginLinkFromRunningHost(stateDir: string): Promise<string | null> {
  const transport = new NodeTransport({ socketPath: socketPathFor(stateDir) }, { timeoutMs: 2000 });
  try {
    const reply = await transport.request('POST', LOGIN_LINK_ROUTE, {});
    const url = (reply.body as { url?: unknown } | null)?.url;
    return reply.status === 200 && typeof url === 'string' ? url : null;
  } catch {
    return null;
  } finally {
    transport.close();
  }
}
