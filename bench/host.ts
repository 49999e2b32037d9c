// (k) The host (`warden serve`): the control API over its unix socket against
// the same engine called in process, the latency of a live output event to an
// SSE client, and one host serving 200 live runs to 5 SSE clients. Each part
// gets a fresh host (startHost, history on as `warden serve` has it) in its own
// temporary state dir, shut down at the end.
//
// 1. Round trips: sequential calls, warmed up, the two sides alternating in
//    rounds (which goes first alternates too), medians per call:
//    - start + finish of a `true` run: api.start then api.wait, through
//      HttpWardenApi over the socket vs host.api (the engine's WardenApi) in
//      process. This is the one with the target: socket <= 3x in process.
//    - get of an ended run: same two sides; in process it is a map lookup of
//      microseconds, so the ratio is large and shows the bare cost of an HTTP
//      round trip over the socket. Printed, no target.
// 2. Output event latency: a python3 child prints its CLOCK_MONOTONIC time
//    (time.monotonic_ns(), the clock of process.hrtime.bigint() on Linux,
//    checked on a sample first) as one line every 20 ms. Engine: run by the
//    host, received by an SSE client over the socket in this process; the
//    latency is the hrtime when the client parsed the event minus the time in
//    the line. Baseline: the same child on a plain child_process pipe, its
//    'data' events read in this process. Rounds alternate, after a warm-up.
// 3. Load: 200 concurrent runs (python3, a numbered line every 10 ms, flushed,
//    for 10 s: 100 lines/s each), started over the socket, default sampler
//    rate, with 5 SSE clients in a separate Node process (bench/host-clients.ts)
//    that check every id and every line. Host CPU is this process's
//    process.cpuUsage() (the host alone: the clients and the children are other
//    processes), over a steady window while all 200 are live and over the whole
//    load; the machine's CPU from /proc/stat and the client process's CPU are
//    printed beside it.

