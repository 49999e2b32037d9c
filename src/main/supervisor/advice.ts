// The first step for the reader, picked by how the run ended. Hedged wherever
// the evidence is indirect: an exit code does not prove who sent a signal.

import { CRASH_SIGNALS, type OomReport, type RunKind, type StopStep } from '../../shared/result';
import { placeOf, whatHappened } from '../../shared/crash/phrase';
import type { ShellCrash } from '../../shared/crash/shell';
import type { Traceback } from '../../shared/crash/traceback';
import { bytes, seconds } from '../../shared/format';

/** faulthandler's first words; it does not start a line, so look anywhere. */
export const FATAL_PYTHON_ERROR = 'Fatal Python error: ';

export function isCrashSignal(signal: string): boolean {
  return CRASH_SIGNALS.includes(signal);
}

/**
 * After a crash's signal. faulthandler's report may follow output that did not
 * end its line (a progress bar), so it is looked for anywhere in what was kept.
 */
export function crashAdvice(outputKept: string, kind: RunKind, report?: Traceback | null, cwd?: string): string {
  if (outputKept.includes(FATAL_PYTHON_ERROR)) {
    const frame = report?.how === 'fatal' ? report.frame : null;
    if (frame) {
      const place = frame.file === '<script>' ? `line ${frame.line} of the script` : placeOf(frame, cwd);
      const fn = frame.fn !== undefined && frame.fn !== '<module>' ? ` (in ${frame.fn})` : '';
      return `Check Python's crash report in stderr (from the line 'Fatal Python error'): it crashed in native code called from ${place}${fn}, such as an extension module the script uses.`;
    }
    return "Check Python's crash report in stderr (from the line 'Fatal Python error') for the call that crashed in native code, such as an extension module the script uses.";
  }
  return kind === 'python'
    ? 'Check whether native code the script calls crashes, such as an extension module it uses.'
    : 'Check whether native code the command runs crashes, such as a compiled program or an extension module it loads.';
}

/** After SIGKILL nobody here sent: memory figures when the cgroup confirmed an OOM kill, else hedged. */
export function killAdvice(oom?: Partial<OomReport>, kind: RunKind = 'command'): string {
  const peak = oom?.peakBytes !== undefined ? bytes(oom.peakBytes) : undefined;
  const limit = oom?.limitBytes !== undefined ? bytes(oom.limitBytes) : undefined;
  if (oom?.confirmed) {
    const at = limit !== undefined ? ` at its ${limit} memory limit` : '';
    const peakText = peak !== undefined ? `; its peak was ${peak}` : '';
    const fix = limit !== undefined ? 'Make it use less memory, or raise the memory limit.' : 'Make it use less memory, or give it more.';
    return `The out-of-memory killer ended it${at}${peakText}. ${fix}`;
  }
  const figures =
    peak !== undefined && limit !== undefined
      ? ` (its peak was ${peak} of a ${limit} limit)`
      : peak !== undefined
        ? ` (its peak was ${peak})`
        : limit !== undefined
          ? ` (its memory limit is ${limit})`
          : '';
  const who = kind === 'python' ? 'the script' : 'it';
  return `Check whether ${who} uses too much memory${figures}: it was possibly the out-of-memory killer, which sends SIGKILL. If not, ask whoever runs this host what else kills processes.`;
}

/**
 * A confirmed OOM kill of a process of the run while the main process went on
 * (a shell's child): "The out-of-memory killer ended a process of this run at
 * its 64 MiB limit; its peak was 64 MiB. ..."
 */
export function oomNote(oom: Partial<OomReport>): string {
  const at = oom.limitBytes !== undefined ? ` at its ${bytes(oom.limitBytes)} limit` : '';
  const peak = oom.peakBytes !== undefined ? `; its peak was ${bytes(oom.peakBytes)}` : '';
  return `The out-of-memory killer ended a process of this run${at}${peak}. The main process went on without it: check that the output is complete, and make it use less memory or raise the memory limit.`;
}

export function otherSignalAdvice(kind: RunKind): string {
  // A script ends its interpreter with os.kill(); a command may also use the kill command.
  const how = kind === 'python' ? 'the script ends its interpreter itself, for example with os.kill()' : 'the command ends itself, for example with os.kill() or kill';
  return `Check whether ${how}; if not, ask whoever runs this host what sends it signals.`;
}

export function timedOutAdvice(step: StopStep, limitMs: number, kind: RunKind = 'command'): string {
  const raise = `Raise the limit (now ${seconds(limitMs)}) if it needs longer, or make it report progress and finish in parts.`;
  if (kind === 'python' && step !== 'interrupt') {
    // A session script gets the cancel op and SIGINT, never SIGTERM; the kill takes the interpreter with it.
    return `${raise} It did not stop after the cancel and SIGINT (it may catch KeyboardInterrupt, or block in native code), so the interpreter was killed with SIGKILL and the session's variables are gone: let KeyboardInterrupt end the script.`;
  }
  switch (step) {
    case 'interrupt':
      return raise;
    case 'terminate':
      return `${raise} It ignored SIGINT, or did not stop soon after it, so it was sent SIGTERM: handle SIGINT and stop promptly so it can clean up.`;
    case 'kill':
      return `${raise} It ignored SIGINT and SIGTERM, or did not stop soon after them, so it was killed with SIGKILL and had no chance to clean up: handle SIGINT and stop promptly.`;
  }
}

