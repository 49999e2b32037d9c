// The history through the CLI as a person or an agent uses it: runs recorded
// by `warden run`, found by `warden list`, shown whole by `warden show`,
// pruned, and a run whose Warden was killed recovered as lost with its
// leftover process torn down.
// Embedded (WARDEN_EMBEDDED=1): a killed embedded CLI is the Warden that goes away
// here; through a host the run would be stopped with its client (autostart.test.ts).

import { execa } from 'execa';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunResult } from '../shared/result';
import { isDead, waitDead } from '../main/supervisor/proc-testkit';
import { openStore } from '../main/store/store';
import { until as waitUntil } from '../../test/kit/until';

async function until(done: () => boolean): Promise<void> {
  await waitUntil('the history to hold the run\'s output', done);
}

const BIN = resolve(__dirname, '../../bin/warden.mjs');

function cli(stateDir: string) {
  return (args: string[]) =>
    execa(process.execPath, [BIN, ...args], { reject: false, stdin: 'ignore', env: { WARDEN_STATE_DIR: stateDir, WARDEN_EMBEDDED: '1' }, timeout: 60_000, stripFinalNewline: false });
}

/**
 * An embedded warden run of a bash that prints and sleeps, SIGKILLed once its
 * output is recorded: the supervisor dies, its run's bash and sleep live on.
 * Resolves with the bash's pid.
 */
async function killedEmbeddedRun(stateDir: string): Promise<number> {
  const host = execa(process.execPath, [BIN, 'run', '--', 'bash', '-c', 'echo "child $$"; echo started-output; sleep 300'], {
    reject: false,
    stdin: 'ignore',
    // Without the sentinel, so the leftover outlives it and the next warden's recovery is what ends it.
    env: { WARDEN_STATE_DIR: stateDir, WARDEN_EMBEDDED: '1', WARDEN_SENTINEL: '0' },
    buffer: false,
  });
  let printed = '';
  await new Promise<void>((done) => {
    host.stdout!.on('data', (chunk: Buffer) => {
      printed += chunk.toString();
      if (printed.includes('started-output')) done();
    });
  });
  const child = Number(/child (\d+)/.exec(printed)![1]);
  // Killed once the history holds the output (the recorder writes it in batches), not after a guessed pause.
  await until(() => {
    const store = openStore({ dir: stateDir });
    try {
      return store.list().runs.some((run) => store.get(run.id)?.stdout.includes('started-output'));
    } finally {
      store.close();
    }
  });
  host.kill('SIGKILL');
  await host.catch(() => undefined);
  return child;
}

describe('history through the CLI', () => {
  it('records each run; list filters and searches; show gives the whole result contract', async () => {
    const warden = cli(mkdtempSync(join(tmpdir(), 'warden-hist-')));
    const failed = JSON.parse((await warden(['run', '--json', '--', 'bash', '-c', 'echo needle-in-output; exit 4'])).stdout) as RunResult;
    const timedOut = JSON.parse((await warden(['run', '--json', '--limit', '300ms', '--', 'sleep', '5'])).stdout) as RunResult;
    const all = JSON.parse((await warden(['list', '--json'])).stdout) as { id: string }[];
    expect(all.map((r) => r.id)).toEqual([timedOut.id, failed.id]);
    const byVerdict = JSON.parse((await warden(['list', '--json', '--verdict', 'timed-out'])).stdout) as { id: string }[];
    expect(byVerdict.map((r) => r.id)).toEqual([timedOut.id]);
    const bySearch = JSON.parse((await warden(['list', '--json', '--search', 'needle-in-output'])).stdout) as { id: string }[];
    expect(bySearch.map((r) => r.id)).toEqual([failed.id]);
    const shown = JSON.parse((await warden(['show', failed.id, '--json'])).stdout) as RunResult;
    expect(shown).toEqual(failed);
    const human = await warden(['show', timedOut.id]);
    expect(human.stdout).toMatch(/timed-out, signal SIGINT/);
  });

  it('prunes the oldest runs beyond a limit', async () => {
    const warden = cli(mkdtempSync(join(tmpdir(), 'warden-hist-')));
    for (const n of [1, 2, 3]) await warden(['run', '--json', '--', 'echo', `run-${n}`]);
    const pruned = await warden(['history', 'prune', '--max-runs', '1']);
    expect(pruned.stdout).toMatch(/Removed 2 run/);
    const left = JSON.parse((await warden(['list', '--json'])).stdout) as { command: string }[];
    expect(left.map((r) => r.command)).toEqual(['echo run-3']);
  });

  it('bad history commands get one line and status 125', async () => {
    const warden = cli(mkdtempSync(join(tmpdir(), 'warden-hist-')));
    for (const [args, message] of [
      [['show', 'nope'], /No run with id "nope"/],
      [['list', '--verdict', 'bogus'], /--verdict takes one of/],
      [['list', '--since', 'yesterday'], /--since takes a duration/],
      [['history'], /history takes a subcommand: prune/],
    ] as const) {
      const r = await warden([...args]);
      expect(r.exitCode).toBe(125);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(message);
    }
  });

  it('a history that cannot be opened does not stop a run, and says so in one line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warden-hist-'));
    writeFileSync(join(dir, 'not-a-dir'), 'x');
    const r = await cli(join(dir, 'not-a-dir'))(['run', '--json', '--', 'echo', 'still runs']);
    expect(r.exitCode).toBe(0);
    expect((JSON.parse(r.stdout) as RunResult).stdout).toBe('still runs\n');
    expect(r.stderr).toMatch(/history is off for this run/);
  });

  it('a run whose Warden was killed is recovered as lost by the next warden, and its leftover is torn down', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'warden-hist-'));
    const warden = cli(stateDir);
    const child = await killedEmbeddedRun(stateDir);
    expect(isDead(child)).toBe(false);
    const next = await warden(['run', '--json', '--', 'true']);
    expect(next.stderr).toMatch(/recovered 1 run/);
    const lost = JSON.parse((await warden(['list', '--json', '--verdict', 'lost'])).stdout) as { id: string }[];
    expect(lost).toHaveLength(1);
    const result = JSON.parse((await warden(['show', lost[0]!.id, '--json'])).stdout) as RunResult;
    expect(result.verdict).toBe('lost');
    expect(result.stdout).toContain('started-output');
    expect(await waitDead([child])).toEqual([]);
    // Exactly once: a later warden finds nothing more to recover.
    const again = await warden(['run', '--json', '--', 'true']);
    expect(again.stderr).not.toMatch(/recovered/);
  });

  it('warden list and show recover a dead Warden\'s runs too: nothing shows as running that no Warden runs', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'warden-hist-'));
    const warden = cli(stateDir);
    const child = await killedEmbeddedRun(stateDir);
    const listed = await warden(['list', '--json']);
    expect(listed.stderr).toMatch(/recovered 1 run/);
    expect(JSON.parse(listed.stdout)).toMatchObject([{ state: 'ended', verdict: 'lost' }]);
    expect(await waitDead([child])).toEqual([]);
  });
});
