// Starting a command: from an argv array (a shell only when asked), in its own
// process group, stdin from /dev/null unless given, with the scope marker in
// its environment. A command that cannot start is described exactly, with the
// exit status a shell would give (127 not found, 126 cannot run), never thrown.
//
// Through execa (the process library the design names), with every option
// that would do the engine's work set off: the engine reads the raw pipes,
// sends its own signals to the group and tears it down itself, so execa keeps
// no output (buffer: false), decodes nothing, kills nothing (no cleanup, no
// forceKillAfterDelay), logs nothing (verbose: 'none', whatever NODE_DEBUG
// says) and never rejects. No cheaper set of options exists: what execa adds
// per run is its own setup and waiting, measured in bench (a).

import { subscribe } from 'node:diagnostics_channel';
import { EventEmitter } from 'node:events';
import { closeSync, constants, accessSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import type { Duplex, Readable, Writable } from 'node:stream';
import { execa } from 'execa';

export interface SpawnSpec {
  argv: string[];
  shell: boolean;
  cwd: string;
  env: Record<string, string | undefined>;
  stdin?: string;
  /** Keep a pipe on stdin open (the caller writes to subprocess.stdin); without it and `stdin`, /dev/null. */
  stdinPipe?: boolean;
  /**
   * A fourth stdio entry: fd 3 in the child is one end of a socket pair, the
   * parent's end is `subprocess.stdio[3]` (a Duplex, read and written). Attach
   * its 'data' listener at once: a pipe nobody reads is set flowing a tick
   * after the spawn, and what it carried until then is gone.
   */
  extraPipe?: boolean;
}

export interface SpawnFailure {
  /** The exact cause, for the reader. */
  cause: string;
  /** What a shell would exit with: 127 not found, 126 found but cannot run. */
  status: 126 | 127;
}

/**
 * What the engine uses of a started process (execa's subprocess is a
 * ChildProcess with its streams as spawned). `pid` is undefined when it
 * could not start, and then an 'error' event always follows.
 */
export type Subprocess = Pick<ChildProcess, 'pid' | 'on' | 'once' | 'off' | 'kill'> & {
  readonly stdin: Writable | null;
  readonly stdout: Readable | null;
  readonly stderr: Readable | null;
  /** By fd: 0-2 as above, then the extra pipes (Duplex). */
  readonly stdio: readonly (Readable | Writable | Duplex | null | undefined)[];
};

/** The argv actually executed: `--shell` runs the words joined through /bin/sh -c. */
export function effectiveArgv(spec: Pick<SpawnSpec, 'argv' | 'shell'>): string[] {
  return spec.shell ? ['/bin/sh', '-c', spec.argv.join(' ')] : spec.argv;
}

const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'ash', 'busybox', 'fish']);

export function isShell(argv: string[]): boolean {
  const name = (argv[0] ?? '').split('/').pop() ?? '';
  return SHELLS.has(name);
}

/** Checks what can be checked before spawning, so the reader gets the real cause. */
export function checkSpawnable(spec: SpawnSpec): SpawnFailure | undefined {
  const found = locate(spec);
  return 'cause' in found ? found : undefined;
}

/**
 * checkSpawnable, and for a command run through a wrapper (a cgroup's or the
 * subreaper's) its #! interpreter too: there a missing interpreter would read
 * as the wrapper's own exit 127 instead of the exact cause. One PATH walk.
 */
export function checkSpawnableWrapped(spec: SpawnSpec): SpawnFailure | undefined {
  const found = locate(spec);
  if ('cause' in found) return found;
  const interpreter = shebangOf(found.path);
  if (interpreter === undefined || !interpreter.startsWith('/')) return undefined;
  try {
    accessSync(interpreter, constants.X_OK);
    return undefined;
  } catch {
    return { cause: `${effectiveArgv(spec)[0]} names the interpreter ${interpreter} in its #! line, and it was not found.`, status: 126 };
  }
}

