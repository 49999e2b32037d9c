// `warden run` as a Kubernetes container runs it: PID 1 of a PID namespace of
// its own (`unshare --pid --fork --mount-proc`), KUBERNETES_SERVICE_HOST set,
// --termination-log to a file. Every verdict ends in the k8s contract's
// status (src/cli/exit-codes.ts) and a message within 4,096 bytes that names
// the contract; an OOM kill in a memory cgroup gets --oom-exit-code; a
// SIGTERM to PID 1 (a pod's deletion) is 143.
//
// Each namespace's Warden runs inside a memory cgroup made for this file, so
// its sweep of stale run cgroups (it cannot see pids outside its namespace,
// and takes their owners for gone) reaches only its own.

import { execa, type ResultPromise } from 'execa';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TERMINATION_LOG_BYTES } from './termination-log';
import { WARDEN_BIN } from './testkit';

const dir = mkdtempSync(join(tmpdir(), 'wk8spod-'));
const root = process.getuid?.() === 0;
const unshare = root && spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true']).status === 0;

/** A memory cgroup of this file's own under this process's, where one can be made (cgroup v1 as root here). */
function ownMemoryCgroup(): string | null {
  const line = readFileSync('/proc/self/cgroup', 'utf8').split('\n').find((l) => /^\d+:memory:/.test(l));
  const mount = '/sys/fs/cgroup/memory';
  if (!line || !existsSync(join(mount, 'memory.limit_in_bytes'))) return null;
  const path = join(mount, line.slice(line.indexOf(':memory:') + ':memory:'.length), `wk8spod-${process.pid}`);
  try {
    mkdirSync(path, { recursive: true });
    return path;
  } catch {
    return null;
  }
}
const cgroup = root ? ownMemoryCgroup() : null;

