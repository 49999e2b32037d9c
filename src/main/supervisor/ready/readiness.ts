// A run's readiness: its probes, all of which must pass (as in wait-on), by
// the ready timeout counted from the run's start. Log probes watch the
// output's lines as they come (a match passes at once, in the turn the line
// is read); the others are tried every interval after the delay, one
// attempt in flight per probe, each bounded. A probe that passed stays
// passed. The run is told once: ready (with the report), or not ready.

import type { ListeningPort, ReadyProbe, ReadyReport } from '../../../shared/result';
import type { LineFeed } from '../lines';
import type { Attempt } from './attempt';
export { failingProbes, readyLine } from '../../../shared/ready-text';
import { probeExec } from './exec';
import { FileProbe } from './file';
import { probeHttp } from './http';
import { probePort } from './port';
import type { ProbeSpec } from './probe-spec';
import { probeTcp } from './tcp';

export interface ReadyOptions {
  probes: ProbeSpec[];
  timeoutMs: number;
  intervalMs: number;
  delayMs: number;
  status: { min: number; max: number };
}

export interface ReadyContext {
  cwd: string;
  env: Record<string, string | undefined>;
  lines: LineFeed;
  /** The run's listening ports now, freshly read; null where they cannot be read. */
  portsOf(): ListeningPort[] | null;
  /** The run's clock: ms since it started. */
  nowMs(): number;
  onReady(report: ReadyReport): void;
  onNotReady(probes: ReadyProbe[]): void;
}

/** The bound on one tcp attempt, and on one http attempt. */
const TCP_ATTEMPT_MS = 2_000;
const HTTP_ATTEMPT_MS = 5_000;
/** The longest line a report keeps. */
const LINE_CHARS = 500;

interface Probe {
  spec: ProbeSpec;
  state: ReadyProbe;
  inFlight: boolean;
  file?: FileProbe;
}

export type ReadyState = 'waiting' | 'ready' | 'not-ready' | 'cancelled';

export class ReadyWatch {
  private readonly probes: Probe[];
  private stateNow: ReadyState = 'waiting';
  private pollTimer?: NodeJS.Timeout;
  private timeoutTimer?: NodeJS.Timeout;
  private unsubscribe?: () => void;
  private line?: string;

  constructor(
    private readonly options: ReadyOptions,
    private readonly context: ReadyContext,
  ) {
    this.probes = options.probes.map((spec) => ({
      spec,
      state: { probe: spec.text, passed: false, attempts: 0 },
      inFlight: false,
      ...(spec.kind === 'file' ? { file: new FileProbe(spec.path.startsWith('/') ? spec.path : `${context.cwd}/${spec.path}`) } : {}),
    }));
  }

  get state(): ReadyState {
    return this.stateNow;
  }

  /** Each probe as it stands (copies). */
  report(): ReadyProbe[] {
    return this.probes.map((p) => ({ ...p.state }));
  }

  start(): void {
    const logs = this.probes.filter((p) => p.spec.kind === 'log');
    if (logs.length > 0) {
      this.unsubscribe = this.context.lines.subscribe((line) => {
        for (const probe of logs) if (!probe.state.passed) this.matchLine(probe, line);
      });
    }
    const left = this.options.timeoutMs - this.context.nowMs();
    this.timeoutTimer = setTimeout(() => this.giveUp(), Math.max(0, left));
    if (this.probes.some((p) => p.spec.kind !== 'log')) this.pollTimer = setTimeout(() => this.poll(), Math.max(0, this.options.delayMs - this.context.nowMs()));
  }

  /** The run ended (or its readiness no longer matters): no more attempts, and nothing is told. */
  cancel(): void {
    if (this.stateNow === 'waiting') this.stateNow = 'cancelled';
    this.stop();
  }

