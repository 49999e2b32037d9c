// The "Verdicts" table of docs/architecture.md as rows: one per verdict and advice case.
// judge() is pure, so every row is an Observations object and what it must give.

import { describe, expect, it } from 'vitest';
import { CRASH_SIGNALS, type Verdict } from '../../shared/result';
import { judge, type Observations } from './verdict';

function obs(over: Partial<Observations> = {}): Observations {
  return {
    kind: 'command',
    exitCode: 0,
    signal: null,
    elapsedMs: 330,
    limitMs: 60_000,
    outputKept: '',
    viaShell: false,
    ...over,
  };
}

const MiB = 1024 * 1024;

const ADVICE = {
  stderr: 'Read stderr for the error the command reported.',
  usage: 'Exit code 2 often means a usage error: check the arguments, then read stderr.',
  nestedTimeout: 'Check the timeout the command sets itself, such as a nested `timeout`: Warden did not stop it.',
  killHedged:
    'Check whether it uses too much memory: it was possibly the out-of-memory killer, which sends SIGKILL. If not, ask whoever runs this host what else kills processes.',
  crashTraceback:
    "Check Python's crash report in stderr (from the line 'Fatal Python error') for the call that crashed in native code, such as an extension module the script uses.",
  crashNativeCommand: 'Check whether native code the command runs crashes, such as a compiled program or an extension module it loads.',
  crashNativeScript: 'Check whether native code the script calls crashes, such as an extension module it uses.',
  osKillCommand:
    'Check whether the command ends itself, for example with os.kill() or kill; if not, ask whoever runs this host what sends it signals.',
  osKillScript:
    'Check whether the script ends its interpreter itself, for example with os.kill(); if not, ask whoever runs this host what sends it signals.',
  osExit: 'Check whether the script ends its interpreter itself, for example with os._exit().',
  raise1s: 'Raise the limit (now 1 s) if it needs longer, or make it report progress and finish in parts.',
} as const;

interface Row {
  name: string;
  o: Observations;
  verdict: Verdict;
  /** Exact advice, or null. */
  advice?: string | null;
  /** Substrings the advice must hold, when it is not asserted exactly. */
  adviceHas?: string[];
  adviceLacks?: string[];
  /** Exact notes. */
  notes?: string[];
  /** Substrings the notes (joined) must hold. */
  notesHave?: string[];
  notesLack?: string[];
}

const FATAL = 'Fatal Python error: Segmentation fault\n\nCurrent thread 0x00007f (most recent call first):\n  File "crash.py", line 3 in <module>\n';

const PY_TRACEBACK = 'Traceback (most recent call last):\n  File "/app/crash_keyerror.py", line 8, in <module>\n    settings = load({"debug": True})\n  File "/app/crash_keyerror.py", line 5, in load\n    return config["database_url"]\n           ~~~~~~^^^^^^^^^^^^^^^^\nKeyError: \'database_url\'\n';
const PYTEST_REPORT = "=== FAILURES ===\n___ test_missing ___\n\n    def load(c):\n>       return c['database_url']\nE       KeyError: 'database_url'\n\ntest_config.py:5: KeyError\n=== short test summary info ===\nFAILED test_config.py::test_missing - KeyError: 'database_url'\nFAILED test_config.py::test_sum - assert 2 == 3\n2 failed in 0.1s\n";
const FATAL_IN_SCRIPT = 'Fatal Python error: Segmentation fault\n\nCurrent thread 0x00007f (most recent call first):\n  File "/usr/lib/python3.11/ctypes/__init__.py", line 519 in string_at\n  File "<script>", line 3 in f\n  File "<script>", line 4 in <module>\n';

