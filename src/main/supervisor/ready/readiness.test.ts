// Each probe kind passing and failing against real things: sockets, an HTTP
// server that answers 503 then 200, commands, files, the lines of output,
// and a process's own listening sockets; the timeout, the delay, and the
// run told exactly once.

import { execa } from 'execa';
import { mkdtempSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ListeningPort, ReadyProbe, ReadyReport } from '../../../shared/result';
import { LineFeed } from '../lines';
import { PortFinder } from '../ports/finder';
import { procSocketTable } from '../ports/socket-table';
import { parseProbe } from './probe-spec';
import { failingProbes, readyLine, ReadyWatch, type ReadyOptions } from './readiness';

const FIXTURES = resolve(__dirname, '../../../../test/fixtures/services');

const cleanups: (() => void | Promise<unknown>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

function listenOn(port = 0, host = '127.0.0.1'): Promise<{ server: Server; port: number }> {
  return new Promise((resolvePromise, reject) => {
    const server = createServer((socket) => socket.destroy());
    server.once('error', reject);
    server.listen(port, host, () => {
      cleanups.push(() => new Promise((r) => server.close(r)));
      resolvePromise({ server, port: (server.address() as { port: number }).port });
    });
  });
}

async function freePort(): Promise<number> {
  const { server, port } = await listenOn();
  await new Promise((r) => server.close(r));
  return port;
}

type Outcome = { ready: ReadyReport } | { notReady: ReadyProbe[] };

/** A watch over `probes`, started now; resolves with what it told, and how often it told. */
function watch(probes: string[], options: Partial<ReadyOptions> & { pids?: () => number[]; lines?: LineFeed; cwd?: string } = {}) {
  const started = performance.now();
  const lines = options.lines ?? new LineFeed();
  const finder = new PortFinder(procSocketTable('/proc'), 0);
  let told = 0;
  let settle!: (outcome: Outcome) => void;
  const outcome = new Promise<Outcome>((r) => (settle = r));
  const w = new ReadyWatch(
    { probes: probes.map(parseProbe), timeoutMs: options.timeoutMs ?? 15_000, intervalMs: options.intervalMs ?? 50, delayMs: options.delayMs ?? 0, status: options.status ?? { min: 200, max: 399 } },
    {
      cwd: options.cwd ?? process.cwd(),
      env: process.env,
      lines,
      portsOf: (): ListeningPort[] | null => finder.find(new Map([['run', options.pids?.() ?? []]]))?.get('run') ?? null,
      nowMs: () => performance.now() - started,
      onReady: (ready) => {
        told++;
        settle({ ready });
      },
      onNotReady: (probes) => {
        told++;
        settle({ notReady: probes });
      },
    },
  );
  w.start();
  cleanups.push(() => w.cancel());
  return { w, lines, outcome, told: () => told };
}

describe('tcp probes', () => {
  it('pass once something accepts on the port, with the port recorded', async () => {
    const port = await freePort();
    const { outcome } = watch([`tcp:${port}`]);
    await new Promise((r) => setTimeout(r, 200));
    await listenOn(port);
    const got = await outcome;
    expect('ready' in got && got.ready.probes[0]).toMatchObject({ probe: `tcp:${port}`, passed: true, port });
    expect('ready' in got && got.ready.probes[0]!.attempts).toBeGreaterThan(1);
  });

  it('try ::1 as well as 127.0.0.1 when no host is named, and a named host alone', async () => {
    const six = await listenOn(0, '::1').catch(() => null);
    if (six === null) return;
    const { outcome } = watch([`tcp:${six.port}`, `tcp:[::1]:${six.port}`]);
    expect('ready' in (await outcome)).toBe(true);
    const { outcome: v4only } = watch([`tcp:127.0.0.1:${six.port}`], { timeoutMs: 400 });
    const got = await v4only;
    expect('notReady' in got && got.notReady[0]!.last).toBe('connection refused');
  });

  it('fail with the reason when nothing listens by the timeout, told once', async () => {
    const port = await freePort();
    const { outcome, told } = watch([`tcp:${port}`], { timeoutMs: 500 });
    const got = await outcome;
    expect('notReady' in got).toBe(true);
    if (!('notReady' in got)) return;
    expect(got.notReady[0]).toMatchObject({ passed: false, last: 'connection refused' });
    expect(failingProbes(got.notReady)).toMatch(new RegExp(`^tcp:${port} \\(connection refused, \\d+ tries\\)$`));
    await new Promise((r) => setTimeout(r, 200));
    expect(told()).toBe(1);
  });
});

describe('http probes', () => {
  it('pass at the first 2xx after 503s, and fail on 503 until then', async () => {
    const child = execa(process.execPath, [join(FIXTURES, 'flaky-http.mjs'), '4'], { buffer: false, reject: false });
    cleanups.push(() => void child.kill('SIGKILL'));
    const port = await new Promise<number>((r) => child.stdout!.once('data', (d: Buffer) => r(Number(/(\d+)/.exec(d.toString())![1]))));
    const { outcome } = watch([`http://127.0.0.1:${port}/health`]);
    const got = await outcome;
    expect('ready' in got && got.ready.probes[0]).toMatchObject({ passed: true, attempts: 5 });
  });

  it('say the status that failed, and pass on it when the range is widened', async () => {
    const child = execa(process.execPath, [join(FIXTURES, 'flaky-http.mjs'), '1000000'], { buffer: false, reject: false });
    cleanups.push(() => void child.kill('SIGKILL'));
    const port = await new Promise<number>((r) => child.stdout!.once('data', (d: Buffer) => r(Number(/(\d+)/.exec(d.toString())![1]))));
    const narrow = await watch([`http://localhost:${port}/`], { timeoutMs: 400 }).outcome;
    expect('notReady' in narrow && narrow.notReady[0]!.last).toBe('answered 503 Service Unavailable, not 200-399');
    const wide = await watch([`http://localhost:${port}/`], { status: { min: 200, max: 599 } }).outcome;
    expect('ready' in wide).toBe(true);
  });

  it('fail with connection refused when nothing listens', async () => {
    const port = await freePort();
    const got = await watch([`http://127.0.0.1:${port}/`], { timeoutMs: 300 }).outcome;
    expect('notReady' in got && got.notReady[0]!.last).toBe('connection refused');
  });
});

describe('exec probes', () => {
  it('pass when the command exits 0, in the run directory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wready-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const { outcome } = watch(['exec:test -e flag && echo yes'], { cwd: dir });
    await new Promise((r) => setTimeout(r, 200));
    writeFileSync(join(dir, 'flag'), '');
    expect('ready' in (await outcome)).toBe(true);
  });

  it('fail with the status and the last line it printed', async () => {
    const got = await watch(['exec:echo not yet >&2; exit 3'], { timeoutMs: 400 }).outcome;
    expect('notReady' in got && got.notReady[0]!.last).toBe('exited 3: not yet');
  });
});

