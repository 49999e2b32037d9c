// What a caller asks for when it starts a command run. Durations are in
// milliseconds; every field but argv has a default (see DEFAULTS).

export interface CommandRunRequest {
  argv: string[];
  /** Run argv joined as one string through /bin/sh -c. Only when asked. */
  shell?: boolean;
  cwd?: string;
  env?: Record<string, string>;
  /** Text written to stdin, then closed. Without it stdin is /dev/null. */
  stdin?: string;
  /** null or absent: no limit. */
  limitMs?: number | null;
  /** From the limit (or a stop request) to SIGKILL. */
  graceMs?: number;
  /** From the limit to SIGTERM; a value >= graceMs skips the SIGTERM step. */
  terminateAfterMs?: number;
  /** How long output held open by a descendant is read after the main process exits. */
  drainMs?: number;
  teardownBudgetMs?: number;
  /** Leave descendants running after the main process exits. */
  keepDescendants?: boolean;
  /** Characters kept per stream (head and tail). */
  outputCapChars?: number;
}

export const DEFAULTS = {
  graceMs: 5_000,
  terminateAfterMs: 2_000,
  drainMs: 2_000,
  teardownBudgetMs: 10_000,
  teardownPassGapMs: 200,
  outputCapChars: 2_000_000,
} as const;
