// Services through the engine, with real servers (test/fixtures/services):
// ready while still running with its ports, not ready stopped and its port
// freed, a server that fails early, a port taken by another run, a daemon
// whose main process exits 0, leases, waits until a line, input to a prompt,
// and every live run's ports. With a cgroup (as root here) and without one
// (the subreaper), where the two paths differ.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../shared/events';
import type { RunResult } from '../../shared/result';
import { Harness } from './proc-testkit';
import { accepts, fixture, freePort, holdPort, page, until } from './services-testkit';

const harnesses: Harness[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.cleanup();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A harness with cgroups (the default where one is writable) or without (the subreaper). */
function harness(kind: 'cgroup' | 'no-cgroup' = 'cgroup'): Harness {
  const options = kind === 'no-cgroup' ? { cgroupRoot: tempDir() } : {};
  const h = new Harness(options);
  harnesses.push(h);
  return h;
}

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'wsvc-'));
  dirs.push(dir);
  return dir;
}

const node = process.execPath;
const BANNER = 'log:/Local:\\s+http:\\/\\/localhost:(\\d+)/';

/** Every event of `type` from now on, of any run (a test filters by the id it gets from start). */
function events(h: Harness, type: RunEvent['type']): RunEvent[] {
  const seen: RunEvent[] = [];
  h.supervisor.subscribe((e) => {
    if (e.type === type) seen.push(e);
  });
  return seen;
}

describe('a dev server with readiness', () => {
  it.each(['cgroup', 'no-cgroup'] as const)('is ready while it runs, with its port, its banner line and its output so far (%s)', async (kind) => {
    const h = harness(kind);
    const port = await freePort();
    const { id } = h.supervisor.start({ argv: [node, fixture('dev-server.mjs'), '--port', String(port), '--delay', '300'], ready: { probes: ['port', BANNER] } });
    const r = await h.supervisor.wait(id, { until: 'ready', timeoutMs: 20_000 });
    expect(r.state).toBe('running');
    expect(r.until).toEqual({ condition: 'ready', met: true, line: expect.stringContaining(`Local:   http://localhost:${port}/`) });
    expect(r.ready).toMatchObject({ line: `➜  Local:   http://localhost:${port}/`, ports: [{ port, address: '127.0.0.1' }] });
    expect(r.ready && r.ready.afterMs).toBeGreaterThanOrEqual(300);
    expect(r.ready && r.ready.probes.map((p) => p.passed)).toEqual([true, true]);
    expect(r.stdout).toContain('VITE');
    expect(r.lease).toEqual({ ms: 2 * 3_600_000, endsAtMs: expect.any(Number) });
    expect((await page(port)).text).toContain(`hello from the dev server on ${port}`);
    // Its ports are part of its live state, and answer HTTP.
    await until('its port is known to answer HTTP', () => h.supervisor.get(id)!.ports?.[0]?.http === true);
    const stopped = await (h.supervisor.stop(id), h.result(id));
    expect(stopped).toMatchObject({ verdict: 'stopped', ready: { ports: [{ port }] } });
    expect(stopped.ports).toBeUndefined();
    expect(await accepts(port)).toBe(false);
  });

  it('moves to the next port when its own is taken: the port found is the one it listens on', async () => {
    const h = harness();
    const held = await holdPort();
    try {
      const { id } = h.supervisor.start({ argv: [node, fixture('dev-server.mjs'), '--port', String(held.port)], ready: { probes: ['port', BANNER] } });
      const r = await h.supervisor.wait(id, { until: 'ready', timeoutMs: 20_000 });
      if (!r.ready) throw new Error(`not ready: ${JSON.stringify(r.probes)}`);
      const moved = r.ready.ports[0]!.port;
      expect(moved).toBeGreaterThan(held.port);
      expect(r.ready.probes[1]!.port).toBe(moved);
      expect(r.ready.ports.map((p) => p.port)).toEqual([moved]);
      expect(r.stdout).toContain(`Port ${held.port} is in use, trying another one...`);
    } finally {
      await held.close();
    }
  });

  it('that exits 1 before it is ready ends with its own verdict and the probes as they stood', async () => {
    const h = harness();
    const seen = events(h, 'ready');
    const { id } = h.supervisor.start({ argv: [node, fixture('exit-early.mjs'), '200'], ready: { probes: ['port'] } });
    const r = await h.supervisor.wait(id, { until: 'ready' });
    expect(r).toMatchObject({ state: 'ended', verdict: 'failed', exitCode: 1, until: { condition: 'ready', met: false } });
    expect(r.ready).toBeUndefined();
    expect(r.probes).toEqual([expect.objectContaining({ probe: 'port', passed: false })]);
    expect(r.stderr).toContain("Cannot find module './vite.config.ts'");
    expect(r.advice).not.toBeNull();
    expect(seen.filter((e) => e.runId === id)).toHaveLength(0);
  });

  it('that cannot bind a port another run holds names that run', async () => {
    const h = harness();
    const port = await freePort();
    const first = h.supervisor.start({ argv: [node, fixture('dev-server.mjs'), '--port', String(port)], ready: { probes: ['port'] } });
    expect((await h.supervisor.wait(first.id, { until: 'ready', timeoutMs: 20_000 })).ready).toBeTruthy();
    const second = await h.run({ argv: [node, fixture('dev-server.mjs'), '--port', String(port), '--strict-port'], ready: { probes: ['port'] } });
    expect(second.verdict).toBe('failed');
    expect(second.stderr).toMatch(/EADDRINUSE/);
    expect(second.notes.join('\n')).toContain(`Port ${port} is held by pid `);
    expect(second.notes.join('\n')).toContain(`which belongs to Warden run ${first.id}`);
    expect(second.notes.join('\n')).toContain(`warden stop ${first.id}`);
  });

  it('that cannot bind a port a process outside Warden holds names the process', async () => {
    const h = harness();
    const held = await holdPort();
    try {
      const r = await h.run({ argv: [node, fixture('dev-server.mjs'), '--port', String(held.port), '--strict-port'] });
      expect(r.notes.join('\n')).toMatch(new RegExp(`Port ${held.port} is held by pid ${process.pid} \\(.*node.*\\), which is not a Warden run`));
    } finally {
      await held.close();
    }
  });
});

