import { describe, expect, it } from 'vitest';
import type { RunResult } from '../../../../shared/result';
import { findCrash, findTraceback } from '../../../../shared/crash/traceback';
import { coreSentence, crashFacts, crashMark, summaryHeading, defaultTab, isErrorLine, scriptErrorLine, scriptFrame, streamTail, summaryTails, tabsOf } from './summary';

const lines = (n: number, make = (i: number) => `line ${i}`) => Array.from({ length: n }, (_, i) => `${make(i + 1)}\n`).join('');

describe('which tab a run opens on', () => {
  it('lands on the summary for an ended run that did not complete, else on the output', () => {
    expect(defaultTab({ state: 'ended', verdict: 'failed' })).toBe('summary');
    expect(defaultTab({ state: 'ended', verdict: 'spawn-failed' })).toBe('summary');
    expect(defaultTab({ state: 'ended', verdict: 'timed-out' })).toBe('summary');
    expect(defaultTab({ state: 'ended', verdict: 'completed' })).toBe('output');
    expect(defaultTab({ state: 'running', verdict: undefined })).toBe('output');
    expect(defaultTab(undefined)).toBe('output');
  });

  it('has a Summary tab only when it ended badly, and a Script tab only for Python', () => {
    expect(tabsOf({ state: 'ended', verdict: 'failed', kind: 'command' })).toEqual(['summary', 'output', 'tree', 'verdict', 'timeline']);
    expect(tabsOf({ state: 'ended', verdict: 'completed', kind: 'python', code: 'print(1)' })).toEqual(['output', 'script', 'tree', 'verdict', 'timeline']);
    expect(tabsOf({ state: 'running', kind: 'command' })).toEqual(['output', 'tree', 'verdict', 'timeline']);
  });
});

describe('the tail of a stream', () => {
  it('keeps the last 30 lines, numbered as in the stream, and counts what it left out', () => {
    const tail = streamTail('stdout', lines(100))!;
    expect(tail.totalLines).toBe(100);
    expect(tail.blocks).toHaveLength(1);
    expect(tail.blocks[0]!.skippedBefore).toBe(70);
    expect(tail.blocks[0]!.lines.map((l) => l.no)).toEqual(Array.from({ length: 30 }, (_, i) => 71 + i));
    expect(tail.blocks[0]!.lines[0]!.text).toBe('line 71');
  });

  it('keeps an earlier error line in view with its context when the tail has none', () => {
    const text = lines(100, (i) => (i === 20 ? 'Error: cannot open config.yml' : `cleanup ${i}`));
    const tail = streamTail('stderr', text)!;
    expect(tail.blocks).toHaveLength(2);
    expect(tail.blocks[0]).toMatchObject({ skippedBefore: 16 });
    expect(tail.blocks[0]!.lines.map((l) => l.no)).toEqual([17, 18, 19, 20, 21, 22, 23]);
    expect(tail.blocks[0]!.lines.find((l) => l.error)!.no).toBe(20);
    expect(tail.blocks[1]).toMatchObject({ skippedBefore: 100 - 30 - 23 });
    expect(tail.blocks[1]!.lines[0]!.no).toBe(71);
  });

  it('marks error lines by their text, through ANSI colours', () => {
    expect(isErrorLine('KeyError: missing')).toBe(false);
    expect(isErrorLine('ValueError: an error')).toBe(true);
    // The caret under a line of code, and a traceback's head, say nothing themselves.
    expect(isErrorLine('           ^^^^^^^^^^^^^^^^')).toBe(false);
    expect(isErrorLine('Traceback (most recent call last):')).toBe(false);
    expect(isErrorLine('bash: nosuchcmd: command not found')).toBe(true);
    expect(isErrorLine('npm ERR! code 1')).toBe(false);
    expect(isErrorLine('compiling...')).toBe(false);
    const tail = streamTail('stdout', '\x1b[31mFAILED\x1b[0m test_x\nok\n')!;
    expect(tail.blocks[0]!.lines.map((l) => l.error)).toEqual([true, false]);
    expect(tail.blocks[0]!.lines[0]!.text).toBe('\x1b[31mFAILED\x1b[0m test_x');
  });

  it("keeps a focus line in view (the script's frame) in place of the last error line", () => {
    const text = lines(80, (i) => (i === 10 ? 'File "<script>", line 3' : i === 20 ? 'Error: late' : `line ${i}`));
    const tail = streamTail('stderr', text, 30, 3, 11)!;
    expect(tail.blocks[0]!.lines.map((l) => l.no)).toEqual([8, 9, 10, 11, 12, 13, 14]);
    // In the tail already: one block.
    expect(streamTail('stderr', text, 30, 3, 75)!.blocks).toHaveLength(1);
  });

  it('has nothing for an empty stream, and puts stderr first', () => {
    expect(streamTail('stdout', '')).toBeNull();
    expect(summaryTails({ stdout: 'compiling...\n', stderr: 'error: x\n' }).map((t) => t.stream)).toEqual(['stderr', 'stdout']);
    expect(summaryTails({ stdout: '', stderr: '' })).toEqual([]);
  });

  it("finds the script's line in a traceback: the last one named", () => {
    const stderr = 'Traceback (most recent call last):\n  File "<script>", line 3, in <module>\n  File "<script>", line 7, in f\nZeroDivisionError: division by zero\n';
    expect(scriptErrorLine(stderr)).toBe(7);
    expect(scriptErrorLine('nothing')).toBeNull();
  });

  it("finds the script's line in faulthandler's report: the first named in the current thread, most recent first", () => {
    // As a session's interpreter prints it when ctypes.string_at(0) in f() (line 3) is called from line 4.
    const stderr = [
      'Fatal Python error: Segmentation fault',
      '',
      'Thread 0x00007feac04ff6c0 (most recent call first):',
      '  File "/opt/warden/runtime/warden_runtime.py", line 316 in read_ops',
      '',
      'Current thread 0x00007feac1bc2b80 (most recent call first):',
      '  File "/usr/lib/python3.11/ctypes/__init__.py", line 519 in string_at',
      '  File "<script>", line 3 in f',
      '  File "<script>", line 4 in <module>',
      '  File "/opt/warden/runtime/warden_runtime.py", line 200 in run_script',
      '',
    ].join('\n');
    expect(scriptErrorLine(stderr)).toBe(3);
    expect(scriptFrame(stderr)).toEqual({ scriptLine: 3, stderrLine: 8 });
    // Output after the report that names no script line leaves it as found.
    expect(scriptErrorLine(`${stderr}later output\n`)).toBe(3);
    // A traceback printed after the report (most recent call last) is the later word.
    expect(scriptErrorLine(`${stderr}Traceback (most recent call last):\n  File "<script>", line 9, in <module>\nValueError\n`)).toBe(9);
  });
});

