// `warden run` and `warden wait` as an agent's shell hook uses them (real
// processes, a real background host): --format shell-results sized for a
// model, with exact absolute commands to page and to continue; a yield that
// exits 0; runs owned by an agent's pid (--owner-pid) or by nobody
// (--detach); the default limit; the background-host line kept off a stderr
// that is no terminal.

import { execa } from 'execa';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { connectToHost, NodeTransport, socketPathFor } from '../client/transport';
import type { RunResult } from '../shared/result';
import { stopBackgroundHosts } from './testkit';
import { until } from '../../test/kit/until';

const BIN = resolve(__dirname, '../../bin/warden.mjs');
const dirs: string[] = [];

function stateDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'wagent-'));
  dirs.push(dir);
  return dir;
}

const dir = stateDir();

function warden(args: string[], env: Record<string, string> = {}) {
  return execa(process.execPath, [BIN, ...args], { reject: false, env: { WARDEN_STATE_DIR: dir, WARDEN_HOST_IDLE: '30s', ...env }, stdin: 'ignore', timeout: 60_000, stripFinalNewline: false });
}

/** Runs a command line as an agent's shell tool would: bash -c. */
function bash(line: string) {
  return execa('bash', ['-c', line], { reject: false, env: { WARDEN_STATE_DIR: dir }, stdin: 'ignore', timeout: 60_000, stripFinalNewline: false });
}

async function hostRun(id: string): Promise<RunResult> {
  return (await (await connectToHost(dir))!.get(id))!;
}

/** True once `check` holds (waited on, however slow the machine; test/kit/until.ts gives up on a hang). */
async function eventually(check: () => Promise<boolean>): Promise<boolean> {
  await until('the host to get there', check, { everyMs: 100 });
  return true;
}

const idOf = (text: string) => /(?:wait|show|stop) ([0-9a-f]{6,32})\b/.exec(text)![1]!;
const WARDEN = `"${process.execPath}" "${BIN}"`;

afterAll(() => stopBackgroundHosts(dirs), 60_000);