describe('not ready in time', () => {
  it('is stopped with the stop sequence, its output kept and its port freed', async () => {
    const h = harness();
    const port = await freePort();
    const never = await freePort();
    const seen = events(h, 'ready');
    const { id } = h.supervisor.start({ argv: [node, fixture('dev-server.mjs'), '--port', String(port)], ready: { probes: [`tcp:${never}`], timeoutMs: 1500, intervalMs: 100 } });
    await until('it listens', () => accepts(port));
    const r = await h.supervisor.wait(id, { until: 'ready' });
    expect(r).toMatchObject({ state: 'ended', verdict: 'stopped', ready: false, stop: { reason: 'not-ready' }, until: { condition: 'ready', met: false } });
    expect(r.notes.join('\n')).toMatch(new RegExp(`It was not ready after 1\\.5 s: tcp:${never} \\(connection refused, \\d+ tries\\)\\.`));
    expect(r.advice).toMatch(/never became ready/);
    expect(seen.filter((e) => e.runId === id)).toEqual([{ type: 'ready', runId: id, ready: false, atMs: expect.any(Number) }]);
    expect(r.stdout).toContain('VITE');
    expect(await accepts(port)).toBe(false);
  });

  it('with onNotReady keep goes on running, and the wait says so', async () => {
    const h = harness();
    const port = await freePort();
    const { id } = h.supervisor.start({ argv: [node, fixture('dev-server.mjs'), '--port', String(port)], ready: { probes: ['log:/never printed/'], timeoutMs: 800, onNotReady: 'keep' } });
    const r = await h.supervisor.wait(id, { until: 'ready' });
    expect(r).toMatchObject({ state: 'running', ready: false, until: { met: false } });
    expect(r.notes.join('\n')).toContain('It was kept running, as asked');
    expect(await accepts(port)).toBe(true);
  });
});

