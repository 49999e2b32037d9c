// Owner pids against real processes: the start time read from /proc/PID/stat
// past a command name with spaces and ')', a zombie, a gone pid, and a pid
// whose start time is another real process's (as after the kernel reused
// it). The expected start times are read here without the code under test:
// the test knows each process's command name, so it knows where the fields
// begin. The watch's ticks are driven by fake timers, never by waiting.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { OWNER_CHECK_MS, OwnerPids, processName, processStartTime } from './owner-pids';
import { until } from '../../../test/kit/until';

const children: ChildProcess[] = [];
afterEach(() => {
  vi.useRealTimers();
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

/** A bash that names itself `comm` (as /proc/PID/comm is written) and then waits on its stdin. */
async function named(comm: string): Promise<ChildProcess> {
  const child = spawn('bash', ['-c', 'printf %s "$1" > /proc/$$/comm; echo ready; read -r _', 'named', comm], { stdio: ['pipe', 'pipe', 'ignore'] });
  children.push(child);
  await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
  return child;
}

/** Field `n` (1-based, as proc(5) numbers them) of the process's stat, split where a command name of `comm` ends. */
function statField(pid: number, comm: string, n: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  const prefix = `${pid} (${comm}) `;
  expect(stat.startsWith(prefix), stat).toBe(true);
  return stat.slice(prefix.length).split(' ')[n - 3]!;
}

function stateOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  } catch {
    return undefined;
  }
}

describe('processStartTime and processName', () => {
  it.each([['plain'], ['with spaces'], ['a) b ) c'], [') (x'], ['(('], ['x)']])('reads field 22 past a command name %j', async (comm) => {
    const child = await named(comm);
    const pid = child.pid!;
    const expected = statField(pid, comm, 22);
    expect(Number(expected)).toBeGreaterThan(0);
    expect(processStartTime(pid)).toBe(expected);
    expect(processName(pid)).toBe(comm);
    // Not a field beside it: field 21 (itrealvalue) is always 0, field 23 is the memory size.
    expect(processStartTime(pid)).not.toBe(statField(pid, comm, 21));
    expect(processStartTime(pid)).not.toBe(statField(pid, comm, 23));
  });

  it('a process started a clock tick later has a later start time', async () => {
    const first = await named('first one');
    const firstStart = statField(first.pid!, 'first one', 22);
    // Until the clock has ticked past the first's start (its own start is at least that late).
    let second: ChildProcess;
    for (;;) {
      second = await named('second one');
      if (statField(second.pid!, 'second one', 22) !== firstStart) break;
    }
    expect(Number(processStartTime(second.pid!))).toBeGreaterThan(Number(processStartTime(first.pid!)));
  });

  it('a zombie has exited: it owns nothing, and is no start time', async () => {
    // bash's child ends once bash has become `sleep`, which never reaps it (the test opens the gate then).
    const gate = join(mkdtempSync(join(tmpdir(), 'warden-zombie-')), 'end-now');
    const parent = spawn('bash', ['-c', '(until [ -e "$1" ]; do sleep 0.01; done) & echo "$!"; exec sleep 60', 'zombie', gate], { stdio: ['ignore', 'pipe', 'ignore'] });
    children.push(parent);
    const pid = Number(await new Promise<string>((resolve) => parent.stdout!.once('data', (chunk: Buffer) => resolve(chunk.toString().trim()))));
    await until('bash to become sleep', () => readFileSync(`/proc/${parent.pid}/comm`, 'latin1').trim() === 'sleep');
    expect(processStartTime(pid)).toBe(statField(pid, 'bash', 22));
    writeFileSync(gate, '');
    await until('the child to be a zombie', () => stateOf(pid) === 'Z');
    expect(processStartTime(pid)).toBeNull();
    expect(processName(pid)).toBe('bash');
  });

  it('a pid with no process: null', async () => {
    const gone = spawn('true');
    await new Promise((resolve) => gone.once('exit', resolve));
    expect(processStartTime(gone.pid!)).toBeNull();
    expect(processName(gone.pid!)).toBeNull();
    // Above the kernel's PID_MAX_LIMIT: never a process.
    expect(processStartTime(2 ** 22 + 1)).toBeNull();
  });

  it('a command name of only spaces is no name', async () => {
    const child = await named('   ');
    expect(processName(child.pid!)).toBeNull();
    expect(processStartTime(child.pid!)).toBe(statField(child.pid!, '   ', 22));
  });
});