describe('warden run --format shell-results, for a model', { timeout: 60_000 }, () => {
  it('cuts a 300,000-line run to its head and tail; the marker names the exact absolute show command for the cut', async () => {
    const expected = Array.from({ length: 300_000 }, (_, i) => `${i + 1}\n`).join('');
    const ran = await warden(['run', '--format', 'shell-results', '--', 'bash', '-c', 'seq 1 300000; echo "boom: it\'s <bad> & \\"worse\\"" >&2; exit 4']);
    expect(ran.exitCode).toBe(4);
    expect(ran.stdout.length).toBeLessThan(20_000);
    const lines = ran.stdout.split('\n');
    expect(lines.slice(0, 3)).toEqual(['<shell_results>', '<verdict>failed</verdict>', '<exit_code>4</exit_code>']);
    expect(ran.stdout).toContain(`<stderr>boom: it's &lt;bad> &amp; "worse"\n</stderr>`);
    const marker = /\[warden: ([\d,]+) characters of stdout cut here \(characters ([\d,]+) to ([\d,]+) of ([\d,]+)\); read them with (.*)\]/.exec(ran.stdout)!;
    expect(marker).not.toBeNull();
    const n = (i: number) => Number(marker[i]!.replace(/,/g, ''));
    expect(n(4)).toBe(expected.length);
    expect(n(3) - n(2)).toBe(n(1));
    expect(marker[5]).toMatch(new RegExp(`^${WARDEN.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} show [0-9a-f]+ --stream stdout --offset ${n(2)}$`));
    const stdoutBlock = /<stdout>([^]*)<\/stdout>/.exec(ran.stdout)![1]!;
    const [head, tail] = stdoutBlock.split(`${marker[0]}\n`);
    expect(head).toBe(expected.slice(0, n(2)));
    expect(tail).toBe(expected.slice(n(3)));
    // The command, run as written by a shell: the characters cut, from the first, and where the next page is.
    const page = await bash(marker[5]!);
    expect(page.exitCode).toBe(0);
    expect(page.stdout).toBe(expected.slice(n(2), n(2) + 8000));
    expect(page.stderr).toContain(`show ${idOf(marker[5]!)} --stream stdout --offset ${n(2) + 8000}`);
  });

  it('wait --yield during the drain after the exit answers running with no exit code, then the end with it', async () => {
    // A leftover child holds stdout: the run drains for 3 s after bash exits 3.
    const started = await warden(['run', '--json', '--yield', '0s', '--drain', '3s', '--', 'bash', '-c', '(sleep 30) & echo out; exit 3']);
    const id = (JSON.parse(started.stdout) as RunResult).id;
    const answers: string[] = [];
    for (let i = 0; i < 40; i++) {
      const waited = await warden(['wait', id, '--format', 'shell-results', '--yield', '200ms']);
      answers.push(waited.stdout);
      if (!waited.stdout.includes('<verdict>running</verdict>')) break;
    }
    const running = answers.filter((a) => a.includes('<verdict>running</verdict>'));
    expect(running.length).toBeGreaterThan(0);
    for (const answer of running) expect(answer).not.toContain('<exit_code>');
    expect(answers.at(-1)).toContain('<verdict>failed</verdict>');
    expect(answers.at(-1)).toContain('<exit_code>3</exit_code>');
  });

  it('--ok-exit 1: grep finding nothing is completed with a note; warden run still exits with grep\'s 1', async () => {
    const ran = await warden(['run', '--ok-exit', '1', '--format', 'shell-results', '--', 'grep', 'no-such-text', '/dev/null']);
    expect(ran.exitCode).toBe(1);
    expect(ran.stdout).toContain('<verdict>completed</verdict>');
    expect(ran.stdout).toContain('<exit_code>1</exit_code>');
    expect(ran.stdout).toMatch(/<note>Exit code 1 after [^<]*which this run was told means success \(ok-exit 1\)\.<\/note>/);
    expect(ran.stdout).not.toContain('<advice>');
    const json = await warden(['run', '--ok-exit=1,2', '--json', '--', 'bash', '-c', 'exit 2']);
    expect(json.exitCode).toBe(2);
    expect(JSON.parse(json.stdout)).toMatchObject({ verdict: 'completed', exitCode: 2, advice: null });
    const bad = await warden(['run', '--ok-exit', '0', '--', 'true']);
    expect(bad.exitCode).toBe(125);
    expect(bad.stderr).toBe('warden: --ok-exit lists exit codes besides 0, which always means success.\n');
  });

  it('a yield exits 0 and its <next> line is the exact command (absolute paths, same --format and --yield) that continues it', async () => {
    // The second line waits for the test (a gate file), so the first answer cannot hold it however slow the machine.
    const gate = join(dir, 'yield-gate');
    const first = await warden(['run', '--format', 'shell-results', '--yield', '1s', '--', 'bash', '-c', `echo one; until [ -e ${gate} ]; do sleep 0.05; done; echo two; exit 3`]);
    expect(first.exitCode).toBe(0);
    expect(first.stdout).toContain('<verdict>running</verdict>');
    const next = /<next>(.*)<\/next>/.exec(first.stdout)![1]!;
    const id = idOf(next);
    expect(next).toBe(`${WARDEN} wait ${id} --format shell-results --yield 1s`);
    expect(first.stdout).toMatch(/<advice>It is still running, and keeps going in Warden\. Call .* wait .* for more output/);
    expect(first.stdout).toContain('<stdout>one\n</stdout>');
    writeFileSync(gate, '');
    let answer = await bash(next);
    while (answer.stdout.includes('<verdict>running</verdict>')) {
      expect(answer.exitCode).toBe(0);
      answer = await bash(/<next>(.*)<\/next>/.exec(answer.stdout)![1]!);
    }
    expect(answer.exitCode).toBe(3);
    expect(answer.stdout).toContain('<verdict>failed</verdict>');
    expect(answer.stdout).toContain('<stdout>two\n</stdout>');
    expect(answer.stdout).not.toContain('<next>');
  });

  it('--owner-pid: the host stops the run once that process exits, with a note; the run gets the default limit', async () => {
    const owner = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      const ran = await warden(['run', '--json', '--yield', '300ms', '--owner-pid', String(owner.pid), '--', 'sleep', '60']);
      expect(ran.exitCode).toBe(75);
      const run = JSON.parse(ran.stdout) as RunResult;
      expect(run.limitMs).toBe(600_000);
      // The owner is part of the run's record, live and in the history.
      expect(run.owner).toEqual({ pid: owner.pid, label: 'sleep' });
      owner.kill('SIGKILL');
      expect(await eventually(async () => (await hostRun(run.id)).state === 'ended')).toBe(true);
      const ended = await hostRun(run.id);
      expect(ended.verdict).toBe('stopped');
      expect(ended.notes.join(' ')).toContain(`Its owner, sleep (pid ${owner.pid}), went away before the run ended, so Warden stopped it`);
      expect(ended.notes.join(' ')).not.toMatch(/on request/);
      expect(ended.owner).toEqual({ pid: owner.pid, label: 'sleep' });
    } finally {
      owner.kill('SIGKILL');
    }
    // WARDEN_DEFAULT_LIMIT sets it; --limit wins; a pid that runs nothing is refused.
    const self = String(process.pid);
    const short = await warden(['run', '--json', '--owner-pid', self, '--', 'sleep', '30'], { WARDEN_DEFAULT_LIMIT: '1s' });
    expect(JSON.parse(short.stdout)).toMatchObject({ verdict: 'timed-out', limitMs: 1000 });
    const given = await warden(['run', '--json', '--owner-pid', self, '--limit', '5s', '--', 'true'], { WARDEN_DEFAULT_LIMIT: '1s' });
    expect(JSON.parse(given.stdout)).toMatchObject({ verdict: 'completed', limitMs: 5000 });
    const none = await warden(['run', '--json', '--owner-pid', '999999999', '--', 'true']);
    expect(none.exitCode).toBe(125);
    expect(none.stderr.trim()).toBe('warden: --owner-pid 999999999: no such process is running.');
  });

  it('--detach: the run outlives a SIGKILLed warden run; without it the run is stopped', async () => {
    const detached = execa(process.execPath, [BIN, 'run', '--json', '--detach', '--', 'bash', '-c', 'echo $$; sleep 30'], { reject: false, env: { WARDEN_STATE_DIR: dir }, stdin: 'ignore' });
    const owned = execa(process.execPath, [BIN, 'run', '--json', '--', 'bash', '-c', 'echo $$; sleep 30'], { reject: false, env: { WARDEN_STATE_DIR: dir }, stdin: 'ignore' });
    const api = (await eventually(async () => (await connectToHost(dir)) !== null), (await connectToHost(dir))!);
    let live: RunResult[] = [];
    await eventually(async () => (live = (await api.list()).filter((r) => r.argv?.[2] === 'echo $$; sleep 30' && r.stdout !== '')).length === 2);
    expect(live).toHaveLength(2);
    detached.kill('SIGKILL');
    owned.kill('SIGKILL');
    await Promise.all([detached, owned]);
    const ids = live.map((r) => r.id);
    // The owned one is stopped; the detached one goes on.
    expect(await eventually(async () => (await Promise.all(ids.map(hostRun))).some((r) => r.state === 'ended'))).toBe(true);
    await new Promise((r) => setTimeout(r, 1000));
    const states = await Promise.all(ids.map(hostRun));
    expect(states.map((r) => r.state).sort()).toEqual(['ended', 'running']);
    const survivor = states.find((r) => r.state === 'running')!;
    await api.stop(survivor.id, { force: true });
  });
});

