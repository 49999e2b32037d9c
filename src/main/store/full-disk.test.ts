// The history on a real full disk: a tmpfs of a few MB (mount needs root;
// skipped with the reason otherwise), filled with a file until only a little
// is free, under a host in this process with real runs. A result too big for
// the space left never holds up the others: they are written whole, the big
// one with its output cut and a note, completed (never left running, which
// the next host would record as lost); the shutdown report says exactly what
// was and was not recorded.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { startHost, shutdownLine } from '../host/host';
import { openStore } from './store';

let mnt = '';
let cannotMount: string | null = null;

beforeAll(() => {
  if (process.getuid?.() !== 0) {
    cannotMount = 'mounting a tmpfs needs root';
    return;
  }
  mnt = mkdtempSync(join(tmpdir(), 'wfull-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16m,mode=0700', 'tmpfs', mnt], { stdio: 'pipe' });
  } catch (error) {
    cannotMount = `mount -t tmpfs is not permitted here (${(error as Error).message.split('\n')[0]})`;
  }
});

afterAll(() => {
  if (mnt && cannotMount === null) execFileSync('umount', ['-l', mnt]);
  if (mnt) rmSync(mnt, { recursive: true, force: true });
});

/** Fills the tmpfs with one file until `leaveBytes` are free; returns its path. */
function fill(name: string, leaveBytes: number): string {
  const { bavail, bsize } = statfsSync(mnt);
  const path = join(mnt, name);
  writeFileSync(path, Buffer.alloc(Math.max(0, bavail * bsize - leaveBytes)));
  return path;
}

const bigScript = "head -c 3000000 /dev/zero | tr '\\0' a; head -c 3000000 /dev/zero | tr '\\0' b >&2";

describe('the history on a full disk', () => {
  it('writes the runs that fit, the big one with its output cut and a note, and says so at shutdown', async (context) => {
    if (cannotMount) {
      console.log(`skipped: ${cannotMount}`);
      context.skip();
    }
    const dir = join(mnt, 'one');
    const host = await startHost({ stateDir: dir, webRoot: null, supervisor: { sampleRateHz: 0 } });
    // 2.5 MB left: the big run keeps 4,000,000 characters (2,000,000 a stream), the small ones a line.
    let filler: string | null = fill('filler-one', 2_500_000);
    onTestFinished(() => {
      if (filler) rmSync(filler);
    });
    const big = host.api.start({ argv: ['sh', '-c', bigScript] });
    const smallIds: string[] = [];
    for (let n = 0; n < 5; n++) smallIds.push((await host.api.start({ argv: ['echo', `small-${n}`] })).id);
    const bigId = (await big).id;
    const results = await Promise.all([bigId, ...smallIds].map((id) => host.api.wait(id)));
    // The engine's result is whole whatever the disk holds.
    expect(results.map((r) => r.verdict)).toEqual(Array(6).fill('completed'));
    expect(results[0]!.stdoutTruncated).toBe(1_000_000);
    const report = await host.shutdown();
    console.log(shutdownLine(report));
    expect(report).toMatchObject({ historyOff: null, recorded: 6, cut: [bigId], cutCount: 1, unrecorded: [] });
    expect(shutdownLine(report)).toBe(`host stopped; 6 run(s) recorded in the history, 1 with output cut to fit the disk (${bigId}); none missing`);

    rmSync(filler);
    filler = null;
    const store = openStore({ dir });
    try {
      for (const [n, id] of smallIds.entries()) expect(store.get(id)).toMatchObject({ state: 'ended', verdict: 'completed', stdout: `small-${n}\n` });
      const stored = store.get(bigId)!;
      expect(stored).toMatchObject({ state: 'ended', verdict: 'completed' });
      expect(stored.notes.join(' ')).toMatch(/no room for this run's whole output \(the disk is full\)/);
      // Its head and tail, and the count of what was left out, as the engine marks its own cut.
      expect(stored.stdout.startsWith('a'.repeat(16_384))).toBe(true);
      expect(stored.stdout.endsWith('a'.repeat(16_384))).toBe(true);
      expect(stored.stdoutTruncated).toBe(3_000_000 - 32_768);
      expect(stored.stdout).toContain(`[warden: ${(3_000_000 - 32_768).toLocaleString('en-US')} characters dropped here]`);
    } finally {
      store.close();
    }
  }, 60_000);

  it('names each run it could not record at all, and why, when nothing fits', async (context) => {
    if (cannotMount) {
      console.log(`skipped: ${cannotMount}`);
      context.skip();
    }
    const dir = join(mnt, 'two');
    const host = await startHost({ stateDir: dir, webRoot: null, supervisor: { sampleRateHz: 0 } });
    const filler = fill('filler-two', 0);
    try {
      const ids: string[] = [];
      for (let n = 0; n < 3; n++) ids.push((await host.api.start({ argv: ['sh', '-c', `head -c 200000 /dev/zero | tr '\\0' x; echo run-${n}`] })).id);
      for (const id of ids) expect(await host.api.wait(id)).toMatchObject({ verdict: 'completed' });
      const report = await host.shutdown();
      console.log(shutdownLine(report));
      expect(report.unrecorded.map((r) => r.id).sort()).toEqual([...ids].sort());
      expect(report.unrecorded[0]!.why).toMatch(/full/i);
      expect(shutdownLine(report)).toMatch(new RegExp(`3 NOT recorded: ${ids.join(', ')} \\(.*full.*\\)`));
    } finally {
      rmSync(filler);
    }
  }, 60_000);
});
