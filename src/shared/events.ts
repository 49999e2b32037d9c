import type { ProcTreeSnapshot } from './proc-tree';
import type { ListeningPort, MainExit, ReadyReport, RunResult, StopStep } from './result';

export type OutputStream = 'stdout' | 'stderr';

/** Every event type, as /events?types= names them. */
export const EVENT_TYPES: readonly string[] = ['started', 'output', 'signal-sent', 'limit-extended', 'tree', 'ended'];

export type RunEvent =
  | { type: 'started'; runId: string; snapshot: RunResult }
  /**
   * `offset`: characters of this stream before `text` (so a client knows exactly what it has).
   * `atMs`: when it was read, in ms since the run's start (its monotonic clock), for a timed log.
   */
  | { type: 'output'; runId: string; stream: OutputStream; text: string; offset: number; atMs?: number }
  /**
   * `killAtMs` (stop steps): when SIGKILL is due, in ms since the run's start, so a view can count the grace down exactly.
   * step 'user': a person sent it to one process from the Process tree; `signal` reads "SIGTERM to pid 1234 (sleep 30)".
   */
  | { type: 'signal-sent'; runId: string; signal: string; atMs: number; step: StopStep | 'teardown' | 'user'; killAtMs?: number }
  /** A live run's deadline moved: its new limit, by how much, and when (ms since its start). */
  | { type: 'limit-extended'; runId: string; limitMs: number; byMs: number; atMs: number }
  | { type: 'tree'; runId: string; snapshot: ProcTreeSnapshot }
  /** Its readiness probes all passed (a report), or the ready timeout passed first (false). */
  | { type: 'ready'; runId: string; ready: ReadyReport | false; atMs: number }
  /** The TCP ports its processes listen on changed (every live run's, found about once a second). */
  | { type: 'ports'; runId: string; ports: ListeningPort[]; atMs: number }
  /** Input written to its stdin pipe: `text` (at most 4,000 characters of it, `chars` in all), or its end. */
  | { type: 'input'; runId: string; text: string; chars: number; eof: boolean; atMs: number }
  /** Its lease was renewed (extend): it now ends at `endsAtMs`. */
  | { type: 'lease-renewed'; runId: string; endsAtMs: number; byMs: number; atMs: number }
  /** A service's main process exited and the rest of the run lives on. */
  | { type: 'main-exited'; runId: string; mainExit: MainExit }
  /** `yielded`: an answer had left the run going before it ended (a yield), so a client may not have seen its end. */
  | { type: 'ended'; runId: string; result: RunResult; yielded?: boolean };