describe('a hooked line owns its run until its first yield', { timeout: 90_000 }, () => {
  it('a SIGKILL to the warden run process group before the yield ends the run; after the yield the --owner-pid owns it', async () => {
    const owner = spawn('sleep', ['120'], { stdio: 'ignore' });
    const marker = `owned-until-yield-${process.pid}`;
    try {
      // As a harness runs the hook's line: in a process group of its own, which it SIGKILLs.
      const line = spawn(process.execPath, [BIN, 'run', '--format', 'shell-results', '--yield', '60s', '--owner-pid', String(owner.pid), '--', 'bash', '-c', `echo ${marker}; sleep 100`], {
        detached: true,
        stdio: 'ignore',
        env: { ...process.env, WARDEN_STATE_DIR: dir },
      });
      await eventually(async () => (await connectToHost(dir)) !== null);
      const api = (await connectToHost(dir))!;
      let run: RunResult | undefined;
      await eventually(async () => (run = (await api.list()).find((r) => r.argv?.[2]?.startsWith(`echo ${marker}`) && r.stdout !== '')) !== undefined);
      process.kill(-line.pid!, 'SIGKILL');
      expect(await eventually(async () => (await hostRun(run!.id)).state === 'ended')).toBe(true);
      const ended = await hostRun(run!.id);
      expect(ended.verdict).toBe('stopped');
      expect(ended.stop?.reason).toBe('owner');
      expect(owner.exitCode).toBeNull(); // the agent lives on: it was not what ended the run

      // Past its yield, the line's exit leaves the run to the agent's pid.
      const yielded = await warden(['run', '--format', 'shell-results', '--yield', '200ms', '--owner-pid', String(owner.pid), '--', 'bash', '-c', `echo ${marker}-2; sleep 100`]);
      expect(yielded.exitCode).toBe(0);
      const id = /warden(?:\.mjs)?'? wait ([0-9a-f]+)/.exec(yielded.stdout)?.[1] ?? (await api.list()).find((r) => r.argv?.[2]?.startsWith(`echo ${marker}-2`))!.id;
      await new Promise((r) => setTimeout(r, 1500)); // longer than the host's owner check (500 ms) and a socket close
      expect((await hostRun(id)).state).toBe('running');
      owner.kill('SIGKILL');
      expect(await eventually(async () => (await hostRun(id)).state === 'ended')).toBe(true);
      expect((await hostRun(id)).notes.join(' ')).toContain(`Its owner, sleep (pid ${owner.pid}), went away`);
    } finally {
      owner.kill('SIGKILL');
    }
  });
});