/** The file the command runs, or why it cannot run. */
function locate(spec: SpawnSpec): SpawnFailure | { path: string } {
  try {
    if (!statSync(spec.cwd).isDirectory()) {
      return { cause: `The working directory ${spec.cwd} is not a directory.`, status: 126 };
    }
  } catch {
    return { cause: `The working directory ${spec.cwd} does not exist.`, status: 126 };
  }
  const command = effectiveArgv(spec)[0];
  if (command === undefined || command === '') return { cause: 'No command was given.', status: 127 };
  if (command.includes('/')) {
    const path = isAbsolute(command) ? command : resolve(spec.cwd, command);
    return checkFile(path, command) ?? { path };
  }
  const dirs = (spec.env.PATH ?? '').split(delimiter).filter(Boolean);
  let notExecutable: SpawnFailure | undefined;
  for (const dir of dirs) {
    const candidate = resolve(spec.cwd, join(dir, command));
    const failure = checkFile(candidate, command);
    if (failure === undefined) return { path: candidate };
    if (failure.status === 126) notExecutable ??= failure;
  }
  return notExecutable ?? { cause: `${command} not found on PATH.`, status: 127 };
}

function checkFile(path: string, shown: string): SpawnFailure | undefined {
  try {
    if (statSync(path).isDirectory()) return { cause: `${shown} is a directory, not a program.`, status: 126 };
  } catch {
    return { cause: `${shown} not found.`, status: 127 };
  }
  try {
    accessSync(path, constants.X_OK);
  } catch {
    return { cause: `${shown} is not executable (permission denied): chmod +x it or run it through its interpreter.`, status: 126 };
  }
  return undefined;
}

/** Explains an error from spawn itself, when the checks above passed (a bad #! line, a race). */
export function describeSpawnError(error: { code?: string; message?: string }, spec: SpawnSpec): SpawnFailure {
  const command = effectiveArgv(spec)[0] ?? '';
  if (error.code === 'ENOENT') {
    const interpreter = shebangOf(isAbsolute(command) ? command : resolve(spec.cwd, command));
    if (interpreter !== undefined) {
      return { cause: `${command} names the interpreter ${interpreter} in its #! line, and it was not found.`, status: 126 };
    }
    return { cause: `${command} not found.`, status: 127 };
  }
  if (error.code === 'EACCES') return { cause: `${command} could not be executed (permission denied).`, status: 126 };
  if (error.code === 'ENOEXEC') return { cause: `${command} is not in a format this system can execute.`, status: 126 };
  const limit = limitLine(error.code);
  if (limit !== undefined) return { cause: `${command} could not be started: ${limit}`, status: 126 };
  return { cause: `${command} could not be started: ${error.code ?? error.message ?? 'unknown error'}.`, status: 126 };
}

/** This process's RLIMIT_NOFILE and RLIMIT_NPROC (soft), read once: at the moment they matter no file can be opened to read them. */
const LIMITS = ((): { files: string; processes: string } => {
  const found = { files: 'unknown', processes: 'unknown' };
  try {
    const text = readFileSync('/proc/self/limits', 'latin1');
    found.files = /^Max open files\s+(\S+)/m.exec(text)?.[1] ?? found.files;
    found.processes = /^Max processes\s+(\S+)/m.exec(text)?.[1] ?? found.processes;
  } catch {
    // not Linux
  }
  return found;
})();

/** The limit an EMFILE, ENFILE or EAGAIN from spawn ran into, in one line; undefined for any other error. */
export function limitLine(code: string | undefined): string | undefined {
  if (code === 'EMFILE') return `Warden has no file descriptor left for its pipes (EMFILE: its limit RLIMIT_NOFILE is ${LIMITS.files}, ulimit -n). Warden goes on; run it again when runs have ended, or raise the limit.`;
  if (code === 'ENFILE') return 'the system has no file left for its pipes (ENFILE: the kernel\'s table, fs.file-max, is full). Warden goes on; run it again when files have been closed.';
  if (code === 'EAGAIN') return `the system refused a new process (EAGAIN: the process limit RLIMIT_NPROC, ${LIMITS.processes}, ulimit -u, or memory). Warden goes on; run it again later.`;
  return undefined;
}

/** The interpreter a #! line names; only the first 256 bytes are read (a command may be a large binary). */
function shebangOf(path: string): string | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const buffer = Buffer.alloc(256);
    const head = buffer.toString('latin1', 0, readSync(fd, buffer, 0, buffer.length, 0));
    if (!head.startsWith('#!')) return undefined;
    return head.slice(2).split('\n')[0]!.trim().split(/\s+/)[0];
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

