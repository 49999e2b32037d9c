// The crash parser (src/shared/crash) over real reports: Python 3 and Node
// tracebacks made here by running the programs (this machine's python3 and
// node), and the copies in test/tracebacks/ of the formats this machine may not
// run (Python 3.12 and 3.13, Node 24, Rust, Go, pytest; see its README.md for
// how each was made). Each row names the error, where the user's innermost
// frame is, and the lines the page marks.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crashPhrase } from '../src/shared/crash/phrase';
import { findCrash, findTraceback, type Traceback } from '../src/shared/crash/traceback';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'tracebacks');
const APP = '/home/dev/app';

interface Row {
  /** The phrase the Summary's heading and the advice use, relative to the run's directory. */
  phrase: string;
  /** The line holding the error, as written (the page marks it). */
  errorText: string;
  /** The line naming the innermost frame of the user's files, or null when there is none. */
  frameText: string | null;
  fn?: string;
}

/** Line `n` (1-based) of a text. */
const lineOf = (text: string, n: number | undefined) => (n === undefined ? undefined : text.split('\n')[n - 1]);

function check(text: string, row: Row, cwd = APP): Traceback {
  const tb = findTraceback(text);
  expect(tb, 'a report is found').not.toBeNull();
  expect(crashPhrase(tb!, cwd)).toBe(row.phrase);
  expect(lineOf(text, tb!.errorLine)).toBe(row.errorText);
  expect(lineOf(text, tb!.frame?.reportLine) ?? null).toBe(row.frameText);
  if (row.fn !== undefined) expect(tb!.frame?.fn).toBe(row.fn);
  // Never the caret under the code.
  expect(lineOf(text, tb!.errorLine)).not.toMatch(/^\s*[\^~]+\s*$/);
  return tb!;
}