const rows: Row[] = [
  // completed
  { name: 'completed: exit 0', o: obs({ exitCode: 0 }), verdict: 'completed', advice: null, notes: [] },
  { name: 'completed: exit 0 with no limit', o: obs({ exitCode: 0, limitMs: null }), verdict: 'completed', advice: null, notes: [] },

  // completed by an exit code the run was told means success (okExitCodes)
  {
    name: 'completed: exit 1 that ok-exit names',
    o: obs({ exitCode: 1, okExitCodes: [1] }),
    verdict: 'completed',
    advice: null,
    notes: ['Exit code 1 after 0.33 s, before the 1 min limit, which this run was told means success (ok-exit 1).'],
  },
  {
    name: 'completed: exit 2 among several ok-exit codes, no limit',
    o: obs({ exitCode: 2, okExitCodes: [1, 2], limitMs: null }),
    verdict: 'completed',
    advice: null,
    notes: ['Exit code 2 after 0.33 s, which this run was told means success (ok-exit 1, 2).'],
  },
  {
    name: 'completed: an ok exit with the OOM counter risen keeps the OOM note',
    o: obs({ exitCode: 1, okExitCodes: [1], oom: { confirmed: true, peakBytes: 300 * MiB, limitBytes: 256 * MiB } }),
    verdict: 'completed',
    advice: null,
    notesHave: ['means success (ok-exit 1)', 'out-of-memory'],
  },
  { name: 'failed: an exit code ok-exit does not name', o: obs({ exitCode: 3, okExitCodes: [1] }), verdict: 'failed', advice: ADVICE.stderr, notes: [] },
  { name: 'failed: no exit status, whatever ok-exit names', o: obs({ exitCode: null, okExitCodes: [1] }), verdict: 'failed', notesHave: ['without an exit status'] },
  { name: 'killed: a signal wins over ok-exit', o: obs({ exitCode: null, signal: 'SIGKILL', okExitCodes: [137] }), verdict: 'killed' },
  {
    name: 'timed-out: the deadline wins over ok-exit',
    o: obs({ exitCode: 1, okExitCodes: [1], stop: { reason: 'deadline', requestedAtMs: 60_000, endedBy: 'interrupt' } }),
    verdict: 'timed-out',
  },

  // failed by exit code
  { name: 'failed: exit 1', o: obs({ exitCode: 1 }), verdict: 'failed', advice: ADVICE.stderr, notes: [] },
  { name: 'failed: exit 2 gets usage advice', o: obs({ exitCode: 2 }), verdict: 'failed', advice: ADVICE.usage, notes: [] },
  {
    name: 'failed: exit 126 cannot execute',
    o: obs({ exitCode: 126, viaShell: true }),
    verdict: 'failed',
    advice: 'A command it ran was found but could not be executed: check its permissions and its #! line.',
  },
  {
    name: 'failed: exit 127 not found',
    o: obs({ exitCode: 127, viaShell: true }),
    verdict: 'failed',
    advice: 'A command it ran was not found: check its spelling and PATH.',
  },
  {
    name: 'failed: exit 124 before the limit is not a timeout',
    o: obs({ exitCode: 124, elapsedMs: 3_100, limitMs: 60_000 }),
    verdict: 'failed',
    advice: ADVICE.nestedTimeout,
    notes: [
      'Exit code 124 after 3.1 s, before the 1 min limit. The limit did not stop it: exit code 124 usually comes from a timeout the command sets itself, such as a nested `timeout`.',
    ],
  },
  {
    name: 'failed: exit 137 before the limit is not a timeout (SIGKILL, possibly OOM)',
    o: obs({ exitCode: 137, elapsedMs: 330, limitMs: 60_000 }),
    verdict: 'failed',
    advice: ADVICE.killHedged,
    notes: [
      'Exit code 137 after 0.33 s, before the 1 min limit. This usually means it or a process it ran was killed with SIGKILL, possibly by the out-of-memory killer; Warden sent no signal.',
    ],
  },
  {
    name: 'failed: exit 137 from a shell names the command the shell ran',
    o: obs({ exitCode: 137, viaShell: true }),
    verdict: 'failed',
    advice: ADVICE.killHedged,
    notesHave: ['Exit code 137 after 0.33 s, before the 1 min limit.', 'a command the shell ran was killed with SIGKILL', 'possibly by the out-of-memory killer'],
  },
  {
    name: 'failed: exit 124 with no limit set',
    o: obs({ exitCode: 124, elapsedMs: 3_000, limitMs: null }),
    verdict: 'failed',
    advice: ADVICE.nestedTimeout,
    notes: [
      'Exit code 124 after 3 s. No limit was set here, so Warden did not stop it: exit code 124 usually comes from a timeout the command sets itself, such as a nested `timeout`.',
    ],
  },
  {
    name: 'failed: exit 137 with no limit set',
    o: obs({ exitCode: 137, elapsedMs: 330, limitMs: null }),
    verdict: 'failed',
    advice: ADVICE.killHedged,
    notesHave: ['Exit code 137 after 0.33 s.', 'killed with SIGKILL, possibly by the out-of-memory killer'],
    notesLack: ['limit'],
  },
  {
    name: 'killed: a shell\'s exit 137 with OOM confirmed is the OOM kill, and names the memory figures',
    o: obs({ exitCode: 137, viaShell: true, oom: { confirmed: true, peakBytes: Math.round(255.8 * MiB), limitBytes: 256 * MiB } }),
    verdict: 'killed',
    advice: 'The out-of-memory killer ended it at its 256 MiB memory limit; its peak was 255.8 MiB. Make it use less memory, or raise the memory limit.',
    notes: ["Exit code 137 after 0.33 s, before the 1 min limit. The out-of-memory killer killed a command the shell ran: the memory cgroup's out-of-memory counter rose."],
  },
  {
    name: 'killed: exit 137 not from a shell with OOM confirmed',
    o: obs({ exitCode: 137, oom: { confirmed: true, peakBytes: 64 * MiB, limitBytes: 64 * MiB } }),
    verdict: 'killed',
    adviceHas: ['out-of-memory killer ended it at its 64 MiB memory limit', 'its peak was 64 MiB'],
    notesHave: ['The out-of-memory killer killed it or a process it ran'],
  },
  {
    name: 'failed: exit 137 with the counter not risen stays hedged, with the figures',
    o: obs({ exitCode: 137, viaShell: true, oom: { confirmed: false, peakBytes: 10 * MiB, limitBytes: 64 * MiB } }),
    verdict: 'failed',
    adviceHas: ['possibly the out-of-memory killer', '10 MiB', '64 MiB'],
    notesHave: ['possibly by the out-of-memory killer'],
  },
  {
    name: 'completed: a shell\'s child OOM-killed while the shell exits 0 gets a note naming the figures',
    o: obs({ exitCode: 0, viaShell: true, oom: { confirmed: true, peakBytes: 64 * MiB, limitBytes: 64 * MiB } }),
    verdict: 'completed',
    advice: null,
    notes: [
      'The out-of-memory killer ended a process of this run at its 64 MiB limit; its peak was 64 MiB. The main process went on without it: check that the output is complete, and make it use less memory or raise the memory limit.',
    ],
  },
  {
    name: 'completed: exit 0 under a memory limit, counter not risen: no note',
    o: obs({ exitCode: 0, oom: { confirmed: false, peakBytes: 20 * MiB, limitBytes: 64 * MiB } }),
    verdict: 'completed',
    advice: null,
    notes: [],
  },
  {
    name: 'failed: exit 1 after a child was OOM-killed: memory advice and the note',
    o: obs({ exitCode: 1, viaShell: true, oom: { confirmed: true, peakBytes: 64 * MiB, limitBytes: 64 * MiB } }),
    verdict: 'failed',
    adviceHas: ['out-of-memory killer ended it at its 64 MiB memory limit'],
    notes: [
      'The out-of-memory killer ended a process of this run at its 64 MiB limit; its peak was 64 MiB. The main process went on without it: check that the output is complete, and make it use less memory or raise the memory limit.',
    ],
  },
  {
    name: 'failed: 139 from bash means a command the shell ran died of SIGSEGV',
    o: obs({ exitCode: 139, viaShell: true, elapsedMs: 500 }),
    verdict: 'failed',
    advice: ADVICE.crashNativeCommand,
    notes: ['Exit code 139 after 0.5 s, before the 1 min limit. From a shell, exit code 139 (128 + 11) means a command the shell ran died of SIGSEGV.'],
  },
  {
    name: 'failed: 139 from bash after faulthandler output points at the traceback',
    o: obs({ exitCode: 139, viaShell: true, outputKept: `working\n${FATAL}` }),
    verdict: 'failed',
    advice: ADVICE.crashTraceback,
    notesHave: ['a command the shell ran died of SIGSEGV'],
  },
  {
    name: 'failed: 130 from bash means SIGINT',
    o: obs({ exitCode: 130, viaShell: true }),
    verdict: 'failed',
    advice: 'Check what sent SIGINT to the command the shell ran.',
    notesHave: ['From a shell, exit code 130 (128 + 2) means a command the shell ran died of SIGINT.'],
  },
  {
    name: 'failed: 143 from bash means SIGTERM',
    o: obs({ exitCode: 143, viaShell: true }),
    verdict: 'failed',
    advice: 'Check what sent SIGTERM to the command the shell ran.',
    notesHave: ['From a shell, exit code 143 (128 + 15) means a command the shell ran died of SIGTERM.'],
  },
  {
    name: 'failed: 139 from a non-shell is hedged',
    o: obs({ exitCode: 139, viaShell: false }),
    verdict: 'failed',
    advice: ADVICE.crashNativeCommand,
    notesHave: ['Exit code 139 is 128 + 11: it may mean a process it ran died of SIGSEGV, though a program can also exit with 139 by itself.'],
    notesLack: ['the shell ran'],
  },
  {
    name: 'failed: 143 from a non-shell is hedged',
    o: obs({ exitCode: 143, viaShell: false }),
    verdict: 'failed',
    advice: 'Read stderr for why it exited with 143; if a process it ran died of SIGTERM, check what sent that signal.',
    notesHave: ['Exit code 143 is 128 + 15: it may mean a process it ran died of SIGTERM'],
    notesLack: ['the shell ran'],
  },
  {
    name: 'failed: python session exit code gets os._exit() advice',
    o: obs({ kind: 'python', exitCode: 3 }),
    verdict: 'failed',
    advice: ADVICE.osExit,
    notes: ['The Python interpreter exited with code 3 after 0.33 s, before the 1 min limit, while the script ran.'],
  },
  {
    name: 'failed: python session exit 137 still gets os._exit() advice and the 137 note',
    o: obs({ kind: 'python', exitCode: 137 }),
    verdict: 'failed',
    advice: ADVICE.osExit,
    notesHave: ['Exit code 137 after 0.33 s, before the 1 min limit.', 'possibly by the out-of-memory killer'],
  },

  {
    name: 'failed: no exit status and no signal',
    o: obs({ exitCode: null, signal: null }),
    verdict: 'failed',
    advice: 'Read stderr for what happened; its exit status could not be read.',
    notes: ['It ended without an exit status or a signal that Warden could read, after 0.33 s, before the 1 min limit.'],
  },

  // killed: SIGKILL nobody here sent
  {
    name: 'killed: SIGKILL nobody here sent, hedged memory advice',
    o: obs({ exitCode: null, signal: 'SIGKILL', elapsedMs: 330 }),
    verdict: 'killed',
    advice: ADVICE.killHedged,
    notes: ['Killed by SIGKILL after 0.33 s, before the 1 min limit. Warden did not send it; possibly the out-of-memory killer.'],
  },
  {
    name: 'killed: SIGKILL with OOM confirmed, peak and limit',
    o: obs({ exitCode: null, signal: 'SIGKILL', oom: { confirmed: true, peakBytes: Math.round(255.8 * MiB), limitBytes: 256 * MiB } }),
    verdict: 'killed',
    advice: 'The out-of-memory killer ended it at its 256 MiB memory limit; its peak was 255.8 MiB. Make it use less memory, or raise the memory limit.',
    notes: ["Killed by the out-of-memory killer after 0.33 s, before the 1 min limit: the memory cgroup's out-of-memory counter rose."],
  },
  {
    name: 'killed: SIGKILL with OOM confirmed, no figures',
    o: obs({ exitCode: null, signal: 'SIGKILL', limitMs: null, oom: { confirmed: true } }),
    verdict: 'killed',
    advice: 'The out-of-memory killer ended it. Make it use less memory, or give it more.',
    notes: ["Killed by the out-of-memory killer after 0.33 s: the memory cgroup's out-of-memory counter rose."],
  },
  {
    name: 'killed: SIGKILL, OOM not confirmed but figures known stays hedged and shows them',
    o: obs({ exitCode: null, signal: 'SIGKILL', oom: { confirmed: false, peakBytes: 100 * MiB, limitBytes: 256 * MiB } }),
    verdict: 'killed',
    adviceHas: ['possibly the out-of-memory killer', '100 MiB', '256 MiB'],
    notesHave: ['Warden did not send it; possibly the out-of-memory killer.'],
  },

  {
    name: 'killed: SIGKILL with a peak but no memory limit (a run without one) shows the peak alone',
    o: obs({ exitCode: null, signal: 'SIGKILL', oom: { confirmed: false, peakBytes: 100 * MiB } }),
    verdict: 'killed',
    advice:
      'Check whether it uses too much memory (its peak was 100 MiB): it was possibly the out-of-memory killer, which sends SIGKILL. If not, ask whoever runs this host what else kills processes.',
  },
  {
    name: 'killed: SIGKILL with a memory limit but no peak (a kernel without memory.peak) shows the limit alone',
    o: obs({ exitCode: null, signal: 'SIGKILL', oom: { confirmed: false, limitBytes: 256 * MiB } }),
    verdict: 'killed',
    advice:
      'Check whether it uses too much memory (its memory limit is 256 MiB): it was possibly the out-of-memory killer, which sends SIGKILL. If not, ask whoever runs this host what else kills processes.',
  },
  {
    name: 'completed: a shell\'s child OOM-killed with no figures read gets a note without them',
    o: obs({ exitCode: 0, viaShell: true, oom: { confirmed: true } }),
    verdict: 'completed',
    advice: null,
    notes: [
      'The out-of-memory killer ended a process of this run. The main process went on without it: check that the output is complete, and make it use less memory or raise the memory limit.',
    ],
  },
  {
    name: 'completed: a shell\'s child OOM-killed with a peak but no limit names the peak alone',
    o: obs({ exitCode: 0, viaShell: true, oom: { confirmed: true, peakBytes: 64 * MiB } }),
    verdict: 'completed',
    advice: null,
    notes: [
      'The out-of-memory killer ended a process of this run; its peak was 64 MiB. The main process went on without it: check that the output is complete, and make it use less memory or raise the memory limit.',
    ],
  },

  // crashed: the five crash signals, with and without faulthandler's words
  ...CRASH_SIGNALS.flatMap((signal): Row[] => [
    {
      name: `crashed: ${signal} without faulthandler output`,
      o: obs({ exitCode: null, signal, elapsedMs: 500, outputKept: 'working\n' }),
      verdict: 'crashed',
      advice: ADVICE.crashNativeCommand,
      notes: [`Crashed with ${signal} after 0.5 s, before the 1 min limit.`],
    },
    {
      name: `crashed: ${signal} with "Fatal Python error: " at a line start`,
      o: obs({ exitCode: null, signal, elapsedMs: 500, outputKept: `working\n${FATAL}` }),
      verdict: 'crashed',
      advice: ADVICE.crashTraceback,
      notes: [`Crashed with ${signal} after 0.5 s, before the 1 min limit.`],
    },
    {
      name: `crashed: ${signal} with "Fatal Python error: " mid-line after output without a newline`,
      o: obs({ exitCode: null, signal, outputKept: 'progress 50%Fatal Python error: Segmentation fault\n' }),
      verdict: 'crashed',
      advice: ADVICE.crashTraceback,
    },
  ]),
  {
    name: 'crashed: python session without a traceback names the script',
    o: obs({ kind: 'python', exitCode: null, signal: 'SIGSEGV', outputKept: '' }),
    verdict: 'crashed',
    advice: ADVICE.crashNativeScript,
  },
  {
    name: 'crashed: with no limit the note names no limit',
    o: obs({ exitCode: null, signal: 'SIGABRT', limitMs: null, elapsedMs: 1_500 }),
    verdict: 'crashed',
    notes: ['Crashed with SIGABRT after 1.5 s.'],
  },
  {
    name: 'crashed: "Fatal Python error" without its colon and space is not faulthandler',
    o: obs({ exitCode: null, signal: 'SIGSEGV', outputKept: 'Fatal Python error\n' }),
    verdict: 'crashed',
    advice: ADVICE.crashNativeCommand,
  },

  // signaled: any other signal nobody here sent
  ...['SIGTERM', 'SIGHUP', 'SIGUSR1'].map(
    (signal): Row => ({
      name: `signaled: ${signal} nobody here sent`,
      o: obs({ exitCode: null, signal, elapsedMs: 2_000 }),
      verdict: 'signaled',
      advice: ADVICE.osKillCommand,
      notes: [`Ended by ${signal} after 2 s, before the 1 min limit. Warden did not send it.`],
      adviceLacks: ['memory', 'native'],
    }),
  ),
  {
    name: 'killed: python session, SIGKILL nobody here sent names the script',
    o: obs({ kind: 'python', exitCode: null, signal: 'SIGKILL' }),
    verdict: 'killed',
    advice:
      'Check whether the script uses too much memory: it was possibly the out-of-memory killer, which sends SIGKILL. If not, ask whoever runs this host what else kills processes.',
  },
  {
    name: 'timed-out: python session killed after the grace says the variables are gone, and no SIGTERM',
    o: obs({ kind: 'python', exitCode: null, signal: 'SIGKILL', elapsedMs: 1_600, limitMs: 1_000, stop: { reason: 'deadline', requestedAtMs: 1_000, endedBy: 'kill' } }),
    verdict: 'timed-out',
    adviceHas: ['Raise the limit (now 1 s)', 'cancel and SIGINT', 'variables are gone'],
    adviceLacks: ['SIGTERM'],
    notes: ['Stopped at the 1 s limit: it ended at the kill step (SIGKILL) after 1.6 s.'],
  },
  {
    name: 'timed-out: python session that let KeyboardInterrupt end it at the interrupt step gets only the limit advice',
    o: obs({ kind: 'python', exitCode: null, signal: null, elapsedMs: 1_050, limitMs: 1_000, stop: { reason: 'deadline', requestedAtMs: 1_000, endedBy: 'interrupt' } }),
    verdict: 'timed-out',
    advice: ADVICE.raise1s,
  },
  {
    name: 'signaled: python session names the script',
    o: obs({ kind: 'python', exitCode: null, signal: 'SIGTERM' }),
    verdict: 'signaled',
    advice: ADVICE.osKillScript,
  },

  {
    name: 'failed: ending exactly at the limit, before the engine acted, is not "before the limit"',
    o: obs({ exitCode: 137, elapsedMs: 60_000, limitMs: 60_000 }),
    verdict: 'failed',
    notesHave: ['Exit code 137 after 1 min, when the 1 min limit had just passed but before Warden sent any signal.'],
  },

  // timed-out: the deadline engine stopped it
  {
    name: 'timed-out: a stop that began late (a busy event loop) still names the limit, not when it began',
    o: obs({ exitCode: null, signal: 'SIGINT', elapsedMs: 1_510, limitMs: 1_000, stop: { reason: 'deadline', requestedAtMs: 1_500, endedBy: 'interrupt' } }),
    verdict: 'timed-out',
    advice: ADVICE.raise1s,
    notes: ['Stopped at the 1 s limit: it ended at the interrupt step (SIGINT) after 1.51 s.'],
  },
  {
    name: 'timed-out: ended by another signal than the step sent (its SIGINT handler raised SIGTERM)',
    o: obs({ exitCode: null, signal: 'SIGTERM', elapsedMs: 1_010, limitMs: 1_000, stop: { reason: 'deadline', requestedAtMs: 1_000, endedBy: 'interrupt' } }),
    verdict: 'timed-out',
    advice: ADVICE.raise1s,
    notes: ['Stopped at the 1 s limit: it ended at the interrupt step (SIGINT) after 1.01 s, by SIGTERM.'],
  },
  {
    name: 'timed-out: ended by the interrupt step',
    o: obs({ exitCode: null, signal: 'SIGINT', elapsedMs: 1_010, limitMs: 1_000, stop: { reason: 'deadline', requestedAtMs: 1_000, endedBy: 'interrupt' } }),
    verdict: 'timed-out',
    advice: ADVICE.raise1s,
    notes: ['Stopped at the 1 s limit: it ended at the interrupt step (SIGINT) after 1.01 s.'],
  },
  {
    name: 'timed-out: ended by the interrupt step with an exit code (Python KeyboardInterrupt)',
    o: obs({ exitCode: 130, signal: null, elapsedMs: 1_050, limitMs: 1_000, stop: { reason: 'deadline', requestedAtMs: 1_000, endedBy: 'interrupt' } }),
    verdict: 'timed-out',
    advice: ADVICE.raise1s,
    notes: ['Stopped at the 1 s limit: it ended at the interrupt step (SIGINT) after 1.05 s, with exit code 130.'],
  },
  {
    name: 'timed-out: ended by the terminate step (ignored SIGINT)',
    o: obs({ exitCode: null, signal: 'SIGTERM', elapsedMs: 3_010, limitMs: 1_000, stop: { reason: 'deadline', requestedAtMs: 1_000, endedBy: 'terminate' } }),
    verdict: 'timed-out',
    advice: `${ADVICE.raise1s} It ignored SIGINT, or did not stop soon after it, so it was sent SIGTERM: handle SIGINT and stop promptly so it can clean up.`,
    notes: ['Stopped at the 1 s limit: it ended at the terminate step (SIGTERM) after 3.01 s.'],
  },
  {
    name: 'timed-out: ended by the kill step (ignored SIGINT and SIGTERM)',
    o: obs({ exitCode: null, signal: 'SIGKILL', elapsedMs: 6_010, limitMs: 1_000, stop: { reason: 'deadline', requestedAtMs: 1_000, endedBy: 'kill' } }),
    verdict: 'timed-out',
    advice: `${ADVICE.raise1s} It ignored SIGINT and SIGTERM, or did not stop soon after them, so it was killed with SIGKILL and had no chance to clean up: handle SIGINT and stop promptly.`,
    notes: ['Stopped at the 1 s limit: it ended at the kill step (SIGKILL) after 6.01 s.'],
  },
  {
    name: 'timed-out: exit 137 at the kill step is still a timeout (the stop record wins)',
    o: obs({ exitCode: 137, signal: null, viaShell: true, elapsedMs: 6_010, limitMs: 1_000, stop: { reason: 'deadline', requestedAtMs: 1_000, endedBy: 'kill' } }),
    verdict: 'timed-out',
    notes: ['Stopped at the 1 s limit: it ended at the kill step (SIGKILL) after 6.01 s, with exit code 137.'],
    notesLack: ['out-of-memory', 'before the'],
  },
  {
    name: 'timed-out: no exit status (stuck after SIGKILL)',
    o: obs({ exitCode: null, signal: null, elapsedMs: 11_000, limitMs: 1_000, stop: { reason: 'deadline', requestedAtMs: 1_000, endedBy: 'kill' } }),
    verdict: 'timed-out',
    notes: ['Stopped at the 1 s limit: it ended at the kill step (SIGKILL) after 11 s, without an exit status.'],
    notesLack: ['null'],
  },

  // stopped: a person, a client or shutdown
  {
    name: 'stopped: by a user',
    o: obs({ exitCode: null, signal: 'SIGINT', elapsedMs: 2_010, stop: { reason: 'user', requestedAtMs: 2_000, endedBy: 'interrupt' } }),
    verdict: 'stopped',
    advice: null,
    notes: ['Stopped on request after 2 s, before the 1 min limit: it ended at the interrupt step (SIGINT) after 2.01 s.'],
  },
  {
    name: 'stopped: by a user, forced, no limit',
    o: obs({ exitCode: null, signal: 'SIGKILL', limitMs: null, elapsedMs: 2_010, stop: { reason: 'user', requestedAtMs: 2_000, endedBy: 'kill' } }),
    verdict: 'stopped',
    advice: null,
    notes: ['Stopped on request after 2 s: it ended at the kill step (SIGKILL) after 2.01 s.'],
  },
  {
    name: 'stopped: its owner went away (the host adds whose note)',
    o: obs({ exitCode: null, signal: 'SIGINT', elapsedMs: 2_010, stop: { reason: 'owner', requestedAtMs: 2_000, endedBy: 'interrupt' } }),
    verdict: 'stopped',
    advice: null,
    notes: ['It ended at the interrupt step (SIGINT) after 2.01 s.'],
    notesLack: ['on request'],
  },
  {
    name: 'stopped: its lease ran out (the run adds how long it was)',
    o: obs({ exitCode: null, signal: 'SIGINT', limitMs: null, elapsedMs: 7_200_010, stop: { reason: 'lease', requestedAtMs: 7_200_000, endedBy: 'interrupt' } }),
    verdict: 'stopped',
    advice: "Renew a service's lease with extend while you still use it, or start it with a longer --lease.",
    notes: ['Stopped when its lease ran out after 2 h: it ended at the interrupt step (SIGINT) after 2 h.'],
    notesLack: ['on request'],
  },
  {
    name: 'stopped: not ready by its ready timeout (the run adds which probes failed)',
    o: obs({ exitCode: 143, signal: null, viaShell: true, limitMs: null, elapsedMs: 122_100, stop: { reason: 'not-ready', requestedAtMs: 120_000, endedBy: 'terminate' } }),
    verdict: 'stopped',
    advice: 'It never became ready: compare the readiness probes with what it printed (a server that moved to another port, a banner worded differently, a health path that answers 404), or give it longer with --ready-timeout.',
    notes: ['Stopped because it was not ready after 2 min: it ended at the terminate step (SIGTERM) after 2 min 02 s, with exit code 143.'],
    notesLack: ['on request'],
  },
  {
    name: 'stopped: by shutdown',
    o: obs({ exitCode: 0, signal: null, elapsedMs: 4_200, stop: { reason: 'shutdown', requestedAtMs: 4_000, endedBy: 'interrupt' } }),
    verdict: 'stopped',
    advice: null,
    notes: ['Stopped because Warden shut down after 4 s, before the 1 min limit: it ended at the interrupt step (SIGINT) after 4.2 s, with exit code 0.'],
  },

  // a crash report at the end of the output names where to look (src/shared/crash)
  {
    name: 'failed: a Python traceback at the end of stderr names the innermost frame of its own files',
    o: obs({ exitCode: 1, cwd: '/app', streams: { stdout: '', stderr: PY_TRACEBACK } }),
    verdict: 'failed',
    advice: "Look at crash_keyerror.py:5 (in load) first: it raised KeyError: 'database_url' there. The traceback is at the end of stderr.",
    notes: [],
  },
  {
    name: "failed: a traceback without a frame of its own files says so",
    o: obs({ exitCode: 1, cwd: '/app', streams: { stdout: '', stderr: 'Traceback (most recent call last):\n  File "/usr/lib/python3.11/runpy.py", line 1, in run\nImportError: no x\n' } }),
    verdict: 'failed',
    advice: 'It raised ImportError: no x, in code that is not its own (no frame of its own files is in the traceback): read the traceback at the end of stderr for the call of its own that led there.',
  },
  {
    name: "failed: pytest's report at the end of stdout, with the other failures counted",
    o: obs({ exitCode: 1, cwd: '/app', streams: { stdout: PYTEST_REPORT, stderr: '' } }),
    verdict: 'failed',
    advice: "Look at test_config.py:5 first: test_config.py::test_missing failed with KeyError: 'database_url' there. pytest's report is at the end of stdout. 1 more test failed too.",
  },
  {
    name: 'failed: a Go panic (exit 2) is no usage error',
    o: obs({ exitCode: 2, cwd: '/app', streams: { stdout: '', stderr: 'panic: boom\n\ngoroutine 1 [running]:\nmain.main()\n\t/app/main.go:7 +0x1d\nexit status 2\n' } }),
    verdict: 'failed',
    advice: 'Look at main.go:7 (in main.main) first: it panicked with "boom" there. The panic is at the end of stderr.',
  },
  {
    name: 'failed: a shell whose child segfaulted, then exited 3: the note names the child, the advice is a crash\'s',
    o: obs({ exitCode: 3, viaShell: true, streams: { stdout: 'after\n', stderr: "bash: 10148 Segmentation fault      python3 -c 'boom'\n" } }),
    verdict: 'failed',
    advice: ADVICE.crashNativeCommand,
    notes: ["The shell reported that a command it ran died of SIGSEGV (Segmentation fault): python3 -c 'boom', pid 10148 (stderr line 1)."],
  },
  {
    name: 'failed: a script whose child was killed (SIGKILL), the shell reporting it with its line',
    o: obs({ exitCode: 4, streams: { stdout: '', stderr: 'k.sh: line 1: 10232 Killed                  python3 big.py\n' } }),
    verdict: 'failed',
    advice: ADVICE.killHedged,
    notesHave: ['died of SIGKILL (Killed): python3 big.py, pid 10232 (stderr line 1).'],
  },
  {
    name: "failed: a shell's 139 with dash's bare word: the 128 + n note and the shell's",
    o: obs({ exitCode: 139, viaShell: true, streams: { stdout: '', stderr: 'Segmentation fault (core dumped)\n' } }),
    verdict: 'failed',
    advice: ADVICE.crashNativeCommand,
    notes: [
      'Exit code 139 after 0.33 s, before the 1 min limit. From a shell, exit code 139 (128 + 11) means a command the shell ran died of SIGSEGV.',
      'The shell reported that a command it ran died of SIGSEGV (Segmentation fault, core dumped) (stderr line 1).',
    ],
  },
  {
    name: 'crashed: a panic that aborts (SIGABRT) names its place',
    o: obs({ exitCode: null, signal: 'SIGABRT', cwd: '/app', streams: { stdout: '', stderr: "thread 'main' panicked at src/main.rs:4:5:\nboom\nnote: run with `RUST_BACKTRACE=1`\n" } }),
    verdict: 'crashed',
    advice: 'Look at src/main.rs:4 first: it panicked with "boom" there. The panic is at the end of stderr.',
  },
  {
    name: "crashed: faulthandler's report names the script's frame that called the native code",
    o: obs({ kind: 'python', exitCode: null, signal: 'SIGSEGV', outputKept: FATAL_IN_SCRIPT, streams: { stdout: '', stderr: FATAL_IN_SCRIPT } }),
    verdict: 'crashed',
    advice: "Check Python's crash report in stderr (from the line 'Fatal Python error'): it crashed in native code called from line 3 of the script (in f), such as an extension module the script uses.",
  },

  // spawn-failed and lost
  {
    name: 'spawn-failed: the advice is the exact cause',
    o: obs({ exitCode: 127, spawnFailure: 'python3 not found on PATH' }),
    verdict: 'spawn-failed',
    advice: 'python3 not found on PATH',
    notes: [],
  },
  {
    name: 'lost: the advice says what was recovered',
    o: obs({ exitCode: null, lost: 'Its output up to 12:00:03 was recovered; 2 orphans (pids 4242, 4243) were swept.' }),
    verdict: 'lost',
    advice: 'Its output up to 12:00:03 was recovered; 2 orphans (pids 4242, 4243) were swept.',
    notes: ['Warden went away while it ran; this result was recovered when Warden started again.'],
  },
];

