// `warden dial-stdio`: the remote side of a link. Its stdin and stdout become
// one connection to the state dir's host socket (a host is started in the
// background when none runs), carrying the HTTP API and its event streams as
// they are; the other side is a client's `ssh ... warden dial-stdio` (or any
// command giving it stdio). Nothing listens on TCP: whoever can run this
// command here may use this host, so authentication is the transport's.
//
// The connection ends when either side does: stdin closing (the client or its
// link went away) drops the connection at once, so a run owned by it is
// stopped as a local client's would be; the host closing it ends stdout.

import { connect, type Socket } from 'node:net';
import { checkStateDir, resolveStateDir } from '../client/state-dir';
import { ensureHost } from '../client/autostart';
import { socketPathFor, untrustedSocketReason, UntrustedHostError } from '../client/transport';
import { UsageError } from './parse';
import { cliExitOf } from '../shared/errors';
import type { CliIo } from './io';

function open(path: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(path);
    socket.once('connect', () => {
      socket.off('error', reject);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

export async function dialStdio(args: string[], io: CliIo): Promise<number> {
  if (args.length > 0) throw new UsageError(`warden dial-stdio takes no arguments (${JSON.stringify(args[0])}).`);
  const stateDir = resolveStateDir();
  checkStateDir(stateDir, (line) => new UntrustedHostError(line));
  const path = socketPathFor(stateDir);
  // The running host (or one started now), checked as every client checks it before sending anything:
  // the socket, run/ and the state dir are this user's or root's, and the pid that answers GET /host
  // holds the listening socket and runs as this user or root. Only then are the caller's bytes forwarded.
  await ensureHost(stateDir);
  const why = untrustedSocketReason(path);
  if (why !== null) throw new UntrustedHostError(why);
  const socket = await open(path);
  return new Promise<number>((resolve) => {
    let done = false;
    const finish = (status: number) => {
      if (done) return;
      done = true;
      socket.destroy();
      process.stdin.destroy();
      // Whatever the host sent is flushed before the status is returned.
      process.stdout.write('', () => resolve(status));
    };
    socket.on('data', (chunk: Buffer) => {
      if (!process.stdout.write(chunk)) {
        socket.pause();
        process.stdout.once('drain', () => socket.resume());
      }
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      io.err(`warden dial-stdio: the host's connection failed: ${error.message}\n`);
      finish(cliExitOf('unavailable'));
    });
    socket.on('close', () => finish(0));
    process.stdin.on('data', (chunk: Buffer) => {
      if (!socket.write(chunk)) {
        process.stdin.pause();
        socket.once('drain', () => process.stdin.resume());
      }
    });
    process.stdin.on('end', () => finish(0));
    process.stdin.on('error', () => finish(0));
    process.stdout.on('error', () => finish(0));
  });
}