describe('a daemon whose main process forks and exits 0', () => {
  it.each(['cgroup', 'no-cgroup'] as const)('stays running and tracked while its server keeps the port, and is torn down at the end (%s)', async (kind) => {
    const h = harness(kind);
    const port = await freePort();
    const mainExits = events(h, 'main-exited');
    const { id } = h.supervisor.start({ argv: [fixture('daemon.sh'), String(port), '300'], env: { NODE: node }, ready: { probes: ['port'] } });
    const r = await h.supervisor.wait(id, { until: 'ready', timeoutMs: 20_000 });
    expect(r).toMatchObject({ state: 'running', mainExit: { exitCode: 0, signal: null }, ready: { ports: [{ port }] } });
    expect(r.notes.join('\n')).toMatch(/The main process exited 0 after .*; the service lived on in \d+ other process/);
    expect(r.stdout).toBe('daemon started\n');
    expect(mainExits.filter((e) => e.runId === id)).toEqual([{ type: 'main-exited', runId: id, mainExit: r.mainExit }]);
    expect(await accepts(port)).toBe(true);
    const ended = await (h.supervisor.stop(id), h.result(id));
    expect(ended).toMatchObject({ state: 'ended', verdict: 'stopped', exitCode: 0, mainExit: { exitCode: 0 } });
    expect(await accepts(port)).toBe(false);
  });

  it('ends by itself when its processes are gone, saying so', async () => {
    const h = harness();
    const port = await freePort();
    const { id } = h.supervisor.start({ argv: [fixture('daemon.sh'), String(port)], env: { NODE: node }, ready: { probes: [`port:${port}`] } });
    const r = await h.supervisor.wait(id, { until: 'ready', timeoutMs: 20_000 });
    if (!r.ready) throw new Error('not ready');
    const pid = r.ready.ports[0]!.pid!;
    process.kill(pid, 'SIGKILL');
    const ended = await h.result(id);
    expect(ended).toMatchObject({ verdict: 'completed', exitCode: 0 });
    expect(ended.notes.join('\n')).toMatch(/Its other processes ended on their own after/);
  });

  it('without readiness probes ends as any run: its leftovers are torn down', async () => {
    const h = harness();
    const port = await freePort();
    const r = await h.run({ argv: [fixture('daemon.sh'), String(port)], env: { NODE: node } });
    expect(r.mainExit).toBeUndefined();
    expect(r.verdict).toBe('completed');
    expect(await accepts(port)).toBe(false);
  });
});

describe('a lease', () => {
  it('stops the service when it runs out, with a note; extend renews it first', async () => {
    const h = harness();
    const renewed = events(h, 'lease-renewed');
    const { id } = h.supervisor.start({ argv: ['sleep', '60'], leaseMs: 1200 });
    const snap = h.supervisor.extend(id, 600);
    expect(snap.limitMs).toBeNull();
    expect(snap.lease).toEqual({ ms: 1200, endsAtMs: expect.any(Number) });
    expect(snap.lease!.endsAtMs).toBe(1800);
    expect(renewed).toEqual([{ type: 'lease-renewed', runId: id, endsAtMs: 1800, byMs: 600, atMs: expect.any(Number) }]);
    const r = await h.result(id);
    expect(r).toMatchObject({ verdict: 'stopped', stop: { reason: 'lease' }, limitMs: null });
    expect(r.elapsedMs).toBeGreaterThanOrEqual(1800);
    expect(r.notes.join('\n')).toMatch(/^The lease was renewed by 0\.6 s at [\d.]+ s \(it now ends at 1\.8 s\)\.$/m);
    expect(r.notes.join('\n')).toMatch(/Its lease of 1\.2 s ran out at 1\.8 s without being renewed, so Warden stopped it/);
  });

  it('is 2 h by default with readiness probes, none without, and none when 0', () => {
    const h = harness();
    expect(h.supervisor.start({ argv: ['sleep', '5'], ready: { probes: ['log:/x/'] } }).lease?.ms).toBe(7_200_000);
    expect(h.supervisor.start({ argv: ['sleep', '5'] }).lease).toBeUndefined();
    expect(h.supervisor.start({ argv: ['sleep', '5'], ready: { probes: ['log:/x/'] }, leaseMs: 0 }).lease).toBeUndefined();
  });
});

