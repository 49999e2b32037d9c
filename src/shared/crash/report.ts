// What a crash report at the end of a run's output says: the error a program
// died of and the innermost frame in the user's own files, read from the
// report its language prints (a Python traceback, Node's stack, a Rust or Go
// panic, pytest's summary). The types every parser of this folder returns.
// No Node, no DOM: the engine (advice, notes), the CLI's answer to a model and
// the page read the same report the same way.

export type CrashLanguage = 'python' | 'node' | 'rust' | 'go' | 'pytest';

export interface CrashFrame {
  /** The file as the report names it (a path, file:// stripped, or a pseudo-file such as <string>). */
  file: string;
  line: number;
  column?: number;
  /** The function, as the report names it. */
  fn?: string;
  /** 1-based line of the text that names this frame. */
  reportLine: number;
  /** 1-based line of the text that quotes the frame's source, when the report quotes it. */
  sourceLine?: number;
  /** In the user's files: not the language's own library, an installed package or the runtime's internals. */
  user: boolean;
}

export interface Traceback {
  language: CrashLanguage;
  /** How the language says it ended: 'raised' (Python), 'threw' (Node), 'panicked' (Rust, Go), 'fatal' (a fatal error), 'failed' (a test). */
  how: 'raised' | 'threw' | 'panicked' | 'fatal' | 'failed';
  /** The error in one line: "KeyError: 'database_url'", a panic's message. */
  error: string;
  /** 1-based line of the text that holds the error (never the caret under it). */
  errorLine: number;
  /** The innermost frame in the user's files, else null (the error came from the runtime itself). */
  frame: CrashFrame | null;
  /** The frames the report lists, innermost last. */
  frames: CrashFrame[];
  /** 1-based first and last lines of the report in the text. */
  from: number;
  to: number;
  /** pytest: the first failed test ("t_cfg.py::test_missing") and how many more failed. */
  test?: string;
  moreFailed?: number;
}

/** One language's last report in the lines given (0-based indexes into them), or null. */
export interface Found {
  report: Omit<Traceback, 'from' | 'to' | 'errorLine' | 'frame' | 'frames'> & { errorAt: number; frames: FoundFrame[] };
  start: number;
  end: number;
}

/** A frame with 0-based indexes into the lines scanned. */
export interface FoundFrame extends Omit<CrashFrame, 'reportLine' | 'sourceLine'> {
  at: number;
  sourceAt?: number;
}

export type LanguageScan = (lines: readonly string[]) => Found | null;
