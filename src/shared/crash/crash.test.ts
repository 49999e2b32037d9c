// The crash parser's branches, one table each (the real reports are in
// test/crash-reports.test.ts): what counts as "at the end", which report wins,
// the tail a long stream is read from, the user's files of each language, the
// phrase, and a shell's word that a command it ran died.

import { describe, expect, it } from 'vitest';
import { isGoUserFile } from './go';
import { isNodeUserFile, parseNodeFrame } from './node';
import { crashPhrase, ERROR_CHARS, placeOf, whatHappened } from './phrase';
import { isPythonUserFile } from './python';
import type { Traceback } from './report';
import { isRustUserFile } from './rust';
import { findShellCrash } from './shell';
import { shortPath, stripEscapes, tailLines } from './text';
import { findCrash, findTraceback, MAX_LINES_AFTER } from './traceback';

const PY = 'Traceback (most recent call last):\n  File "/app/x.py", line 3, in f\n    g()\nValueError: bad\n';

describe('a report at the end', () => {
  it.each([
    [0, true],
    [MAX_LINES_AFTER, true],
    [MAX_LINES_AFTER + 1, false],
  ])('with %i lines after it: found %s', (n, found) => {
    const after = Array.from({ length: n }, (_, i) => `INFO line ${i}\n`).join('');
    expect(findTraceback(`${PY}${after}`) !== null).toBe(found);
  });

  it('does not count blank lines after it', () => {
    expect(findTraceback(`${PY}${'\n'.repeat(20)}`)).not.toBeNull();
  });

  it('takes the report that ends last when two languages print', () => {
    const node = '/app/a.js:1\nmain()\n^\n\nError: first\n    at main (/app/a.js:1:1)\n';
    expect(findTraceback(`${node}\n${PY}`)!.language).toBe('python');
    expect(findTraceback(`${PY}\n${node}`)!.language).toBe('node');
  });

  it('is none in an empty text or one without a report', () => {
    expect(findTraceback('')).toBeNull();
    expect(findTraceback('all good\n')).toBeNull();
    expect(findCrash({ stdout: '', stderr: '' })).toBeNull();
  });

  it('reads stderr before stdout', () => {
    const node = 'Error: on stdout\n    at main (/app/a.js:1:1)\n';
    expect(findCrash({ stdout: node, stderr: PY })).toMatchObject({ stream: 'stderr', traceback: { language: 'python' } });
    expect(findCrash({ stdout: node, stderr: 'warning\n' })).toMatchObject({ stream: 'stdout', traceback: { language: 'node' } });
  });

  it("numbers lines in the whole text, past what was skipped of a long stream's head", () => {
    const head = 'x'.repeat(99) + '\n';
    const text = head.repeat(5000) + PY;
    const tb = findTraceback(text)!;
    expect(tb.errorLine).toBe(5004);
    expect(tb.frame!.reportLine).toBe(5002);
    expect(tb.frame!.sourceLine).toBe(5003);
    expect(tb.from).toBe(5001);
    expect(tb.to).toBe(5004);
  });

  it('picks the innermost frame of the user, after a library frame', () => {
    const text = 'Traceback (most recent call last):\n  File "/app/a.py", line 1, in <module>\n  File "/app/a.py", line 9, in main\n  File "/usr/lib/python3.11/json/decoder.py", line 2, in decode\nValueError: x\n';
    const tb = findTraceback(text)!;
    expect(tb.frame).toMatchObject({ line: 9, fn: 'main', reportLine: 3 });
    expect(tb.frames.map((f) => f.user)).toEqual([true, true, false]);
  });
});

