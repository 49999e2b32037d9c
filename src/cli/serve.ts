// `warden serve`: a headless host (engine, history, control socket, and with a
// port the web UI and the token-guarded TCP API). Runs until SIGINT/SIGTERM,
// then stops live runs with the stop sequence, records them and exits.

import type { CliIo } from './main';
import { UsageError } from './args';
import { HostError, HostRunningError, startHost } from '../main/host/host';
import { NodeTransport, socketPathFor } from '../client/transport';
import { LOGIN_LINK_ROUTE } from '../main/host/server';
import { resolveStateDir } from '../main/store/state-dir';

export const SERVE_HELP = `Usage: warden serve [--port PORT] [--open] [--no-tcp]

Runs a Warden host for this state dir: the engine, the history, and the
control socket (<state dir>/run/warden.sock) that warden run, wait, stop and
agents use. Runs started through it appear live in the app and the web UI.

Options:
  --port PORT   also serve the API and the web UI on 127.0.0.1:PORT (default 7373; 0 picks a free port)
  --no-tcp      the unix socket only: no web UI, no TCP
  --open        print a login URL for the web UI with a one-time token (with a host
                already running: a fresh link to it)

TCP clients send Authorization: Bearer <token>, the token being in
<state dir>/run/token (readable by you alone). One host per state dir: a
second warden serve says so and exits. SIGINT or SIGTERM: live runs get the
stop sequence and are recorded, then the host exits (a second signal kills
them at once).`;

export const DEFAULT_PORT = 7373;

export function parseServeArgs(args: string[]): { port: number | null; open: boolean } {
  let port: number | null = DEFAULT_PORT;
  let open = false;
  let noTcp = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const [flag, inline] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    if (flag === '--port') {
      const text = inline ?? args[++i];
      if (text === undefined) throw new UsageError('--port needs a value.');
      const n = Number(text);
      if (!/^\d+$/.test(text) || n > 65535) throw new UsageError(`--port takes a port number from 0 to 65535, not ${JSON.stringify(text)}.`);
      port = n;
    } else if (flag === '--open' && inline === undefined) {
      open = true;
    } else if (flag === '--no-tcp' && inline === undefined) {
      noTcp = true;
    } else {
      throw new UsageError(`Unknown option ${JSON.stringify(arg)} for warden serve (see warden serve --help).`);
    }
  }
  if (noTcp && open) throw new UsageError('--open needs the web UI, which --no-tcp turns off.');
  return { port: noTcp ? null : port, open };
}

export async function serve(args: string[], io: CliIo, version: string): Promise<number> {
  const { port, open } = parseServeArgs(args);
  let host;
  try {
    host = await startHost({ port, version, log: (line) => io.err(`warden: ${line}\n`) });
  } catch (error) {
    if (error instanceof HostRunningError && open) {
      // The user wants the web UI of the host already running: a fresh login link from it.
      const link = await loginLinkFromRunningHost(resolveStateDir());
      if (link) {
        io.err(`warden: a host is already running for this state dir (pid ${error.other?.pid ?? '?'}); a login link for it:\n`);
        io.out(`${link}\n`);
        return 0;
      }
    }
    if (error instanceof HostError) {
      io.err(`warden: ${error.message}\n`);
      return 125;
    }
    throw error;
  }
  io.err(`warden: host ${host.supervisor.hostId} (pid ${process.pid}) for ${host.stateDir}\n`);
  io.err(`warden: control socket ${host.socketPath}\n`);
  if (host.tcp) {
    io.err(`warden: API and web UI on ${host.tcp.url} (token in ${host.tcp.tokenPath})\n`);
    if (open) io.out(`${host.loginUrl()}\n`);
  }
  let signals = 0;
  const unregister = io.onSignal((signal) => {
    signals += 1;
    if (signals === 1) {
      const live = host.supervisor.list().filter((r) => r.state !== 'ended').length;
      io.err(`warden: ${signal}: shutting down${live > 0 ? `, stopping ${live} live run(s) with the stop sequence (again to kill them now)` : ''}\n`);
      void host.shutdown();
    } else {
      for (const run of host.supervisor.list()) if (run.state !== 'ended') host.supervisor.stop(run.id, { reason: 'shutdown', force: true });
    }
  });
  await host.closed;
  unregister();
  io.err('warden: host stopped; every run is recorded\n');
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
