// What a run's detail opens on, and the summary of an ended run that did not
// complete: the verdict in words, then the tail of its output with the error
// lines in view (as a CI log opens on the failed step). Pure, so it is tested
// without a page.

import type { CoreReport, Culprit, RunResult } from '../../../../shared/result';
import { findShellCrash } from '../../../../shared/crash/shell';
import type { Traceback } from '../../../../shared/crash/traceback';
import type { Tab } from '../../router';
import { plainText } from './ansi';
import { verdictSentence } from './describe';

/** The tab a run opens on when the link names none: the summary for an ended run that did not complete, else its output. */
export function defaultTab(run: Pick<RunResult, 'state' | 'verdict'> | undefined): Tab {
  return run && run.state === 'ended' && run.verdict !== 'completed' ? 'summary' : 'output';
}

/** The tabs a run has: Summary once it ended badly, Script for a Python script. */
export function tabsOf(run: Pick<RunResult, 'state' | 'verdict' | 'kind' | 'code'>): Tab[] {
  const tabs: Tab[] = [];
  if (run.state === 'ended' && run.verdict !== 'completed') tabs.push('summary');
  tabs.push('output');
  if (run.kind === 'python' || run.code !== undefined) tabs.push('script');
  tabs.push('tree', 'verdict', 'timeline');
  return tabs;
}

/**
 * A line that reads like an error: shown highlighted, and kept in view when it
 * comes before the tail. Never the caret under a line of code: it points, it
 * says nothing (a crash report's own error line is found by the parser).
 */
const ERROR_LINE =
  /\b(error|errors|exception|fatal|failed|failure|panic|panicked|segmentation fault|core dumped|aborted|killed|denied|not found|no such file|cannot|can't|undefined reference|assert(ion)?)\b|^E\s/i;

export function isErrorLine(plain: string): boolean {
  return ERROR_LINE.test(plain);
}

export interface TailLine {
  /** 1-based line number in its stream. */
  no: number;
  /** The line as written, escapes and all (the view colours it). */
  text: string;
  error: boolean;
  /** In the crash report that ends the stream: the error's line, or the innermost frame of the user's (its place and its source). */
  crash?: 'error' | 'frame';
}

/** How a line of a stream stands in the crash report that ends it: its error, its frame of the user's, another line of it, or outside it. */
export function crashMark(report: Traceback | null | undefined, no: number): 'error' | 'frame' | 'report' | null {
  if (!report || no < report.from || no > report.to) return null;
  if (no === report.errorLine) return 'error';
  if (report.frame && (no === report.frame.reportLine || no === report.frame.sourceLine)) return 'frame';
  return 'report';
}

export interface TailBlock {
  lines: TailLine[];
  /** Lines left out before this block (0 for a block that starts at line 1). */
  skippedBefore: number;
}

export interface StreamTail {
  stream: 'stdout' | 'stderr';
  totalLines: number;
  /** One block (the tail), or two when the last error line came before it: the lines around it, then the tail. */
  blocks: TailBlock[];
}

function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * The last `count` lines of a stream; the lines around its last error line too
 * when that is earlier, or around `focusLine` (1-based: the script's frame in a
 * crash report) when it is given.
 */
export function streamTail(stream: 'stdout' | 'stderr', text: string, count = 30, context = 3, focusLine?: number, report?: Traceback | null): StreamTail | null {
  const lines = splitLines(text);
  if (lines.length === 0) return null;
  const line = (i: number): TailLine => {
    const raw = lines[i]!;
    // Inside the crash report, only its error and its frame are marked (not "Traceback", not the caret).
    const mark = crashMark(report, i + 1);
    if (mark === 'error' || mark === 'frame') return { no: i + 1, text: raw, error: true, crash: mark };
    return { no: i + 1, text: raw, error: mark === null && isErrorLine(plainText(raw)) };
  };
  const from = Math.max(0, lines.length - count);
  const tail: TailLine[] = [];
  for (let i = from; i < lines.length; i++) tail.push(line(i));
  const blocks: TailBlock[] = [];
  const focus = focusLine !== undefined && focusLine <= lines.length ? focusLine - 1 : undefined;
  if (from > 0 && (focus !== undefined ? focus < from : !tail.some((l) => l.error))) {
    let last = focus ?? -1;
    for (let i = from - 1; i >= 0 && focus === undefined; i--) {
      if (isErrorLine(plainText(lines[i]!))) {
        last = i;
        break;
      }
    }
    if (last >= 0) {
      const start = Math.max(0, last - context);
      const end = Math.min(from, last + context + 1);
      const around: TailLine[] = [];
      for (let i = start; i < end; i++) around.push(line(i));
      blocks.push({ lines: around, skippedBefore: start });
      blocks.push({ lines: tail, skippedBefore: from - end });
      return { stream, totalLines: lines.length, blocks };
    }
  }
  blocks.push({ lines: tail, skippedBefore: from });
  return { stream, totalLines: lines.length, blocks };
}

/**
 * The streams to show in a summary, the one more likely to hold the error
 * first: stderr, unless it is empty. `crash`: the report that ends one of
 * them, whose frame of the user's is kept in view.
 */
export function summaryTails(run: Pick<RunResult, 'stdout' | 'stderr'>, count = 30, stderrFocus?: number, crash?: { stream: 'stdout' | 'stderr'; traceback: Traceback } | null): StreamTail[] {
  const of = (stream: 'stdout' | 'stderr') => (crash?.stream === stream ? crash.traceback : null);
  const focus = (stream: 'stdout' | 'stderr') => (stream === 'stderr' && stderrFocus !== undefined ? stderrFocus : of(stream)?.frame?.reportLine);
  return [streamTail('stderr', run.stderr, count, 3, focus('stderr'), of('stderr')), streamTail('stdout', run.stdout, count, 3, focus('stdout'), of('stdout'))].filter((t): t is StreamTail => t !== null);
}

export interface ScriptFrame {
  /** The script's line (1-based) where it stopped. */
  scriptLine: number;
  /** The stderr line (1-based) that names it, to mark in the output's tail. */
  stderrLine: number;
}

/**
 * Where the script stopped (`File "<script>", line N`): the last frame a
 * traceback names (most recent call last), or the first one in the current
 * thread of faulthandler's report of a crash (most recent call first). Other
 * threads' stacks name where they waited, not where it crashed.
 */
export function scriptFrame(stderr: string): ScriptFrame | null {
  let found: ScriptFrame | null = null;
  let order: 'last' | 'first' | 'taken' | 'other-thread' = 'last';
  const lines = stderr.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (/^(Current thread 0x[0-9a-f]+|Stack) \(most recent call first\):/.test(line)) order = 'first';
    else if (/^Thread 0x[0-9a-f]+ \(most recent call first\):/.test(line)) order = 'other-thread';
    else if (/^Traceback \(most recent call last\):/.test(line)) order = 'last';
    else {
      const m = /File "<script>", line (\d+)/.exec(line);
      if (!m || order === 'taken' || order === 'other-thread') continue;
      found = { scriptLine: Number(m[1]), stderrLine: i + 1 };
      if (order === 'first') order = 'taken';
    }
  }
  return found;
}

