// Output offsets on live events, and waits that return only the output not
// returned before ('unseen') or from given offsets: real commands and the
// real Python runtime. A yielded wait followed by the next one must return
// every character exactly once.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { OutputStream, RunEvent } from '../../shared/events';
import type { RunResult } from '../../shared/result';
import { WardenInputError } from './errors';
import { Harness, HANG_GUARD_MS } from './proc-testkit';

let h: Harness;
let dir: string;
beforeEach(() => {
  h = new Harness();
  dir = mkdtempSync(join(tmpdir(), 'warden-wait-output-'));
});
afterEach(async () => {
  await h.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

type OutputEvent = Extract<RunEvent, { type: 'output' }>;

/** Every output event from now on, of any run. */
function outputEvents(): OutputEvent[] {
  const events: OutputEvent[] = [];
  h.supervisor.subscribe((e) => {
    if (e.type === 'output') events.push(e);
  });
  return events;
}

/** Each offset is the previous offset plus the previous text's length, from 0; returns the stream's text. */
function expectContiguous(events: OutputEvent[], runId: string, stream: OutputStream): string {
  let next = 0;
  let text = '';
  for (const e of events.filter((x) => x.runId === runId && x.stream === stream)) {
    expect(e.offset, `offset of ${JSON.stringify(e.text.slice(0, 20))}`).toBe(next);
    next += e.text.length;
    text += e.text;
  }
  return text;
}

/** Waits with 'unseen' output, `timeoutMs` at a time, until the run ends; returns every result taken. */
async function waitUnseen(id: string, timeoutMs: number): Promise<RunResult[]> {
  const taken: RunResult[] = [];
  const end = performance.now() + HANG_GUARD_MS;
  for (;;) {
    const r = await h.supervisor.wait(id, { timeoutMs, output: 'unseen' });
    taken.push(r);
    if (r.state === 'ended') return taken;
    if (performance.now() > end) throw new Error('the run did not end'); // a hang guard only
  }
}

const numbered = (n: number, prefix = 'line') => Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}\n`).join('');

describe('output offsets on live events', () => {
  it('a command: per stream, offsets run on from 0 with no gap or overlap, and add up to the output', async () => {
    const events = outputEvents();
    const { id } = h.supervisor.start({ argv: ['bash', '-c', 'for i in $(seq 1 300); do echo "line $i"; echo "err $i" >&2; done; printf tail'] });
    const r = await h.result(id);
    expect(expectContiguous(events, id, 'stdout')).toBe(r.stdout);
    expect(expectContiguous(events, id, 'stderr')).toBe(r.stderr);
    expect(r.stdout).toBe(`${numbered(300)}tail`);
  });

  it('past the cap, offsets still count every character read', async () => {
    const events = outputEvents();
    const { id } = h.supervisor.start({ argv: ['bash', '-c', 'seq 1 5000'], outputCapChars: 100 });
    const r = await h.result(id);
    const all = expectContiguous(events, id, 'stdout');
    expect(all).toBe(numbered(5000, '').replace(/ /g, ''));
    expect(r.stdoutTruncated).toBe(all.length - 100);
  });

  it('a Python script: offsets are contiguous per stream, from 0 for each script of the session', async () => {
    const events = outputEvents();
    const code = 'import sys\nfor i in range(1, 201):\n    print(f"line {i}", flush=True)\n    print(f"err {i}", file=sys.stderr, flush=True)';
    const first = await h.run({ code });
    expect(expectContiguous(events, first.id, 'stdout')).toBe(first.stdout);
    expect(expectContiguous(events, first.id, 'stderr')).toBe(first.stderr);
    expect(first.stdout).toBe(numbered(200));
    const second = await h.run({ code: 'print("second")' });
    // The session's second script counts from 0 again (print may write its text and newline apart).
    expect(events.find((e) => e.runId === second.id)?.offset).toBe(0);
    expect(expectContiguous(events, second.id, 'stdout')).toBe('second\n');
  });
});

describe("wait(id, { output: 'unseen' })", () => {
  it('a command printing a line every 50 ms: yielded waits together return its output exactly once', async () => {
    const { id } = h.supervisor.start({ argv: ['bash', '-c', 'for i in $(seq 1 30); do echo "line $i"; echo "err $i" >&2; sleep 0.05; done'] });
    const taken = await waitUnseen(id, 300);
    expect(taken.length).toBeGreaterThan(1); // it did yield before the end
    expect(taken.map((r) => r.stdout).join('')).toBe(numbered(30));
    expect(taken.map((r) => r.stderr).join('')).toBe(numbered(30, 'err'));
    expect(taken.every((r) => r.stdoutTruncated === 0 && r.stderrTruncated === 0)).toBe(true);
    // The final answer moves no mark: asking again gives the same end to every waiter.
    const again = await h.supervisor.wait(id, { output: 'unseen' });
    expect(again.state).toBe('ended');
    expect(again.stdout).toBe(taken.at(-1)!.stdout);
    expect((await h.supervisor.wait(id)).stdout).toBe(numbered(30));
  });

  it('a Python script printing a line every 50 ms: the same, exactly once', async () => {
    const code = 'import time\nfor i in range(1, 31):\n    print(f"line {i}", flush=True)\n    time.sleep(0.05)';
    const { id } = h.supervisor.start({ code });
    const taken = await waitUnseen(id, 300);
    expect(taken.length).toBeGreaterThan(1);
    expect(taken.map((r) => r.stdout).join('')).toBe(numbered(30));
    expect(taken.at(-1)).toMatchObject({ verdict: 'completed' });
  });

  it("'all' waits neither see nor move the mark; yielded 'unseen' ones do", async () => {
    const { id } = h.supervisor.start({ argv: ['bash', '-c', 'echo one; echo two; read -t 30 x; echo three'], stdin: '' });
    const { id: live } = h.supervisor.start({ argv: ['bash', '-c', 'echo one; echo two; sleep 30'] });
    await h.result(id);
    // An ended run: every answer is final and the same.
    expect((await h.supervisor.wait(id, { output: 'all' })).stdout).toBe('one\ntwo\nthree\n');
    expect((await h.supervisor.wait(id, { output: 'unseen' })).stdout).toBe('one\ntwo\nthree\n');
    expect((await h.supervisor.wait(id, { output: 'unseen' })).stdout).toBe('one\ntwo\nthree\n');
    // A live run: 'all' leaves the mark, a yielded 'unseen' moves it.
    let first = '';
    while (first !== 'one\ntwo\n') first = (await h.supervisor.wait(live, { timeoutMs: 20, output: 'all' })).stdout;
    expect((await h.supervisor.wait(live, { timeoutMs: 0, output: 'unseen' })).stdout).toBe('one\ntwo\n');
    expect((await h.supervisor.wait(live, { timeoutMs: 0, output: 'all' })).stdout).toBe('one\ntwo\n');
    expect((await h.supervisor.wait(live, { timeoutMs: 0, output: 'unseen' })).stdout).toBe('');
    h.supervisor.stop(live, { force: true });
    await h.result(live);
  });

  it('explicit offsets slice each stream from there; a yielded answer moves the mark to the end', async () => {
    const { id } = h.supervisor.start({ argv: ['bash', '-c', 'echo hello world; echo oops >&2; sleep 30'] });
    // Both streams read before the answer that counts: stderr's pipe may be read after stdout's, and an
    // answer given before "oops" came would leave it unseen.
    let r: RunResult;
    for (;;) {
      const oopsRead = h.supervisor.get(id)!.stderr === 'oops\n';
      r = await h.supervisor.wait(id, { timeoutMs: 20, output: { stdout: 6, stderr: 5 } });
      if (oopsRead && r.stdout === 'world\n') break;
    }
    expect(r).toMatchObject({ state: 'running', stdout: 'world\n', stderr: '', stdoutTruncated: 0, stderrTruncated: 0 });
    expect(await h.supervisor.wait(id, { timeoutMs: 0, output: 'unseen' })).toMatchObject({ stdout: '', stderr: '' });
    h.supervisor.stop(id, { force: true });
    await h.result(id);
    // Offsets may go back: the client says what it has.
    expect(await h.supervisor.wait(id, { output: { stdout: 0, stderr: 0 } })).toMatchObject({ stdout: 'hello world\n', stderr: 'oops\n' });
  });

  it('past the cap, a slice carries the marker and counts what it leaves out', async () => {
    const go = join(dir, 'go');
    // 40 characters, then (after the first wait) 1,000 more: a cap of 100 keeps 50 + 50.
    const script = `printf '%040d' 0; while [ ! -e ${go} ]; do sleep 0.02; done; head -c 1000 /dev/zero | tr '\\0' b`;
    const { id } = h.supervisor.start({ argv: ['bash', '-c', script], outputCapChars: 100 });
    const first = new Promise<void>((resolve) => {
      h.supervisor.subscribe((e) => {
        if (e.type === 'output' && e.runId === id && e.offset + e.text.length >= 40) resolve();
      });
    });
    await first;
    const early = await h.supervisor.wait(id, { timeoutMs: 0, output: 'unseen' });
    expect(early).toMatchObject({ state: 'running', stdout: '0'.repeat(40), stdoutTruncated: 0 });
    writeFileSync(go, '');
    const rest = await h.supervisor.wait(id, { timeoutMs: HANG_GUARD_MS, output: 'unseen' });
    expect(rest.state).toBe('ended');
    expect(rest.stdout).toBe(`${'b'.repeat(10)}\n[warden: 940 characters dropped here]\n${'b'.repeat(50)}`);
    expect(rest.stdoutTruncated).toBe(940);
    // The whole result is unchanged: head, marker, tail.
    expect(await h.supervisor.wait(id)).toMatchObject({ stdoutTruncated: 940, stdout: `${'0'.repeat(40)}${'b'.repeat(10)}\n[warden: 940 characters dropped here]\n${'b'.repeat(50)}` });
  });

  it('a queued Python script has nothing unseen yet; its output comes once it runs', async () => {
    const busy = h.supervisor.start({ code: 'import time\ntime.sleep(0.5)' });
    const queued = h.supervisor.start({ code: 'print("after")' });
    const snap = await h.supervisor.wait(queued.id, { timeoutMs: 0, output: 'unseen' });
    expect(snap).toMatchObject({ state: 'queued', stdout: '', stderr: '' });
    await h.result(busy.id);
    expect((await waitUnseen(queued.id, 5_000)).map((r) => r.stdout).join('')).toBe('after\n');
  });

  it('refuses bad options with one line', async () => {
    const { id } = h.supervisor.start({ argv: ['true'] });
    for (const options of [{ timeoutMs: -1 }, { timeoutMs: Number.NaN }, { output: 'some' }, { output: { stdout: 1 } }, { output: { stdout: -1, stderr: 0 } }, { output: { stdout: 1.5, stderr: 0 } }]) {
      const error = await h.supervisor.wait(id, options as never).catch((e: unknown) => e);
      expect(error, JSON.stringify(options)).toBeInstanceOf(WardenInputError);
      expect((error as Error).message).not.toContain('\n');
    }
    await expect(h.supervisor.wait('nosuchrun123', { output: 'unseen' })).rejects.toMatchObject({ kind: 'not-found' });
    await h.result(id);
  });
});