import { execFile, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { WardenApi } from '../src/shared/api';
import type { RunEvent } from '../src/shared/events';
import { ROUTES } from '../src/shared/http-api';
import { connectToHost, NodeTransport } from '../src/client/transport';
import { startHost, type Host } from '../src/main/host/host';
import type { ClientsReport } from './host-clients';
import { check, median, ms, quantile, sleep, sum, type Check, type Figure } from './lib';

export interface HostBenchOptions {
  /** Round trips: rounds of each side, alternating. */
  rounds: number;
  getsPerRound: number;
  runsPerRound: number;
  warmupRuns: number;
  warmupGets: number;
  /** Latency: lines per child, rounds per side, ms between lines. */
  latencyLines: number;
  latencyRounds: number;
  latencyIntervalMs: number;
  /** Load: live runs, lines each, ms between lines, SSE clients. */
  loadRuns: number;
  loadLines: number;
  loadIntervalMs: number;
  clients: number;
}

const execFileAsync = promisify(execFile);

/** The interpreter python3 resolves to: a pyenv shim costs a bash and a pyenv per start. */
function realPython(): string {
  return execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim();
}

/**
 * Prints one line every `step` seconds on an absolute schedule; `stamp`: the
 * line is time.monotonic_ns(), else its number. With a fifth argument it first
 * waits (polling every 50 ms) for that file to exist, so many runs started one
 * after another all print at once.
 */
const PRINTER = `
import os, sys, time
n = int(sys.argv[1]); step = float(sys.argv[2]); stamp = sys.argv[3] == "stamp"
if len(sys.argv) > 4:
    while not os.path.exists(sys.argv[4]):
        time.sleep(0.05)
write = sys.stdout.write; flush = sys.stdout.flush
t0 = time.monotonic()
for i in range(n):
    write(f"{time.monotonic_ns() if stamp else i}\\n")
    flush()
    d = t0 + (i + 1) * step - time.monotonic()
    if d > 0:
        time.sleep(d)
`;

function printerArgv(python: string, lines: number, intervalMs: number, mode: 'stamp' | 'number', goFile?: string): string[] {
  return [python, '-S', '-c', PRINTER, String(lines), String(intervalMs / 1000), mode, ...(goFile ? [goFile] : [])];
}

async function withHost<T>(body: (host: Host, client: WardenApi) => Promise<T>): Promise<T> {
  // Short: the socket path (<dir>/run/warden.sock) must fit in 108 bytes.
  const dir = mkdtempSync('/tmp/wbk-');
  let host: Host | undefined;
  try {
    host = await startHost({ stateDir: dir, webRoot: null, log: (line) => console.log(`  host: ${line}`) });
    const client = await connectToHost(dir);
    if (!client) throw new Error(`the host at ${host.socketPath} does not answer`);
    return await body(host, client);
  } finally {
    await host?.shutdown();
    rmSync(dir, { recursive: true, force: true });
  }
}

const us = (valueMs: number) => `${(valueMs * 1000).toFixed(1)} us`;
const perSecond = (count: number, totalMs: number) => `${Math.round((count / totalMs) * 1000)}/s`;

// ---------------------------------------------------------------- 1. round trips

async function trueRun(api: WardenApi): Promise<void> {
  const started = await api.start({ argv: ['true'] });
  const result = await api.wait(started.id);
  if (result.verdict !== 'completed') throw new Error(`a run of true ended ${result.verdict}: ${result.notes.join(' ')}`);
}

interface Sides {
  local: number[];
  socket: number[];
}

async function alternate(rounds: number, perRound: number, op: (api: WardenApi) => Promise<void>, host: Host, client: WardenApi): Promise<Sides> {
  const sides: Sides = { local: [], socket: [] };
  for (let r = 0; r < rounds; r++) {
    const order: (keyof Sides)[] = r % 2 === 0 ? ['local', 'socket'] : ['socket', 'local'];
    for (const side of order) {
      const api = side === 'local' ? host.api : client;
      for (let i = 0; i < perRound; i++) {
        const t = performance.now();
        await op(api);
        sides[side].push(performance.now() - t);
      }
    }
  }
  return sides;
}

async function roundTrips(options: HostBenchOptions): Promise<{ lines: string[]; checks: Check[] }> {
  return withHost(async (host, client) => {
    for (let i = 0; i < options.warmupRuns; i++) {
      await trueRun(host.api);
      await trueRun(client);
    }
    // An ended run the engine still holds (get reads memory first, then the history).
    const ended = await host.api.start({ argv: ['true'] });
    await host.api.wait(ended.id);
    const get = async (api: WardenApi) => {
      const result = await api.get(ended.id);
      if (result?.state !== 'ended') throw new Error(`get of an ended run answered ${result ? result.state : 'null'}`);
    };
    for (let i = 0; i < options.warmupGets; i++) {
      await get(host.api);
      await get(client);
    }
    const gets = await alternate(options.rounds, options.getsPerRound, get, host, client);
    const runs = await alternate(options.rounds, options.runsPerRound, trueRun, host, client);

    const runRatio = median(runs.socket) / median(runs.local);
    const getRatio = median(gets.socket) / median(gets.local);
    const n = options.rounds * options.runsPerRound;
    const g = options.rounds * options.getsPerRound;
    return {
      lines: [
        `1. round trips: sequential, ${options.rounds} alternating rounds per side after a warm-up; socket = HttpWardenApi over ${host.socketPath.length}-byte unix socket path, in process = host.api`,
        `start+finish of \`true\` (start, then wait), ${n} per side:`,
        `  socket      ${perSecond(n, sum(runs.socket))}   median ${ms(median(runs.socket), 2)}   p90 ${ms(quantile(runs.socket, 0.9), 2)}`,
        `  in process  ${perSecond(n, sum(runs.local))}   median ${ms(median(runs.local), 2)}   p90 ${ms(quantile(runs.local, 0.9), 2)}`,
        `  ratio socket / in process, time per run: median ${runRatio.toFixed(2)}x   total ${(sum(runs.socket) / sum(runs.local)).toFixed(2)}x   (extra per run ${ms(median(runs.socket) - median(runs.local), 2)})`,
        `get of an ended run, ${g} per side:`,
        `  socket      ${perSecond(g, sum(gets.socket))}   median ${us(median(gets.socket))}   p90 ${us(quantile(gets.socket, 0.9))}`,
        `  in process  ${perSecond(g, sum(gets.local))}   median ${us(median(gets.local))}   p90 ${us(quantile(gets.local, 0.9))}`,
        `  ratio socket / in process, time per get: median ${getRatio.toFixed(1)}x (a map lookup against an HTTP round trip; no target)`,
      ],
      checks: [check(`start+finish through the socket ${runRatio.toFixed(2)}x the in-process call (medians) <= 3x`, runRatio <= 3)],
    };
  });
}

// ---------------------------------------------------------------- 2. event latency

/** Per line: `now` minus the monotonic ns the line carries; `rest` holds a partial line. */
function stampLatencies(state: { rest: string; latencies: number[] }, text: string, now: bigint): void {
  const all = state.rest + text;
  const parts = all.split('\n');
  state.rest = parts.pop()!;
  for (const part of parts) {
    if (part === '') continue;
    state.latencies.push(Number(now - BigInt(part)) / 1e6);
  }
}

async function checkClock(python: string): Promise<string> {
  const before = process.hrtime.bigint();
  const { stdout } = await execFileAsync(python, ['-S', '-c', 'import time; print(time.monotonic_ns())']);
  const after = process.hrtime.bigint();
  const printed = BigInt(stdout.trim());
  if (printed < before || printed > after) {
    throw new Error(`python3's time.monotonic_ns() (${printed}) is not within process.hrtime.bigint() around it (${before} .. ${after}): not the same clock`);
  }
  return `clock check: python3 time.monotonic_ns() fell between process.hrtime.bigint() before and after its run (${((Number(printed - before) / 1e6)).toFixed(1)} ms after spawn, ${((Number(after - printed) / 1e6)).toFixed(1)} ms before its exit was seen)`;
}

function plainLatencies(argv: string[]): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const state = { rest: '', latencies: [] as number[] };
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (text: string) => stampLatencies(state, text, process.hrtime.bigint()));
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve(state.latencies) : reject(new Error(`the plain printer exited ${code}`))));
  });
}

