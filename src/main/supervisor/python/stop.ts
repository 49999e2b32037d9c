// The stop of one script: the cancel op and SIGINT to the interpreter's pid
// (never its group), SIGINT again every 200 ms until the result comes or the
// grace ends; then SIGKILL.

import type { SignalSent, StopReason, StopRecord } from '../../../shared/result';

/** How often SIGINT is repeated until the script reports. */
export const SIGINT_REPEAT_MS = 200;

/** The interpreter as the stop sequence uses it (interpreter.ts), named here so the two files do not import each other. */
export interface Signalled {
  send(op: object): boolean;
  signal(signal: NodeJS.Signals): boolean;
  kill(): boolean;
}

/** The per-script stop: cancel op + SIGINT, SIGINT every 200 ms, SIGKILL at the grace. Starts at most once. */
export class PythonStop {
  reason?: StopReason;
  requestedAtMs = 0;
  readonly sent: SignalSent[] = [];
  killed = false;
  /** The kill was asked for (force), not reached at the end of the grace. */
  forced = false;
  private forcedAtMs?: number;
  private repeat?: NodeJS.Timeout;
  private killTimer?: NodeJS.Timeout;
  private settled = false;

  constructor(
    private readonly graceMs: number,
    private readonly nowMs: () => number,
    private readonly interp: () => Signalled | undefined,
    private readonly runId: string,
    private readonly onSignal: (sent: SignalSent, step: 'interrupt' | 'kill') => void,
  ) {}

  /** The sequence began, or the script already reported: too late to move its deadline. */
  get begunOrSettled(): boolean {
    return this.reason !== undefined || this.settled;
  }

  begin(reason: StopReason, force: boolean): void {
    if (this.settled) return;
    if (this.reason === undefined) {
      this.reason = reason;
      this.requestedAtMs = this.nowMs();
      if (!force) {
        this.interp()?.send({ op: 'cancel', id: this.runId });
        this.interrupt();
        this.repeat = setInterval(() => this.interrupt(), SIGINT_REPEAT_MS);
        this.killTimer = setTimeout(() => this.kill(), this.graceMs);
      }
    }
    if (force && !this.killed) {
      this.forced = true;
      this.forcedAtMs = this.nowMs();
      this.kill();
    }
  }

  /** The script reported, or the interpreter died: no more signals. */
  settle(): void {
    this.settled = true;
    clearInterval(this.repeat);
    clearTimeout(this.killTimer);
  }

  record(): StopRecord | undefined {
    if (this.reason === undefined) return undefined;
    return { reason: this.reason, requestedAtMs: this.requestedAtMs, signals: [...this.sent], endedBy: this.killed ? 'kill' : 'interrupt', ...(this.forcedAtMs !== undefined ? { forcedAtMs: this.forcedAtMs } : {}) };
  }

  private interrupt(): void {
    if (this.interp()?.signal('SIGINT')) this.note('SIGINT', 'interrupt');
  }

  private kill(): void {
    clearInterval(this.repeat);
    clearTimeout(this.killTimer);
    const interp = this.interp();
    if (interp?.kill()) {
      this.killed = true;
      this.note('SIGKILL', 'kill');
    }
  }

  private note(signal: string, step: 'interrupt' | 'kill'): void {
    const sent = { signal, atMs: this.nowMs() };
    this.sent.push(sent);
    this.onSignal(sent, step);
  }
}