  private stop(): void {
    clearTimeout(this.pollTimer);
    clearTimeout(this.timeoutTimer);
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  private matchLine(probe: Probe, line: string): void {
    if (probe.spec.kind !== 'log') return;
    probe.state.attempts++;
    const match = probe.spec.regex.exec(line);
    if (!match) {
      probe.state.last = `no line matched yet (${probe.state.attempts} read)`;
      return;
    }
    const shown = line.trim().slice(0, LINE_CHARS);
    this.line ??= shown;
    const captured = match[1] !== undefined && /^\d{1,5}$/.test(match[1]) ? Number(match[1]) : undefined;
    this.pass(probe, { ok: true, line: shown, ...(captured !== undefined && captured >= 1 && captured <= 65535 ? { port: captured } : {}) });
  }

  private poll(): void {
    if (this.stateNow !== 'waiting') return;
    for (const probe of this.probes) {
      if (probe.state.passed || probe.inFlight || probe.spec.kind === 'log') continue;
      probe.inFlight = true;
      probe.state.attempts++;
      void this.attempt(probe).then(
        (attempt) => {
          probe.inFlight = false;
          if (this.stateNow !== 'waiting') return;
          if (attempt.ok) this.pass(probe, attempt);
          else probe.state.last = attempt.why;
        },
        (error: unknown) => {
          probe.inFlight = false;
          probe.state.last = error instanceof Error ? error.message : String(error);
        },
      );
    }
    if (this.stateNow === 'waiting') this.pollTimer = setTimeout(() => this.poll(), this.options.intervalMs);
  }

  private attempt(probe: Probe): Promise<Attempt> {
    const { spec } = probe;
    // No attempt outlasts the timeout by much: it is bounded by what is left of it, at least 100 ms.
    const left = Math.max(100, this.options.timeoutMs - this.context.nowMs());
    switch (spec.kind) {
      case 'tcp':
        return probeTcp(spec.host, spec.port, Math.min(TCP_ATTEMPT_MS, left));
      case 'http':
        return probeHttp(spec.url, this.options.status, Math.min(HTTP_ATTEMPT_MS, left));
      case 'exec':
        return probeExec(spec.command, { cwd: this.context.cwd, env: this.context.env });
      case 'file':
        return Promise.resolve(probe.file!.attempt(this.context.nowMs()));
      case 'port':
        return Promise.resolve(probePort(spec.port, this.context.portsOf()));
      case 'log':
        return Promise.resolve({ ok: false, why: 'log probes watch the output' });
    }
  }

  private pass(probe: Probe, attempt: Extract<Attempt, { ok: true }>): void {
    if (this.stateNow !== 'waiting') return;
    probe.state.passed = true;
    probe.state.afterMs = Math.round(this.context.nowMs());
    delete probe.state.last;
    if (attempt.port !== undefined) probe.state.port = attempt.port;
    if (!this.probes.every((p) => p.state.passed)) return;
    this.stateNow = 'ready';
    this.stop();
    this.context.onReady({
      afterMs: Math.round(this.context.nowMs()),
      probes: this.report(),
      ...(this.line !== undefined ? { line: this.line } : {}),
      ports: this.portsAtReady(),
    });
  }

  /** What the run listens on now, with the ports a log line named or a probe reached that the tables did not show. */
  private portsAtReady(): ListeningPort[] {
    const found = this.context.portsOf();
    const ports = [...(found ?? [])];
    for (const probe of this.probes) {
      const port = probe.state.port;
      // A tcp or http probe's port is someone's, not necessarily the run's: only where the tables cannot be read.
      const named = probe.spec.kind === 'log' || probe.spec.kind === 'port' || found === null;
      if (port !== undefined && named && !ports.some((p) => p.port === port)) ports.push({ port, address: probe.spec.kind === 'tcp' ? (probe.spec.host ?? 'localhost') : 'localhost' });
    }
    return ports.sort((a, b) => a.port - b.port);
  }

  private giveUp(): void {
    if (this.stateNow !== 'waiting') return;
    this.stateNow = 'not-ready';
    this.stop();
    for (const probe of this.probes) if (!probe.state.passed && probe.state.last === undefined) probe.state.last = probe.state.attempts === 0 ? 'never tried' : 'not passed';
    this.context.onNotReady(this.report());
  }
}