const FIXTURE_ROWS: Record<string, Row> = {
  'python3.12-crash_keyerror.txt': { phrase: "raised KeyError: 'database_url' at crash_keyerror.py:5", errorText: "KeyError: 'database_url'", frameText: '  File "/home/dev/app/crash_keyerror.py", line 5, in load', fn: 'load' },
  'python3.13-crash_keyerror.txt': { phrase: "raised KeyError: 'database_url' at crash_keyerror.py:5", errorText: "KeyError: 'database_url'", frameText: '  File "/home/dev/app/crash_keyerror.py", line 5, in load', fn: 'load' },
  'python3.12-libcall.txt': {
    phrase: 'raised json.decoder.JSONDecodeError: Expecting property name enclosed in double quotes: line 1 column 2 (char 1) at libcall.py:4',
    errorText: 'json.decoder.JSONDecodeError: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)',
    frameText: '  File "/home/dev/app/libcall.py", line 4, in parse',
    fn: 'parse',
  },
  'python3.13-libcall.txt': {
    phrase: 'raised json.decoder.JSONDecodeError: Expecting property name enclosed in double quotes: line 1 column 2 (char 1) at libcall.py:4',
    errorText: 'json.decoder.JSONDecodeError: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)',
    frameText: '  File "/home/dev/app/libcall.py", line 4, in parse',
  },
  'python3.12-chained.txt': { phrase: 'raised RuntimeError: config.json is not JSON at chained.py:8', errorText: 'RuntimeError: config.json is not JSON', frameText: '  File "/home/dev/app/chained.py", line 8, in read', fn: 'read' },
  'python3.13-chained.txt': { phrase: 'raised RuntimeError: config.json is not JSON at chained.py:8', errorText: 'RuntimeError: config.json is not JSON', frameText: '  File "/home/dev/app/chained.py", line 8, in read' },
  'python3.12-group.txt': { phrase: 'raised ExceptionGroup: 2 rows failed (2 sub-exceptions) at group.py:3', errorText: '  | ExceptionGroup: 2 rows failed (2 sub-exceptions)', frameText: '  |   File "/home/dev/app/group.py", line 3, in check' },
  'python3.13-group.txt': { phrase: 'raised ExceptionGroup: 2 rows failed (2 sub-exceptions) at group.py:3', errorText: '  | ExceptionGroup: 2 rows failed (2 sub-exceptions)', frameText: '  |   File "/home/dev/app/group.py", line 3, in check' },
  'python3.12-syntax_error.txt': { phrase: 'raised SyntaxError: invalid syntax at syntax_error.py:2', errorText: 'SyntaxError: invalid syntax', frameText: '  File "/home/dev/app/syntax_error.py", line 2' },
  'python3.13-syntax_error.txt': { phrase: 'raised SyntaxError: invalid syntax at syntax_error.py:2', errorText: 'SyntaxError: invalid syntax', frameText: '  File "/home/dev/app/syntax_error.py", line 2' },
  'python3.12-faulthandler.txt': { phrase: 'crashed (Fatal Python error: Segmentation fault) at segv.py:5', errorText: 'Fatal Python error: Segmentation fault', frameText: '  File "/home/dev/app/segv.py", line 5 in poke', fn: 'poke' },
  'python3.13-faulthandler.txt': { phrase: 'crashed (Fatal Python error: Segmentation fault) at segv.py:5', errorText: 'Fatal Python error: Segmentation fault', frameText: '  File "/home/dev/app/segv.py", line 5 in poke' },
  'node24-typeerror.txt': { phrase: "threw TypeError: Cannot read properties of undefined (reading 'url') at crash.js:4", errorText: "TypeError: Cannot read properties of undefined (reading 'url')", frameText: '    at readConfig (/home/dev/app/crash.js:4:24)', fn: 'readConfig' },
  'node24-esm-async.txt': { phrase: 'threw Error: connection refused: db:5432 at server.mjs:3', errorText: 'Error: connection refused: db:5432', frameText: '    at connect (file:///home/dev/app/server.mjs:3:9)', fn: 'connect' },
  'node24-module-not-found.txt': { phrase: "threw Error: Cannot find module './config' at index.js:1", errorText: "Error: Cannot find module './config'", frameText: '    at Object.<anonymous> (/home/dev/app/index.js:1:16)' },
  'node24-in-dependency.txt': { phrase: 'threw Error: Connection terminated unexpectedly', errorText: 'Error: Connection terminated unexpectedly', frameText: null },
  'rust-panic.txt': { phrase: 'panicked with "database_url missing from config" at main.rs:4', errorText: 'database_url missing from config', frameText: "thread 'main' (27196) panicked at main.rs:4:32:" },
  'rust-index.txt': { phrase: 'panicked with "index out of bounds: the len is 3 but the index is 4" at main.rs:13', errorText: 'index out of bounds: the len is 3 but the index is 4', frameText: "thread 'main' (27197) panicked at main.rs:13:28:" },
  'rust-backtrace.txt': { phrase: 'panicked with "database_url missing from config" at main.rs:4', errorText: 'database_url missing from config', frameText: "thread 'main' (27198) panicked at main.rs:4:32:", fn: 'main::database_url' },
  'rust-cargo-run.txt': { phrase: 'panicked with "database_url missing from config" at src/main.rs:4', errorText: 'database_url missing from config', frameText: "thread 'main' panicked at src/main.rs:4:32:" },
  'rust-1.70-panic.txt': { phrase: 'panicked with "database_url missing from config" at src/main.rs:4', errorText: "thread 'main' panicked at 'database_url missing from config', src/main.rs:4:32", frameText: "thread 'main' panicked at 'database_url missing from config', src/main.rs:4:32" },
  'go-nil-pointer.txt': { phrase: 'panicked with "runtime error: invalid memory address or nil pointer dereference" at config.go:14', errorText: 'panic: runtime error: invalid memory address or nil pointer dereference', frameText: '\t/home/dev/app/config.go:14', fn: 'main.(*Config).DatabaseURL' },
  'go-panic-in-library.txt': { phrase: 'panicked with "runtime error: index out of range [5] with length 3" at report.go:21', errorText: 'panic: runtime error: index out of range [5] with length 3', frameText: '\t/home/dev/app/report.go:21 +0x8c', fn: 'main.report' },
  'go-panic-error.txt': { phrase: 'panicked with "open /etc/app/config.json: no such file or directory" at main.go:17', errorText: 'panic: open /etc/app/config.json: no such file or directory', frameText: '\t/home/dev/app/main.go:17 +0x105', fn: 'main.mustLoad' },
  'go-deadlock.txt': { phrase: 'failed with "fatal error: all goroutines are asleep - deadlock!" at main.go:8', errorText: 'fatal error: all goroutines are asleep - deadlock!', frameText: '\t/home/dev/app/main.go:8 +0x3d', fn: 'main.main' },
  'pytest-failures.txt': { phrase: "test_config.py::test_missing failed with KeyError: 'database_url' at test_config.py:5, and 2 more tests failed", errorText: "E       KeyError: 'database_url'", frameText: 'test_config.py:5: KeyError' },
  'pytest-quiet.txt': { phrase: "test_config.py::test_missing failed with KeyError: 'database_url' at test_config.py:5, and 2 more tests failed", errorText: "E       KeyError: 'database_url'", frameText: 'test_config.py:5: KeyError' },
  'pytest-class.txt': { phrase: "test_config.py::TestParse::test_int[x] failed with ValueError: invalid literal for int() with base 10: 'x' at test_config.py:23", errorText: "E       ValueError: invalid literal for int() with base 10: 'x'", frameText: 'test_config.py:23: ValueError' },
  'pytest-collect-error.txt': { phrase: "test_broken.py failed with ModuleNotFoundError: No module named 'missing_module' at test_broken.py:1", errorText: "E   ModuleNotFoundError: No module named 'missing_module'", frameText: 'test_broken.py:1: in <module>' },
  'pytest-tb-no.txt': { phrase: "test_config.py::test_missing failed with KeyError: 'database_url', and 2 more tests failed", errorText: "FAILED test_config.py::test_missing - KeyError: 'database_url'", frameText: null },
};

