// The CLI against a real `warden serve` in another process, as agents use it:
// runs started by one CLI process are live to others, --yield hands back a
// running run that `warden wait` continues, `warden stop` from another client
// ends a run, one host per state dir, and SIGTERM to the host records every
// live run.

import { execa, type ResultPromise } from 'execa';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunResult } from '../shared/result';
import type { RunSummary } from '../shared/history';
import { YIELDED_STATUS } from './host-verbs';
import { stopBackgroundHosts, serveFor } from './testkit';
import { until } from '../../test/kit/until';

const BIN = resolve(__dirname, '../../bin/warden.mjs');

const dirs: string[] = [];

function stateDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'wc-'));
  dirs.push(dir);
  return dir;
}

function warden(dir: string, args: string[]) {
  return execa(process.execPath, [BIN, ...args], { reject: false, env: { WARDEN_STATE_DIR: dir }, stdin: 'ignore', timeout: 60_000, stripFinalNewline: false });
}

const servers: ResultPromise[] = [];

const serve = (dir: string) => serveFor(dir, servers);

afterEach(async () => {
  for (const child of servers.splice(0)) {
    child.kill('SIGTERM');
    await child;
  }
  // A command after a host went away starts a background one: it goes too.
  await stopBackgroundHosts(dirs.splice(0));
});

const json = <T>(text: string) => JSON.parse(text) as T;

