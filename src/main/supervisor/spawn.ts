// Starting a command: from an argv array (a shell only when asked), in its own
// process group, stdin from /dev/null unless given, with the scope marker in
// its environment. A command that cannot start is described exactly, with the
// exit status a shell would give (127 not found, 126 cannot run), never thrown.
//
// node:child_process, not execa: the engine uses none of execa's features (it
// reads the pipes, sends its own signals and tears down the group itself), and
// execa's per-call work cost half a spawn again on our machines (bench (a):
// execa alone 1.5x a plain spawn, the whole engine 1.5-1.7x with it and
// 1.0-1.1x without), which broke the 1.3x target for spawn overhead.

import { constants, accessSync, readFileSync, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';

export interface SpawnSpec {
  argv: string[];
  shell: boolean;
  cwd: string;
  env: Record<string, string | undefined>;
  stdin?: string;
  /** A fourth stdio entry, a pipe: fd 3 in the child (a wrapper's status pipe). */
  extraPipe?: boolean;
}

export interface SpawnFailure {
  /** The exact cause, for the reader. */
  cause: string;
  /** What a shell would exit with: 127 not found, 126 found but cannot run. */
  status: 126 | 127;
}

export type Subprocess = ChildProcess;

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
  try {
    if (!statSync(spec.cwd).isDirectory()) {
      return { cause: `The working directory ${spec.cwd} is not a directory.`, status: 126 };
    }
  } catch {
    return { cause: `The working directory ${spec.cwd} does not exist.`, status: 126 };
  }
  const command = effectiveArgv(spec)[0];
  if (command === undefined || command === '') return { cause: 'No command was given.', status: 127 };
  if (command.includes('/')) return checkFile(isAbsolute(command) ? command : resolve(spec.cwd, command), command);
  const dirs = (spec.env.PATH ?? '').split(delimiter).filter(Boolean);
  let notExecutable: SpawnFailure | undefined;
  for (const dir of dirs) {
    const candidate = resolve(spec.cwd, join(dir, command));
    const failure = checkFile(candidate, command);
    if (failure === undefined) return undefined;
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
  return { cause: `${command} could not be started: ${error.code ?? error.message ?? 'unknown error'}.`, status: 126 };
}

function shebangOf(path: string): string | undefined {
  try {
    const head = readFileSync(path, { encoding: 'latin1', flag: 'r' }).slice(0, 256);
    if (!head.startsWith('#!')) return undefined;
    return head.slice(2).split('\n')[0]!.trim().split(/\s+/)[0];
  } catch {
    return undefined;
  }
}

export function spawnCommand(spec: SpawnSpec): Subprocess {
  const [file, ...args] = effectiveArgv(spec);
  const child = spawn(file!, args, {
    cwd: spec.cwd,
    env: spec.env,
    detached: true,
    stdio: [spec.stdin !== undefined ? 'pipe' : 'ignore', 'pipe', 'pipe', ...(spec.extraPipe ? (['pipe'] as const) : [])],
  });
  if (spec.stdin !== undefined && child.stdin) {
    child.stdin.on('error', () => undefined); // a command that does not read its input is not an error
    child.stdin.end(spec.stdin);
  }
  return child;
}

/**
 * Checks a script's #! interpreter before it is run through a wrapper (a
 * cgroup's or the subreaper's), where a missing interpreter would read as the
 * wrapper's own exit 127 instead of the exact cause.
 */
export function checkInterpreter(spec: SpawnSpec): SpawnFailure | undefined {
  const command = effectiveArgv(spec)[0] ?? '';
  let path: string | undefined;
  if (command.includes('/')) path = isAbsolute(command) ? command : resolve(spec.cwd, command);
  else {
    for (const dir of (spec.env.PATH ?? '').split(delimiter).filter(Boolean)) {
      const candidate = resolve(spec.cwd, join(dir, command));
      if (checkFile(candidate, command) === undefined) {
        path = candidate;
        break;
      }
    }
  }
  if (path === undefined) return undefined;
  const interpreter = shebangOf(path);
  if (interpreter === undefined || !interpreter.startsWith('/')) return undefined;
  try {
    accessSync(interpreter, constants.X_OK);
    return undefined;
  } catch {
    return { cause: `${command} names the interpreter ${interpreter} in its #! line, and it was not found.`, status: 126 };
  }
}
