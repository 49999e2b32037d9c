// Shared by the store's tests: temp state dirs, synthetic results, and
// child processes running host-testkit.ts (a host to kill, a rival recoverer).

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunResult } from '../../shared/result';
import { PATIENCE_MS } from '../../../test/kit/until';

const here = dirname(fileURLToPath(import.meta.url));
export const TEST_HOST = join(here, 'host-testkit.ts');
export const REPO = join(here, '..', '..', '..');

const dirs: string[] = [];

export function tempStateDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'warden-store-test-'));
  dirs.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

let counter = 0;

/** An ended command run as the engine would report it. */
export function fakeResult(overrides: Partial<RunResult> = {}): RunResult {
  counter++;
  const startedAt = overrides.startedAt ?? new Date(Date.UTC(2025, 0, 1) + counter * 1000).toISOString();
  return {
    id: `run${String(counter).padStart(9, '0')}`,
    kind: 'command',
    argv: ['echo', `hello ${counter}`],
    cwd: '/tmp',
    state: 'ended',
    verdict: 'completed',
    exitCode: 0,
    signal: null,
    startedAt,
    endedAt: new Date(Date.parse(startedAt) + 10).toISOString(),
    elapsedMs: 10,
    limitMs: null,
    advice: null,
    notes: [],
    stdout: `hello ${counter}\n`,
    stderr: '',
    stdoutTruncated: 0,
    stderrTruncated: 0,
    ...overrides,
  };
}

export interface Child {
  proc: ChildProcess;
  /** Resolves with the next line the child prints that parses as JSON. */
  nextJson<T>(timeoutMs?: number): Promise<T>;
  exited: Promise<number | null>;
}

/**
 * Whether `uid` can run host-testkit.ts from this checkout: a clone in a
 * private directory (0700, or a home of 0750) cannot be read by another
 * user. Returns null when it can, else the reason to print with the skip.
 */
export function cannotRunAs(uid: number, file: string = TEST_HOST): string | null {
  if (process.getuid?.() !== 0) return 'switching to another user needs root';
  // setpriv starts this Node still holding root's capabilities; the user's own processes must be able to start it
  // again (a background host, a Python interpreter's Node): a Node under root's 0700 home cannot be.
  const script = `const fs = require('fs');
try { fs.accessSync(${JSON.stringify(file)}, fs.constants.R_OK); } catch { process.exit(2); }
try { require('child_process').execFileSync(process.execPath, ['-e', '0']); } catch { process.exit(3); }`;
  const probe = spawnSync('setpriv', [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', process.execPath, '-e', script], { cwd: '/', encoding: 'utf8' });
  if (probe.error) return `setpriv cannot run (${probe.error.message})`;
  if (probe.status === 3) return `user ${uid} cannot run this Node (${process.execPath}), as when it lies in root's private home`;
  if (probe.status !== 0) return `user ${uid} cannot read this checkout (${REPO}), as in a clone inside a private directory`;
  return null;
}

/** Runs host-testkit.ts in its own Node process (optionally as another user). */
export function startChild(args: string[], options: { uid?: number; env?: Record<string, string> } = {}): Child {
  const node = [process.execPath, '--import', 'tsx', TEST_HOST, ...args];
  const [command, argv] =
    options.uid === undefined ? [node[0]!, node.slice(1)] : ['setpriv', [`--reuid=${options.uid}`, `--regid=${options.uid}`, '--clear-groups', ...node]];
  const proc = spawn(command, argv, { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...options.env } });
  const lines: string[] = [];
  const waiters: ((line: string) => void)[] = [];
  let buffer = '';
  let stderr = '';
  proc.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      const waiter = waiters.shift();
      if (waiter) waiter(line);
      else lines.push(line);
    }
  });
  proc.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  // After 'close' every line the child printed has been read: no line can still come.
  const closed = new Promise<void>((resolve) => proc.on('close', () => resolve()));
  return {
    proc,
    exited,
    nextJson<T>(timeoutMs = PATIENCE_MS): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`child printed nothing in ${timeoutMs} ms; stderr: ${stderr}`)), timeoutMs);
        const take = (line: string) => {
          clearTimeout(timer);
          try {
            resolve(JSON.parse(line) as T);
          } catch {
            reject(new Error(`child printed ${JSON.stringify(line)}; stderr: ${stderr}`));
          }
        };
        const line = lines.shift();
        if (line !== undefined) take(line);
        else {
          waiters.push(take);
          void closed.then(() => reject(new Error(`child exited; stderr: ${stderr}`)));
        }
      });
    },
  };
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie is dead.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) Z/.test(stat);
  } catch {
    return false;
  }
}