/** Removes a cgroup tree, killing what is left in it (the namespace's Warden is gone; its runs' cgroups may stay). */
function removeCgroup(path: string): void {
  for (const entry of readdirSync(path, { withFileTypes: true })) if (entry.isDirectory()) removeCgroup(join(path, entry.name));
  for (const pid of readFileSync(join(path, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean)) {
    try {
      process.kill(Number(pid), 'SIGKILL');
    } catch {
      // gone
    }
  }
  for (let i = 0; i < 100; i++) {
    try {
      rmdirSync(path);
      return;
    } catch {
      // busy a moment after the kill
    }
  }
}

afterAll(() => {
  if (cgroup) removeCgroup(cgroup);
  rmSync(dir, { recursive: true, force: true });
});

let n = 0;
interface PodEnd {
  exitCode: number;
  message: Record<string, unknown>;
  bytes: number;
  stderr: string;
}

/** `warden run ARGS --termination-log FILE -- COMMAND` as PID 1 of a new PID namespace: the unshare process, and how it ended. */
function inPod(args: string[], command: string[], env: Record<string, string> = {}): { child: ResultPromise; end: Promise<PodEnd> } {
  const log = join(dir, `termination-${++n}.log`);
  const stateDir = join(dir, `state-${n}`);
  const join_ = cgroup ? `echo $$ > ${cgroup}/cgroup.procs && ` : '';
  const child = execa('sh', ['-c', `${join_}exec unshare --pid --fork --mount-proc "$@"`, 'pod', process.execPath, WARDEN_BIN, 'run', ...args, '--termination-log', log, '--', ...command], {
    reject: false,
    env: { WARDEN_STATE_DIR: stateDir, KUBERNETES_SERVICE_HOST: '10.96.0.1', WARDEN_HOST_IDLE: '60s', ...env },
    extendEnv: true,
    stdin: 'ignore',
    timeout: 60_000,
  });
  const end = child.then((done) => {
    const text = existsSync(log) ? readFileSync(log, 'utf8') : '{}';
    return { exitCode: done.exitCode ?? -1, message: JSON.parse(text) as Record<string, unknown>, bytes: Buffer.byteLength(text), stderr: String(done.stderr) };
  });
  return { child, end };
}

/** The pid (in this namespace) of PID 1 of the pod: the child unshare forked. */
function podInit(unsharePid: number): number {
  for (let i = 0; i < 200; i++) {
    try {
      const children = readFileSync(`/proc/${unsharePid}/task/${unsharePid}/children`, 'utf8').trim();
      if (children) return Number(children.split(' ')[0]);
    } catch {
      // not yet
    }
  }
  throw new Error('unshare forked no child');
}

describe.skipIf(!unshare)('warden run in a pod (a PID namespace, KUBERNETES_SERVICE_HOST set)', () => {
  it('every verdict ends in its k8s status, with the contract named in a message within 4,096 bytes', async () => {
    const rows: [string, string[], string[], number, Record<string, unknown>][] = [
      ['completed', [], ['true'], 0, { verdict: 'completed', exitCode: 0 }],
      ['failed: its own code', [], ['bash', '-c', 'exit 3'], 3, { verdict: 'failed', exitCode: 3 }],
      ['timed out', ['--limit', '300ms'], ['sleep', '30'], 124, { verdict: 'timed-out', limitMs: 300 }],
      ['not found', [], ['warden-no-such-command'], 127, { verdict: 'spawn-failed' }],
      ['killed by a SIGKILL it did not get from Warden', [], ['bash', '-c', 'kill -KILL $$'], 137, { verdict: 'killed', signal: 'SIGKILL' }],
      ['signaled', [], ['bash', '-c', 'kill -USR1 $$'], 138, { verdict: 'signaled', signal: 'SIGUSR1' }],
      ['crashed', [], ['bash', '-c', 'kill -SEGV $$'], 139, { verdict: 'crashed', signal: 'SIGSEGV' }],
    ];
    for (const [name, args, command, status, fields] of rows) {
      const got = await inPod(args, command).end;
      expect(got.exitCode, `${name}: ${got.stderr}`).toBe(status);
      expect(got.message, name).toMatchObject({ ...fields, exit: status, exitCodes: 'k8s/v1', state: 'ended', kind: 'command', argv: command });
      expect(got.bytes, name).toBeLessThanOrEqual(TERMINATION_LOG_BYTES);
    }
  }, 120_000);

  it("Warden's own error is 125, and the message says why and names the contract", async () => {
    // No process has this pid (above Linux's largest pid_max): refused before it starts.
    const got = await inPod(['--owner-pid', '4194305'], ['true']).end;
    expect(got.exitCode).toBe(125);
    expect(got.message).toEqual({ verdict: null, state: 'not-started', exit: 125, exitCodes: 'k8s/v1', error: '--owner-pid 4194305: no such process is running.' });
  }, 60_000);

  it('a SIGTERM to PID 1 (the pod deleted) stops the run: 143 under k8s, 130 (its SIGINT) under standard', async () => {
    for (const [contract, status] of [['k8s', 143], ['standard', 130]] as const) {
      const { child, end } = inPod(['--exit-codes', contract], ['bash', '-c', 'echo ready; sleep 30']);
      // The run's first line is out: warden (PID 1 there) has its handlers and the run is live.
      await new Promise<void>((resolve) => {
        let seen = '';
        child.stdout!.on('data', (chunk: Buffer) => {
          seen += chunk.toString();
          if (seen.includes('ready')) resolve();
        });
      });
      process.kill(podInit(child.pid!), 'SIGTERM');
      const got = await end;
      expect(got.exitCode, got.stderr).toBe(status);
      expect(got.message).toMatchObject({ verdict: 'stopped', exit: status, exitCodes: `${contract}/v1` });
    }
  }, 60_000);

  it.skipIf(!cgroup)('an OOM kill in its --memory limit is --oom-exit-code (default 137), oom true', async () => {
    const hog = ['python3', '-c', 'a = []\nwhile True: a.append(bytearray(10**6))'];
    const distinct = await inPod(['--memory', '64M', '--oom-exit-code', '75'], hog).end;
    expect(distinct.exitCode, distinct.stderr).toBe(75);
    expect(distinct.message).toMatchObject({ verdict: 'killed', exit: 75, exitCodes: 'k8s/v1', signal: 'SIGKILL', oom: true });
    const plain = await inPod(['--memory', '64M'], hog).end;
    expect(plain.exitCode, plain.stderr).toBe(137);
    expect(plain.message).toMatchObject({ verdict: 'killed', exit: 137, oom: true });
    expect(distinct.bytes).toBeLessThanOrEqual(TERMINATION_LOG_BYTES);
  }, 60_000);

  it('a long output still fits in 4,096 bytes, argv and the contract included', async () => {
    const script = 'for i in $(seq 1 3000); do echo "out line $i"; echo "err line $i" >&2; done; exit 9';
    const got = await inPod([], ['bash', '-c', script, 'x'.repeat(2000)]).end;
    expect(got.exitCode).toBe(9);
    expect(got.bytes).toBeLessThanOrEqual(TERMINATION_LOG_BYTES);
    expect(got.message).toMatchObject({ exit: 9, exitCodes: 'k8s/v1', argv: ['bash', '-c', script, '…'] });
    expect(String(got.message.stdout).endsWith('out line 3000\n')).toBe(true);
  }, 60_000);
});

if (!unshare) console.warn(`exit-codes-pod.test: skipped: ${root ? 'unshare --pid --fork --mount-proc does not work here' : 'not root, so no PID namespace'}`);