describe('run ownership through the control API', { timeout: 60_000 }, () => {
  it('a pid whose start time is not the one given counts as gone (a reused pid); a bad owner query is one line', async () => {
    await warden(['run', '--', 'true']); // a host for the state dir
    const transport = new NodeTransport({ socketPath: socketPathFor(dir) });
    try {
      // This process, but a start time it never had: as if the pid had been reused.
      const reused = await transport.request('POST', `/api/v1/runs?ownerPid=${process.pid}&ownerStart=1&ownerLabel=agent`, { argv: ['sleep', '60'] });
      expect(reused.status).toBe(201);
      const id = (reused.body as RunResult).id;
      expect(await eventually(async () => (await hostRun(id)).state === 'ended')).toBe(true);
      expect((await hostRun(id)).notes.join(' ')).toContain(`Its owner, agent (pid ${process.pid}), went away`);
      for (const [query, message] of [
        ['ownerPid=12', /ownerPid and ownerStart go together/],
        ['ownerPid=abc&ownerStart=1', /ownerPid takes a process id/],
        ['ownerPid=12&ownerStart=x', /ownerStart takes/],
        ['owner=someone', /owner takes only connection/],
        ['other=1', /takes only the query/],
      ] as const) {
        const reply = await transport.request('POST', `/api/v1/runs?${query}`, { argv: ['true'] });
        expect(reply.status, query).toBe(400);
        expect((reply.body as { error: string }).error).toMatch(message);
      }
    } finally {
      transport.close();
    }
  });
});

describe('the background-host line', { timeout: 60_000 }, () => {
  it('goes to host.log, and to stderr only when stderr is a terminal', async () => {
    const piped = stateDir();
    const quiet = await execa(process.execPath, [BIN, 'run', '--', 'true'], { reject: false, env: { WARDEN_STATE_DIR: piped }, stdin: 'ignore' });
    expect(quiet.exitCode).toBe(0);
    expect(quiet.stderr).not.toMatch(/starting a background/);
    expect(readFileSync(join(piped, 'host.log'), 'utf8')).toMatch(/starting a background host/);
    // Under a terminal (script(1) gives the command a pty): said there too.
    const tty = stateDir();
    const loud = await execa('script', ['-qec', `"${process.execPath}" "${BIN}" run -- true`, '/dev/null'], { reject: false, env: { WARDEN_STATE_DIR: tty }, stdin: 'ignore' });
    expect(loud.stdout).toMatch(/warden: starting a background Warden host for /);
  });
});
