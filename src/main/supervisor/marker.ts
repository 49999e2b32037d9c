// Splits an interpreter's stdout or stderr at the runtime's end markers
// (runtime/PROTOCOL.md): `\0warden-end:<nonce>:<RUN_ID>:<TAG>\0\n` ends one script's
// output. The marker is stripped; a marker split across chunks is held back
// until it is whole, so no byte of it reaches a script's output and no byte
// of the script's output is lost or delayed past the next chunk.

const EMPTY = Buffer.alloc(0);
const TERMINATOR = Buffer.from('\0\n', 'latin1');
/** A run id is 12 hex characters; anything much longer after the prefix is not a marker. */
const MAX_ID_BYTES = 64;

export class MarkerSplitter {
  private carry: Buffer = EMPTY;
  private readonly prefix: Buffer;

  constructor(
    nonce: string,
    private readonly onData: (chunk: Buffer) => void,
    private readonly onMarker: (id: string) => void,
  ) {
    this.prefix = Buffer.from(`\0warden-end:${nonce}:`, 'latin1');
  }

  push(chunk: Buffer): void {
    let buf = this.carry.length > 0 ? Buffer.concat([this.carry, chunk]) : chunk;
    this.carry = EMPTY;
    for (;;) {
      const at = buf.indexOf(this.prefix);
      if (at < 0) break;
      const idStart = at + this.prefix.length;
      const end = buf.indexOf(TERMINATOR, idStart);
      if (end < 0 || end - idStart > MAX_ID_BYTES) {
        if (end < 0 && buf.length - idStart <= MAX_ID_BYTES) {
          // The marker's end has not arrived yet.
          if (at > 0) this.onData(buf.subarray(0, at));
          this.carry = Buffer.from(buf.subarray(at));
          return;
        }
        // Not a marker after all: its first byte is output; look again after it.
        this.onData(buf.subarray(0, at + 1));
        buf = buf.subarray(at + 1);
        continue;
      }
      if (at > 0) this.onData(buf.subarray(0, at));
      this.onMarker(buf.toString('latin1', idStart, end));
      buf = buf.subarray(end + TERMINATOR.length);
    }
    // The chunk may end with the beginning of a marker: hold back that tail.
    const hold = partialPrefixLength(buf, this.prefix);
    if (buf.length > hold) this.onData(hold > 0 ? buf.subarray(0, buf.length - hold) : buf);
    if (hold > 0) this.carry = Buffer.from(buf.subarray(buf.length - hold));
  }

  /** The stream ended: whatever was held back is output. */
  flush(): void {
    if (this.carry.length > 0) this.onData(this.carry);
    this.carry = EMPTY;
  }
}

/** Length of the longest tail of `buf` that is a proper beginning of `prefix`. */
function partialPrefixLength(buf: Buffer, prefix: Buffer): number {
  // Only a NUL starts a marker; look in the last prefix.length - 1 bytes.
  for (let i = buf.indexOf(0, Math.max(0, buf.length - prefix.length + 1)); i >= 0; i = buf.indexOf(0, i + 1)) {
    const tail = buf.subarray(i);
    if (prefix.subarray(0, tail.length).equals(tail)) return tail.length;
  }
  return 0;
}
