// One stream's kept output: decoded as UTF-8 with replacement, at most `cap`
// characters kept as head and tail, everything past the cap still counted.
// The child is never made to wait: callers drain the pipe whatever we keep.

import { isAscii } from 'node:buffer';
import { droppedMarker } from '../../shared/stream-length';

const SPACE = Uint8Array.of(0x20);
/** How many characters around a cut are looked at for an escape sequence split by it. */
const CONTEXT = 32;
// ESC alone, or a CSI (ESC [) with its parameters but not its final byte yet, at the end of a text.
// eslint-disable-next-line no-control-regex
const UNFINISHED_ESCAPE = /\x1b(?:\[[0-?]*[ -/]*)?$/;
// The rest of such a sequence at the start of a text: [ (after a lone ESC), parameters, the final byte.
const ESCAPE_REST = /^\[?[0-?]*[ -/]*[@-~]/;

export class CappedOutput {
  private readonly decoder = new TextDecoder('utf-8', { fatal: false });
  private readonly headCap: number;
  private readonly tailCap: number;
  private head = '';
  private tail: string[] = [];
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
    if (chunk.length === 0) return '';
    let text: string;
    if (this.decoderIdle && isAscii(chunk)) {
      // ASCII is its own UTF-8 decoding; latin1 builds the same string about ten
      // times faster than TextDecoder. Only with no partial sequence pending.
      if (!this.decoderStarted) {
        // A BOM after this text is a character, not a BOM to strip: tell the decoder text came first.
        this.decoder.decode(SPACE, { stream: true });
        this.decoderStarted = true;
      }
      text = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('latin1');
    } else {
      text = this.decoder.decode(chunk, { stream: true });
      this.decoderStarted = true;
    }
    // An ASCII byte ends any sequence before it, so nothing is pending after one.
    this.decoderIdle = chunk[chunk.length - 1]! < 0x80;
    this.keep(text);
    return text;
  }

  /** Flushes a partial UTF-8 sequence left at the end of the stream. */
  end(): string {
    const text = this.decoder.decode();
    this.keep(text);
    return text;
  }

  private keep(text: string): void {
    if (text.length === 0) return;
    this.total += text.length;
    let rest = text;
    if (this.head.length < this.headCap) {
      const room = this.headCap - this.head.length;
      this.head += rest.slice(0, room);
      rest = rest.slice(room);
      if (rest.length === 0) return;
    }
    this.tail.push(rest);
    this.tailLength += rest.length;
    // Trim whole chunks first, then cut the oldest one, so a long run of small
    // chunks costs amortised O(1) per chunk.
    while (this.tail.length > 1 && this.tailLength - this.tail[0]!.length >= this.tailCap) {
      const gone = this.tail.shift()!;
      this.tailLength -= gone.length;
      this.tailContext = (this.tailContext + gone.slice(-CONTEXT)).slice(-CONTEXT);
    }
    if (this.tailLength > this.tailCap * 2) this.compactTail();
  }

  private compactTail(): void {
    const joined = this.tail.join('');
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
      out += chunk.slice(skip, skip + n - out.length);
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
    // The head's end comes first: a sequence may begin there and end past the dropped middle.
    const before = (this.head.slice(-CONTEXT) + this.tailContext + this.tailChars(Math.max(0, skip - CONTEXT), Math.min(CONTEXT, skip))).slice(-CONTEXT);
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
        const c = chunk.charCodeAt(skip);
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
    let tail = this.tail.join('');
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


/**
 * Where Warden's marker for `dropped` characters starts in a kept text (the
 * end of its head), or -1 when nothing was dropped or no marker is found.
 * Head and tail are each half the cap (give or take a cut pair or escape):
 * of the places the marker text occurs (a stream may print it too), the one
 * nearest the middle is Warden's.
 */
export function keptMarkerAt(text: string, dropped: number): number {
  if (dropped <= 0) return -1;
  const marker = droppedMarker(dropped);
  let headEnd = -1;
  for (let at = text.indexOf(marker); at !== -1; at = text.indexOf(marker, at + 1)) {
    if (headEnd === -1 || Math.abs(2 * at + marker.length - text.length) < Math.abs(2 * headEnd + marker.length - text.length)) headEnd = at;
  }
  return headEnd;
}

/**
 * The same slice as CappedOutput.slice, from a kept text alone (head, the
 * marker for `dropped` characters, tail), as a result read back from the
 * history holds it: a run whose output is no longer in memory answers
 * offset and 'unseen' waits as it did while it was. `total` is the stream's
 * length in characters, dropped ones included.
 */
export function sliceOfKept(text: string, dropped: number, from: number): OutputSlice & { total: number } {
  const headEnd = keptMarkerAt(text, dropped);
  if (headEnd === -1) return { text: from >= text.length ? '' : text.slice(Math.max(0, from)), dropped: 0, total: text.length };
  const marker = droppedMarker(dropped);
  const tail = text.slice(headEnd + marker.length);
  const tailStart = headEnd + dropped;
  const total = tailStart + tail.length;
  if (from >= total) return { text: '', dropped: 0, total };
  if (from >= tailStart) return { text: tail.slice(from - tailStart), dropped: 0, total };
  if (from >= headEnd) return { text: droppedMarker(tailStart - from) + tail, dropped: tailStart - from, total };
  return { text: text.slice(Math.max(0, from), headEnd) + marker + tail, dropped, total };
}
