// What a person sets once in Settings: the defaults of the New run form and
// the history's retention. Kept by the host in <state dir>/settings.json.

export interface Settings {
  /** The limit a new run gets unless the form says otherwise; null: none. */
  defaultLimitMs: number | null;
  /** From the limit (or a stop) to SIGKILL. */
  graceMs: number;
  /** A memory limit such as "512Mi" or "2G" (shared/size.ts); null: none. */
  memory: string | null;
  /** How long output a leftover process holds open is read after the command exits. */
  drainMs: number;
  teardownBudgetMs: number;
  /** The history keeps at most this many ended runs and this many bytes of output. */
  retention: { maxRuns: number; maxBytes: number };
}

export const DEFAULT_SETTINGS: Settings = {
  defaultLimitMs: null,
  graceMs: 5_000,
  memory: null,
  drainMs: 2_000,
  teardownBudgetMs: 10_000,
  retention: { maxRuns: 50_000, maxBytes: 2 * 1024 ** 3 },
};
