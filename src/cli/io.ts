// What a command reads and writes: the process's streams and signals, or a test's stand-ins.

export interface CliIo {
  out: (text: string) => void;
  err: (text: string) => void;
  /** Registers what to do on SIGINT / SIGTERM; returns the unregister function. */
  onSignal: (handler: (signal: NodeJS.Signals) => void) => () => void;
  /** All of stdin, for `warden run --python -` (default: this process's stdin). */
  readStdin?: () => Promise<string>;
}