describe('OwnerPids', () => {
  const note = (label: string, pid: number) =>
    `Its owner, ${label} (pid ${pid}), went away before the run ended, so Warden stopped it: a run an agent starts ends with the agent unless it was started detached.`;

  function watcher(live: Set<string> = new Set(['run-a', 'run-b', 'run-c'])) {
    const gone: [string, string][] = [];
    const owners = new OwnerPids((runId, text) => gone.push([runId, text]), (runId) => live.has(runId));
    return { owners, gone, live };
  }

  // The start times given are read without the code under test (statField): one it misreads makes a live owner look gone.
  it('a live owner keeps its run; once it exits, the next tick stops the run with a note naming it', async () => {
    const agent = await named('claude code');
    const pid = agent.pid!;
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const { owners, gone } = watcher();
    owners.add('run-a', { pid, startTime: statField(pid, 'claude code', 22), label: 'warden mcp for claude-code' });
    vi.advanceTimersByTime(OWNER_CHECK_MS * 3);
    expect(gone).toEqual([]);
    agent.kill('SIGKILL');
    await new Promise((resolve) => agent.once('exit', resolve));
    vi.advanceTimersByTime(OWNER_CHECK_MS - 1);
    expect(gone).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(gone).toEqual([['run-a', note('warden mcp for claude-code', pid)]]);
    // Nothing is watched any more: no timer is left.
    expect(vi.getTimerCount()).toBe(0);
    owners.close();
  });

  it('a pid now another process\'s (a real, different start time) is gone at once, before any tick', async () => {
    const owner = await named('old owner');
    let other: ChildProcess;
    for (;;) {
      other = await named('new process');
      if (statField(other.pid!, 'new process', 22) !== statField(owner.pid!, 'old owner', 22)) break;
    }
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const { owners, gone } = watcher();
    // The pid is the owner's, the start time the one the client saw: another process's.
    owners.add('run-a', { pid: owner.pid!, startTime: statField(other.pid!, 'new process', 22), label: 'agent' });
    await Promise.resolve();
    expect(gone).toEqual([['run-a', note('agent', owner.pid!)]]);
    expect(vi.getTimerCount()).toBe(0);
    // The same pid with its own start time is its owner, alive: kept, tick after tick.
    owners.add('run-b', { pid: owner.pid!, startTime: statField(owner.pid!, 'old owner', 22), label: 'agent' });
    await Promise.resolve();
    vi.advanceTimersByTime(OWNER_CHECK_MS * 3);
    expect(gone.map(([runId]) => runId)).toEqual(['run-a']);
    owners.close();
  });

  it('a run that ended meanwhile is dropped without a stop; runs of one owner all go on the same tick', async () => {
    const agent = await named('codex');
    const pid = agent.pid!;
    const startTime = statField(pid, 'codex', 22);
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const { owners, gone, live } = watcher();
    for (const runId of ['run-a', 'run-b', 'run-c']) owners.add(runId, { pid, startTime, label: 'codex' });
    live.delete('run-b');
    vi.advanceTimersByTime(OWNER_CHECK_MS);
    expect(gone).toEqual([]);
    agent.kill('SIGKILL');
    await new Promise((resolve) => agent.once('exit', resolve));
    vi.advanceTimersByTime(OWNER_CHECK_MS);
    expect(gone.map(([runId]) => runId)).toEqual(['run-a', 'run-c']);
    vi.advanceTimersByTime(OWNER_CHECK_MS * 4);
    expect(gone).toHaveLength(2);
    owners.close();
  });

  it('close() stops watching: nothing is stopped after it, and no timer is left', async () => {
    const agent = await named('gemini');
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const { owners, gone } = watcher();
    owners.add('run-a', { pid: agent.pid!, startTime: statField(agent.pid!, 'gemini', 22), label: 'gemini' });
    expect(vi.getTimerCount()).toBe(1);
    owners.close();
    expect(vi.getTimerCount()).toBe(0);
    agent.kill('SIGKILL');
    await new Promise((resolve) => agent.once('exit', resolve));
    vi.advanceTimersByTime(OWNER_CHECK_MS * 4);
    expect(gone).toEqual([]);
  });

  it('owners added while one is watched share one timer', async () => {
    const a = await named('owner a');
    const b = await named('owner b');
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const { owners, gone } = watcher();
    owners.add('run-a', { pid: a.pid!, startTime: statField(a.pid!, 'owner a', 22), label: 'a' });
    owners.add('run-b', { pid: b.pid!, startTime: statField(b.pid!, 'owner b', 22), label: 'b' });
    expect(vi.getTimerCount()).toBe(1);
    b.kill('SIGKILL');
    await new Promise((resolve) => b.once('exit', resolve));
    vi.advanceTimersByTime(OWNER_CHECK_MS);
    expect(gone.map(([runId]) => runId)).toEqual(['run-b']);
    // One still watched: the timer stays.
    expect(vi.getTimerCount()).toBe(1);
    owners.close();
  });
});