describe('file probes', () => {
  it('pass once the file exists and its size stopped changing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wready-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'out.txt');
    const { outcome, w } = watch([`file:${file}`], { intervalMs: 50 });
    writeFileSync(file, 'a');
    const growing = setInterval(() => appendFileSync(file, 'b'), 100);
    await new Promise((r) => setTimeout(r, 1000));
    expect(w.state).toBe('waiting');
    expect(w.report()[0]!.last).toMatch(/not yet unchanged for 750 ms/);
    clearInterval(growing);
    const got = await outcome;
    expect('ready' in got).toBe(true);
  });

  it('fail while the file does not exist, relative to the run directory', async () => {
    const got = await watch(['file:no-such-file'], { timeoutMs: 300, cwd: tmpdir() }).outcome;
    expect('notReady' in got && got.notReady[0]!.last).toBe('does not exist yet');
  });
});

describe('log probes', () => {
  it('pass on the first matching line, ANSI removed, its numeric group recorded as a port', async () => {
    const lines = new LineFeed();
    const { outcome } = watch(['log:/Local:\\s+http:\\/\\/localhost:(\\d+)/'], { lines });
    lines.push('stdout', 'starting\n');
    lines.push('stdout', '  \x1b[32m➜\x1b[39m  \x1b[1mLocal\x1b[22m:   \x1b[36mhttp://localhost:\x1b[1m5174\x1b[22m/\x1b[39m\n');
    const got = await outcome;
    expect('ready' in got && got.ready).toMatchObject({ line: '➜  Local:   http://localhost:5174/', ports: [{ port: 5174, address: 'localhost' }] });
    expect('ready' in got && got.ready.probes[0]).toMatchObject({ attempts: 2, port: 5174 });
  });

  it('read stderr too; a group that is no port records none', async () => {
    const lines = new LineFeed();
    const { outcome } = watch(['log:/(ready|listening)/i'], { lines });
    lines.push('stderr', 'Server READY\n');
    const got = await outcome;
    expect('ready' in got && got.ready.ports).toEqual([]);
    expect('ready' in got && got.ready.line).toBe('Server READY');
  });

  it('fail saying how many lines were read', async () => {
    const lines = new LineFeed();
    const { outcome } = watch(['log:/ready/'], { lines, timeoutMs: 200 });
    lines.push('stdout', 'a\nb\n');
    const got = await outcome;
    expect('notReady' in got && got.notReady[0]!.last).toBe('no line matched yet (2 read)');
    expect('notReady' in got && failingProbes(got.notReady)).toBe('log:/ready/ (no line matched yet (2 read))');
  });
});

