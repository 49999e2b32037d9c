// The signals `warden run` (and `warden wait`) answers, from before the run
// starts to its end: each one stops the run with the stop sequence (a second
// one kills it at once), and the run's result records it. INT and TERM are a
// person's or a supervisor's "stop"; HUP (the terminal went away), QUIT, ALRM,
// USR1, USR2 and PIPE also make warden exit with 128+n once the run's end is
// recorded, as a process that got that signal would. PIPE is the reader of
// warden's output going away (an EPIPE on stdout or stderr, see main.ts):
// a `kill -PIPE` from outside is ignored, as Node ignores the signal, because
// the process's own sockets raise it on every EPIPE too.

import { constants } from 'node:os';
import type { CliIo } from './io';

export const HANDLED_SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGALRM', 'SIGUSR1', 'SIGUSR2', 'SIGPIPE'];
const EXIT_AS_SIGNALLED = new Set<NodeJS.Signals>(['SIGHUP', 'SIGQUIT', 'SIGALRM', 'SIGUSR1', 'SIGUSR2', 'SIGPIPE']);

/** What the result's notes say about a stop a signal to warden caused (none for INT and TERM: a stop is what they mean). */
export function stopNoteFor(signal: NodeJS.Signals): string | undefined {
  if (signal === 'SIGINT' || signal === 'SIGTERM') return undefined;
  if (signal === 'SIGHUP') return 'warden got SIGHUP (its terminal went away), so the run was stopped.';
  return `warden got ${signal}, so the run was stopped.`;
}

/**
 * Signals to this process, caught from construction on: the ones that came
 * before the run had an id are handed to `attach` when it does, so a signal
 * right after the spawn still stops the run instead of killing warden.
 */
export class SignalStop {
  private readonly got: NodeJS.Signals[] = [];
  private act: ((signal: NodeJS.Signals, nth: number) => void) | null = null;
  private readonly unregister: () => void;

  constructor(io: CliIo) {
    this.unregister = io.onSignal((signal) => {
      this.got.push(signal);
      this.act?.(signal, this.got.length);
    });
  }

  /** From now on `act` handles each signal (the nth since the start), and those that came already, in order. */
  attach(act: (signal: NodeJS.Signals, nth: number) => void): void {
    this.act = act;
    this.got.forEach((signal, i) => act(signal, i + 1));
  }

  /** The exit status: 128+n for the first signal that asks warden itself to go, else the run's. */
  exitStatus(runStatus: number): number {
    const first = this.got.find((s) => EXIT_AS_SIGNALLED.has(s));
    return first ? 128 + constants.signals[first as keyof typeof constants.signals] : runStatus;
  }

  dispose(): void {
    this.act = null;
    this.unregister();
  }
}
