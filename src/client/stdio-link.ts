// A connection to a host over a command's stdin and stdout: `ssh ... warden
// dial-stdio`, `kubectl exec -i POD -- warden dial-stdio`, or anything that
// gives stdio to a machine with Warden. One process per connection, as a
// socket would be one: the wire layer (wire.ts) opens, keeps alive and
// closes these exactly as it does unix sockets, so requests and event
// streams need nothing else. With ssh's ControlMaster a connection is a new
// channel on the one ssh session, not a new login.
//
// What it is to the wire layer: a Duplex with the few net.Socket methods it
// calls (ref, unref, setTimeout and its 'timeout' event). The command ending
// before the stream did, with a status other than 0, is a connection error
// carrying the last line the command wrote on stderr (ssh says why there).

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import type { Socket } from 'node:net';
import { Duplex } from 'node:stream';
import { WardenError } from '../shared/errors';

/** A link's failure, as a socket's error: `code` is what the wire layer and its callers read. */
export class LinkError extends WardenError {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super('unavailable', message);
  }
}

/** How much of the command's stderr is kept for the error message. */
const STDERR_TAIL = 2000;

class StdioSocket extends Duplex {
  private stderr = '';
  private timer: NodeJS.Timeout | undefined;
  private idleMs = 0;

  constructor(
    private readonly child: ChildProcessWithoutNullStreams,
    private readonly label: string,
  ) {
    super({ allowHalfOpen: false });
    child.stdout.on('data', (chunk: Buffer) => {
      this.touch();
      if (!this.push(chunk)) child.stdout.pause();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString('utf8')).slice(-STDERR_TAIL);
    });
    // A write to a command that died (EPIPE): its exit says why.
    child.stdin.on('error', () => undefined);
    child.on('error', (error: NodeJS.ErrnoException) => {
      this.destroy(new LinkError(`cannot run ${label}: ${error.code === 'ENOENT' ? 'no such program' : error.message}`, 'ELINK'));
    });
    // 'close': exited and its stdio closed, so all it wrote has been read.
    child.on('close', (code, signal) => {
      clearTimeout(this.timer);
      if (this.destroyed) return;
      if (code === 0) {
        this.push(null);
        return;
      }
      const last = this.stderr.trim().split('\n').pop()?.trim();
      const how = signal !== null ? `was ended by ${signal}` : `exited with status ${code}`;
      this.destroy(new LinkError(`${label} ${how}${last ? `: ${last}` : ''}`, 'ELINK'));
    });
  }

  override _read(): void {
    this.child.stdout.resume();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.touch();
    // A failed write surfaces as the command's exit (above), with its reason.
    this.child.stdin.write(chunk, () => callback());
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.child.stdin.end();
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    clearTimeout(this.timer);
    if (this.child.exitCode === null && this.child.signalCode === null) {
      // Its stdin closing ends a bridge cleanly; the signal is for a command that does not read it.
      this.child.stdin.destroy();
      this.child.kill('SIGTERM');
    }
    callback(error);
  }

  /** net.Socket's: keeps the process alive while a request is in flight. */
  ref(): this {
    this.child.ref();
    for (const s of [this.child.stdin, this.child.stdout, this.child.stderr]) (s as unknown as Socket).ref?.();
    return this;
  }

  /** net.Socket's: an idle kept-alive connection never holds the process open. */
  unref(): this {
    this.child.unref();
    for (const s of [this.child.stdin, this.child.stdout, this.child.stderr]) (s as unknown as Socket).unref?.();
    return this;
  }

  /** net.Socket's: 'timeout' after `ms` with no byte either way; 0 turns it off. */
  setTimeout(ms: number): this {
    this.idleMs = ms;
    this.touch();
    return this;
  }

  private touch(): void {
    clearTimeout(this.timer);
    if (this.idleMs > 0) this.timer = setTimeout(() => this.emit('timeout'), this.idleMs).unref();
  }
}

/**
 * Starts `argv` (no shell) and returns its stdio as one connection. `label`
 * names it in errors (e.g. "ssh to gpu").
 */
export function dialCommand(argv: readonly string[], label: string, env: NodeJS.ProcessEnv = process.env): Socket {
  const [program, ...args] = argv;
  if (program === undefined) throw new LinkError(`${label}: no command`, 'EINVAL');
  const child = spawn(program, args, { stdio: ['pipe', 'pipe', 'pipe'], env });
  // The wire layer types connections as sockets; this one has every member it uses.
  return new StdioSocket(child, label) as unknown as Socket;
}