describe('judge: one row per verdict and advice case', () => {
  it.each(rows)('$name', (row) => {
    const j = judge(row.o);
    expect(j.verdict).toBe(row.verdict);
    if (row.advice !== undefined) expect(j.advice).toBe(row.advice);
    for (const part of row.adviceHas ?? []) expect(j.advice).toContain(part);
    for (const part of row.adviceLacks ?? []) expect(j.advice ?? '').not.toContain(part);
    if (row.notes !== undefined) expect(j.notes).toEqual(row.notes);
    const joined = j.notes.join(' ');
    for (const part of row.notesHave ?? []) expect(joined).toContain(part);
    for (const part of row.notesLack ?? []) expect(joined).not.toContain(part);
  });

  it('covers every verdict', () => {
    const seen = new Set(rows.map((r) => r.verdict));
    expect([...seen].sort()).toEqual(['completed', 'crashed', 'failed', 'killed', 'lost', 'signaled', 'spawn-failed', 'stopped', 'timed-out']);
  });

  it('every note is a complete sentence, and no note or advice prints a missing figure', () => {
    for (const row of rows) {
      const j = judge(row.o);
      for (const note of j.notes) {
        expect(note, row.name).toMatch(/^[A-Z].*[.]$/s);
        expect(note, row.name).not.toMatch(/undefined|null|NaN/);
      }
      expect(j.advice ?? '', row.name).not.toMatch(/undefined|null|NaN/);
    }
  });
});

