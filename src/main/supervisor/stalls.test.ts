// A host that was stopped (SIGSTOP) while a Python script ran (issue 27,
// item 8): the script's real time is recorded, not when the host could
// read its end; a limit that came too late stops nothing and says so; a
// script still running when the host resumes is stopped at once.

import { execa } from 'execa';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunResult } from '../../shared/result';
import { backgroundHostPids, stopBackgroundHosts, WARDEN_BIN } from '../../cli/testkit';
import { stalledWithin, stallsIn } from './stalls';

describe('stallsIn and stalledWithin', () => {
  it.each([
    ['ticks on time', [0, 250, 500, 750], []],
    ['a late tick within the slack', [0, 250, 1500], []],
    ['one gap past it', [0, 250, 1501], [{ fromMs: 250, toMs: 1501 }]],
    ['two', [0, 5000, 5250, 9000], [{ fromMs: 0, toMs: 5000 }, { fromMs: 5250, toMs: 9000 }]],
    ['one tick', [10], []],
  ])('%s', (_name, ticks, stalls) => expect(stallsIn(ticks)).toEqual(stalls));
  it.each([
    ['inside', 2000, 3000, true],
    ['covering it', 0, 10_000, true],
    ['ending at its start', 0, 1000, false],
    ['starting at its end', 5000, 6000, false],
    ['overlapping its end', 4999, 6000, true],
    ['before it', 0, 500, false],
  ])('a stall from 1000 to 5000 and a span %s', (_name, from, to, within) => expect(stalledWithin([{ fromMs: 1000, toMs: 5000 }], from, to)).toBe(within));
});

describe('a Python run while its host is stopped', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wstall-'));
  const state = join(dir, 'state');
  afterAll(async () => {
    for (const pid of backgroundHostPids(state)) process.kill(pid, 'SIGCONT');
    await stopBackgroundHosts([state]);
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  const until = async (check: () => boolean, ms: number) => {
    for (const end = Date.now() + ms; !check() && Date.now() < end; ) await new Promise((r) => setTimeout(r, 50));
    return check();
  };

  async function stoppedAround(code: string, limit: string, mark: string, resumeWhen: () => boolean, command?: string[]) {
    await execa(process.execPath, [WARDEN_BIN, 'run', '--', 'true'], { env: { WARDEN_STATE_DIR: state, WARDEN_HOST_IDLE: '120s' } });
    const [host] = backgroundHostPids(state);
    expect(host).toBeDefined();
    const sentAt = performance.now();
    const run = execa(process.execPath, [WARDEN_BIN, 'run', '--json', '--limit', limit, ...(command ? ['--', ...command] : ['--python', '-c', code])], { env: { WARDEN_STATE_DIR: state }, reject: false });
    expect(await until(() => existsSync(`${mark}.started`), 30_000)).toBe(true);
    process.kill(host!, 'SIGSTOP');
    try {
      expect(await until(resumeWhen, 60_000)).toBe(true);
    } finally {
      process.kill(host!, 'SIGCONT');
    }
    const resumedAfterMs = performance.now() - sentAt;
    const done = await run;
    return { result: JSON.parse(done.stdout) as RunResult, resumedAfterMs };
  }

  it('a script that ended while its host was stopped: its own time, no stop, and a note saying the limit came too late', async () => {
    const mark = join(dir, 'ended');
    const code = `import time\nopen(${JSON.stringify(`${mark}.started`)}, 'w').close()\ntime.sleep(3)\nprint('done')\nopen(${JSON.stringify(mark)}, 'w').close()`;
    // The host stays stopped past the 1 s limit and past the script's end.
    const { result, resumedAfterMs } = await stoppedAround(code, '1s', mark, () => existsSync(mark));
    if (process.env.SHOW) console.log(JSON.stringify({ ...result, stdout: undefined }), resumedAfterMs);
    expect(result.stdout).toBe('done\n');
    expect(result.verdict).toBe('completed');
    expect(result.stop).toBeUndefined();
    expect(result.elapsedMs).toBeGreaterThanOrEqual(3000);
    // Its own time: before the host could read its end, not after.
    expect(result.elapsedMs).toBeLessThan(resumedAfterMs);
    expect(result.notes.join(' ')).toMatch(/past its 1 s limit and ended by itself: the Warden host could not act \(it was stopped, e\.g\. by SIGSTOP, or starved of CPU\) until [\d.]+ s, when its limit came too late to stop anything/);
  }, 120_000);

  it('a script still running when its host resumes is stopped at once: timed out', async () => {
    const mark = join(dir, 'running');
    const code = `import time\nopen(${JSON.stringify(`${mark}.started`)}, 'w').close()\ntime.sleep(60)\nprint('done')`;
    let deadline = 0;
    // Stopped past the 1 s limit (2 s by the test's clock), then resumed while the script sleeps on.
    const { result } = await stoppedAround(code, '1s', mark, () => (deadline ||= Date.now() + 2000) <= Date.now());
    expect(result.verdict).toBe('timed-out');
    expect(result.stdout).toBe('');
    expect(result.stop?.reason).toBe('deadline');
  }, 120_000);

  it('a command that ended while its host was stopped: its own exit, no stop, and notes saying what the host could not see', async () => {
    const mark = join(dir, 'command');
    const { result } = await stoppedAround('', '1s', mark, () => existsSync(mark), ['sh', '-c', `touch "${mark}.started"; sleep 3; echo done; touch "${mark}"`]);
    expect(result.stdout).toBe('done\n');
    expect(result.verdict).toBe('completed');
    expect(result.exitCode).toBe(0);
    expect(result.stop).toBeUndefined();
    expect(result.notes.join(' ')).toMatch(/The Warden host could not run from [\d.]+ s to [\d.]+ s \(stopped, e\.g\. by SIGSTOP, or starved of CPU\) and saw the command's end only after: it ended in that span, so [\d.]+ s is when Warden saw it, at most what it took\. It ran past its 1 s limit and ended by itself before Warden could stop it\./);
  }, 120_000);
});