describe('the tail read', () => {
  it('keeps whole lines from the last characters, and counts the lines before them', () => {
    const text = 'aaaa\nbbbb\ncccc\n';
    expect(tailLines(text, 15)).toEqual({ lines: ['aaaa', 'bbbb', 'cccc'], before: 0 });
    expect(tailLines(text, 14)).toEqual({ lines: ['bbbb', 'cccc'], before: 1 });
    expect(tailLines(text, 10)).toEqual({ lines: ['bbbb', 'cccc'], before: 1 });
    expect(tailLines(text, 11)).toEqual({ lines: ['bbbb', 'cccc'], before: 1 });
    expect(tailLines(text, 9)).toEqual({ lines: ['cccc'], before: 2 });
  });

  it('keeps an unfinished last line, drops carriage returns and escapes', () => {
    expect(tailLines('a\r\n\x1b[31mb\x1b[0m')).toEqual({ lines: ['a', 'b'], before: 0 });
    expect(tailLines('')).toEqual({ lines: [], before: 0 });
  });

  it('removes colour and OSC escapes', () => {
    expect(stripEscapes('\x1b[1;35mKeyError\x1b[0m: \x1b]8;;file:///x\x07x\x1b]8;;\x07')).toBe('KeyError: x');
    expect(stripEscapes('plain')).toBe('plain');
  });

  it('finds a coloured Python 3.13 traceback', () => {
    const coloured = 'Traceback (most recent call last):\n  File \x1b[35m"/app/x.py"\x1b[0m, line \x1b[35m3\x1b[0m, in \x1b[35mf\x1b[0m\n\x1b[1;35mValueError\x1b[0m: \x1b[35mbad\x1b[0m\n';
    expect(crashPhrase(findTraceback(coloured)!, '/app')).toBe('raised ValueError: bad at x.py:3');
  });
});

describe('paths', () => {
  it.each([
    ['/app/src/x.py', '/app', 'src/x.py'],
    ['/app/src/x.py', '/app/', 'src/x.py'],
    ['/application/x.py', '/app', '/application/x.py'],
    ['/app', '/app', '/app'],
    ['file:///app/a%20b.mjs', '/app', 'a b.mjs'],
    ['file:///app/%E0%A4%A.mjs', undefined, '/app/%E0%A4%A.mjs'],
    ['./src/main.rs', undefined, 'src/main.rs'],
    ['<string>', '/app', '<string>'],
  ])('%s in %s reads %s', (file, cwd, shown) => {
    expect(shortPath(file, cwd)).toBe(shown);
  });

  it('places a frame as file:line', () => {
    expect(placeOf({ file: '/app/x.py', line: 12 }, '/app')).toBe('x.py:12');
  });
});

describe("the user's files", () => {
  it.each([
    ['/home/me/app/x.py', true],
    ['<string>', true],
    ['<script>', true],
    ['<frozen importlib._bootstrap>', false],
    ['/usr/lib/python3.11/json/decoder.py', false],
    ['/root/.pyenv/versions/3.12.1/lib/python3.12/json/__init__.py', false],
    ['/home/me/.venv/lib/python3.12/site-packages/requests/api.py', false],
    ['/usr/lib/python3/dist-packages/yaml/__init__.py', false],
    ['/usr/lib/pypy3.9/json/decoder.py', false],
    ['/usr/lib/python3.11/lib-dynload/x.so', false],
  ])('python %s: %s', (file, user) => expect(isPythonUserFile(file)).toBe(user));

  it.each([
    ['/app/index.js', true],
    ['file:///app/a.mjs', true],
    ['[eval]', true],
    ['node:internal/modules/cjs/loader', false],
    ['node:events', false],
    ['internal/main/run_main_module.js', false],
    ['/app/node_modules/pg/lib/client.js', false],
    ['<anonymous>', false],
    ['native', false],
    ['[eval]-wrapper', false],
    ['evalmachine.<anonymous>', false],
  ])('node %s: %s', (file, user) => expect(isNodeUserFile(file)).toBe(user));

  it.each([
    ['src/main.rs', true],
    ['./main.rs', true],
    ['/rustc/59807616e1fa/library/core/src/option.rs', false],
    ['/home/me/.cargo/registry/src/index.crates.io-6f17d22bba15001f/serde-1.0.0/src/de.rs', false],
    ['/home/me/.cargo/git/checkouts/x/src/lib.rs', false],
    ['library/std/src/panicking.rs', false],
  ])('rust %s: %s', (file, user) => expect(isRustUserFile(file)).toBe(user));

  it.each([
    ['/home/me/app/main.go', true],
    ['/home/me/go/src/github.com/me/app/main.go', true],
    ['/usr/local/go/src/runtime/panic.go', false],
    ['/usr/lib/go-1.22/src/net/http/server.go', false],
    ['/home/me/sdk/go1.22.0/src/testing/testing.go', false],
    ['/opt/homebrew/Cellar/go/1.22.0/libexec/src/runtime/proc.go', false],
    ['/home/me/go/pkg/mod/github.com/acme/rows@v1.4.2/table.go', false],
    ['<autogenerated>', false],
  ])('go %s: %s', (file, user) => expect(isGoUserFile(file)).toBe(user));
});

