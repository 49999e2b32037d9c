// Scans run off the host's event loop, in one worker thread, one at a time:
// a pattern can backtrack without end ((a+)+$ on a line of a's and a "!")
// and no JavaScript can interrupt a regular expression from inside. The
// worker checks its clock between stretches of text and answers where it
// stopped; a scan still busy `hardMs` after it began is terminated (V8 stops
// even a regular expression in its tracks), the job answered with
// ScanTooSlowError, and the next job gets a fresh worker.
//
// The worker runs the scanner from its source (scan.ts: `searchScanner`
// refers to nothing outside itself), so it needs no file of its own in the
// CLI's bundle, the app's, or a test run from the TypeScript sources.

import { Worker } from 'node:worker_threads';
import { WardenError } from '../../../shared/errors';
import { searchScanner, type ScanJob, type ScanResult } from './scan';

/** A scan terminated for running past its hard stop: the pattern is too slow for this text. */
export class ScanTooSlowError extends WardenError {
  override name = 'ScanTooSlowError';
  constructor(message: string) {
    super('bad-input', message);
  }
}

// esbuild run with keepNames (tsx, the sources' fallback) wraps functions in __name(fn, "name"): a
// worker given the function's text alone needs the helper too.
const WORKER_SOURCE = `'use strict';
const __name = (target) => target;
const { parentPort } = require('node:worker_threads');
const scanner = (${searchScanner.toString()})();
parentPort.on('message', ({ id, job }) => {
  try {
    parentPort.postMessage({ id, result: scanner.scan(job) });
  } catch (error) {
    parentPort.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
});
`;

interface Pending {
  job: ScanJob;
  hardMs: number;
  resolve: (result: ScanResult) => void;
  reject: (error: Error) => void;
}

/** The heap a worker may use: a call's text is bounded (TEXT_BUDGET_CHARS), and a scan holds about twice its region. */
const WORKER_HEAP_MB = 768;

export class SearchWorker {
  private worker: Worker | null = null;
  private readonly queue: Pending[] = [];
  private busy: (Pending & { id: number; timer: NodeJS.Timeout }) | null = null;
  private nextId = 1;
  private closed = false;
  /** How many workers were terminated for a scan past its hard stop (tests and the host's log). */
  terminated = 0;

  /** Scans `job` in the worker; rejects with ScanTooSlowError when it runs `hardMs` without answering. */
  scan(job: ScanJob, hardMs: number): Promise<ScanResult> {
    if (this.closed) return Promise.reject(new WardenError('shutting-down', 'The Warden host is shutting down; search again once it is back.'));
    return new Promise<ScanResult>((resolve, reject) => {
      this.queue.push({ job, hardMs, resolve, reject });
      this.pump();
    });
  }

  /** Ends the worker; queued scans are refused. */
  async close(): Promise<void> {
    this.closed = true;
    for (const pending of this.queue.splice(0)) pending.reject(new WardenError('shutting-down', 'The Warden host is shutting down.'));
    const worker = this.worker;
    this.worker = null;
    if (this.busy) {
      clearTimeout(this.busy.timer);
      this.busy.reject(new WardenError('shutting-down', 'The Warden host is shutting down.'));
      this.busy = null;
    }
    await worker?.terminate();
  }

  private start(): Worker {
    const worker = new Worker(WORKER_SOURCE, { eval: true, resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } });
    // An idle worker never keeps the host alive.
    worker.unref();
    worker.on('message', (message: { id: number; result?: ScanResult; error?: string }) => {
      const busy = this.busy;
      if (!busy || busy.id !== message.id) return;
      clearTimeout(busy.timer);
      this.busy = null;
      if (message.error !== undefined) busy.reject(new WardenError('bad-input', `The search could not be done: ${message.error}`));
      else busy.resolve(message.result!);
      this.pump();
    });
    const lost = (why: string) => {
      if (this.worker !== worker) return;
      this.worker = null;
      const busy = this.busy;
      if (busy) {
        clearTimeout(busy.timer);
        this.busy = null;
        busy.reject(new WardenError('unavailable', `The search's worker ${why}; search again, with a narrower query if it keeps happening.`));
      }
      this.pump();
    };
    worker.on('error', (error) => lost(`failed (${error.message})`));
    worker.on('exit', (code) => lost(`exited (${code})`));
    return worker;
  }

  private pump(): void {
    if (this.busy || this.closed) return;
    const pending = this.queue.shift();
    if (!pending) return;
    const worker = (this.worker ??= this.start());
    const id = this.nextId++;
    const timer = setTimeout(() => {
      if (this.busy?.id !== id) return;
      this.busy = null;
      this.worker = null;
      this.terminated += 1;
      void worker.terminate();
      pending.reject(new ScanTooSlowError(`The pattern was still running ${(pending.hardMs / 1000).toFixed(1)} s into one stretch of output and was stopped: it is too slow for this text (nested repeats such as (a+)+ can take exponential time). Simplify it, anchor it, or search for a literal (literal: true).`));
      this.pump();
    }, pending.hardMs);
    this.busy = { ...pending, id, timer };
    worker.postMessage({ id, job: pending.job });
  }
}
