// One stream's kept output: decoded as UTF-8 with replacement, at most `cap`
// characters kept as head and tail, everything past the cap still counted.
// The child is never made to wait: callers drain the pipe whatever we keep.

import { isAscii } from 'node:buffer';
import { count } from './format';

const SPACE = Uint8Array.of(0x20);
/** How many characters around a cut are looked at for an escape sequence split by it. */
const CONTEXT = 32;
// ESC alone, or a CSI (ESC [) with its parameters but not its final byte yet, at the end of a text.
// eslint-disable-next-line no-control-regex
const UNFINISHED_ESCAPE = /\x1b(?:\[[0-?]*[ -/]*)?$/;
// The rest of such a sequence at the start of a text: [ (after a lone ESC), parameters, the final byte.
const ESCAPE_REST = /^\[?[0-?]*[ -/]*[@-~]/;
/**
 * ASCII chunks from this size on are not made strings by `take`: what the
 * tail keeps of them is copied into buffers of POOL_BYTES that the stream
 * reuses (smaller chunks cost little as strings, and would waste a buffer).
 */
const BYTES_FROM = 32 * 1024;
const POOL_BYTES = 64 * 1024;
/** Buffers let go by the tail and kept for the next chunks. */
const MAX_SPARE = 4;

/**
 * A piece of a stream's text: a string, or the bytes of ASCII text kept as
 * they were read (each byte one character), so that no string is built for
 * text nobody reads. `length` is its length in characters either way.
 */
export type Piece = string | Buffer;

/** A piece's characters from `start` to `end`, as a string. */
export function pieceText(piece: Piece, start = 0, end = piece.length): string {
  return typeof piece === 'string' ? piece.slice(start, end) : piece.toString('latin1', start, end);
}

function joinPieces(pieces: readonly Piece[]): string {
  return pieces.length === 1 ? pieceText(pieces[0]!) : pieces.map((p) => pieceText(p)).join('');
}

export class CappedOutput {
  private readonly decoder = new TextDecoder('utf-8', { fatal: false });
  private readonly headCap: number;
  private readonly tailCap: number;
  private head = '';
  /** Strings, and views of this stream's own buffers (never a caller's chunk: held a while, those would cost the GC dearly). */
  private tail: Piece[] = [];
  private readonly spare: ArrayBuffer[] = [];
  private tailLength = 0;
  private total = 0;
  /** True while the decoder holds no partial sequence (the last byte fed was ASCII, or nothing was fed). */
  private decoderIdle = true;
  /** Whether the decoder has seen any text, so it no longer strips a leading BOM. */
  private decoderStarted = false;
  /** The last characters dropped from before the tail's first chunk: tells whether the kept tail starts inside an escape sequence. */
  private tailContext = '';

  constructor(cap: number) {
    this.headCap = Math.ceil(cap / 2);
    this.tailCap = cap - this.headCap;
  }

  /** Decodes a chunk and keeps what fits; returns the decoded text for live events. */
  push(chunk: Uint8Array): string {
    return pieceText(this.read(chunk, false));
  }

  /**
   * As push, for a caller that may never read the text: a large ASCII chunk
   * is kept as its bytes and returned as they are (pieceText makes its
   * string), so no string is built for it unless someone asks. The chunk
   * must not be changed afterwards (a stream's chunks never are).
   */
  take(chunk: Buffer): Piece {
    return this.read(chunk, true);
  }

  private read(chunk: Uint8Array, bytesMayStay: boolean): Piece {
    if (chunk.length === 0) return '';
    let piece: Piece;
    if (this.decoderIdle && isAscii(chunk)) {
      // ASCII is its own UTF-8 decoding; latin1 builds the same string about ten
      // times faster than TextDecoder. Only with no partial sequence pending.
      if (!this.decoderStarted) {
        // A BOM after this text is a character, not a BOM to strip: tell the decoder text came first.
        this.decoder.decode(SPACE, { stream: true });
        this.decoderStarted = true;
      }
      const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      // Kept as bytes only when they are most of the memory they hold: a small view must not keep a big buffer alive.
      piece = bytesMayStay && chunk.length >= BYTES_FROM ? bytes : bytes.toString('latin1');
    } else {
      piece = this.decoder.decode(chunk, { stream: true });
      this.decoderStarted = true;
    }
    // An ASCII byte ends any sequence before it, so nothing is pending after one.
    this.decoderIdle = chunk[chunk.length - 1]! < 0x80;
    this.keep(piece);
    return piece;
  }

  /** Flushes a partial UTF-8 sequence left at the end of the stream. */
  end(): string {
    const text = this.decoder.decode();
    this.keep(text);
    return text;
  }

  private keep(text: Piece): void {
    if (text.length === 0) return;
    this.total += text.length;
    let rest = text;
    if (this.head.length < this.headCap) {
      const room = this.headCap - this.head.length;
      this.head += pieceText(rest, 0, room);
      rest = typeof rest === 'string' ? rest.slice(room) : rest.subarray(room);
      if (rest.length === 0) return;
    }
    this.tail.push(typeof rest === 'string' ? rest : this.copy(rest));
    this.tailLength += rest.length;
    // Trim whole chunks first, then cut the oldest one, so a long run of small
    // chunks costs amortised O(1) per chunk.
    while (this.tail.length > 1 && this.tailLength - this.tail[0]!.length >= this.tailCap) {
      const gone = this.tail.shift()!;
      this.tailLength -= gone.length;
      this.tailContext = (this.tailContext + pieceText(gone, Math.max(0, gone.length - CONTEXT))).slice(-CONTEXT);
      this.recycle(gone);
    }
    if (this.tailLength > this.tailCap * 2) this.compactTail();
  }

  /** The bytes in a buffer of this stream's own, a spare one when it fits. */
  private copy(bytes: Buffer): Buffer {
    let store = this.spare.pop();
    if (store === undefined || store.byteLength < bytes.length) store = new ArrayBuffer(Math.max(bytes.length, POOL_BYTES));
    const copy = Buffer.from(store, 0, bytes.length);
    copy.set(bytes);
    return copy;
  }

  private recycle(piece: Piece): void {
    if (typeof piece !== 'string' && this.spare.length < MAX_SPARE) this.spare.push(piece.buffer as ArrayBuffer);
  }

  private compactTail(): void {
    const joined = joinPieces(this.tail);
    for (const piece of this.tail) this.recycle(piece);
    const cut = joined.slice(joined.length - this.tailCap);
    this.tailContext = (this.tailContext + joined.slice(Math.max(0, joined.length - this.tailCap - CONTEXT), joined.length - this.tailCap)).slice(-CONTEXT);
    this.tail = [cut];
    this.tailLength = cut.length;
  }

  /** Characters read but not kept. */
  get dropped(): number {
    const dropped = Math.max(0, this.total - this.head.length - Math.min(this.tailLength, this.tailCap));
    if (dropped === 0) return 0;
    // Half of a surrogate pair cut at the head's end or the tail's start goes with the dropped middle,
    // and so does each part of an escape sequence the cut split (no "[4m" left after the marker).
    return dropped + (this.headEndsInHalfPair() ? 1 : 0) + (this.tailStartsInHalfPair() ? 1 : 0) + this.headEscapeCut() + this.tailEscapeCut();
  }

  /** Characters of the joined tail chunks from `from`, at most `n`. */
  private tailChars(from: number, n: number): string {
    let out = '';
    let skip = from;
    for (const chunk of this.tail) {
      if (skip >= chunk.length) {
        skip -= chunk.length;
        continue;
      }
      out += pieceText(chunk, skip, skip + n - out.length);
      skip = 0;
      if (out.length >= n) break;
    }
    return out;
  }

  /** The start of an escape sequence the head ends in (ESC, or ESC [ and parameters without the final byte): its length, else 0. */
  private headEscapeCut(): number {
    const end = this.head.length - (this.headEndsInHalfPair() ? 1 : 0);
    return UNFINISHED_ESCAPE.exec(this.head.slice(Math.max(0, end - CONTEXT), end))?.[0].length ?? 0;
  }

  /** The rest of an escape sequence the kept tail starts in, whose ESC was dropped: its length, else 0. */
  private tailEscapeCut(): number {
    const skip = Math.max(0, this.tailLength - this.tailCap);
    const before = (this.tailContext + this.tailChars(Math.max(0, skip - CONTEXT), Math.min(CONTEXT, skip))).slice(-CONTEXT);
    if (!UNFINISHED_ESCAPE.test(before)) return 0;
    const start = skip + (this.tailStartsInHalfPair() ? 1 : 0);
    return ESCAPE_REST.exec(this.tailChars(start, CONTEXT))?.[0].length ?? 0;
  }

  private headEndsInHalfPair(): boolean {
    const c = this.head.charCodeAt(this.head.length - 1);
    return c >= 0xd800 && c <= 0xdbff;
  }

  private tailStartsInHalfPair(): boolean {
    let skip = Math.max(0, this.tailLength - this.tailCap);
    for (const chunk of this.tail) {
      if (skip < chunk.length) {
        // Kept bytes are ASCII: never half of a pair.
        const c = typeof chunk === 'string' ? chunk.charCodeAt(skip) : 0;
        return c >= 0xdc00 && c <= 0xdfff;
      }
      skip -= chunk.length;
    }
    return false;
  }

  get totalChars(): number {
    return this.total;
  }

  /** Head, a marker saying how much was dropped, then tail. */
  text(): string {
    return this.slice(0).text;
  }

  /**
   * What is kept of the stream from character `from` (counted from its start,
   * dropped characters included) on: from inside the head, the rest of the
   * head, the marker when something was dropped, and the tail; from inside
   * the dropped middle, a marker counting what was dropped from there, and the
   * tail; from inside the tail, the tail from there; at or past the end, ''.
   * `dropped`: the characters past `from` that the text leaves out.
   */
  slice(from: number): OutputSlice {
    if (from >= this.total) return { text: '', dropped: 0 };
    let tail = joinPieces(this.tail);
    if (tail.length > this.tailCap) tail = tail.slice(tail.length - this.tailCap);
    const tailAt = this.total - tail.length;
    // Where the kept head ends and the kept tail starts, in stream characters:
    // half of a surrogate pair cut at either edge goes with the dropped middle.
    let headEnd = this.head.length;
    let tailStart = tailAt;
    if (this.dropped > 0) {
      if (this.headEndsInHalfPair()) headEnd -= 1;
      if (this.tailStartsInHalfPair()) tailStart += 1;
      headEnd -= this.headEscapeCut();
      tailStart += this.tailEscapeCut();
    }
    const keptTail = tail.slice(tailStart - tailAt);
    if (from >= tailStart) return { text: tail.slice(from - tailAt), dropped: 0 };
    if (from >= headEnd) return { text: droppedMarker(tailStart - from) + keptTail, dropped: tailStart - from };
    const dropped = tailStart - headEnd;
    const head = this.head.slice(Math.max(0, from), headEnd);
    return { text: dropped > 0 ? head + droppedMarker(dropped) + keptTail : head + keptTail, dropped };
  }
}

export interface OutputSlice {
  text: string;
  /** Characters of the stream in the slice's range that its text leaves out (marked where they were). */
  dropped: number;
}

/** Where kept output leaves characters out. */
export function droppedMarker(chars: number): string {
  return `\n[warden: ${count(chars)} characters dropped here]\n`;
}

/**
 * The same slice as CappedOutput.slice, from a kept text alone (head, the
 * marker for `dropped` characters, tail), as a result read back from the
 * history holds it: a run whose output is no longer in memory answers
 * offset and 'unseen' waits as it did while it was. `total` is the stream's
 * length in characters, dropped ones included.
 */
export function sliceOfKept(text: string, dropped: number, from: number): OutputSlice & { total: number } {
  if (dropped <= 0) return { text: from >= text.length ? '' : text.slice(Math.max(0, from)), dropped: 0, total: text.length };
  const marker = droppedMarker(dropped);
  // Head and tail are each half the cap (give or take a cut pair or escape): of the places the
  // marker text occurs (a stream may print it too), the one nearest the middle is Warden's.
  let headEnd = -1;
  for (let at = text.indexOf(marker); at !== -1; at = text.indexOf(marker, at + 1)) {
    if (headEnd === -1 || Math.abs(2 * at + marker.length - text.length) < Math.abs(2 * headEnd + marker.length - text.length)) headEnd = at;
  }
  if (headEnd === -1) return { text: from >= text.length ? '' : text.slice(Math.max(0, from)), dropped: 0, total: text.length };
  const tail = text.slice(headEnd + marker.length);
  const tailStart = headEnd + dropped;
  const total = tailStart + tail.length;
  if (from >= total) return { text: '', dropped: 0, total };
  if (from >= tailStart) return { text: tail.slice(from - tailStart), dropped: 0, total };
  if (from >= headEnd) return { text: droppedMarker(tailStart - from) + tail, dropped: tailStart - from, total };
  return { text: text.slice(Math.max(0, from), headEnd) + marker + tail, dropped, total };
}