describe("a Node stack's frames", () => {
  it.each([
    ['readConfig (/app/crash.js:4:24)', { file: '/app/crash.js', line: 4, column: 24, fn: 'readConfig' }],
    ['file:///app/a.mjs:2:1', { file: 'file:///app/a.mjs', line: 2, column: 1 }],
    ['async main (/app/a.js:3:5)', { file: '/app/a.js', line: 3, column: 5, fn: 'main' }],
    ['new Client (/app/c.js:9:11)', { file: '/app/c.js', line: 9, column: 11, fn: 'Client' }],
    ['Function.executeUserEntryPoint [as runMain] (node:internal/modules/run_main:164:12)', { file: 'node:internal/modules/run_main', line: 164, fn: 'Function.executeUserEntryPoint [as runMain]', user: false }],
  ])('%s', (text, frame) => expect(parseNodeFrame(text, 7)).toMatchObject({ at: 7, ...frame }));

  it('is none for a built-in without a place', () => {
    expect(parseNodeFrame('JSON.parse (<anonymous>)', 0)).toBeNull();
  });

  it("takes the first named error line of the block, not a line above it, and not a [cause]'s frames", () => {
    const text = 'starting\nError: outer\n    at a (/app/a.js:1:1) {\n  [cause]: Error: inner\n      at b (/app/b.js:2:2)\n}\n';
    const tb = findTraceback(text)!;
    expect(tb.error).toBe('Error: outer');
    expect(tb.frames.map((f) => f.file)).toEqual(['/app/a.js']);
    expect(tb.to).toBe(6);
  });

  it("names the header's place when no frame of the stack is the user's", () => {
    const text = '/app/a.js:7\n    x.on("data", () => { throw new Error("bad") })\n                         ^\n\nError: bad\n    at Socket.<anonymous> (node:net:1:1)\n';
    expect(findTraceback(text)!.frame).toMatchObject({ file: '/app/a.js', line: 7, reportLine: 1, sourceLine: 2 });
  });
});

describe('Rust, Go and pytest variants', () => {
  it("takes a panic's message to its note, with the thread's id or without", () => {
    for (const head of ["thread 'main' panicked at src/a.rs:2:5:", "thread 'worker' (123) panicked at src/a.rs:2:5:"]) {
      const tb = findTraceback(`${head}\nassertion \`left == right\` failed\n  left: 1\n right: 2\nnote: run with \`RUST_BACKTRACE=1\`\n`)!;
      expect(tb.error).toBe('assertion `left == right` failed');
      expect(tb.errorLine).toBe(2);
      expect(tb.to).toBe(5);
      expect(tb.frame).toMatchObject({ file: 'src/a.rs', line: 2, column: 5, reportLine: 1 });
    }
  });

  it("falls back to the backtrace's innermost frame of the user when the panic's place is a dependency's", () => {
    const text = "thread 'main' panicked at /home/me/.cargo/registry/src/x/serde/src/de.rs:9:1:\nbad\nstack backtrace:\n   0: serde::de::f\n             at /home/me/.cargo/registry/src/x/serde/src/de.rs:9:1\n   1: app::main\n             at ./src/main.rs:3:5\n";
    expect(findTraceback(text)!.frame).toMatchObject({ file: './src/main.rs', line: 3, fn: 'app::main', reportLine: 7 });
  });

  it("reads a recovered Go panic and a stack's elided frames", () => {
    const text = 'panic: first [recovered]\n\tpanic: second\n\ngoroutine 1 [running]:\nmain.f()\n\t/app/main.go:5 +0x1\n...additional frames elided...\nexit status 2\n';
    const tb = findTraceback(text)!;
    expect(tb).toMatchObject({ language: 'go', how: 'panicked', error: 'first', errorLine: 1, to: 7 });
    expect(tb.frame).toMatchObject({ file: '/app/main.go', line: 5, fn: 'main.f' });
  });

  it('is no Go report without its goroutine', () => {
    expect(findTraceback('panic: not a go program\n')).toBeNull();
  });

  it.each(['2 failed, 1 passed in 1.17s', '======= 2 failed, 1 passed in 0.91s =======', '1 failed, 3 passed, 2 warnings in 1.02s (0:00:01)'])("ends pytest's report at its closing line %s", (closing) => {
    const text = `=== short test summary info ===\nFAILED t.py::test_a - KeyError: 'x'\nFAILED t.py::test_b\n${closing}\n`;
    const tb = findTraceback(text)!;
    expect(tb).toMatchObject({ language: 'pytest', test: 't.py::test_a', moreFailed: 1, error: "KeyError: 'x'", errorLine: 2, to: 4 });
  });

  it('names a failed test without a message by its id', () => {
    expect(findTraceback('=== short test summary info ===\nFAILED t.py::test_a\n')!.error).toBe('t.py::test_a failed');
  });

  it('is no pytest report without a failure listed', () => {
    expect(findTraceback('=== short test summary info ===\nSKIPPED [1] t.py:3: no db\n1 skipped in 0.1s\n')).toBeNull();
  });
});

