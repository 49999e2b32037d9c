// Every signal `warden run` can get, sent by the command itself right after
// it starts (so within a few ms of the spawn, while warden may still be
// waiting for the host to answer the start): the run is stopped with the stop
// sequence, its result is printed and records the signal, nothing of it is
// left running, and warden exits with the run's status for INT and TERM and
// with 128+n for the others. Through a background host and embedded.

import { execa } from 'execa';
import { mkdtempSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunResult } from '../shared/result';
import { isDead, waitDead } from '../main/supervisor/proc-testkit';
import { stopBackgroundHosts } from './testkit';

const BIN = resolve(__dirname, '../../bin/warden.mjs');
const dirs: string[] = [];
afterAll(() => stopBackgroundHosts(dirs));

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGALRM', 'SIGUSR1', 'SIGUSR2'] as const;

/** warden run whose command signals warden (its pid is WPID: bash execs node in its own pid) as soon as it runs. */
async function signalledRun(mode: 'host' | 'embedded', signal: (typeof SIGNALS)[number], dir: string) {
  const script = `echo "sleeper $$"; kill -${signal.slice(3)} "$WPID"; exec sleep 30`;
  const warden = `export WPID=$$; exec "${process.execPath}" "${BIN}" run --json -- sh -c '${script}'`;
  const env: Record<string, string> = { WARDEN_STATE_DIR: dir, ...(mode === 'embedded' ? { WARDEN_EMBEDDED: '1' } : {}) };
  return execa('bash', ['-c', warden], { reject: false, env, stdin: 'ignore', timeout: 60_000 });
}

describe.each(['host', 'embedded'] as const)('warden run %s: a signal right after the spawn', (mode) => {
  const dir = mkdtempSync(join(tmpdir(), 'wsig-'));
  dirs.push(dir);

  it.each(SIGNALS)('%s stops the run with the stop sequence and records it', async (signal) => {
    const r = await signalledRun(mode, signal, dir);
    const result = JSON.parse(r.stdout) as RunResult;
    expect(result).toMatchObject({ state: 'ended', verdict: 'stopped' });
    expect(result.stop?.signals[0]?.signal).toBe('SIGINT');
    const sleeper = Number(/sleeper (\d+)/.exec(result.stdout)?.[1]);
    expect(sleeper).toBeGreaterThan(0);
    expect(await waitDead([sleeper])).toEqual([]);
    expect(isDead(sleeper)).toBe(true);
    if (signal === 'SIGINT' || signal === 'SIGTERM') {
      expect(r.exitCode).toBe(130); // the run's own status: its sleep ended by the stop sequence's SIGINT
    } else {
      expect(r.exitCode).toBe(128 + constants.signals[signal]);
      expect(result.notes.join(' ')).toContain(signal === 'SIGHUP' ? 'warden got SIGHUP (its terminal went away), so the run was stopped.' : `warden got ${signal}, so the run was stopped.`);
    }
  });

  it('SIGPIPE, as the reader of its output going away (| head), stops the run, records it, and exits 141', async () => {
    const script = 'echo "sleeper $$"; while :; do echo more; sleep 0.01; done';
    const env: Record<string, string> = { WARDEN_STATE_DIR: dir, ...(mode === 'embedded' ? { WARDEN_EMBEDDED: '1' } : {}) };
    const r = await execa('bash', ['-c', `"${process.execPath}" "${BIN}" run -- sh -c '${script}' | head -1; echo "status \${PIPESTATUS[0]}"`], { reject: false, env, stdin: 'ignore', timeout: 60_000 });
    expect(r.stdout).toMatch(/status 141$/);
    const sleeper = Number(/sleeper (\d+)/.exec(r.stdout)?.[1]);
    expect(await waitDead([sleeper])).toEqual([]);
    const listed = await execa(process.execPath, [BIN, 'list', '--json', '--limit', '1'], { env, reject: false });
    const [last] = JSON.parse(listed.stdout) as { id: string }[];
    const shown = await execa(process.execPath, [BIN, 'show', '--json', last!.id], { env, reject: false });
    const result = JSON.parse(shown.stdout) as RunResult;
    expect(result).toMatchObject({ verdict: 'stopped' });
    expect(result.notes).toContain('warden got SIGPIPE, so the run was stopped.');
  });
});