describe('crash facts', () => {
  const crashed = { verdict: 'crashed' as const, signal: 'SIGSEGV', exitCode: null, kind: 'command' as const, argv: ['./a.out'], stderr: '' };
  it('gives the exit status a shell reports, the culprit from the tree, and Python\'s report or how to get one', () => {
    expect(crashFacts(crashed, { pid: 42, command: './a.out' })).toEqual({ title: 'The crash', status: '139 (128 + 11, SIGSEGV)', culprit: { pid: 42, command: './a.out' }, python: false, faultReport: false });
    expect(crashFacts({ ...crashed, signal: 'SIGABRT' })?.status).toBe('134 (128 + 6, SIGABRT)');
    expect(crashFacts({ ...crashed, argv: ['/usr/bin/python3.12', 'x.py'] })).toMatchObject({ python: true, faultReport: false, culprit: null });
    expect(crashFacts({ ...crashed, kind: 'python', argv: undefined, stderr: 'Fatal Python error: Segmentation fault\n\nCurrent thread 0x00007f (most recent call first):\n' })).toMatchObject({ python: true, faultReport: true });
    expect(crashFacts({ ...crashed, verdict: 'failed', signal: null, exitCode: 1 })).toBeNull();
    // A shell's 139: a process it ran crashed; the shell is not the culprit.
    expect(crashFacts({ ...crashed, verdict: 'failed', signal: null, exitCode: 139, argv: ['bash', '-c', './a.out'] }, { pid: 7, command: 'bash -c ./a.out' })).toEqual({
      title: 'The crash',
      status: '139 (128 + 11, SIGSEGV, in a process it ran)',
      culprit: null,
      python: false,
      faultReport: false,
    });
    expect(crashFacts({ ...crashed, verdict: 'failed', signal: null, exitCode: 134, argv: ['bash', '-c', 'python3 x.py'] })).toMatchObject({ python: true });
    expect(crashFacts({ ...crashed, verdict: 'failed', signal: null, exitCode: 130 })).toBeNull();
  });

  it("names the culprit the result recorded, over the page's last sample", () => {
    const recorded = { ...crashed, culprit: { pid: 9, command: 'python3 x.py', signal: 'SIGSEGV', source: 'exit' as const } };
    expect(crashFacts(recorded, { pid: 42, command: 'other' })).toMatchObject({ culprit: { pid: 9, command: 'python3 x.py' }, python: true });
    // A SIGKILL nobody here sent is a kill, with its process, when the result names it.
    expect(crashFacts({ ...crashed, verdict: 'killed', signal: 'SIGKILL', culprit: { pid: 9, command: './a.out', signal: 'SIGKILL', source: 'exit' } })).toMatchObject({ title: 'The kill', status: '137 (128 + 9, SIGKILL)' });
    expect(crashFacts({ ...crashed, verdict: 'killed', signal: 'SIGKILL' })).toBeNull();
  });

  it('gives a shell that went on to exit 3 the card of the child it said crashed, from the result or from stderr', () => {
    const shell = { ...crashed, verdict: 'failed' as const, signal: null, exitCode: 3, argv: ['bash', '-c', 'x'] };
    const fromResult = { ...shell, culprit: { pid: 812, command: './prog', signal: 'SIGSEGV', source: 'shell' as const, stderrLine: 1 } };
    expect(crashFacts(fromResult)).toEqual({ title: 'The crash', status: 'SIGSEGV, in a process it ran; it went on to exit with 3', culprit: { pid: 812, command: './prog' }, python: false, faultReport: false });
    expect(crashFacts({ ...shell, stderr: 'k.sh: line 1: 77 Killed    python3 big.py\n' })).toEqual({ title: 'The kill', status: 'SIGKILL, in a process it ran; it went on to exit with 3', culprit: { pid: 77, command: 'python3 big.py' }, python: true, faultReport: false });
    // dash names neither pid nor command: the card says the signal alone.
    expect(crashFacts({ ...shell, exitCode: 139, stderr: 'Segmentation fault\n' })).toMatchObject({ status: '139 (128 + 11, SIGSEGV, in a process it ran)', culprit: null });
    expect(crashFacts({ ...shell, exitCode: 134, stderr: 'bash: 5 Segmentation fault  ./a\n' })).toMatchObject({ status: 'SIGSEGV, in a process it ran; it went on to exit with 134', culprit: { pid: 5, command: './a' } });
  });
});