export function spawnCommand(spec: SpawnSpec): Subprocess {
  const [file, ...args] = effectiveArgv(spec);
  const child = spawnProcess(file!, args, {
    cwd: spec.cwd,
    env: spec.env,
    stdin: spec.stdin !== undefined || spec.stdinPipe ? 'pipe' : 'ignore',
    extraPipes: spec.extraPipe ? 1 : 0,
  });
  if (spec.stdin !== undefined && child.stdin) {
    child.stdin.on('error', () => undefined); // a command that does not read its input is not an error
    child.stdin.end(spec.stdin);
  }
  return child;
}


export interface ProcessOptions {
  cwd: string;
  /** The whole environment: nothing of this process's is added. */
  env: Record<string, string | undefined>;
  stdin: 'ignore' | 'pipe';
  /** Pipes after stderr, as fd 3, 4, ... in the child. */
  extraPipes: number;
}

/** The ChildProcess Node makes inside the execa call running now (node:diagnostics_channel 'child_process'). */
let capturing: { child: ChildProcess | undefined } | undefined;
subscribe('child_process', (message) => {
  if (capturing && capturing.child === undefined) capturing.child = (message as { process: ChildProcess }).process;
});

/**
 * What a caller gets for a process that did not start: no pid, no streams,
 * and the child's own 'error' (with its code) a tick later, as from spawn.
 */
function notStarted(child: ChildProcess): Subprocess {
  const standIn = new EventEmitter() as EventEmitter & { pid: undefined; stdin: null; stdout: null; stderr: null; stdio: []; kill: () => boolean };
  Object.assign(standIn, { pid: undefined, stdin: null, stdout: null, stderr: null, stdio: [], kill: () => false });
  let said = false;
  const say = (error: Error) => {
    if (said) return;
    said = true;
    // Our listener on the child is there before its 'error' comes, so that can never throw.
    if (standIn.listenerCount('error') > 0) standIn.emit('error', error);
  };
  child.on('error', say);
  return standIn as unknown as Subprocess;
}

/**
 * One process, detached (its own process group and session), through execa
 * with the options that leave the pipes, the signals and the teardown to the
 * engine. Fails like child_process.spawn: a throw for bad options, else
 * `pid` undefined and an 'error' event.
 */
export function spawnProcess(file: string, args: string[], options: ProcessOptions): Subprocess {
  const stdio: ['ignore' | 'pipe', 'pipe', 'pipe', ...'pipe'[]] = [options.stdin, 'pipe', 'pipe'];
  for (let i = 0; i < options.extraPipes; i++) stdio.push('pipe');
  // A fresh options object each call: execa writes into the one it is given.
  let subprocess: ReturnType<typeof execa>;
  capturing = { child: undefined };
  const capture = capturing;
  try {
    subprocess = execa(file, args, {
    cwd: options.cwd,
    env: options.env,
    extendEnv: false,
    detached: true,
    stdio,
    buffer: false,
    encoding: 'buffer',
    stripFinalNewline: false,
    reject: false,
    cleanup: false,
    forceKillAfterDelay: false,
    // Else NODE_DEBUG=execa would turn on its logging, which reads the pipes too.
    verbose: 'none',
    });
  } catch (error) {
    // Where the kernel refuses the pipes or the process (EMFILE, ENFILE, EAGAIN), Node's spawn
    // returns early without stdio and emits 'error' on the next tick; execa then throws at once
    // (subprocess.stdio is not iterable) and never listens, so that 'error' would end this
    // process and every run in it. The ChildProcess it made was caught on its way out.
    if (capture.child === undefined || capture.child.pid !== undefined) throw error;
    return notStarted(capture.child);
  } finally {
    capturing = undefined;
  }
  let failedToStart = false;
  subprocess.on('error', () => (failedToStart = true));
  // reject: false resolves every ending; this catch is so that nothing, not even a fault in
  // execa, can become an unhandled rejection in the host.
  void subprocess.then(
    (result) => {
      // Where spawn() threw (a NUL byte in argv or env), execa returns a stand-in that never
      // emits 'error': emit it, so every caller has one failure path. (Our own listener above
      // is there, so emitting cannot throw.)
      if (subprocess.pid === undefined && !failedToStart) subprocess.emit('error', result.cause ?? new Error(result.shortMessage));
    },
    () => undefined,
  );
  return subprocess as unknown as Subprocess;
}
