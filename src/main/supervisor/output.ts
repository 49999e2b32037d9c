// One stream's kept output: decoded as UTF-8 with replacement, at most `cap`
// characters kept as head and tail, everything past the cap still counted.
// The child is never made to wait: callers drain the pipe whatever we keep.

import { count } from './format';

export class CappedOutput {
  private readonly decoder = new TextDecoder('utf-8', { fatal: false });
  private readonly headCap: number;
  private readonly tailCap: number;
  private head = '';
  private tail: string[] = [];
  private tailLength = 0;
  private total = 0;

  constructor(cap: number) {
    this.headCap = Math.ceil(cap / 2);
    this.tailCap = cap - this.headCap;
  }

  /** Decodes a chunk and keeps what fits; returns the decoded text for live events. */
  push(chunk: Uint8Array): string {
    const text = this.decoder.decode(chunk, { stream: true });
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
      this.tailLength -= this.tail.shift()!.length;
    }
    if (this.tailLength > this.tailCap * 2) this.compactTail();
  }

  private compactTail(): void {
    const joined = this.tail.join('');
    const cut = joined.slice(joined.length - this.tailCap);
    this.tail = [cut];
    this.tailLength = cut.length;
  }

  /** Characters read but not kept. */
  get dropped(): number {
    return Math.max(0, this.total - this.head.length - Math.min(this.tailLength, this.tailCap));
  }

  get totalChars(): number {
    return this.total;
  }

  /** Head, a marker saying how much was dropped, then tail. */
  text(): string {
    let tail = this.tail.join('');
    if (tail.length > this.tailCap) tail = tail.slice(tail.length - this.tailCap);
    const dropped = this.dropped;
    if (dropped === 0) return this.head + tail;
    return `${this.head}\n[warden: ${count(dropped)} characters dropped here]\n${tail}`;
  }
}