describe('a crash report in the tail', () => {
  const report = 'Traceback (most recent call last):\n  File "/app/x.py", line 9, in <module>\n    main()\n  File "/app/x.py", line 5, in main\n    return cfg["url"]\n           ^^^^^^^^^^\nKeyError: \'url\'\n';
  it("marks only the report's error line and the user's innermost frame (its place and its source)", () => {
    const tb = findTraceback(report)!;
    const tail = streamTail('stderr', report, 30, 3, undefined, tb)!;
    const marked = tail.blocks[0]!.lines.map((l) => [l.no, l.error, l.crash ?? null]);
    expect(marked).toEqual([
      [1, false, null],
      [2, false, null],
      [3, false, null],
      [4, true, 'frame'],
      [5, true, 'frame'],
      [6, false, null],
      [7, true, 'error'],
    ]);
  });

  it('says how each line stands in the report', () => {
    const tb = findTraceback(`before\n${report}`)!;
    expect([1, 2, 5, 6, 8, 9].map((n) => crashMark(tb, n))).toEqual([null, 'report', 'frame', 'frame', 'error', null]);
    expect(crashMark(null, 1)).toBeNull();
  });

  it("keeps a deep frame of the user's in view, in the stream the report is in", () => {
    const deep = `Traceback (most recent call last):\n  File "/app/x.py", line 2, in f\n${'  File "/usr/lib/python3.11/x.py", line 1, in g\n'.repeat(40)}ValueError: v\n`;
    const tails = summaryTails({ stdout: deep, stderr: 'warning\n' }, 30, undefined, findCrash({ stdout: deep, stderr: 'warning\n' }));
    const out = tails.find((t) => t.stream === 'stdout')!;
    expect(out.blocks).toHaveLength(2);
    expect(out.blocks[0]!.lines.find((l) => l.crash === 'frame')?.no).toBe(2);
    expect(tails.find((t) => t.stream === 'stderr')!.blocks).toHaveLength(1);
  });
});

