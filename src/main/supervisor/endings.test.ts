// How real runs end, and the verdict, notes and advice each ending gets
// (docs/architecture.md, "Verdicts" and "The deadline sequence"). Real processes and
// real signals only. Times are asserted from what the result RECORDS (on the
// engine's monotonic clock), never from the test's own stopwatch, except for
// generous bounds that only catch a hang.

import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunResult } from '../../shared/result';
import { Harness } from './proc-testkit';

let h: Harness;
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'warden-endings-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
beforeEach(() => {
  h = new Harness();
});
afterEach(async () => {
  await h.cleanup();
});

/** The signals of the stop record, in the order they were sent. */
function signalsSent(r: RunResult): string[] {
  return (r.stop?.signals ?? []).map((s) => s.signal);
}

describe('exit codes', () => {
  it('exit 0 is completed, with no advice and the output kept', async () => {
    const r = await h.run({ argv: ['bash', '-c', 'echo out; echo err >&2'] });
    expect(r).toMatchObject({ state: 'ended', verdict: 'completed', exitCode: 0, signal: null, advice: null, stdout: 'out\n', stderr: 'err\n' });
    expect(r.stop).toBeUndefined();
    expect(r.endedAt).toBeDefined();
  });

  it('exit 3 is failed with exit code 3, stdout and stderr kept, advice pointing at stderr', async () => {
    const r = await h.run({ argv: ['bash', '-c', 'echo partial result; echo "boom: bad input" >&2; exit 3'], limitMs: 600_000 });
    expect(r).toMatchObject({ verdict: 'failed', exitCode: 3, signal: null, stdout: 'partial result\n', stderr: 'boom: bad input\n' });
    expect(r.advice).toMatch(/stderr/);
    expect(r.stop).toBeUndefined();
  });
});

describe('early 137 and 124 are not timeouts', () => {
  it('a SIGKILL nobody here sent, long before the limit, is killed (not timed-out) with a note naming elapsed time and limit', async () => {
    // A limit far off (10 min): however slow the machine, the run ends long before it.
    const r = await h.run({ argv: ['bash', '-c', 'sleep 0.3; kill -9 $$'], limitMs: 600_000 });
    expect(r.verdict).toBe('killed');
    expect(r.verdict).not.toBe('timed-out');
    expect(r.signal).toBe('SIGKILL');
    expect(r.exitCode).toBeNull();
    expect(r.stop).toBeUndefined(); // the deadline engine never started
    // Recorded time: it ran the 0.3 s sleep (before the limit: no stop record, above).
    expect(r.elapsedMs).toBeGreaterThanOrEqual(250);
    const note = r.notes.find((n) => /before the 10 min limit/.test(n));
    expect(note, JSON.stringify(r.notes)).toBeDefined();
    expect(note).toMatch(/after \d+(\.\d+)? s, before the 10 min limit/);
    expect(r.advice).toMatch(/out-of-memory/);
  });

  it('exit CODE 137 from a shell whose child was SIGKILLed is failed, noting 137 and SIGKILL / out-of-memory', async () => {
    // The inner bash SIGKILLs itself; the outer one reports 128 + 9 (the `exit $?`
    // keeps bash from exec-ing the inner command, which would make it a signal).
    const r = await h.run({ argv: ['bash', '-c', 'bash -c "kill -9 \\$\\$"; exit $?'], limitMs: 600_000 });
    expect(r).toMatchObject({ verdict: 'failed', exitCode: 137, signal: null });
    expect(r.stop).toBeUndefined();
    const note = r.notes.find((n) => n.includes('137'));
    expect(note, JSON.stringify(r.notes)).toBeDefined();
    expect(note).toMatch(/SIGKILL/);
    expect(note).toMatch(/out-of-memory/);
    expect(note).toMatch(/before the 10 min limit/);
    expect(r.notes.join(' ')).not.toMatch(/timed out|stopped at the/i);
  });

  it('a nested `timeout 1 sleep 5` under a 10 min limit is failed with 124: the limit did not stop it', async () => {
    const r = await h.run({ argv: ['timeout', '1', 'sleep', '5'], limitMs: 600_000 });
    expect(r).toMatchObject({ verdict: 'failed', exitCode: 124, signal: null });
    expect(r.stop).toBeUndefined();
    const note = r.notes.find((n) => n.includes('124'));
    expect(note, JSON.stringify(r.notes)).toMatch(/limit did not stop it/i);
    expect(note).toMatch(/before the 10 min limit/);
    expect(r.advice).toMatch(/timeout/);
  });
});

