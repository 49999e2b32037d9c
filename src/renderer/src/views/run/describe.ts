// What the run detail says about a run, as pure functions of its data: the
// verdict in words, the stop phase, the timeline, the re-run request, the
// flattened process tree.

import type { EventRecord } from '../../../../shared/history';
import type { ProcNode } from '../../../../shared/proc-tree';
import { DEFAULTS, type RunRequest } from '../../../../shared/request';
import type { RunResult, SignalSent, StopStep } from '../../../../shared/result';
import { OUTPUT_TIMES_EVENT } from '../../../../shared/output-times';
import { TELEMETRY_EVENT } from '../../../../shared/telemetry';
import { duration, shellQuote } from '../../format';

/** A sentence for the run's verdict, or for where a live run stands. */
export function verdictSentence(run: RunResult, elapsedMs: number = run.elapsedMs): string {
  const after = duration(elapsedMs);
  const limit = run.limitMs === null ? 'no limit' : `limit ${duration(run.limitMs)}`;
  switch (run.state) {
    case 'queued':
      return `Queued in session ${run.session ?? 'default'}${run.queuePosition ? ` (position ${run.queuePosition})` : ''}: it starts when the scripts before it end.`;
    case 'running':
      return `Still running: ${after} so far (${limit}).`;
    case 'stopping':
      return `Still running, being stopped: ${after} so far (${limit}).`;
  }
  const code = run.exitCode;
  switch (run.verdict) {
    case 'completed':
      return `Completed with exit code 0 after ${after}${run.limitMs === null ? '' : ` (limit ${duration(run.limitMs)})`}.`;
    case 'failed':
      return code === null ? `Failed after ${after}: its exit status could not be read.` : `Failed with exit code ${code} after ${after}.`;
    case 'timed-out':
      return `Stopped by the deadline after ${after} (limit ${run.limitMs === null ? '–' : duration(run.limitMs)}).`;
    case 'stopped':
      if (run.stop?.reason === 'owner') return `Stopped because its owner went away, after ${after}.`;
      return run.stop?.reason === 'shutdown' ? `Stopped because Warden shut down, after ${after}.` : `Stopped on request after ${after}.`;
    case 'killed':
      if (run.oom?.confirmed) return `Killed by the out-of-memory killer after ${after}.`;
      return run.signal ? `Killed by ${run.signal} after ${after}; Warden did not send it.` : `Killed after ${after} (exit code ${code ?? '–'}); Warden sent no signal.`;
    case 'crashed':
      return `Crashed with ${run.signal ?? 'a signal'} after ${after}.`;
    case 'signaled':
      return `Ended by ${run.signal ?? 'a signal'} after ${after}; Warden did not send it.`;
    case 'lost':
      return 'Lost: Warden went away while it ran, so how it ended is unknown.';
    case 'spawn-failed':
      return 'It could not start.';
    default:
      return `Ended after ${after}.`;
  }
}

const STEP_WORD: Record<StopStep, string> = { interrupt: 'interrupting', terminate: 'terminating', kill: 'killed' };
const ENDED_WORD: Record<StopStep, string> = { interrupt: 'ended at the interrupt step', terminate: 'ended at the terminate step', kill: 'killed' };

/** The grace a run's stop sequence allows before SIGKILL (the request's own value is not in the result). */
export function graceOf(run: Pick<RunResult, 'kind'>): number {
  return run.kind === 'python' ? DEFAULTS.pythonGraceMs : DEFAULTS.graceMs;
}

/**
 * The stop phase in a few words: "interrupting · grace 4 s left",
 * "terminating · grace 1 s left", "killed"; for an ended run how the stop
 * ended it; null when no stop is under way.
 */
export function phaseText(run: RunResult, step: StopStep | undefined, signals: SignalSent[], elapsedMs: number, killAtMs?: number): string | null {
  if (run.state === 'ended') return run.stop ? (run.stop.forcedAtMs !== undefined ? 'force-killed' : ENDED_WORD[run.stop.endedBy]) : null;
  if (run.state !== 'stopping' && !step) return null;
  if (!step) return 'stopping';
  if (step === 'kill') return STEP_WORD.kill;
  const stoppedAt = run.stop?.requestedAtMs ?? signals.find((s) => s.signal === 'SIGINT' || s.signal === 'SIGTERM')?.atMs;
  // The engine says when SIGKILL is due; without that, the default grace.
  const due = killAtMs ?? (stoppedAt === undefined ? undefined : stoppedAt + graceOf(run));
  if (due === undefined) return STEP_WORD[step];
  const left = Math.max(0, Math.ceil((due - elapsedMs) / 1000));
  return `${STEP_WORD[step]} · grace ${left} s left`;
}