async function eventLatency(options: HostBenchOptions, python: string): Promise<{ lines: string[]; checks: Check[] }> {
  const clock = await checkClock(python);
  return withHost(async (host, client) => {
    const streams = new Map<string, { rest: string; latencies: number[] }>();
    const ends = new Map<string, () => void>();
    const endedEarly = new Set<string>();
    let connected!: () => void;
    const isConnected = new Promise<void>((resolve) => (connected = resolve));
    const closeStream = new NodeTransport({ socketPath: host.socketPath }).events(ROUTES.events, {
      onConnect: () => connected(),
      onEvent: (event: RunEvent) => {
        if (event.type === 'output') {
          const now = process.hrtime.bigint();
          let state = streams.get(event.runId);
          if (!state) streams.set(event.runId, (state = { rest: '', latencies: [] }));
          stampLatencies(state, event.text, now);
        } else if (event.type === 'ended') {
          const end = ends.get(event.runId);
          if (end) end();
          else endedEarly.add(event.runId);
        }
      },
    });
    try {
      await isConnected;
      const argv = printerArgv(python, options.latencyLines, options.latencyIntervalMs, 'stamp');
      const viaHost = async (): Promise<number[]> => {
        const started = await client.start({ argv });
        const streamed = new Promise<void>((resolve) => (endedEarly.has(started.id) ? resolve() : ends.set(started.id, resolve)));
        const result = await client.wait(started.id);
        if (result.verdict !== 'completed') throw new Error(`the printer run ended ${result.verdict}: ${result.notes.join(' ')}`);
        await streamed; // its 'ended' event came through the stream: every output event did before it
        const latencies = streams.get(started.id)?.latencies ?? [];
        if (latencies.length !== options.latencyLines) throw new Error(`the SSE client parsed ${latencies.length} of ${options.latencyLines} lines of run ${started.id}`);
        return latencies;
      };
      const viaPipe = async (): Promise<number[]> => {
        const latencies = await plainLatencies(argv);
        if (latencies.length !== options.latencyLines) throw new Error(`the pipe reader parsed ${latencies.length} of ${options.latencyLines} lines`);
        return latencies;
      };
      await viaHost(); // warm-up, not counted
      await viaPipe();
      const hosted: number[] = [];
      const plain: number[] = [];
      for (let r = 0; r < options.latencyRounds; r++) {
        for (const side of r % 2 === 0 ? ['host', 'pipe'] : ['pipe', 'host']) {
          if (side === 'host') hosted.push(...(await viaHost()));
          else plain.push(...(await viaPipe()));
        }
      }
      const hostMedian = median(hosted);
      return {
        lines: [
          `2. output event latency: a python3 child printing time.monotonic_ns() every ${options.latencyIntervalMs} ms, ${options.latencyLines} lines a run, ${options.latencyRounds} alternating rounds per side after a warm-up (${hosted.length} lines per side)`,
          `  ${clock}`,
          `  host SSE    median ${ms(hostMedian, 2)}   p99 ${ms(quantile(hosted, 0.99), 2)}   max ${ms(Math.max(...hosted), 2)}   (child -> host pipe -> hub -> unix socket -> SSE client in this process, parsed)`,
          `  plain pipe  median ${ms(median(plain), 2)}   p99 ${ms(quantile(plain, 0.99), 2)}   max ${ms(Math.max(...plain), 2)}   (child -> pipe -> 'data' in this process)`,
          `  host - pipe median ${ms(hostMedian - median(plain), 2)}   ratio of medians ${(hostMedian / median(plain)).toFixed(2)}x`,
        ],
        checks: [check(`output event to SSE client median ${ms(hostMedian, 2)} <= 20 ms`, hostMedian <= 20)],
      };
    } finally {
      closeStream();
    }
  });
}