describe('a core dump in a sentence', () => {
  it('says where it was written, why none was, or which program has it', () => {
    expect(coreSentence({ dumped: true, pattern: 'core', where: '/w/core', limitBytes: null })).toBe('Written to /w/core.');
    expect(coreSentence({ dumped: false, pattern: 'core', where: '/w/core', limitBytes: 0 })).toBe(
      "None was written at /w/core: its core file size limit was 0 when it started (run it again with warden run --core, or New run's Allow a core dump, to get one).",
    );
    expect(coreSentence({ dumped: false, pattern: '/cores/core.%p', where: '/cores/core.7', limitBytes: null })).toBe('None was written at /cores/core.7.');
    expect(coreSentence({ dumped: null, pattern: '|/usr/lib/systemd/systemd-coredump %P', where: '/usr/lib/systemd/systemd-coredump', limitBytes: 0 }, 42)).toBe(
      'core_pattern hands it to /usr/lib/systemd/systemd-coredump, which decides whether to keep it. Read it with coredumpctl info 42.',
    );
    expect(coreSentence({ dumped: null, pattern: '|/usr/share/apport/apport -p%p', where: '/usr/share/apport/apport', limitBytes: 0 })).toMatch(/apport, which decides whether to keep it\. Apport keeps it in \/var\/crash\.$/);
    expect(coreSentence({ dumped: null, pattern: '/cores/%e/core', limitBytes: null })).toBe('core_pattern is /cores/%e/core: where it went could not be told from here.');
  });
});

describe("the Summary's heading, said once", () => {
  const ended = (over: Partial<RunResult>): RunResult => ({
    id: 'r1', kind: 'command', argv: ['x'], cwd: '/', state: 'ended', exitCode: null, signal: null, startedAt: '2026-12-02T00:00:00.000Z',
    elapsedMs: 400, limitMs: 60_000, advice: null, notes: [], stdout: '', stderr: '', stdoutTruncated: 0, stderrTruncated: 0, ...over,
  });

  it("takes the engine's note that restates the verdict as the heading, once", () => {
    const crashed = ended({ verdict: 'crashed', signal: 'SIGSEGV', notes: ['Crashed with SIGSEGV after 0.4 s, before the 1 min limit.', 'The interpreter died under the script.'] });
    expect(summaryHeading(crashed)).toEqual({ heading: 'Crashed with SIGSEGV after 0.4 s, before the 1 min limit.', notes: ['The interpreter died under the script.'] });
    const signaled = ended({ verdict: 'signaled', signal: 'SIGTERM', notes: ['Ended by SIGTERM after 20 min 31 s, before the 1 h limit. Warden did not send it.'] });
    expect(summaryHeading(signaled)).toEqual({ heading: 'Ended by SIGTERM after 20 min 31 s, before the 1 h limit.', notes: ['Warden did not send it.'] });
  });

  it("folds a failed run's 'Exit code N after' into the heading and keeps what the note adds", () => {
    const failed = ended({ verdict: 'failed', exitCode: 139, notes: ['Exit code 139 after 0.5 s, before the 1 min limit. From a shell, exit code 139 (128 + 11) means a command the shell ran died of SIGSEGV.'] });
    expect(summaryHeading(failed)).toEqual({
      heading: 'Failed with exit code 139 after 0.5 s, before the 1 min limit.',
      notes: ['From a shell, exit code 139 (128 + 11) means a command the shell ran died of SIGSEGV.'],
    });
  });

  it('leaves the heading and notes alone when no note restates it', () => {
    const plain = ended({ verdict: 'failed', exitCode: 1, notes: ['stdout was 12 characters, over the cap.'] });
    expect(summaryHeading(plain)).toEqual({ heading: 'Failed with exit code 1 after 0.40 s.', notes: ['stdout was 12 characters, over the cap.'] });
    expect(summaryHeading(ended({ verdict: 'lost', notes: ['Warden went away while it ran.'] })).notes).toEqual(['Warden went away while it ran.']);
  });
});