/** What the Copy button copies: the shell-quoted command, or the script. */
export function copyText(run: Pick<RunResult, 'argv' | 'code'>): string {
  if (run.argv) return run.argv.map(shellQuote).join(' ');
  return run.code ?? '';
}

/** The request that runs the same thing again: argv (as it ran), cwd and limit; or code and session. */
export function rerunRequest(run: RunResult): RunRequest {
  if (run.kind === 'python' || run.code !== undefined) {
    return { code: run.code ?? '', ...(run.session ? { session: run.session } : {}), limitMs: run.limitMs };
  }
  return { argv: run.argv ?? [], cwd: run.cwd, limitMs: run.limitMs };
}

/** Each node of a tree with its depth, parents before children, in order. */
export function flattenTree(roots: ProcNode[]): { node: ProcNode; depth: number }[] {
  const out: { node: ProcNode; depth: number }[] = [];
  const walk = (node: ProcNode, depth: number) => {
    out.push({ node, depth });
    for (const child of node.children) walk(child, depth + 1);
  };
  for (const root of roots) walk(root, 0);
  return out;
}

/** A row of the process tree as drawn: its guide lines, and whether it has children and they are folded. */
export interface TreeRow {
  node: ProcNode;
  depth: number;
  /** The tree lines before the command: "│  ├─ " (one 3-character cell per level below the root). */
  guides: string;
  hasChildren: boolean;
  folded: boolean;
  /** Processes hidden under this row while it is folded. */
  hidden: number;
}

function countBelow(node: ProcNode): number {
  let n = 0;
  for (const child of node.children) n += 1 + countBelow(child);
  return n;
}

/** How the tree's siblings are ordered: as the sample lists them, or by CPU or RSS, the highest first (htop's F6). */
export type TreeSort = 'tree' | 'cpu' | 'rss';

/** Siblings in the order asked: by their own figure (not their subtree's), ties by pid; the main process stays the first root. */
function ordered(nodes: ProcNode[], sort: TreeSort, isRoots: boolean): ProcNode[] {
  if (sort === 'tree' || nodes.length < 2) return nodes;
  const key = sort === 'cpu' ? (n: ProcNode) => n.cpuPercent : (n: ProcNode) => n.rssBytes;
  const rest = (list: ProcNode[]) => list.slice().sort((a, b) => key(b) - key(a) || a.pid - b.pid);
  return isRoots ? [nodes[0]!, ...rest(nodes.slice(1))] : rest(nodes);
}

/** The rows of a tree with its lines drawn, parents before children; the children of a folded pid are left out. */
export function treeRows(roots: ProcNode[], folded: ReadonlySet<number> = new Set(), sort: TreeSort = 'tree'): TreeRow[] {
  const out: TreeRow[] = [];
  const walk = (node: ProcNode, depth: number, lead: string, last: boolean) => {
    const isFolded = folded.has(node.pid) && node.children.length > 0;
    out.push({ node, depth, guides: depth === 0 ? '' : `${lead}${last ? '└─ ' : '├─ '}`, hasChildren: node.children.length > 0, folded: isFolded, hidden: isFolded ? countBelow(node) : 0 });
    if (isFolded) return;
    const next = depth === 0 ? '' : `${lead}${last ? '   ' : '│  '}`;
    const children = ordered(node.children, sort, false);
    children.forEach((child, i) => walk(child, depth + 1, next, i === children.length - 1));
  };
  for (const root of ordered(roots, sort, true)) walk(root, 0, '', true);
  return out;
}

const PROC_STATES: Record<string, string> = { R: 'running', S: 'sleeping', D: 'waiting on I/O', T: 'stopped', t: 'traced', Z: 'zombie', X: 'dead', I: 'idle' };

export function procStateWord(state: string): string {
  return PROC_STATES[state.charAt(0)] ?? state;
}

export type TimelineKind = 'queued' | 'started' | 'limit' | 'limit-extended' | 'stop-requested' | 'force-kill' | 'signal-sent' | 'exit' | 'teardown' | 'ended' | string;

export interface TimelineEntry {
  kind: TimelineKind;
  /** Milliseconds since the run started. */
  atMs: number;
  title: string;
  detail: string;
  /** Known only to this page so far (not in the stored history yet). */
  live: boolean;
}

/** An extension of the limit the page saw happen. */
export interface LiveExtension {
  limitMs: number;
  byMs: number;
  atMs: number;
}

