// The renderer's store when a run ends while the page is open and its end
// comes as a summary (no output: ?ended=summary, and Electron's IPC), against
// the real engine: output streamed whole is kept, anything else is dropped and
// fetched in pages only when the run is opened. (Here, not beside the store:
// the renderer's own files may not import Node.)

import { describe, expect, it } from 'vitest';
import type { WardenApi } from '../src/shared/api';
import { resultSummary } from '../src/shared/result-summary';
import { checkOutputRange, outputPage } from '../src/main/host/output-page';
import { engineApi } from '../src/main/supervisor/api';
import { Supervisor } from '../src/main/supervisor/supervisor';
import { useWarden } from '../src/renderer/src/store';
import { until } from './kit/until';

describe('a run that ends while the page is open, sent as a summary', () => {
  // The engine behind the store, its ended events summarised as the host sends them to a page (?ended=summary) and Electron over IPC.
  const summaryApi = (supervisor: Supervisor) => {
    const api = engineApi(supervisor);
    const asked = { gets: 0, pages: 0 };
    // The store lists twice on connect (at once, and once the stream is open): both answered, it is in step with the engine.
    let listed = 0;
    const wrapped: WardenApi = {
      ...api,
      list: async (...args) => {
        const runs = await api.list(...args);
        listed += 1;
        return runs;
      },
      subscribe: (listener, options) => api.subscribe((event) => listener(event.type === 'ended' ? { ...event, result: resultSummary(event.result) } : event), options),
      get: (id, o) => ((asked.gets += 1), api.get(id, o)),
      // Paged as the host pages it (the HTTP route and the window's IPC op).
      output: (id, range) => ((asked.pages += 1), outputPage(api, id, checkOutputRange(range))),
    };
    return { api: wrapped, asked, synced: () => waitUntil(() => listed >= 2) };
  };
  const python = (lines: number) => ['python3', '-c', `import sys\nfor i in range(1, ${lines + 1}): print(f"line {i}")\nprint("to stderr", file=sys.stderr)`];

  it('keeps the output it streamed when that is the whole of it, and asks the host nothing', async () => {
    const supervisor = new Supervisor({ sampleRateHz: 0 });
    const { api, asked, synced } = summaryApi(supervisor);
    const disconnect = useWarden.getState().connect(api);
    try {
    await synced();
    const started = supervisor.start({ argv: python(5000) });
    const result = await supervisor.wait(started.id);
    await waitUntil(() => useWarden.getState().runs[started.id]?.state === 'ended');
    const state = useWarden.getState();
    expect(state.partial[started.id]).toBeUndefined();
    expect(state.runs[started.id]!.stdout).toBe(result.stdout);
    expect(state.runs[started.id]!.stderr).toBe('to stderr\n');
    expect(state.runs[started.id]!.outputChars).toBeUndefined();
    expect(state.output[started.id]).toBeUndefined();
    expect(asked).toEqual({ gets: 0, pages: 0 });
    } finally {
      disconnect();
    }
  });

  it('drops what it streamed when the host cut the output, and fetches it in pages when the run is opened', async () => {
    const supervisor = new Supervisor({ sampleRateHz: 0 });
    const { api, asked, synced } = summaryApi(supervisor);
    const disconnect = useWarden.getState().connect(api);
    try {
    await synced();
    // Kept 20,000 of ~98,000 characters: the page streamed all of it, which is not what the host kept.
    const started = supervisor.start({ argv: python(10_000), outputCapChars: 20_000 });
    const result = await supervisor.wait(started.id);
    expect(result.stdoutTruncated).toBeGreaterThan(0);
    await waitUntil(() => useWarden.getState().runs[started.id]?.state === 'ended');
    let state = useWarden.getState();
    expect(state.partial[started.id]).toBe(true);
    expect(state.runs[started.id]!.stdout).toBe('');
    expect(state.output[started.id]).toBeUndefined();
    expect(asked.pages).toBe(0);
    // Its detail opens: the output comes in pages, as the host kept it.
    await useWarden.getState().load(started.id);
    await waitUntil(() => useWarden.getState().partial[started.id] === undefined);
    state = useWarden.getState();
    expect(state.runs[started.id]!.stdout).toBe(result.stdout);
    expect(asked.pages).toBeGreaterThan(0);
    } finally {
      disconnect();
    }
  });

  it('drops what it streamed when it does not hold the run from its start', async () => {
    const supervisor = new Supervisor({ sampleRateHz: 0 });
    // Started before the page connected: the page holds none of its output.
    const started = supervisor.start({ argv: ['bash', '-c', 'echo before; sleep 1; echo after'] });
    const { api } = summaryApi(supervisor);
    const disconnect = useWarden.getState().connect(api);
    try {
    await supervisor.wait(started.id);
    await waitUntil(() => useWarden.getState().runs[started.id]?.state === 'ended');
    expect(useWarden.getState().partial[started.id]).toBe(true);
    expect(useWarden.getState().runs[started.id]!.outputChars).toEqual({ stdout: 'before\nafter\n'.length, stderr: 0 });
    } finally {
      disconnect();
    }
  });
});

async function waitUntil(ok: () => boolean): Promise<void> {
  await until('the store to get there', ok);
}