describe('wait until a line', () => {
  it('after an edit: the line that comes after the call, not one before it', async () => {
    const h = harness();
    const dir = tempDir();
    const file = join(dir, 'main.ts');
    writeFileSync(file, 'one');
    const port = await freePort();
    const { id } = h.supervisor.start({ argv: [node, fixture('dev-server.mjs'), '--port', String(port), '--watch', file], ready: { probes: [BANNER] } });
    await h.supervisor.wait(id, { until: 'ready', timeoutMs: 20_000 });
    writeFileSync(file, 'two');
    const first = await h.supervisor.wait(id, { until: 'log:/Compiled successfully|error TS\\d+/', timeoutMs: 20_000 });
    expect(first.until).toEqual({ condition: 'log:/Compiled successfully|error TS\\d+/', met: true, line: expect.stringMatching(/^Compiled successfully in \d+ ms$/), stream: 'stdout' });
    // The compile line above came before this call: only the next edit's answers it.
    const waiting = h.supervisor.wait(id, { until: 'log:/Compiled successfully|error TS\\d+/', timeoutMs: 20_000 });
    await new Promise((r) => setTimeout(r, 200));
    writeFileSync(file, 'an error here');
    expect((await waiting).until).toMatchObject({ met: true, line: "src/main.ts(1,7): error TS2304: Cannot find name 'oops'." });
    // --since start finds the first one ever printed.
    expect((await h.supervisor.wait(id, { until: 'log:/Compiled/', since: 'start' })).until).toMatchObject({ met: true, line: expect.stringMatching(/^Compiled successfully/) });
  });

  it('yields unmet at the timeout, and ends unmet with the run', async () => {
    const h = harness();
    const { id } = h.supervisor.start({ argv: ['sh', '-c', 'echo a; sleep 1; echo b'] });
    const yielded = await h.supervisor.wait(id, { until: 'log:/never/', timeoutMs: 100 });
    expect(yielded).toMatchObject({ state: 'running', until: { condition: 'log:/never/', met: false } });
    const ended = await h.supervisor.wait(id, { until: 'log:/never/' });
    expect(ended).toMatchObject({ state: 'ended', verdict: 'completed', until: { met: false } });
  });

  it('refuses what is not a pattern, and ready for a run without probes', () => {
    const h = harness();
    const { id } = h.supervisor.start({ argv: ['sleep', '2'] });
    return Promise.all([
      expect(h.supervisor.wait(id, { until: 'Compiled' })).rejects.toThrow(/until takes "ready" or a log pattern/),
      expect(h.supervisor.wait(id, { until: 'log:/(/' })).rejects.toThrow(/not a valid regular expression/),
      expect(h.supervisor.wait(id, { until: 'ready' })).rejects.toThrow(/without readiness probes/),
      expect(h.supervisor.wait(id, { since: 'start' })).rejects.toThrow(/since goes with until/),
      expect(h.supervisor.wait(id, { until: 'ready', since: 'start' })).rejects.toThrow(/since goes with a log pattern/),
    ]);
  });
});