/**
 * A signal a person sent to one process from the Process tree: the engine
 * writes it "SIGTERM to pid 1234 (sleep 30)" (teardown's have no command).
 */
export function userSignalEntry(signal: string, atMs: number, live: boolean): TimelineEntry | undefined {
  const sent = /^(SIG[A-Z0-9]+) to pid (\d+) \((.*)\)$/s.exec(signal);
  if (!sent) return undefined;
  return { kind: 'signal-sent', atMs, title: `${sent[1]} sent to ${sent[2]} (${sent[3]})`, detail: 'by hand, from the Process tree', live };
}

const ORDER: Record<string, number> = { queued: 0, started: 1, limit: 2, 'limit-extended': 3, 'stop-requested': 4, 'force-kill': 4.5, 'signal-sent': 5, exit: 6, teardown: 7, ended: 8 };

/** A force kill asked for with the stop itself (not later, while the stop sequence ran). */
const FORCED_WITH_STOP_MS = 5;

function num(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function str(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

/** A service's moments in words: ready or not, its ports, input sent to it, its lease renewed, its main process gone. */
export function serviceEntry(kind: string, d: Record<string, unknown>): { title: string; detail: string } {
  const ports = (list: unknown) => (Array.isArray(list) ? list.map((p) => (typeof p === 'number' ? String(p) : typeof p === 'object' && p !== null ? String((p as { port?: unknown }).port) : '?')).join(', ') : '');
  switch (kind) {
    case 'ready':
      if (d.ready === false) return { title: 'Not ready', detail: 'its readiness probes did not pass in time' };
      return { title: 'Ready', detail: `${ports(d.ports) ? `listening on ${ports(d.ports)}` : 'its probes passed'}${str(d.line) !== null ? `: ${str(d.line)}` : ''}` };
    case 'ports':
      if (str(d.more) !== null) return { title: 'Ports', detail: str(d.more)! };
      return { title: 'Ports', detail: ports(d.ports) ? `listening on ${ports(d.ports)}` : 'listening on no port' };
    case 'input': {
      const text = str(d.text) ?? '';
      const chars = num(d.chars) ?? text.length;
      const shown = JSON.stringify(text.length > 200 ? `${text.slice(0, 200)}…` : text);
      return { title: d.eof === true ? (chars > 0 ? 'Input sent, then end of input' : 'End of input sent') : 'Input sent', detail: chars > 0 ? `${shown}${chars > text.length ? ` (${chars} characters)` : ''}` : 'its stdin closed' };
    }
    case 'lease-renewed':
      return { title: 'Lease renewed', detail: `by ${duration(num(d.byMs) ?? 0)}, to ${duration(num(d.endsAtMs) ?? 0)}` };
    case 'main-exited':
      return { title: 'Main process exited', detail: `${exitWords(num(d.exitCode), str(d.signal))}; the service lives on in its other processes` };
    default:
      return { title: kind, detail: JSON.stringify(d) };
  }
}

function exitWords(exitCode: number | null, signal: string | null): string {
  if (signal) return `killed by ${signal}`;
  if (exitCode !== null) return `exit code ${exitCode}`;
  return 'no exit status';
}

/**
 * The run's timeline: the stored events merged with what this page knows
 * live (signals, extensions, the end before the history has it), with the
 * limit it started with, in time order.
 */
export function buildTimeline(run: RunResult, stored: EventRecord[], liveSignals: SignalSent[], liveExtensions: LiveExtension[]): TimelineEntry[] {
  const startedWall = Date.parse(run.startedAt);
  const entries: TimelineEntry[] = [];
  const at = (record: EventRecord): number => {
    if (record.atMs !== null) return record.atMs;
    const wall = Date.parse(record.at) - startedWall;
    return Number.isFinite(wall) ? Math.max(0, wall) : run.elapsedMs;
  };

  const storedExtensions: LiveExtension[] = [];
  const storedSignals: SignalSent[] = [];
  const kinds = new Set<string>();
  for (const record of stored) {
    // The telemetry series is drawn as charts (Process tree), not listed as a moment.
    if (record.kind === TELEMETRY_EVENT || record.kind === OUTPUT_TIMES_EVENT) continue;
    kinds.add(record.kind);
    const d = record.detail;
    const atMs = at(record);
    switch (record.kind) {
      case 'queued':
        entries.push({ kind: 'queued', atMs: 0, title: 'Queued', detail: `waiting in session ${run.session ?? 'default'}`, live: false });
        break;
      case 'started':
        entries.push({ kind: 'started', atMs, title: 'Started', detail: run.kind === 'python' ? `in session ${run.session ?? 'default'}` : `in ${run.cwd}`, live: false });
        break;
      case 'limit-extended': {
        const limitMs = num(d.limitMs) ?? 0;
        const byMs = num(d.byMs) ?? 0;
        storedExtensions.push({ limitMs, byMs, atMs });
        entries.push({ kind: 'limit-extended', atMs, title: 'Limit extended', detail: `by ${duration(byMs)}, to ${duration(limitMs)}`, live: false });
        break;
      }
      case 'signal-sent': {
        const signal = str(d.signal) ?? 'a signal';
        storedSignals.push({ signal, atMs });
        const step = str(d.step);
        const target = /^(SIG[A-Z0-9]+) to (.+)$/.exec(signal);
        const last = entries[entries.length - 1];
        if (step === 'teardown' && target) {
          // The teardown signals each process: one entry per signal, naming every target.
          const title = `Sent ${target[1]} (teardown)`;
          if (last && last.title === title && Math.abs(last.atMs - atMs) < 1000) last.detail += `, ${target[2]}`;
          else entries.push({ kind: 'signal-sent', atMs, title, detail: `to ${target[2]}`, live: false });
          break;
        }
        entries.push(userSignalEntry(signal, atMs, false) ?? { kind: 'signal-sent', atMs, title: `Sent ${signal}`, detail: signalDetail(step, signal), live: false });
        break;
      }
      case 'exit':
        entries.push({ kind: 'exit', atMs, title: 'Exited', detail: exitWords(num(d.exitCode), str(d.signal)), live: false });
        break;
      case 'teardown':
        entries.push({ kind: 'teardown', atMs, title: 'Teardown', detail: teardownWords(num(d.killed) ?? 0, num(d.survivors) ?? 0, num(d.elapsedMs) ?? 0, d.complete !== false), live: false });
        break;
      case 'ended':
        entries.push({ kind: 'ended', atMs, title: 'Ended', detail: str(d.verdict) ?? 'no verdict', live: false });
        break;
      case 'ready':
      case 'ports':
      case 'input':
      case 'lease-renewed':
      case 'main-exited':
        entries.push({ kind: record.kind, atMs, ...serviceEntry(record.kind, d), live: false });
        break;
      default:
        entries.push({ kind: record.kind, atMs, title: record.kind, detail: JSON.stringify(d), live: false });
    }
  }

  if (!kinds.has('started') && run.state !== 'queued') {
    entries.push({ kind: 'started', atMs: 0, title: 'Started', detail: run.kind === 'python' ? `in session ${run.session ?? 'default'}` : `in ${run.cwd}`, live: true });
  }

  // Extensions not in the history yet.
  const extensions = [...storedExtensions];
  for (const ext of liveExtensions) {
    if (extensions.some((e) => e.limitMs === ext.limitMs)) continue;
    extensions.push(ext);
    entries.push({ kind: 'limit-extended', atMs: ext.atMs, title: 'Limit extended', detail: `by ${duration(ext.byMs)}, to ${duration(ext.limitMs)}`, live: true });
  }

  // The limit it started with: before the first extension, else the one it has.
  extensions.sort((a, b) => a.atMs - b.atMs);
  const first = extensions[0];
  if (first) {
    const initial = first.limitMs - first.byMs;
    // A run without a limit gets one of its elapsed time plus the extension.
    const hadNone = Math.abs(initial - first.atMs) < 100;
    entries.push({ kind: 'limit', atMs: 0, title: hadNone ? 'No limit' : 'Limit', detail: hadNone ? 'until the first extension' : `deadline at +${duration(initial)}`, live: false });
  } else {
    entries.push({ kind: 'limit', atMs: 0, title: run.limitMs === null ? 'No limit' : 'Limit', detail: run.limitMs === null ? 'it may run for as long as it takes' : `deadline at +${duration(run.limitMs)}`, live: false });
  }

  if (run.stop) {
    const requested = run.stop.requestedAtMs;
    // The stop is requested just before its first signal: never list it after that signal.
    const firstSignal = Math.min(...[...storedSignals, ...liveSignals, ...run.stop.signals].map((x) => x.atMs).filter((t) => t >= requested - 100 && t <= requested + 100));
    const why = run.stop.reason === 'deadline' ? 'the deadline passed' : run.stop.reason === 'shutdown' ? 'Warden shut down' : run.stop.reason === 'owner' ? 'its owner went away' : 'stopped on request';
    const forced = run.stop.forcedAtMs;
    const forcedAtOnce = forced !== undefined && forced - requested <= FORCED_WITH_STOP_MS;
    entries.push({
      kind: 'stop-requested',
      atMs: Math.min(requested, firstSignal),
      title: forcedAtOnce ? 'Force kill' : 'Stop sequence',
      detail: forcedAtOnce ? `${why}: SIGKILL at once, without the grace` : `${why}: signals step by step, SIGKILL after the grace`,
      live: false,
    });
    if (forced !== undefined && !forcedAtOnce) {
      entries.push({ kind: 'force-kill', atMs: forced, title: 'Force kill', detail: 'asked for SIGKILL at once instead of waiting for the grace', live: false });
    }
  }

  // Signals not in the history yet: those seen live and those the result records.
  const known = [...storedSignals];
  for (const signal of [...liveSignals, ...(run.stop?.signals ?? [])]) {
    if (known.some((k) => k.signal === signal.signal && Math.abs(k.atMs - signal.atMs) <= 1)) continue;
    known.push(signal);
    entries.push(userSignalEntry(signal.signal, signal.atMs, true) ?? { kind: 'signal-sent', atMs: signal.atMs, title: `Sent ${signal.signal}`, detail: signalDetail(null, signal.signal), live: true });
  }

  if (run.state === 'ended') {
    if (!kinds.has('exit')) entries.push({ kind: 'exit', atMs: run.elapsedMs, title: 'Exited', detail: exitWords(run.exitCode, run.signal), live: true });
    if (run.teardown && !kinds.has('teardown')) {
      const t = run.teardown;
      entries.push({ kind: 'teardown', atMs: run.elapsedMs + t.elapsedMs, title: 'Teardown', detail: teardownWords(t.killed.length, t.survivors.length, t.elapsedMs, t.complete), live: true });
    }
    if (!kinds.has('ended')) {
      const endWall = run.endedAt ? Date.parse(run.endedAt) - startedWall : NaN;
      entries.push({ kind: 'ended', atMs: Number.isFinite(endWall) ? Math.max(run.elapsedMs, endWall) : run.elapsedMs, title: 'Ended', detail: run.verdict ?? 'no verdict', live: true });
    }
  }

  // The SIGKILL of a force kill is not the kill step's, after the grace.
  const forcedAt = run.stop?.forcedAtMs;
  if (forcedAt !== undefined) {
    for (const e of entries) {
      if (e.kind === 'signal-sent' && e.title === 'Sent SIGKILL' && Math.abs(e.atMs - forcedAt) <= FORCED_WITH_STOP_MS) e.detail = 'force kill: at once, not after the grace';
    }
  }

  // The teardown and the end come after everything else; their wall-clock times must not sort them before it.
  const isLast = (e: TimelineEntry) => e.kind === 'teardown' || e.kind === 'ended';
  const before = Math.max(0, ...entries.filter((e) => !isLast(e)).map((e) => e.atMs));
  for (const e of entries) if (isLast(e) && e.atMs < before) e.atMs = before;
  // A force kill's SIGKILL comes after the force kill that caused it, though its time may read a moment earlier.
  const causedBy = (e: TimelineEntry) => (forcedAt !== undefined && e.kind === 'signal-sent' && e.title === 'Sent SIGKILL' && Math.abs(e.atMs - forcedAt) <= FORCED_WITH_STOP_MS ? Math.max(e.atMs, forcedAt) : e.atMs);
  return entries
    .map((e, i) => ({ e, i, at: causedBy(e) }))
    .sort((a, b) => a.at - b.at || (ORDER[a.e.kind] ?? 5) - (ORDER[b.e.kind] ?? 5) || a.i - b.i)
    .map(({ e }) => e);
}

const STEP_OF_SIGNAL: Record<string, string> = { SIGINT: 'interrupt', SIGTERM: 'terminate', SIGKILL: 'kill' };

function signalDetail(step: string | null, signal?: string): string {
  const s = step ?? (signal ? STEP_OF_SIGNAL[signal] : undefined);
  if (signal === 'SIGCONT') return 'wakes stopped processes so they see the signal';
  if (s === 'teardown') return 'to the processes left after the exit (teardown)';
  if (s === 'interrupt') return 'interrupt step: asks it to stop';
  if (s === 'terminate') return 'terminate step';
  if (s === 'kill') return 'kill step';
  return '';
}

function teardownWords(killed: number, survivors: number, elapsedMs: number, complete: boolean): string {
  const parts = [`${killed} killed`, `${survivors} survivor${survivors === 1 ? '' : 's'}`, `in ${duration(elapsedMs)}`];
  if (!complete) parts.push('incomplete');
  return parts.join(', ');
}

/** "+1.23 s" */
export function relative(ms: number): string {
  return `+${duration(Math.max(0, ms))}`;
}
