// The batcher against a real engine: a command printing many lines reaches
// the window as a few messages per run, with every character, in order.

import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../../shared/events';
import { createBatcher } from './event-batcher';
import { Supervisor } from '../supervisor/supervisor';

describe('event batching for the window', () => {
  it('sends each run its events in order, joined, in far fewer messages than events', async () => {
    const supervisor = new Supervisor({ sampleRateHz: 0 });
    const messages: { runId: string; events: RunEvent[] }[] = [];
    let raw = 0;
    const batcher = createBatcher((runId, events) => messages.push({ runId, events }));
    const unsubscribe = supervisor.subscribe((event) => {
      raw += 1;
      batcher.push(event);
    });
    const script = 'for i in $(seq 1 3000); do echo "line $i"; done';
    const runs = [supervisor.start({ argv: ['bash', '-c', script] }), supervisor.start({ argv: ['bash', '-c', script] })];
    const results = await Promise.all(runs.map((r) => supervisor.wait(r.id)));
    batcher.close();
    unsubscribe();
    for (const result of results) {
      const mine = messages.filter((m) => m.runId === result.id).flatMap((m) => m.events);
      expect(mine[0]!.type).toBe('started');
      expect(mine.at(-1)!.type).toBe('ended');
      const text = mine.flatMap((e) => (e.type === 'output' ? [e.text] : [])).join('');
      expect(text).toBe(result.stdout);
      // Every message carries one run's events only.
      expect(messages.filter((m) => m.runId === result.id).every((m) => m.events.every((e) => e.runId === result.id))).toBe(true);
    }
    expect(messages.length).toBeLessThan(raw);
  });

  it('keeps output of two streams apart and in order, and joins only what continues exactly', () => {
    const sent: RunEvent[][] = [];
    const batcher = createBatcher((_id, events) => sent.push(events), 1_000_000);
    batcher.push({ type: 'output', runId: 'a', stream: 'stdout', text: 'ab', offset: 0 });
    batcher.push({ type: 'output', runId: 'a', stream: 'stdout', text: 'cd', offset: 2 });
    batcher.push({ type: 'output', runId: 'a', stream: 'stderr', text: 'E', offset: 0 });
    batcher.push({ type: 'output', runId: 'a', stream: 'stdout', text: 'ef', offset: 4 });
    batcher.push({ type: 'output', runId: 'a', stream: 'stdout', text: 'zz', offset: 9 });
    batcher.close();
    expect(sent).toEqual([
      [
        { type: 'output', runId: 'a', stream: 'stdout', text: 'abcd', offset: 0 },
        { type: 'output', runId: 'a', stream: 'stderr', text: 'E', offset: 0 },
        { type: 'output', runId: 'a', stream: 'stdout', text: 'ef', offset: 4 },
        { type: 'output', runId: 'a', stream: 'stdout', text: 'zz', offset: 9 },
      ],
    ]);
  });

  it('sends an ended run to the window without its output, with its length; the chunks carry the output', async () => {
    const supervisor = new Supervisor({ sampleRateHz: 0 });
    const sent: RunEvent[] = [];
    const batcher = createBatcher((_id, events) => sent.push(...events));
    const unsubscribe = supervisor.subscribe((event) => batcher.push(event));
    const started = supervisor.start({ argv: ['bash', '-c', 'for i in $(seq 1 2000); do echo "line $i"; done; echo oops >&2'] });
    const result = await supervisor.wait(started.id);
    batcher.close();
    unsubscribe();
    const ended = sent.find((e): e is Extract<RunEvent, { type: 'ended' }> => e.type === 'ended')!;
    expect(ended.result.stdout).toBe('');
    expect(ended.result.stderr).toBe('');
    expect(ended.result.outputChars).toEqual({ stdout: result.stdout.length, stderr: 'oops\n'.length });
    expect({ ...ended.result, stdout: result.stdout, stderr: result.stderr, outputChars: undefined }).toEqual({ ...result, outputChars: undefined });
    const text = sent.flatMap((e) => (e.type === 'output' && e.stream === 'stdout' ? [e.text] : [])).join('');
    expect(text).toBe(result.stdout);
  });
});