describe('judge: invariants', () => {
  const limits = [1, 1_000, 60_000];
  const codes = [124, 137];

  it('an exit 124 or 137 before the limit is never timed-out, whatever the code or shell', () => {
    for (const limitMs of limits) {
      for (const exitCode of codes) {
        for (const viaShell of [false, true]) {
          for (const elapsedMs of [0, limitMs / 2, limitMs - 1]) {
            const j = judge(obs({ exitCode, limitMs, elapsedMs, viaShell }));
            expect(j.verdict).toBe('failed');
            expect(j.notes.join(' ')).toContain(`Exit code ${exitCode} after`);
          }
        }
      }
    }
  });

  it('an exit 124 or 137 at or past the limit without a stop record is still failed, and does not claim "before the limit"', () => {
    for (const exitCode of codes) {
      const j = judge(obs({ exitCode, limitMs: 1_000, elapsedMs: 1_003 }));
      expect(j.verdict).toBe('failed');
      const joined = j.notes.join(' ');
      expect(joined).not.toContain('before the 1 s limit');
      expect(joined).toContain('the 1 s limit had just passed but before Warden sent any signal');
    }
  });

  it('an elapsed time that rounds to the limit is shown precisely enough to read as before it', () => {
    const j = judge(obs({ exitCode: 137, limitMs: 60_000, elapsedMs: 59_999 }));
    expect(j.notes[0]).toContain('Exit code 137 after 59.999 s, before the 1 min limit.');
    // Both print as "1 s", though 1,000 ms rounds to two decimals below the 1,001 ms limit.
    const k = judge(obs({ exitCode: 137, limitMs: 1_001, elapsedMs: 1_000 }));
    expect(k.notes[0]).toContain('Exit code 137 after 1.000 s, before the 1 s limit.');
  });

  it('a stop record always wins over the exit code and the signal', () => {
    const endings: Array<Pick<Observations, 'exitCode' | 'signal'>> = [
      { exitCode: 0, signal: null },
      { exitCode: 1, signal: null },
      { exitCode: 124, signal: null },
      { exitCode: 137, signal: null },
      { exitCode: 139, signal: null },
      { exitCode: null, signal: 'SIGKILL' },
      { exitCode: null, signal: 'SIGSEGV' },
      { exitCode: null, signal: 'SIGTERM' },
    ];
    for (const ending of endings) {
      for (const endedBy of ['interrupt', 'terminate', 'kill'] as const) {
        const oom = { confirmed: true, peakBytes: 10, limitBytes: 10 };
        const deadline = judge(obs({ ...ending, oom, viaShell: true, limitMs: 1_000, elapsedMs: 1_500, stop: { reason: 'deadline', requestedAtMs: 1_000, endedBy } }));
        expect(deadline.verdict, JSON.stringify(ending)).toBe('timed-out');
        for (const reason of ['user', 'shutdown'] as const) {
          const j = judge(obs({ ...ending, oom, viaShell: true, stop: { reason, requestedAtMs: 100, endedBy } }));
          expect(j.verdict, `${reason} ${JSON.stringify(ending)}`).toBe('stopped');
          expect(j.advice).toBeNull();
        }
      }
    }
  });

  it('a spawn failure wins over everything else', () => {
    const j = judge(obs({ spawnFailure: 'cwd /nope does not exist', signal: 'SIGKILL', stop: { reason: 'user', requestedAtMs: 0, endedBy: 'kill' } }));
    expect(j).toEqual({ verdict: 'spawn-failed', advice: 'cwd /nope does not exist', notes: [] });
  });

  it('only SIGKILL gets memory advice; only crash signals get native-code advice', () => {
    for (const signal of ['SIGKILL', 'SIGTERM', 'SIGINT', 'SIGHUP', 'SIGUSR1', 'SIGPIPE', ...CRASH_SIGNALS]) {
      const j = judge(obs({ exitCode: null, signal }));
      expect(/memory/.test(j.advice ?? ''), signal).toBe(signal === 'SIGKILL');
      expect(/native code/.test(j.advice ?? ''), signal).toBe(CRASH_SIGNALS.includes(signal));
      expect(/os\.kill\(\)/.test(j.advice ?? ''), signal).toBe(signal !== 'SIGKILL' && !CRASH_SIGNALS.includes(signal));
    }
  });
});