/** The script's line where it stopped (see scriptFrame). */
export function scriptErrorLine(stderr: string): number | null {
  return scriptFrame(stderr)?.scriptLine ?? null;
}

/** Signal numbers on Linux, for the exit status a shell reports (128 + n). */
const SIGNAL_NUMBERS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGILL: 4, SIGTRAP: 5, SIGABRT: 6, SIGBUS: 7, SIGFPE: 8, SIGKILL: 9, SIGUSR1: 10, SIGSEGV: 11, SIGUSR2: 12, SIGPIPE: 13, SIGALRM: 14, SIGTERM: 15, SIGXCPU: 24, SIGXFSZ: 25, SIGSYS: 31 };

/** The crash signals by number, for a shell's 128 + n. */
const CHILD_CRASHES: Record<number, string> = { 4: 'SIGILL', 6: 'SIGABRT', 7: 'SIGBUS', 8: 'SIGFPE', 11: 'SIGSEGV' };

const FAULT_REPORT = /Fatal Python error|Current thread 0x|Thread 0x[0-9a-f]+ \(most recent call first\)/;

export interface CrashFacts {
  /** The card's title: "The crash", or for a SIGKILL nobody here sent, "The kill". */
  title: string;
  /** "139 (128 + 11, SIGSEGV)": what a shell would have reported. */
  status: string;
  /** The process that died of it: the result's culprit, else a shell's word in stderr, else the last sample of the tree this page saw. */
  culprit: { pid: number | null; command: string | null } | null;
  /** Whether the crash looks like Python's (an interpreter ran it). */
  python: boolean;
  /** Python printed its own fatal-error report (PYTHONFAULTHANDLER or a fatal error). */
  faultReport: boolean;
}

const PYTHON_WORD = /(^|[\s/])python[\d.]*(\s|$)/;

/**
 * What a crash's summary says beyond the verdict: exit status as a shell gives
 * it, the culprit, and Python's report or how to get one. A shell whose child
 * crashed or was killed (its 128 + n, or its word in stderr whatever it then
 * exited with) gets the card for that child.
 */