describe('port probes', () => {
  it("pass when the run's own processes listen, with every port they hold", async () => {
    const port = await freePort();
    const child = execa(process.execPath, [join(FIXTURES, 'dev-server.mjs'), '--port', String(port), '--delay', '300', '--quiet'], { buffer: false, reject: false });
    cleanups.push(() => void child.kill('SIGKILL'));
    const { outcome } = watch(['port'], { pids: () => [child.pid!] });
    const got = await outcome;
    expect('ready' in got && got.ready.ports).toEqual([{ port, address: '127.0.0.1', pid: child.pid }]);
    expect('ready' in got && readyLine(got.ready)).toMatch(new RegExp(`^ready after \\d+(\\.\\d+)? (ms|s), listening on ${port}$`));
  });

  it("port:N waits for that port; another's listener on it does not pass it", async () => {
    const { port } = await listenOn();
    const got = await watch([`port:${port}`], { pids: () => [], timeoutMs: 300 }).outcome;
    expect('notReady' in got && got.notReady[0]!.last).toBe('its processes hold no listening TCP socket yet');
    // The same port held by this process, given as the run's: it passes.
    const mine = await watch([`port:${port}`], { pids: () => [process.pid] }).outcome;
    expect('ready' in mine).toBe(true);
    const other = await watch([`port:1`], { pids: () => [process.pid], timeoutMs: 200 }).outcome;
    expect('notReady' in other && other.notReady[0]!.last).toMatch(/^its processes listen on .*\d, not 1$/);
  });
});

describe('the watch', () => {
  it('is ready only when every probe passed, after the last', async () => {
    const lines = new LineFeed();
    const port = await freePort();
    const { outcome, w } = watch([`tcp:${port}`, 'log:/ready/'], { lines });
    lines.push('stdout', 'ready\n');
    await new Promise((r) => setTimeout(r, 200));
    expect(w.state).toBe('waiting');
    expect(w.report().map((p) => p.passed)).toEqual([false, true]);
    await listenOn(port);
    const got = await outcome;
    if (!('ready' in got)) throw new Error('not ready');
    expect(got.ready.afterMs).toBeGreaterThanOrEqual(got.ready.probes[1]!.afterMs!);
    expect(w.state).toBe('ready');
  });

  it('makes no attempt before the delay', async () => {
    const { port } = await listenOn();
    const { outcome, w } = watch([`tcp:${port}`], { delayMs: 400 });
    await new Promise((r) => setTimeout(r, 200));
    expect(w.report()[0]!.attempts).toBe(0);
    const got = await outcome;
    expect('ready' in got && got.ready.afterMs).toBeGreaterThanOrEqual(400);
  });

  it('tells nothing once cancelled', async () => {
    const port = await freePort();
    const { w, told } = watch([`tcp:${port}`], { timeoutMs: 200 });
    w.cancel();
    await new Promise((r) => setTimeout(r, 400));
    expect(w.state).toBe('cancelled');
    expect(told()).toBe(0);
  });

  it('names a probe never tried when the delay outlasts the timeout', async () => {
    const got = await watch(['tcp:1'], { timeoutMs: 100, delayMs: 5000 }).outcome;
    expect('notReady' in got && got.notReady[0]).toMatchObject({ attempts: 0, last: 'never tried' });
  });
});