describe('copies of real reports (test/tracebacks)', () => {
  for (const [file, row] of Object.entries(FIXTURE_ROWS)) {
    it(file, () => {
      check(readFileSync(join(FIXTURES, file), 'utf8'), row);
    });
  }

  it('marks the source line under a Python frame, not its carets', () => {
    const text = readFileSync(join(FIXTURES, 'python3.12-crash_keyerror.txt'), 'utf8');
    const tb = findTraceback(text)!;
    expect(lineOf(text, tb.frame!.sourceLine)).toBe('    return config["database_url"]');
  });

  it("finds pytest's report on stdout when stderr holds none", () => {
    const stdout = readFileSync(join(FIXTURES, 'pytest-failures.txt'), 'utf8');
    const found = findCrash({ stdout, stderr: 'DeprecationWarning: something\n' });
    expect(found?.stream).toBe('stdout');
    expect(found?.traceback.language).toBe('pytest');
  });

  it('finds a report followed by a few more lines (a Makefile recipe), not one followed by many', () => {
    const text = readFileSync(join(FIXTURES, 'python3.12-crash_keyerror.txt'), 'utf8');
    expect(findTraceback(`${text}make: *** [Makefile:3: run] Error 1\n`)).not.toBeNull();
    const logs = Array.from({ length: 6 }, (_, i) => `INFO retry ${i}\n`).join('');
    expect(findTraceback(`${text}${logs}`)).toBeNull();
  });
});

