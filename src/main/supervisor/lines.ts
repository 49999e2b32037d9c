// A run's output as lines, for what watches it for a pattern (a log
// readiness probe, a wait until a line): per stream, split at \n, \r\n or a
// lone \r (a progress bar's redraw is a line of its own), ANSI escapes
// removed. A line still open (a prompt, "Password: ") is offered once the
// stream has been quiet for PARTIAL_QUIET_MS: offered at once, a banner read
// in two chunks would match on its first half.

import type { OutputStream } from '../../shared/events';

/**
 * ANSI escape sequences: CSI (colours, cursor moves; ESC [ or the 8-bit
 * CSI), OSC (titles, hyperlinks; ended by BEL or ST) and the two-character
 * escapes, and character set choices (ESC ( B). Written here rather than taken from a package: one expression, and
 * what counts as an escape is this module's whole concern.
 */
// eslint-disable-next-line no-control-regex -- matching escape characters is the point
const ANSI = /(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[()*+][@-~]|\x1b[@-Z\\-_]/g;

export function stripAnsi(text: string): string {
  return text.includes('\x1b') || text.includes('\x9b') ? text.replace(ANSI, '') : text;
}

/** How long a stream must be quiet before its open line is offered. */
export const PARTIAL_QUIET_MS = 40;
/** The longest line kept for matching: the rest of a longer one is not looked at. */
export const MAX_LINE_CHARS = 16_384;

export type LineListener = (line: string, stream: OutputStream) => void;

export class LineFeed {
  private readonly open: Record<OutputStream, string> = { stdout: '', stderr: '' };
  /** The open line was offered already (a prompt): not again until it grows. */
  private readonly offered: Record<OutputStream, boolean> = { stdout: false, stderr: false };
  /** Output came while nobody listened: the open line is read back from the stream's end (tailOf) when someone does. */
  private readonly stale: Record<OutputStream, boolean> = { stdout: false, stderr: false };
  private readonly timers: Partial<Record<OutputStream, NodeJS.Timeout>> = {};
  private readonly listeners = new Set<LineListener>();

  /**
   * `tailOf`: the last characters of a stream as kept (at least
   * MAX_LINE_CHARS of them when there are). `resume`: the streams already
   * had output, so the first listener starts from their open lines.
   */
  constructor(
    private readonly tailOf: (stream: OutputStream) => string = () => '',
    resume = false,
  ) {
    if (resume) this.stale.stdout = this.stale.stderr = true;
  }

  /** Listens to every line from now on; returns the unsubscribe. */
  subscribe(listener: LineListener): () => void {
    if (this.listeners.size === 0) {
      for (const stream of ['stdout', 'stderr'] as const) {
        if (!this.stale[stream]) continue;
        this.stale[stream] = false;
        const tail = this.tailOf(stream);
        const cut = Math.max(tail.lastIndexOf('\n'), tail.lastIndexOf('\r'));
        this.open[stream] = tail.slice(cut + 1, cut + 1 + MAX_LINE_CHARS);
        this.offered[stream] = false;
      }
    }
    this.listeners.add(listener);
    // A line left open before anyone listened (a prompt waiting for its answer) is offered once its stream is quiet.
    for (const stream of ['stdout', 'stderr'] as const) if (this.open[stream] !== '' && !this.offered[stream] && this.timers[stream] === undefined) this.armQuiet(stream);
    return () => this.listeners.delete(listener);
  }

  get listening(): boolean {
    return this.listeners.size > 0;
  }

  push(stream: OutputStream, text: string): void {
    // Nobody listens (most runs, most of the time): nothing is scanned.
    if (this.listeners.size === 0) {
      if (text.length > 0) this.stale[stream] = true;
      return;
    }
    let at = 0;
    while (at < text.length) {
      const n = text.indexOf('\n', at);
      const r = text.indexOf('\r', at);
      const end = n < 0 ? r : r < 0 ? n : Math.min(n, r);
      if (end < 0) {
        this.append(stream, text.slice(at));
        break;
      }
      this.append(stream, text.slice(at, end));
      const line = this.open[stream];
      this.open[stream] = '';
      this.offered[stream] = false;
      // \r\n is one break; a \r before a \n in a later chunk ends an empty line, which matches nothing worth waiting for.
      at = end + (text[end] === '\r' && text[end + 1] === '\n' ? 2 : 1);
      this.emit(line, stream);
    }
    if (this.open[stream] !== '') this.armQuiet(stream);
    else {
      clearTimeout(this.timers[stream]);
      this.timers[stream] = undefined;
    }
  }

  /** Offers the stream's open line once no output came on it for PARTIAL_QUIET_MS. */
  private armQuiet(stream: OutputStream): void {
    clearTimeout(this.timers[stream]);
    const timer = setTimeout(() => {
      this.timers[stream] = undefined;
      if (this.offered[stream] || this.open[stream] === '' || this.listeners.size === 0) return;
      this.offered[stream] = true;
      this.emit(this.open[stream], stream);
    }, PARTIAL_QUIET_MS);
    timer.unref();
    this.timers[stream] = timer;
  }

  /** No more output comes: the open lines are offered as they are. */
  end(): void {
    for (const stream of ['stdout', 'stderr'] as const) {
      clearTimeout(this.timers[stream]);
      if (this.open[stream] !== '' && !this.offered[stream]) this.emit(this.open[stream], stream);
      this.open[stream] = '';
    }
  }

  private append(stream: OutputStream, piece: string): void {
    const room = MAX_LINE_CHARS - this.open[stream].length;
    if (room > 0) this.open[stream] += piece.length > room ? piece.slice(0, room) : piece;
    if (piece.length > 0) this.offered[stream] = false;
  }

  private emit(raw: string, stream: OutputStream): void {
    const line = stripAnsi(raw);
    for (const listener of [...this.listeners]) {
      try {
        listener(line, stream);
      } catch {
        // A listener's failure is its own.
      }
    }
  }
}