// ---------------------------------------------------------------- 3. load

/** Busy and total jiffies of the whole machine, from /proc/stat. */
function machineTicks(): { busy: number; total: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = sum(fields);
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0); // idle + iowait
  return { busy: total - idle, total };
}

const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** CPU ms of this process's children that have been waited for (cutime + cstime in /proc/self/stat). */
function reapedChildrenCpuMs(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[13]) + Number(fields[14])) / CLK_TCK) * 1000;
}

function windowOf() {
  const cpu = process.cpuUsage();
  const ticks = machineTicks();
  const at = performance.now();
  return {
    /** This process's CPU as % of one core, the machine's busy % of all its cores, wall ms. */
    end() {
      const used = process.cpuUsage(cpu);
      const wall = performance.now() - at;
      const now = machineTicks();
      return {
        wallMs: wall,
        cpuMs: (used.user + used.system) / 1000,
        hostPercent: ((used.user + used.system) / 1000 / wall) * 100,
        machinePercent: ((now.busy - ticks.busy) / Math.max(1, now.total - ticks.total)) * 100,
      };
    },
  };
}

async function load(options: HostBenchOptions, python: string): Promise<{ lines: string[]; checks: Check[] }> {
  return withHost(async (host, client) => {
    const firstSeq = host.hub.stats().emitted + 1;
    const script = fileURLToPath(new URL('./host-clients.ts', import.meta.url));
    const clients = spawn(process.execPath, ['--import', 'tsx', script, host.socketPath, String(options.clients), String(firstSeq), String(options.loadLines)], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const clientExit = new Promise<number | null>((resolve) => clients.once('close', (code) => resolve(code)));
    const replies = createInterface({ input: clients.stdout })[Symbol.asyncIterator]();
    const nextReply = async (timeoutMs: number): Promise<unknown> => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`the SSE client process did not answer in ${timeoutMs / 1000} s`)), timeoutMs)));
      try {
        const next = await Promise.race([replies.next(), timeout]);
        if (next.done) throw new Error(`the SSE client process exited (${await clientExit})`);
        return JSON.parse(next.value) as unknown;
      } finally {
        clearTimeout(timer);
      }
    };
    try {
      await nextReply(30_000);
      if (host.hub.stats().clients !== options.clients) throw new Error(`the hub has ${host.hub.stats().clients} clients, not ${options.clients}`);

      const LAG_RESOLUTION_MS = 10;
      const lag = monitorEventLoopDelay({ resolution: LAG_RESOLUTION_MS });
      const goFile = join(host.stateDir, 'go');
      const argv = printerArgv(python, options.loadLines, options.loadIntervalMs, 'number', goFile);
      const emittedBefore = host.hub.stats().emitted;
      const starting = windowOf();
      const childrenCpuBefore = reapedChildrenCpuMs();
      const ids: string[] = [];
      const startMs: number[] = [];
      for (let i = 0; i < options.loadRuns; i++) {
        const t = performance.now();
        const started = await client.start({ argv });
        startMs.push(performance.now() - t);
        if (started.state !== 'running') throw new Error(`run ${i} is ${started.state}: ${started.notes.join(' ')}`);
        ids.push(started.id);
      }
      let endedCount = 0;
      const results = Promise.all(
        ids.map(async (id) => {
          const result = await host.api.wait(id);
          endedCount += 1;
          return result;
        }),
      );
      await sleep(500); // the last interpreters reach their wait for the go file
      const startingCpu = starting.end();

      // Every run waits for the go file, then prints for loadLines * interval.
      const whole = windowOf();
      writeFileSync(goFile, '');
      await sleep(1000);
      const liveAtStart = options.loadRuns - endedCount;
      const emittedAtWindow = host.hub.stats().emitted;
      lag.enable();
      const steady = windowOf();
      await sleep(Math.max(1000, Math.min(5000, options.loadLines * options.loadIntervalMs - 3000)));
      const steadyCpu = steady.end();
      lag.disable();
      const liveAtEnd = options.loadRuns - endedCount;
      const windowEvents = host.hub.stats().emitted - emittedAtWindow;

      const ended = await results;
      const wholeCpu = whole.end();
      const childrenCpuMs = reapedChildrenCpuMs() - childrenCpuBefore;
      const verdicts = new Map<string, number>();
      for (const r of ended) verdicts.set(r.verdict ?? r.state, (verdicts.get(r.verdict ?? r.state) ?? 0) + 1);
      const stats = host.hub.stats();
      const emitted = stats.emitted - emittedBefore;
      clients.stdin.write(`${JSON.stringify({ until: stats.emitted, runs: ids })}\n`);
      const report = (await nextReply(90_000)) as ClientsReport;
      const statsAfter = host.hub.stats();

      const expected = stats.emitted - firstSeq + 1;
      const totalLines = options.loadRuns * options.loadLines;
      const outputEvents = report.clients[0]?.outputEvents ?? 0;
      const lines = [
        `3. load: ${options.loadRuns} runs live at once, each python3 printing a numbered line every ${options.loadIntervalMs} ms (flushed) for ${(options.loadLines * options.loadIntervalMs) / 1000} s, sampler at its default rate; ${options.clients} SSE clients in one separate Node process`,
        `  starting    ${options.loadRuns} starts over the socket, one after another, before any prints: ${ms(sum(startMs), 0)} (median ${ms(median(startMs), 2)} each), host CPU ${startingCpu.hostPercent.toFixed(1)}% of one core over ${ms(startingCpu.wallMs, 0)}; verdicts ${[...verdicts].map(([v, c]) => `${c} ${v}`).join(', ')}`,
        `  hub         ${emitted} events emitted (${expected} since the clients connected; ${windowEvents} in the steady window: ${perSecond(windowEvents, steadyCpu.wallMs)}), ${statsAfter.slowDisconnects} slow disconnects, ${statsAfter.buffered} buffered (${(statsAfter.bufferedBytes / 2 ** 20).toFixed(1)} MiB)`,
        `  output      ${outputEvents} output events carried the ${totalLines} lines printed: ${(totalLines / Math.max(1, outputEvents)).toFixed(2)} lines per event (one pipe read each; reads gather lines when the host's loop is late)`,
      ];
      let allClean = true;
      report.clients.forEach((c, i) => {
        const clean = c.dropped === 0 && c.duplicates === 0 && c.gapEvents === 0 && c.runsComplete === options.loadRuns && c.missingLines === 0 && c.duplicateLines === 0 && c.badLines === 0;
        allClean &&= clean;
        lines.push(
          `  client ${i + 1}    received ${c.received} of ${expected} (ids ${c.firstSeq}..${c.lastSeq}), dropped ${c.dropped}, duplicates ${c.duplicates}, gap events ${c.gapEvents}, reconnects ${c.reconnects}; ${c.outputEvents} output events, runs with all ${options.loadLines} lines ${c.runsComplete}/${options.loadRuns} (missing lines ${c.missingLines}, duplicate ${c.duplicateLines}, bad ${c.badLines}, offset breaks ${c.offsetBreaks})`,
        );
      });
      lines.push(
        `  host CPU    steady window (${(steadyCpu.wallMs / 1000).toFixed(1)} s from 1 s after the go, ${liveAtStart} -> ${liveAtEnd} runs printing): ${steadyCpu.hostPercent.toFixed(1)}% of one core;  whole load (${(wholeCpu.wallMs / 1000).toFixed(1)} s, go to the last end): ${wholeCpu.hostPercent.toFixed(1)}%`,
        `  event loop  in the steady window: delay median ${ms(lag.percentile(50) / 1e6 - LAG_RESOLUTION_MS, 1)}, p99 ${ms(lag.percentile(99) / 1e6 - LAG_RESOLUTION_MS, 1)}, max ${ms(lag.max / 1e6 - LAG_RESOLUTION_MS, 1)} (lateness of a ${LAG_RESOLUTION_MS} ms timer)`,
        `  children    the ${options.loadRuns} runs used ${ms(childrenCpuMs, 0)} of CPU (reaped children's times: interpreter starts, the wait for the go, the printing), ${((childrenCpuMs / (startingCpu.wallMs + wholeCpu.wallMs)) * 100).toFixed(0)}% of one core over the ${((startingCpu.wallMs + wholeCpu.wallMs) / 1000).toFixed(1)} s from the first start to the last end`,
        `  machine     ${steadyCpu.machinePercent.toFixed(0)}% of all cores busy in the steady window, ${wholeCpu.machinePercent.toFixed(0)}% over the whole load (host + ${options.loadRuns} children + clients + the rest of the machine);  client process CPU ${(report.cpuMs / report.wallMs * 100).toFixed(1)}% of one core over its ${(report.wallMs / 1000).toFixed(1)} s${report.timedOut ? ';  THE CLIENTS TIMED OUT waiting for the last events' : ''}`,
      );
      const checks = [
        check(`every one of ${options.clients} clients got every event (${expected}) and every line of every run, none dropped or repeated`, allClean && !report.timedOut),
        check(`all ${options.loadRuns} runs live through the steady window (${liveAtStart} -> ${liveAtEnd})`, liveAtStart === options.loadRuns && liveAtEnd === options.loadRuns),
      ];
      return { lines, checks };
    } finally {
      clients.stdin.end();
      if (clients.exitCode === null) clients.kill();
      await clientExit;
    }
  });
}

export async function benchHost(options: HostBenchOptions): Promise<Figure> {
  const python = realPython();
  const parts = [await roundTrips(options), await eventLatency(options, python), await load(options, python)];
  return {
    title: `(k) host: the control API over the unix socket vs in process, output event latency to an SSE client vs a plain pipe, ${options.loadRuns} live runs to ${options.clients} SSE clients`,
    lines: parts.flatMap((p) => p.lines),
    checks: parts.flatMap((p) => p.checks),
  };
}