describe('the CLI with a host running', () => {
  it('a run one CLI process starts is live in another client\'s list, and `wait` from a third returns its result', async () => {
    const dir = stateDir();
    await serve(dir);
    // It goes on until another client has seen it live (a gate file), however slow the machine.
    const gate = join(dir, 'seen-live');
    const running = warden(dir, ['run', '--json', '--', 'bash', '-c', 'echo started; until [ -e "$1" ]; do sleep 0.05; done; echo done', 'live', gate]);
    // Another process sees it live.
    const live = await until('the run in another client\'s list', async () => json<RunSummary[]>((await warden(dir, ['list', '--json'])).stdout).find((r) => r.state === 'running'));
    writeFileSync(gate, '');
    const waited = await warden(dir, ['wait', live.id, '--json']);
    expect(waited.exitCode).toBe(0);
    expect(json<RunResult>(waited.stdout)).toMatchObject({ id: live.id, verdict: 'completed', stdout: 'started\ndone\n' });
    const first = await running;
    expect(first.exitCode).toBe(0);
    expect(json<RunResult>(first.stdout).id).toBe(live!.id);
  });

  it('--yield 1s on a 3 s script returns running with the output so far; wait returns the rest and the verdict', async () => {
    const dir = stateDir();
    await serve(dir);
    const script = 'echo one; sleep 2; echo two; sleep 1; echo three; exit 3';
    const yielded = await warden(dir, ['run', '--yield', '1s', '--json', '--', 'bash', '-c', script]);
    expect(yielded.exitCode).toBe(YIELDED_STATUS);
    const partial = json<RunResult>(yielded.stdout);
    expect(partial.state).toBe('running');
    expect(partial.verdict).toBeUndefined();
    expect(partial.stdout).toBe('one\n');
    const rest = await warden(dir, ['wait', partial.id, '--json']);
    expect(rest.exitCode).toBe(3);
    const final = json<RunResult>(rest.stdout);
    expect(final).toMatchObject({ id: partial.id, state: 'ended', verdict: 'failed', exitCode: 3 });
    // Nothing repeated, nothing lost between the yielded answer and the rest.
    expect(partial.stdout + final.stdout).toBe('one\ntwo\nthree\n');
    // --all-output asks for everything again.
    const all = await warden(dir, ['wait', partial.id, '--all-output', '--json']);
    expect(json<RunResult>(all.stdout).stdout).toBe('one\ntwo\nthree\n');
    // shell-results tells a model how to go on (exit 0: a harness shows 75 as a failure).
    const again = await warden(dir, ['run', '--yield', '200ms', '--format', 'shell-results', '--', 'sleep', '5']);
    expect(again.exitCode).toBe(0);
    expect(again.stdout).toMatch(/<next>".+" ".+\/bin\/warden\.mjs" wait [0-9a-f]{12} --format shell-results --yield 200ms<\/next>/);
  });

  it('`stop` from another client ends a run as stopped, and the waiting client gets that result', async () => {
    const dir = stateDir();
    await serve(dir);
    const yielded = json<RunResult>((await warden(dir, ['run', '--yield', '300ms', '--json', '--', 'sleep', '60'])).stdout);
    const waiting = warden(dir, ['wait', yielded.id, '--json']);
    const stopped = await warden(dir, ['stop', yielded.id, '--json']);
    expect(stopped.exitCode).toBe(130);
    expect(json<RunResult>(stopped.stdout)).toMatchObject({ verdict: 'stopped', stop: { reason: 'user', endedBy: 'interrupt' } });
    const waited = await waiting;
    expect(json<RunResult>(waited.stdout).verdict).toBe('stopped');
    // extend of the ended run is refused with one line.
    const extend = await warden(dir, ['extend', yielded.id, '30s']);
    expect(extend.exitCode).toBe(125);
    expect(extend.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('`extend` moves a live run\'s deadline, and the timeline records it', async () => {
    const dir = stateDir();
    await serve(dir);
    // The first limit leaves room for two CLI processes to start on a loaded machine; sleep outlasts it.
    const yielded = json<RunResult>((await warden(dir, ['run', '--yield', '200ms', '--limit', '8s', '--json', '--', 'sleep', '9'])).stdout);
    const extended = await warden(dir, ['extend', yielded.id, '20s', '--json']);
    expect(extended.exitCode).toBe(0);
    expect(json<RunResult>(extended.stdout).limitMs).toBe(28_000);
    const final = json<RunResult>((await warden(dir, ['wait', yielded.id, '--json'])).stdout);
    expect(final).toMatchObject({ verdict: 'completed', limitMs: 28_000 });
    expect(final.notes.join(' ')).toMatch(/The limit was extended by 20 s at [\d.]+ s \(to 28 s\)/);
  });

  it('a second warden serve on the same state dir says so and exits 125', async () => {
    const dir = stateDir();
    await serve(dir);
    const second = await warden(dir, ['serve', '--no-tcp']);
    expect(second.exitCode).toBe(125);
    expect(second.stderr).toMatch(/already running for .* \(pid \d+/);
  });

  it('SIGTERM to the host stops and records every live run', async () => {
    const dir = stateDir();
    const { child: host } = await serve(dir);
    const ids = await Promise.all(
      [['sleep', '60'], ['bash', '-c', "trap '' INT; sleep 60"]].map(async (argv) => json<RunResult>((await warden(dir, ['run', '--yield', '200ms', '--json', '--', ...argv])).stdout).id),
    );
    host.kill('SIGTERM');
    const ended = await host;
    expect(ended.exitCode).toBe(0);
    expect(ended.stderr).toMatch(/host stopped; 2 run\(s\) recorded in the history; none missing/);
    // No host now: show reads the history directly.
    for (const id of ids) {
      const shown = await warden(dir, ['show', id, '--json']);
      expect(json<RunResult>(shown.stdout)).toMatchObject({ id, state: 'ended', verdict: 'stopped', stop: { reason: 'shutdown' } });
    }
    // And wait, with no host, prints the recorded result with the run's exit status.
    const waited = await warden(dir, ['wait', ids[0]!, '--json']);
    expect(waited.exitCode).toBe(130);
  });

  it('a host SIGTERMed as soon as a run has answered still records it whole', async () => {
    const dir = stateDir();
    const { child: host } = await serve(dir);
    const ran = await warden(dir, ['run', '--json', '--', 'bash', '-c', 'head -c 300000 /dev/zero | tr "\\0" a; echo; echo done']);
    host.kill('SIGTERM');
    const result = json<RunResult>(ran.stdout);
    expect(result).toMatchObject({ verdict: 'completed', stdoutTruncated: 0 });
    const ended = await host;
    expect(ended.stderr).toMatch(/host stopped; 1 run\(s\) recorded in the history; none missing/);
    // No host now: show reads the history directly.
    const shown = json<RunResult>((await warden(dir, ['show', result.id, '--json'])).stdout);
    expect(shown).toMatchObject({ id: result.id, state: 'ended', verdict: 'completed' });
    expect(shown.stdout).toBe(result.stdout);
  });

  it('embedded, --yield is refused with one line; without a host, sessions says where sessions live', async () => {
    const dir = stateDir();
    const refused = await warden(dir, ['run', '--embedded', '--yield', '1s', '--', 'true']);
    expect(refused.exitCode).toBe(125);
    expect(refused.stderr).toMatch(/^warden: --yield needs the host/);
    const sessions = await warden(dir, ['sessions']);
    expect(sessions.exitCode).toBe(0);
    expect(sessions.stderr).toContain('no Warden host is running');
  });
});