describe('input to a live run', () => {
  it('answers a prompt: the question waited for, the answer sent, recorded as an event', async () => {
    const h = harness();
    const seen = events(h, 'input');
    const { id } = h.supervisor.start({ argv: [node, fixture('ask.mjs')], stdinPipe: true });
    expect(h.supervisor.get(id)!.stdinPipe).toBe('open');
    const asked = await h.supervisor.wait(id, { until: 'log:/\\[y\\/N\\]/', timeoutMs: 20_000 });
    expect(asked.until).toMatchObject({ met: true, line: 'Install the missing packages? [y/N]' });
    const snap = h.supervisor.input(id, { text: 'y\n' });
    expect(snap.state).not.toBe('ended');
    const r: RunResult = await h.result(id);
    expect(r).toMatchObject({ verdict: 'completed', exitCode: 0, stdinPipe: 'closed' });
    expect(r.stdout).toContain('You said: y\nInstalling...\nDone.\n');
    expect(seen).toEqual([{ type: 'input', runId: id, text: 'y\n', chars: 2, eof: false, atMs: expect.any(Number) }]);
    await expect(async () => h.supervisor.input(id, { text: 'again\n' })).rejects.toThrow(/has ended; it takes no more input/);
  });

  it.each(['cgroup', 'no-cgroup'] as const)('sends the end of input, and refuses more after it (%s)', async (kind) => {
    const h = harness(kind);
    const { id } = h.supervisor.start({ argv: [node, fixture('ask.mjs')], stdinPipe: true });
    h.supervisor.input(id, { eof: true });
    expect(() => h.supervisor.input(id, { text: 'y\n' })).toThrow(/stdin is closed \(the end of input was sent\)/);
    const r = await h.result(id);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toContain('No answer (end of input).');
  });

  it('is refused, in one line, for a run without a stdin pipe, and bad input', () => {
    const h = harness();
    const { id } = h.supervisor.start({ argv: ['sleep', '2'] });
    expect(() => h.supervisor.input(id, { text: 'y\n' })).toThrow(/has no stdin pipe: its stdin is \/dev\/null\. Start it with --stdin-pipe/);
    const piped = h.supervisor.start({ argv: ['sleep', '2'], stdinPipe: true });
    expect(() => h.supervisor.input(piped.id, {})).toThrow(/Give text to send, or eof: true/);
    expect(() => h.supervisor.start({ argv: ['cat'], stdin: 'x', stdinPipe: true })).toThrow(/exclude each other/);
  });
});

describe('every live run', () => {
  it('has its listening ports in its live state, found without readiness probes', async () => {
    const h = harness();
    const port = await freePort();
    const portsEvents = events(h, 'ports');
    const { id } = h.supervisor.start({ argv: [node, fixture('dev-server.mjs'), '--port', String(port)] });
    await until('its port is in its live state', () => (h.supervisor.get(id)!.ports ?? []).some((p) => p.port === port));
    expect(h.supervisor.get(id)!.ports).toEqual([expect.objectContaining({ port, address: '127.0.0.1', pid: expect.any(Number) })]);
    expect(h.supervisor.ports().get(id)?.map((p) => p.port)).toEqual([port]);
    expect(portsEvents.find((e) => e.runId === id)).toMatchObject({ type: 'ports', ports: [{ port }] });
  });
});

describe('readiness requests', () => {
  it.each([
    [{ probes: [] }, /a list of 1 to 16/],
    [{ probes: ['nope'] }, /is not one Warden knows/],
    [{ probes: ['port'], extra: 1 }, /ready has no field "extra"/],
    [{ probes: ['port'], onNotReady: 'ignore' }, /onNotReady must be "stop" or "keep"/],
    [{ probes: ['port'], intervalMs: 5 }, /ready.intervalMs must be a number of milliseconds from 10/],
    [{ probes: ['port'], timeoutMs: 0 }, /ready.timeoutMs must be a number of milliseconds from 1/],
    [{ probes: ['http://x/'], status: '2xx' }, /such as 200-399/],
    ['port', /ready must be an object/],
  ])('refuses %j', (ready, message) => {
    const h = harness();
    expect(() => h.supervisor.start({ argv: ['true'], ready: ready as never })).toThrow(message);
  });
});
