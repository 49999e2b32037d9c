// POST /api/v1/runs/ID/signal (the Process tree's "Send signal") over the
// host's real unix socket, against real runs: the signal reaches the process
// of that run it names and nothing else. Another run's process, a process
// outside Warden and bad input are refused with a 400 of one line, and the
// process stays alive; the signal sent is on the run's timeline.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../shared/events';
import { HttpWardenApi, ROUTES, WardenApiError } from '../../shared/http-api';
import type { ProcNode } from '../../shared/proc-tree';
import { NodeTransport } from '../../client/transport';
import { startHost, type Host } from './host';
import { until } from '../../../test/kit/until';

let host: Host;
let api: HttpWardenApi;
let outsider: ChildProcess;
const trees = new Map<string, ProcNode[]>();
let unsubscribe: () => void;

beforeAll(async () => {
  host = await startHost({ stateDir: mkdtempSync(join(tmpdir(), 'wsig-')), webRoot: null });
  api = new HttpWardenApi(new NodeTransport({ socketPath: host.socketPath }));
  unsubscribe = api.subscribe((event: RunEvent) => {
    if (event.type === 'tree') trees.set(event.runId, event.snapshot.roots);
  });
  // A process of this test, outside every run.
  outsider = spawn('sleep', ['300'], { stdio: 'ignore' });
});

afterAll(async () => {
  unsubscribe?.();
  outsider?.kill('SIGKILL');
  await host?.shutdown();
});

function flat(nodes: ProcNode[]): ProcNode[] {
  return nodes.flatMap((n) => [n, ...flat(n.children)]);
}

/** Polls until the run's sampled tree holds a process matching `match`; no wall-clock assertion. */
async function processOf(runId: string, match: (node: ProcNode) => boolean): Promise<ProcNode> {
  return until(`run ${runId} to show the process in its tree`, () => flat(trees.get(runId) ?? []).find(match));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function refusal(call: Promise<unknown>): Promise<WardenApiError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WardenApiError);
  const apiError = error as WardenApiError;
  expect(apiError.status).toBe(400);
  expect(apiError.message).not.toContain('\n');
  return apiError;
}

describe('signal: one process of a live run', () => {
  it('kills the named process of that run, refuses another run\'s and an unrelated one, and records what it sent', async () => {
    // bash waits on its sleep: the sleep dying of SIGTERM ends bash with 143.
    const mine = await api.start({ argv: ['bash', '-c', 'sleep 300 & wait $!; exit $?'], limitMs: 60_000 });
    const other = await api.start({ argv: ['sleep', '301'], limitMs: 60_000 });
    const sleep = await processOf(mine.id, (n) => n.command === 'sleep 300');
    const otherRoot = await processOf(other.id, (n) => n.command === 'sleep 301');

    // Another run's process: refused, and it lives on.
    const foreign = await refusal(api.signal(mine.id, otherRoot.pid, 'KILL'));
    expect(foreign.message).toContain(`Process ${otherRoot.pid} is not in run ${mine.id}'s process tree`);
    // A process outside Warden (this test's own child): refused.
    const unrelated = await refusal(api.signal(mine.id, outsider.pid!, 'KILL'));
    expect(unrelated.message).toContain(`Process ${outsider.pid} is not in run ${mine.id}'s process tree`);
    // The host itself.
    await refusal(api.signal(mine.id, process.pid, 'TERM'));
    expect(alive(otherRoot.pid)).toBe(true);
    expect(alive(outsider.pid!)).toBe(true);
    expect(alive(sleep.pid)).toBe(true);

    // The right one dies of it, and the run ends because of it.
    const answer = await api.signal(mine.id, sleep.pid, 'TERM');
    expect(answer.id).toBe(mine.id);
    const result = await api.wait(mine.id);
    expect(result.exitCode).toBe(143);
    expect(alive(sleep.pid)).toBe(false);
    expect(alive(otherRoot.pid)).toBe(true);

    const timeline = await api.timeline(mine.id);
    const sent = timeline.filter((e) => e.kind === 'signal-sent' && e.detail.step === 'user');
    expect(sent.map((e) => e.detail.signal)).toEqual([`SIGTERM to pid ${sleep.pid} (sleep 300)`]);
    // The result says who sent it, beside the verdict.
    expect(result.notes.some((n) => n.startsWith(`SIGTERM was sent to pid ${sleep.pid} (sleep 300) from Warden's Process tree at `))).toBe(true);

    // An ended run's processes cannot be signalled.
    expect((await refusal(api.signal(mine.id, sleep.pid, 'KILL'))).message).toContain('has ended');
    await api.stop(other.id, { force: true });
    await api.wait(other.id);
  });

  it('refuses a signal other than TERM or KILL, and a pid that is not a positive whole number, in one line', async () => {
    const run = await api.start({ argv: ['sleep', '302'], limitMs: 60_000 });
    const root = await processOf(run.id, (n) => n.command === 'sleep 302');
    const post = (body: unknown) =>
      (api as unknown as { call(method: string, path: string, body?: unknown): Promise<unknown> }).call('POST', ROUTES.signal(run.id), body);
    expect((await refusal(post({ pid: root.pid, signal: 'HUP' }))).message).toMatch(/signal.*"TERM" or "KILL"/);
    expect((await refusal(post({ pid: -1, signal: 'KILL' }))).message).toMatch(/pid/);
    expect((await refusal(post({ pid: 1.5, signal: 'KILL' }))).message).toMatch(/pid/);
    expect((await refusal(post({ pid: String(root.pid), signal: 'KILL' }))).message).toMatch(/pid/);
    expect((await refusal(post({ signal: 'KILL' }))).message).toMatch(/pid/);
    expect((await refusal(post({ pid: root.pid, signal: 'KILL', extra: 1 }))).message).toBeTruthy();
    expect(alive(root.pid)).toBe(true);
    // An unknown run.
    await expect(api.signal('abcdef123456', root.pid, 'KILL')).rejects.toThrow(/No run with id/);
    await api.stop(run.id, { force: true });
    await api.wait(run.id);
  });
});
