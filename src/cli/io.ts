// What a command reads and writes: the process's streams and signals, or a test's stand-ins.

export interface CliIo {
  out: (text: string) => void;
  err: (text: string) => void;
  /**
   * Registers what to do on these signals (default: every one `warden run`
   * answers, src/cli/signals.ts); returns the unregister function.
   */
  onSignal: (handler: (signal: NodeJS.Signals) => void, signals?: NodeJS.Signals[]) => () => void;
  /** Whether stderr is a terminal (default: process.stderr's); the background-host line is said only there. */
  errIsTTY?: boolean;
  /** Whether stdout is a terminal (default: process.stdout's); show --stream escapes control characters only there. */
  outIsTTY?: boolean;
  /** All of stdin, for `warden run --python -` (default: this process's stdin). */
  readStdin?: () => Promise<string>;
}