export function crashFacts(run: Pick<RunResult, 'verdict' | 'signal' | 'exitCode' | 'kind' | 'argv' | 'stderr' | 'culprit'>, lastRoot?: { pid: number; command: string }): CrashFacts | null {
  const faultReport = FAULT_REPORT.test(run.stderr);
  if (run.verdict === 'failed' && run.exitCode !== null) {
    // The shell's own word (kept in the result, else read from stderr) names the child; its 128 + n only the signal.
    const said: Pick<Culprit, 'pid' | 'command' | 'signal'> | null = run.culprit?.source === 'shell' ? run.culprit : findShellCrash(run.stderr);
    const n = run.exitCode - 128;
    const byStatus = CHILD_CRASHES[n];
    const signal = said?.signal ?? byStatus;
    if (signal === undefined) return null;
    const status = byStatus !== undefined && (said === null || said.signal === byStatus) ? `${run.exitCode} (128 + ${n}, ${byStatus}, in a process it ran)` : `${signal}, in a process it ran; it went on to exit with ${run.exitCode}`;
    const command = said?.command ?? null;
    return {
      title: signal === 'SIGKILL' ? 'The kill' : 'The crash',
      status,
      culprit: said && (said.pid !== null || command !== null) ? { pid: said.pid, command } : null,
      python: PYTHON_WORD.test(command ?? run.argv?.join(' ') ?? ''),
      faultReport,
    };
  }
  if (run.verdict !== 'crashed' && run.verdict !== 'signaled' && !(run.verdict === 'killed' && run.culprit)) return null;
  const n = run.signal ? SIGNAL_NUMBERS[run.signal] : undefined;
  const status = n !== undefined ? `${128 + n} (128 + ${n}, ${run.signal})` : run.exitCode !== null ? String(run.exitCode) : (run.signal ?? 'unknown');
  const culprit = run.culprit ? { pid: run.culprit.pid, command: run.culprit.command } : lastRoot ? { pid: lastRoot.pid, command: lastRoot.command } : null;
  const python = run.kind === 'python' || /(^|\/)python[\d.]*$/.test(run.argv?.[0] ?? '') || /(^|\/)python[\d.]*$/.test(culprit?.command?.split(' ')[0] ?? '');
  return { title: run.signal === 'SIGKILL' ? 'The kill' : 'The crash', status, culprit, python, faultReport };
}

/**
 * The core dump in a sentence: where it was written, why none was, or which
 * program core_pattern hands it to (and how to read it back there).
 */
export function coreSentence(core: CoreReport, pid?: number): string {
  if (core.dumped === true) return `Written to ${core.where ?? 'the place core_pattern names'}.`;
  if (core.dumped === false) {
    const where = core.where !== undefined ? ` at ${core.where}` : '';
    const why = core.limitBytes === 0 ? ': its core file size limit was 0 when it started (run it again with warden run --core, or New run\'s Allow a core dump, to get one)' : '';
    return `None was written${where}${why}.`;
  }
  if (core.pattern.startsWith('|') && core.where !== undefined) {
    const program = core.where.slice(core.where.lastIndexOf('/') + 1);
    const read =
      program === 'systemd-coredump'
        ? ` Read it with coredumpctl info ${pid ?? 'PID'}.`
        : program === 'apport'
          ? ' Apport keeps it in /var/crash.'
          : '';
    return `core_pattern hands it to ${core.where}, which decides whether to keep it.${read}`;
  }
  return `core_pattern is ${core.pattern}: where it went could not be told from here.`;
}

/**
 * The Summary's heading and its notes, said once: the engine's note that
 * restates the verdict ("Crashed with SIGSEGV after 0.4 s, before the 1 min
 * limit.") becomes the heading in place of the shorter sentence, and the rest
 * of that note stays a note.
 */
export function summaryHeading(run: RunResult): { heading: string; notes: string[] } {
  const heading = verdictSentence(run);
  const at = heading.indexOf(' after ');
  if (run.state !== 'ended' || at < 0) return { heading, notes: run.notes };
  const headingLead = heading.slice(0, at);
  const leads = [headingLead, ...(run.verdict === 'failed' && run.exitCode !== null ? [`Exit code ${run.exitCode}`] : [])];
  for (let i = 0; i < run.notes.length; i++) {
    const note = run.notes[i]!;
    const lead = leads.find((l) => note.startsWith(`${l} after `));
    if (lead === undefined) continue;
    // The first sentence ends at a full stop before a space or the end ("0.4 s" has none).
    const end = note.search(/\.(\s|$)/);
    const first = end < 0 ? note : note.slice(0, end + 1);
    const rest = end < 0 ? '' : note.slice(end + 1).trim();
    const notes = [...run.notes.slice(0, i), ...(rest ? [rest] : []), ...run.notes.slice(i + 1)];
    return { heading: `${headingLead}${first.slice(lead.length)}`, notes };
  }
  return { heading, notes: run.notes };
}