describe('the deadline', () => {
  it('sleep past a 1 s limit: timed-out at the interrupt step, SIGINT then SIGCONT, output before the limit kept', async () => {
    const r = await h.run({ argv: ['bash', '-c', 'echo before; sleep 30'], limitMs: 1_000 });
    expect(r.verdict).toBe('timed-out');
    expect(r.stop).toBeDefined();
    expect(r.stop!.reason).toBe('deadline');
    expect(r.stop!.endedBy).toBe('interrupt');
    expect(signalsSent(r)).toEqual(['SIGINT', 'SIGCONT']);
    // Recorded on the engine's clock: the stop began at the limit, not before (how late a
    // loaded machine's timer fires is the deadline benchmark's, bench/deadline.ts).
    expect(r.stop!.requestedAtMs).toBeGreaterThanOrEqual(1_000 - 2);
    expect(r.elapsedMs).toBeGreaterThanOrEqual(r.stop!.requestedAtMs);
    expect(r.stdout).toBe('before\n');
    expect(r.advice).toMatch(/Raise the limit/);
    expect(r.notes.join(' ')).toMatch(/1 s limit/);
  });

  it('a command ignoring INT and TERM is killed at the grace: SIGINT, SIGTERM, SIGKILL in order, timed from the request', async () => {
    const graceMs = 1_000;
    const r = await h.run({
      argv: ['bash', '-c', 'trap "" INT TERM; echo ready; while :; do sleep 0.05; done'],
      limitMs: 300,
      terminateAfterMs: 300,
      graceMs,
    });
    expect(r.verdict).toBe('timed-out');
    expect(r.signal).toBe('SIGKILL');
    expect(r.stdout).toBe('ready\n');
    const stop = r.stop!;
    expect(stop).toMatchObject({ reason: 'deadline', endedBy: 'kill' });
    const main = signalsSent(r).filter((s) => s !== 'SIGCONT');
    expect(main).toEqual(['SIGINT', 'SIGTERM', 'SIGKILL']);
    // SIGCONT goes with SIGINT and SIGTERM, so a stopped process sees them.
    expect(signalsSent(r)).toEqual(['SIGINT', 'SIGCONT', 'SIGTERM', 'SIGCONT', 'SIGKILL']);
    const at = (name: string) => stop.signals.find((s) => s.signal === name)!.atMs;
    // The recorded times (ms since start, rounded; Node's timers run on a
    // millisecond-cached clock, so allow a couple of ms below the nominal step). Each step
    // comes no earlier than its time; how late is the deadline benchmark's (bench/deadline.ts).
    expect(at('SIGINT')).toBeGreaterThanOrEqual(stop.requestedAtMs);
    expect(at('SIGTERM') - stop.requestedAtMs).toBeGreaterThanOrEqual(300 - 2);
    expect(at('SIGKILL') - stop.requestedAtMs).toBeGreaterThanOrEqual(graceMs - 2);
    expect(at('SIGINT')).toBeLessThanOrEqual(at('SIGTERM'));
    expect(at('SIGTERM')).toBeLessThanOrEqual(at('SIGKILL'));
    expect(r.advice).toMatch(/ignored SIGINT and SIGTERM/);
  });

  it('a command that SIGSTOPs itself still ends at the limit: SIGCONT lets it see the SIGINT', async () => {
    const r = await h.run({
      argv: ['bash', '-c', 'kill -STOP $$; echo after'],
      limitMs: 500,
      // Far enough apart that only the first step's SIGCONT can explain an end at SIGINT.
      terminateAfterMs: 3_000,
      graceMs: 6_000,
    });
    expect(r.verdict).toBe('timed-out');
    expect(r.stop).toMatchObject({ reason: 'deadline', endedBy: 'interrupt' });
    expect(signalsSent(r)).toEqual(['SIGINT', 'SIGCONT']);
    expect(r.signal).toBe('SIGINT');
  });
});

