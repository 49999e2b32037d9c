// The renderer's store paging an ended run's output (issue 19, item 2), against
// a real host over its unix socket with the HTTP client web mode uses: the run
// without its output and the first page of each stream when load resolves,
// then the rest, then the run held whole. (Here, not beside the store: the
// renderer's own files may not import Node.)

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OutputRange, WardenApi } from '../src/shared/api';
import { HttpWardenApi } from '../src/shared/http-api';
import { NodeTransport } from '../src/client/transport';
import { startHost, type Host } from '../src/main/host/host';
import { OUTPUT_PAGE_CHARS } from '../src/renderer/src/output-pages';
import { useWarden } from '../src/renderer/src/store';
import { until } from './kit/until';

describe('the store paging an ended run of a real host', () => {
  let host: Host;
  let api: HttpWardenApi;
  /** Every call the store makes, as it makes it (the host answers each). */
  const calls: { op: string; range?: OutputRange; options?: unknown }[] = [];
  let disconnect: () => void = () => undefined;

  beforeAll(async () => {
    host = await startHost({ stateDir: mkdtempSync(join(tmpdir(), 'wpg-')), webRoot: null });
    api = new HttpWardenApi(new NodeTransport({ socketPath: host.socketPath }));
  }, 30_000);

  afterAll(async () => {
    disconnect();
    await host?.shutdown();
  });

  /** The API as the store gets it, each call written down before it goes to the host. */
  function watched(): WardenApi {
    return {
      ...Object.fromEntries(['start', 'stop', 'wait', 'extend', 'signal', 'list', 'history', 'timeline', 'sessions', 'restartSession', 'closeSession', 'host', 'hosts', 'settings', 'saveSettings'].map((op) => [op, (...args: unknown[]) => (api as unknown as Record<string, (...a: unknown[]) => unknown>)[op]!(...args)])),
      subscribe: (listener, options) => api.subscribe(listener, options),
      get: (id, options) => {
        calls.push({ op: 'get', options });
        return api.get(id, options);
      },
      output: (id, range) => {
        calls.push({ op: 'output', range });
        return api.output(id, range);
      },
    } as WardenApi;
  }

  it('shows the first page of each stream when load resolves, then the rest, and holds the run whole at the end', async () => {
    // 700,000 characters of numbered lines on stdout (3 pages), a line on stderr every 1,000.
    const script = "import sys\nfor i in range(1, 14001):\n    print(f'{i:06d} ' + 'x' * 42)\n    if i % 1000 == 0: print(f'err {i}', file=sys.stderr)";
    const done = await api.wait((await api.start({ argv: ['python3', '-c', script] })).id);
    expect(done.stdout.length).toBe(700_000);
    disconnect = useWarden.getState().connect(watched());
    calls.length = 0;
    // Not in the store yet (as a link opens it): the run without output and the first pages, at once.
    const found = await useWarden.getState().load(done.id);
    expect(found).toMatchObject({ id: done.id, state: 'ended', verdict: 'completed', stdout: '' });
    const first = useWarden.getState().pages[done.id];
    expect(first).toMatchObject({ stdoutTotal: 700_000, stderrTotal: done.stderr.length });
    expect(first!.stdout).toBe(done.stdout.slice(0, OUTPUT_PAGE_CHARS));
    expect(first!.stderr).toBe(done.stderr);
    expect(useWarden.getState().partial[done.id]).toBe(true);
    expect(calls.slice(0, 3)).toEqual([
      { op: 'get', options: { output: 'none' } },
      { op: 'output', range: { stream: 'stdout', offset: 0, limit: OUTPUT_PAGE_CHARS } },
      { op: 'output', range: { stream: 'stderr', offset: 0, limit: OUTPUT_PAGE_CHARS } },
    ]);

    await waitUntil(() => useWarden.getState().pages[done.id] === undefined);
    const held = useWarden.getState().runs[done.id]!;
    expect(held.stdout).toBe(done.stdout);
    expect(held.stderr).toBe(done.stderr);
    expect(held.outputChars).toBeUndefined();
    expect(useWarden.getState().partial[done.id]).toBeUndefined();
    // Never the run whole: its fields once, its output in contiguous pages.
    expect(calls.filter((c) => c.op === 'get')).toHaveLength(1);
    expect(calls.slice(3).map((c) => c.range)).toEqual([
      { stream: 'stdout', offset: OUTPUT_PAGE_CHARS, limit: OUTPUT_PAGE_CHARS },
      { stream: 'stdout', offset: 2 * OUTPUT_PAGE_CHARS, limit: OUTPUT_PAGE_CHARS },
    ]);
  });

  it('takes a small run in one page of each stream, and a live run whole as before', async () => {
    // Ended while no page watched (one that did got the result whole with its end).
    disconnect();
    const small = await api.wait((await api.start({ argv: ['bash', '-c', 'echo one; echo two >&2'] })).id);
    disconnect = useWarden.getState().connect(watched());
    calls.length = 0;
    await useWarden.getState().load(small.id);
    expect(useWarden.getState().runs[small.id]).toMatchObject({ stdout: 'one\n', stderr: 'two\n' });
    expect(useWarden.getState().pages[small.id]).toBeUndefined();
    expect(calls).toHaveLength(3);

    const live = await api.start({ argv: ['bash', '-c', 'echo live; sleep 30'] });
    await waitUntil(() => useWarden.getState().runs[live.id] !== undefined);
    calls.length = 0;
    await useWarden.getState().load(live.id);
    // A live run's stream meets its snapshot by offset: fetched whole, never in pages.
    expect(calls.filter((c) => c.op === 'output')).toEqual([]);
    expect(calls.map((c) => c.options)).toEqual([undefined]);
    await api.stop(live.id, { force: true });
  });

  it('says why when a later page cannot be had, and keeps what it holds', async () => {
    disconnect();
    const big = await api.wait((await api.start({ argv: ['python3', '-c', "print('y' * 600000)"] })).id);
    const failing = { ...watched(), output: (id: string, range: OutputRange) => ((range.offset ?? 0) > 0 ? Promise.reject(new Error('The Warden host cannot be reached.')) : api.output(id, range)) } as WardenApi;
    disconnect = useWarden.getState().connect(failing);
    await useWarden.getState().load(big.id);
    await waitUntil(() => useWarden.getState().pages[big.id]?.error !== undefined);
    expect(useWarden.getState().pages[big.id]).toMatchObject({ error: 'The Warden host cannot be reached.', stdoutTotal: 600_001 });
    expect(useWarden.getState().pages[big.id]!.stdout).toHaveLength(OUTPUT_PAGE_CHARS);
  });
});

async function waitUntil(ok: () => boolean): Promise<void> {
  await until('the store to get there', ok);
}