describe('the phrase', () => {
  const base: Traceback = { language: 'python', how: 'raised', error: 'KeyError: x', errorLine: 1, frame: null, frames: [], from: 1, to: 1 };
  const frame = { file: '/app/a.py', line: 3, reportLine: 1, user: true };
  it.each<[Partial<Traceback>, string]>([
    [{}, 'raised KeyError: x'],
    [{ frame }, 'raised KeyError: x at a.py:3'],
    [{ language: 'node', how: 'threw', error: 'Error: y', frame }, 'threw Error: y at a.py:3'],
    [{ language: 'rust', how: 'panicked', error: 'boom' }, 'panicked with "boom"'],
    [{ language: 'python', how: 'fatal', error: 'Fatal Python error: Aborted' }, 'crashed (Fatal Python error: Aborted)'],
    [{ language: 'go', how: 'fatal', error: 'fatal error: deadlock' }, 'failed with "fatal error: deadlock"'],
    [{ language: 'pytest', how: 'failed', test: 't.py::a', moreFailed: 1 }, 't.py::a failed with KeyError: x, and 1 more test failed'],
    [{ language: 'pytest', how: 'failed', test: 't.py::a', moreFailed: 2, frame }, 't.py::a failed with KeyError: x at a.py:3, and 2 more tests failed'],
    [{ language: 'pytest', how: 'failed', moreFailed: 0 }, 'a test failed with KeyError: x'],
  ])('%j', (fields, phrase) => expect(crashPhrase({ ...base, ...fields }, '/app')).toBe(phrase));

  it(`cuts an error past ${ERROR_CHARS} characters`, () => {
    expect(whatHappened({ ...base, error: 'e'.repeat(ERROR_CHARS) })).toBe(`raised ${'e'.repeat(ERROR_CHARS)}`);
    expect(whatHappened({ ...base, error: 'e'.repeat(ERROR_CHARS + 1) })).toBe(`raised ${'e'.repeat(ERROR_CHARS - 1)}…`);
  });
});

describe("a shell's word that a command died", () => {
  it.each([
    ["bash: 10148 Segmentation fault      python3 -c 'x'", { signal: 'SIGSEGV', pid: 10148, command: "python3 -c 'x'", coreDumped: false }],
    ['run.sh: line 3: 10232 Killed                  python3 big.py', { signal: 'SIGKILL', pid: 10232, command: 'python3 big.py' }],
    ['bash: line 1:   812 Aborted (core dumped)      ./prog --fast', { signal: 'SIGABRT', pid: 812, command: './prog --fast', coreDumped: true }],
    ['bash: 77 Bus error ./a', { signal: 'SIGBUS', pid: 77, command: './a' }],
    ['bash: 78 Floating point exception(core dumped) ./a', null],
    ['bash: 79 Illegal instruction     ./a', { signal: 'SIGILL' }],
    ['Segmentation fault (core dumped)', { signal: 'SIGSEGV', pid: null, command: null, coreDumped: true }],
    ['Killed', { signal: 'SIGKILL', pid: null, command: null }],
    ['zsh: segmentation fault (core dumped)  ./prog', { signal: 'SIGSEGV', pid: null, command: './prog', coreDumped: true }],
    ['Killed 3 workers', null],
    ['bash: 10 Terminated  sleep 5', null],
  ])('%s', (line, expected) => {
    const found = findShellCrash(`first line\n${line}\n`);
    if (expected === null) expect(found).toBeNull();
    else expect(found).toMatchObject({ ...expected, line: 2 });
  });

  it('takes the last, and says none in a stderr without one', () => {
    expect(findShellCrash('Killed\nbash: 9 Segmentation fault  ./b\nafter\n')).toMatchObject({ signal: 'SIGSEGV', pid: 9, line: 2 });
    expect(findShellCrash('')).toBeNull();
    expect(findShellCrash('fine\n')).toBeNull();
  });
});