describe('reports made here (python3 and node on this machine)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'warden-tb-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Runs `program` on a file written with `source` in the temp dir; its stderr. */
  const stderrOf = (program: string, name: string, source: string, args: string[] = []): string => {
    writeFileSync(join(dir, name), source);
    // A traceback made here is as a user gets it: no colours, whatever this process's environment says.
    const env = { ...process.env, PYTHON_COLORS: '0', NO_COLOR: '1', FORCE_COLOR: '0', NODE_OPTIONS: '' };
    const run = spawnSync(program, [...args, name], { cwd: dir, env, encoding: 'utf8' });
    expect(run.status, run.stderr).not.toBe(0);
    return run.stderr;
  };

  it('python3: a KeyError in a function of the script', () => {
    const text = stderrOf('python3', 'crash_keyerror.py', 'import json\n\n\ndef load(config):\n    return config["database_url"]\n\n\nsettings = load({"debug": True})\n');
    check(text, { phrase: "raised KeyError: 'database_url' at crash_keyerror.py:5", errorText: "KeyError: 'database_url'", frameText: `  File "${dir}/crash_keyerror.py", line 5, in load`, fn: 'load' }, dir);
  });

  it("python3: an error in the standard library names the script's call", () => {
    const text = stderrOf('python3', 'libcall.py', 'import json\n\ndef parse(text):\n    return json.loads(text)\n\nparse("{bad")\n');
    const tb = check(text, {
      phrase: 'raised json.decoder.JSONDecodeError: Expecting property name enclosed in double quotes: line 1 column 2 (char 1) at libcall.py:4',
      errorText: 'json.decoder.JSONDecodeError: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)',
      frameText: `  File "${dir}/libcall.py", line 4, in parse`,
    }, dir);
    expect(tb.frames.filter((f) => !f.user).length).toBeGreaterThan(0);
  });

  it('python3: the last of chained exceptions', () => {
    const text = stderrOf('python3', 'chained.py', 'def read():\n    try:\n        {}["a"]\n    except KeyError as e:\n        raise RuntimeError("config broken") from e\n\nread()\n');
    check(text, { phrase: 'raised RuntimeError: config broken at chained.py:5', errorText: 'RuntimeError: config broken', frameText: `  File "${dir}/chained.py", line 5, in read` }, dir);
  });

  it('python3: deep recursion, whose repeated frames are counted in one line', () => {
    const text = stderrOf('python3', 'recurse.py', 'def f(n):\n    return f(n + 1)\n\nf(0)\n');
    check(text, { phrase: 'raised RecursionError: maximum recursion depth exceeded at recurse.py:2', errorText: 'RecursionError: maximum recursion depth exceeded', frameText: `  File "${dir}/recurse.py", line 2, in f` }, dir);
  });

  it('python3: an exception group', () => {
    const text = stderrOf('python3', 'group.py', 'def check(rows):\n    raise ExceptionGroup("2 rows failed", [ValueError(f"row {i}") for i in rows])\n\ncheck([3, 7])\n');
    check(text, { phrase: 'raised ExceptionGroup: 2 rows failed (2 sub-exceptions) at group.py:2', errorText: '  | ExceptionGroup: 2 rows failed (2 sub-exceptions)', frameText: `  |   File "${dir}/group.py", line 2, in check` }, dir);
  });

  it('python3: a syntax error in the script itself', () => {
    const text = stderrOf('python3', 'syntax_error.py', 'x = 1\ndef f(:\n    pass\n');
    check(text, { phrase: 'raised SyntaxError: invalid syntax at syntax_error.py:2', errorText: 'SyntaxError: invalid syntax', frameText: `  File "${dir}/syntax_error.py", line 2` }, dir);
  });

  it("python3 -X faulthandler: a segfault's report names the script's innermost frame", () => {
    const text = stderrOf('python3', 'segv.py', 'import ctypes\n\n\ndef poke():\n    ctypes.string_at(0)\n\n\npoke()\n', ['-X', 'faulthandler']);
    check(text, { phrase: 'crashed (Fatal Python error: Segmentation fault) at segv.py:5', errorText: 'Fatal Python error: Segmentation fault', frameText: `  File "${dir}/segv.py", line 5 in poke`, fn: 'poke' }, dir);
  });

  it('node: a TypeError, with the source and caret above it', () => {
    const text = stderrOf(process.execPath, 'crash.js', "function readConfig() {\n  const data = JSON.parse('{}');\n  return data.database.url;\n}\nreadConfig();\n");
    check(text, { phrase: "threw TypeError: Cannot read properties of undefined (reading 'url') at crash.js:3", errorText: "TypeError: Cannot read properties of undefined (reading 'url')", frameText: `    at readConfig (${dir}/crash.js:3:24)`, fn: 'readConfig' }, dir);
  });

  it("node: an ES module's rejected promise, an error with a cause and properties", () => {
    const text = stderrOf(process.execPath, 'server.mjs', "async function connect(host) {\n  const cause = new Error('ECONNREFUSED');\n  throw Object.assign(new Error(`connection refused: ${host}`, { cause }), { code: 'E_DB' });\n}\nawait connect('db');\n");
    check(text, { phrase: 'threw Error: connection refused: db at server.mjs:3', errorText: 'Error: connection refused: db', frameText: `    at connect (file://${dir}/server.mjs:3:23)`, fn: 'connect' }, dir);
  });

  it('node: a value thrown that is no Error has only its place', () => {
    const text = stderrOf(process.execPath, 'string.js', "const config = {};\nif (!config.url) throw 'no url configured';\n");
    check(text, { phrase: 'threw no url configured at string.js:2', errorText: 'no url configured', frameText: `${dir}/string.js:2` }, dir);
  });
});