describe('signals nobody here sent', () => {
  it('a Python segfault under faulthandler is crashed (SIGSEGV), advice points at its crash report in stderr', async () => {
    const r = await h.run({ argv: ['python3', '-X', 'faulthandler', '-c', 'import ctypes; ctypes.string_at(0)'], cwd: dir });
    expect(r).toMatchObject({ verdict: 'crashed', signal: 'SIGSEGV', exitCode: null });
    expect(r.stderr).toContain('Fatal Python error: ');
    expect(r.advice).toMatch(/crash report in stderr/);
    expect(r.notes.join(' ')).toMatch(/SIGSEGV/);
  });

  it('faulthandler text is found mid-line, not only at a line start', async () => {
    const code = 'import ctypes, sys; sys.stderr.write("no newline yet: "); sys.stderr.flush(); ctypes.string_at(0)';
    const r = await h.run({ argv: ['python3', '-X', 'faulthandler', '-c', code], cwd: dir });
    expect(r).toMatchObject({ verdict: 'crashed', signal: 'SIGSEGV' });
    expect(r.stderr).toMatch(/^no newline yet: Fatal Python error: /);
    expect(r.advice).toMatch(/crash report in stderr/);
  });

  it('a Python segfault without faulthandler gets the native-code advice instead', async () => {
    const r = await h.run({ argv: ['python3', '-c', 'import ctypes; print("about to crash", flush=True); ctypes.string_at(0)'], cwd: dir });
    expect(r).toMatchObject({ verdict: 'crashed', signal: 'SIGSEGV', stdout: 'about to crash\n' });
    expect(r.stderr).not.toContain('Fatal Python error');
    expect(r.advice).not.toMatch(/crash report/);
    expect(r.advice).toMatch(/native code/);
  });

  it('SIGTERM the script sends itself is signaled, not stopped or timed-out', async () => {
    const r = await h.run({ argv: ['bash', '-c', 'echo going; kill -TERM $$'], limitMs: 600_000 });
    expect(r).toMatchObject({ verdict: 'signaled', signal: 'SIGTERM', exitCode: null, stdout: 'going\n' });
    expect(r.stop).toBeUndefined();
    expect(r.advice).toMatch(/ends itself/);
    expect(r.notes.join(' ')).toMatch(/did not send it/);
  });
});

describe('spawn failures', () => {
  it('a missing command is spawn-failed with 127, advice naming the command', async () => {
    const r = await h.run({ argv: ['warden-no-such-command-xyz', '--flag'] });
    expect(r).toMatchObject({ verdict: 'spawn-failed', exitCode: 127, signal: null, state: 'ended' });
    expect(r.advice).toContain('warden-no-such-command-xyz');
    expect(r.advice).toMatch(/not found/);
  });

  it('a missing working directory is spawn-failed with 126, advice naming the directory', async () => {
    const missing = join(dir, 'no-such-dir');
    const r = await h.run({ argv: ['true'], cwd: missing });
    expect(r).toMatchObject({ verdict: 'spawn-failed', exitCode: 126 });
    expect(r.advice).toContain(missing);
    expect(r.advice).toMatch(/working directory/i);
  });

  it('a file without execute permission is spawn-failed with 126', async () => {
    const file = join(dir, 'not-executable.sh');
    writeFileSync(file, '#!/bin/sh\necho hi\n');
    chmodSync(file, 0o644);
    const r = await h.run({ argv: [file] });
    expect(r).toMatchObject({ verdict: 'spawn-failed', exitCode: 126, stdout: '' });
    expect(r.advice).toContain(file);
    expect(r.advice).toMatch(/permission denied|not executable/);
  });

  it('a script whose #! interpreter does not exist is spawn-failed with 126, advice naming the interpreter', async () => {
    const file = join(dir, 'bad-interpreter.sh');
    writeFileSync(file, '#!/opt/warden-missing/bin/interp -u\necho hi\n');
    chmodSync(file, 0o755);
    const r = await h.run({ argv: [file] });
    expect(r).toMatchObject({ verdict: 'spawn-failed', exitCode: 126, signal: null, state: 'ended' });
    expect(r.advice).toContain('/opt/warden-missing/bin/interp');
    expect(r.advice).toMatch(/#!/);
  });
});
