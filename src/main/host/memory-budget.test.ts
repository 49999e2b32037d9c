// The host's memory is bounded whatever clients ask: ended runs' output is
// kept only within a budget, the rest is read back from the history, and a
// client still gets every result whole through the API over the real socket
// (get, wait, offset waits), as a client that asked at the end would have.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpWardenApi, WardenApiError } from '../../shared/http-api';
import { NodeTransport } from '../../client/transport';
import { startHost, type Host } from './host';

const hosts: Host[] = [];

afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.shutdown()));
});

async function host(budget: number): Promise<{ h: Host; api: HttpWardenApi }> {
  const h = await startHost({ stateDir: mkdtempSync(join(tmpdir(), 'wm-')), webRoot: null, supervisor: { endedOutputBudgetChars: budget, sampleRateHz: 0 } });
  hosts.push(h);
  return { h, api: new HttpWardenApi(new NodeTransport({ socketPath: h.socketPath })) };
}

/** What `python3 -c` prints for run n: `chars` characters on stdout and on stderr, distinct per run. */
function writer(n: number, chars: number): string[] {
  return ['python3', '-c', `import sys; sys.stdout.write(("out${n} " * ${chars})[:${chars}]); sys.stderr.write(("err${n} " * ${chars})[:${chars}])`];
}

const expected = (what: string, n: number, chars: number) => `${what}${n} `.repeat(chars).slice(0, chars);

describe('ended output within a budget', () => {
  it('lets go of the oldest ended output past the budget, and every result still comes back whole', async () => {
    const chars = 50_000;
    // Room for two runs' output (100,000 characters each), not for six.
    const { h, api } = await host(250_000);
    const ids: string[] = [];
    for (let n = 0; n < 6; n++) {
      const started = await api.start({ argv: writer(n, chars), limitMs: 30_000 });
      const result = await api.wait(started.id);
      expect(result.verdict).toBe('completed');
      ids.push(started.id);
    }
    // The ones let go are no longer listed as in memory...
    const listed = new Set((await api.list()).map((r) => r.id));
    expect(listed.has(ids[0]!)).toBe(false);
    expect(listed.has(ids[5]!)).toBe(true);
    const held = h.supervisor.endedMemory();
    expect(held.chars).toBeLessThanOrEqual(250_000);
    expect(held.runs).toBeLessThan(6);
    // ...and still answer get, wait and an offset wait with their whole output.
    for (const [n, id] of ids.entries()) {
      const got = await api.get(id);
      expect(got?.stdout).toBe(expected('out', n, chars));
      expect(got?.stderr).toBe(expected('err', n, chars));
      const waited = await api.wait(id);
      expect(waited.stdout).toBe(expected('out', n, chars));
      expect(waited.verdict).toBe('completed');
      const from = await api.wait(id, { output: { stdout: chars - 10, stderr: 0 } });
      expect(from.stdout).toBe(expected('out', n, chars).slice(chars - 10));
      expect(from.stderr).toBe(expected('err', n, chars));
    }
    // An ended run read back from the history refuses an extension as one in memory does.
    await expect(api.extend(ids[0]!, 1000)).rejects.toThrow(WardenApiError);
    await expect(api.extend(ids[0]!, 1000)).rejects.toThrow(/has ended/);
  }, 60_000);

  it('reads back a capped result with its marker and the same slices as the engine gives', async () => {
    const { h, api } = await host(10);
    // 30,000 characters on each stream over a cap of 1,000: head and tail kept, the middle dropped.
    const a = await api.wait((await api.start({ argv: writer(7, 30_000), outputCapChars: 1000 })).id);
    const fromMiddle = await api.wait(a.id, { output: { stdout: 10_000, stderr: 29_990 } });
    const fromHead = await api.wait(a.id, { output: { stdout: 100, stderr: 0 } });
    // A second run pushes the first out of memory (the budget holds nothing).
    await api.wait((await api.start({ argv: writer(8, 10), outputCapChars: 1000 })).id);
    expect(new Set((await api.list()).map((r) => r.id)).has(a.id)).toBe(false);
    expect(h.supervisor.endedMemory().runs).toBe(0);
    const back = await api.wait(a.id);
    expect(back.stdout).toBe(a.stdout);
    expect(back.stdoutTruncated).toBe(29_000);
    expect(await api.wait(a.id, { output: { stdout: 10_000, stderr: 29_990 } })).toMatchObject({ stdout: fromMiddle.stdout, stderr: fromMiddle.stderr, stdoutTruncated: fromMiddle.stdoutTruncated });
    expect(await api.wait(a.id, { output: { stdout: 100, stderr: 0 } })).toMatchObject({ stdout: fromHead.stdout, stdoutTruncated: fromHead.stdoutTruncated });
  }, 60_000);

  it('sends a long result through the socket in slices without splitting a character', async () => {
    const { h, api } = await host(1_000_000);
    // 200,000 characters of emoji (surrogate pairs) and ASCII: the answer is written 65,536 characters at a time.
    const code = 'import sys; sys.stdout.write("a\\U0001F600" * 100000)';
    const result = await api.wait((await api.start({ argv: ['python3', '-c', code] })).id);
    expect(result.stdout).toBe('a\u{1F600}'.repeat(100_000));
    expect(result).toEqual(h.supervisor.get(result.id));
  });

  it('refuses an output cap past the maximum with one line naming it', async () => {
    const { api } = await host(1000);
    await expect(api.start({ argv: ['true'], outputCapChars: 1_000_000_000 })).rejects.toThrow(/at most 10,000,000/);
  });
});