export interface ExitContext {
  kind: RunKind;
  /** The signal n of a 128+n exit code, when it names one. */
  childSignal?: string;
  viaShell: boolean;
  outputKept: string;
  oom?: OomReport;
  /** The crash report that ends its output (a traceback), and the stream it is in. */
  crash?: { stream: 'stdout' | 'stderr'; traceback: Traceback } | null;
  /** A shell's word in stderr that a command it ran died of a crash signal or SIGKILL. */
  shellCrash?: ShellCrash | null;
  /** The run's directory, that a report's files are named from. */
  cwd?: string;
}

/** What a language calls the report it prints as it dies. */
function reportName(tb: Pick<Traceback, 'language' | 'how'>): string {
  if (tb.how === 'fatal' && tb.language === 'python') return "Python's crash report";
  switch (tb.language) {
    case 'python':
      return 'the traceback';
    case 'node':
      return 'the stack';
    case 'pytest':
      return "pytest's report";
    default:
      return tb.how === 'fatal' ? 'the fatal error' : 'the panic';
  }
}

/**
 * The first step when a crash report ends the output: the innermost place in
 * the user's own files, and what was raised there. A session script's frames
 * are in "<script>": its line is the script's.
 */
export function tracebackAdvice(crash: { stream: 'stdout' | 'stderr'; traceback: Traceback }, cwd?: string): string {
  const tb = crash.traceback;
  const report = reportName(tb);
  const more = tb.moreFailed ? ` ${tb.moreFailed} more test${tb.moreFailed === 1 ? '' : 's'} failed too.` : '';
  const where = `${report.replace(/^the /, 'The ')} is at the end of ${crash.stream}.`;
  const what = whatHappened(tb);
  if (!tb.frame) return `${tb.how === 'failed' ? `${what.charAt(0).toUpperCase()}${what.slice(1)}` : `It ${what}`}, in code that is not its own (no frame of its own files is in ${report}): read ${report} at the end of ${crash.stream} for the call of its own that led there.${more}`;
  const place = tb.frame.file === '<script>' ? `line ${tb.frame.line} of the script` : placeOf(tb.frame, cwd);
  const fn = tb.frame.fn !== undefined && tb.frame.fn !== '<module>' ? ` (in ${tb.frame.fn})` : '';
  // A failed test's phrase starts with its name ("t.py::test_a failed with ..."), the others with a verb.
  return `Look at ${place}${fn} first: ${tb.how === 'failed' ? what : `it ${what}`} there. ${where}${more}`;
}

/** "The shell reported that a command it ran died of SIGSEGV (Segmentation fault, core dumped): ./prog, pid 812 (stderr line 3)." */
export function shellCrashNote(shell: ShellCrash): string {
  const how = `${shell.description}${shell.coreDumped ? ', core dumped' : ''}`;
  const who = [shell.command, shell.pid !== null ? `pid ${shell.pid}` : null].filter((x) => x !== null).join(', ');
  return `The shell reported that a command it ran died of ${shell.signal} (${how})${who ? `: ${who}` : ''} (stderr line ${shell.line.toLocaleString('en-US')}).`;
}

/** Advice for a non-zero exit code, read the way a shell reports its children. */
export function exitCodeAdvice(exitCode: number, c: ExitContext): string {
  // A confirmed OOM kill of a process it ran explains the exit better than the code does.
  if (c.oom?.confirmed) return killAdvice(c.oom, c.kind);
  if (c.kind === 'python') return 'Check whether the script ends its interpreter itself, for example with os._exit().';
  if (exitCode === 124) {
    return 'Check the timeout the command sets itself, such as a nested `timeout`: Warden did not stop it.';
  }
  // The report at the end of its output names the place to look: better than any reading of the exit code.
  if (c.crash) return tracebackAdvice(c.crash, c.cwd);
  const signal = c.childSignal ?? c.shellCrash?.signal;
  if (signal !== undefined) {
    if (signal === 'SIGKILL') return killAdvice(c.oom);
    if (isCrashSignal(signal)) return crashAdvice(c.outputKept, c.kind, null, c.cwd);
    return c.viaShell || c.shellCrash
      ? `Check what sent ${signal} to the command the shell ran.`
      : `Read stderr for why it exited with ${exitCode}; if a process it ran died of ${signal}, check what sent that signal.`;
  }
  switch (exitCode) {
    case 126:
      return 'A command it ran was found but could not be executed: check its permissions and its #! line.';
    case 127:
      return 'A command it ran was not found: check its spelling and PATH.';
    case 2:
      return 'Exit code 2 often means a usage error: check the arguments, then read stderr.';
    default:
      return 'Read stderr for the error the command reported.';
  }
}
