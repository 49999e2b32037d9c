// Input to a live run (`warden send`, MCP `input`, the app's input line): a
// pipe on its stdin kept open from the start. Writes are bounded: a process
// that does not read its input cannot make the host hold more than
// MAX_PENDING_BYTES for it. The end of input (EOF) closes the pipe for good.

import type { Writable } from 'node:stream';
import { WardenInputError } from './errors';

/** Bytes written but not yet read by the process, at most. */
export const MAX_PENDING_BYTES = 1024 * 1024;

export class StdinPipe {
  private closedWhy: string | null = null;
  private sentChars = 0;

  constructor(
    private readonly id: string,
    private readonly pipe: Writable | null,
  ) {
    if (pipe === null) this.closedWhy = 'it has no stdin pipe';
    // EPIPE: the process closed its stdin (or exited); what follows is refused with a reason.
    pipe?.on('error', () => (this.closedWhy ??= 'the process closed its stdin'));
  }

  get open(): boolean {
    return this.closedWhy === null && this.pipe !== null && !this.pipe.destroyed && !this.pipe.writableEnded;
  }

  /** Characters written so far. */
  get sent(): number {
    return this.sentChars;
  }

  /** Writes `text`, then ends the input when `eof`; refused (one line) once closed or when the process is not reading. */
  send(text: string, eof: boolean): void {
    if (!this.open) throw new WardenInputError(`Run ${this.id}'s stdin is closed (${this.closedWhy ?? 'the end of input was sent'}); nothing more can be sent.`);
    const pipe = this.pipe!;
    if (text.length > 0) {
      const bytes = Buffer.byteLength(text);
      if (pipe.writableLength + bytes > MAX_PENDING_BYTES) {
        throw new WardenInputError(`Run ${this.id} has not read ${pipe.writableLength} bytes of the input sent before; Warden holds at most ${MAX_PENDING_BYTES} unread. Wait until it reads, then send again.`);
      }
      pipe.write(text);
      this.sentChars += text.length;
    }
    if (eof) {
      this.closedWhy = 'the end of input was sent';
      pipe.end();
    }
  }

  /** The run ended: nothing more is taken. */
  close(): void {
    this.closedWhy ??= 'the run ended';
    if (this.pipe && !this.pipe.destroyed) this.pipe.destroy();
  }
}
