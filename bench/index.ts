// `npm run bench`: every figure, each against a baseline measured side by side
// in this same process run. See bench/README.md.
//
// Environment knobs (defaults in brackets): BENCH_ONLY=a,b,... [all],
// BENCH_SPAWN_RUNS [300], BENCH_OUTPUT_BYTES [1073741824], BENCH_OUTPUT_ROUNDS [5],
// BENCH_DEADLINE_RUNS [20], BENCH_TEARDOWN_ROUNDS [2], BENCH_HOST_RUNS [200],
// BENCH_UI_RUNS [50], BENCH_UI_ROUNDS [5], BENCH_UI_HISTORY_RUNS [100000], BENCH_UI_PARTS [1,...,9],
// BENCH_CLI_CALLS [30], BENCH_CLI_COLD [5], BENCH_MCP_CALLS [30], BENCH_PROTOCOL_LOADS [100], BENCH_PROTOCOL_ROUNDS [15],
// BENCH_LOAD_RUNS [50], BENCH_LOAD_ROUNDS [8], BENCH_LOAD_BYTES [10000000], BENCH_FAULT_ROUNDS [5],
// BENCH_MCP_INIT_RUNS [20], BENCH_HOOK_CALLS [30], BENCH_FD_RUNS [500], BENCH_FD_LIMIT [4096],
// BENCH_EMBEDDED_BYTES [2147483648], BENCH_EMBEDDED_ROUNDS [5],
// BENCH_REMOTE_CALLS [15], BENCH_REMOTE_COLD [5], BENCH_SEARCH_ROUNDS [7], BENCH_SERVICE_RUNS [200], BENCH_SERVICE_PROBES [20].

import { benchDeadline } from './deadline';
import { machineLine, printFigure, type Figure } from './lib';
import { benchSpawn } from './spawn';
import { benchTeardown } from './teardown';
import { benchThroughput } from './throughput';

function intEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer, not ${JSON.stringify(raw)}`);
  return value;
}

const only = new Set((process.env.BENCH_ONLY ?? 'a,b,w,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q,r,s,t,v,x').split(',').map((s) => s.trim()));

// (a) runs first: fork() costs more as the process grows (page tables), and
// (b) grows it, which would hide the engine's fixed cost behind a slower baseline.
const sections: [string, () => Promise<Figure>][] = [
  ['a', () => benchSpawn({ runs: intEnv('BENCH_SPAWN_RUNS', 300), block: 10, warmup: 20 })],
  ['b', () => benchThroughput({ bytes: intEnv('BENCH_OUTPUT_BYTES', 2 ** 30), rounds: intEnv('BENCH_OUTPUT_ROUNDS', 5) })],
  ['w', async () => (await import('./embedded-capture')).benchEmbeddedCapture({ bytes: intEnv('BENCH_EMBEDDED_BYTES', 2 ** 31), rounds: intEnv('BENCH_EMBEDDED_ROUNDS', 5) })],
  ['c', () => benchDeadline({ runs: intEnv('BENCH_DEADLINE_RUNS', 20), limitMs: 1000 })],
  ['d', () => benchTeardown({ group: 400, escapees: 100, rounds: intEnv('BENCH_TEARDOWN_ROUNDS', 2) })],
  ['e', async () => (await import('./python')).benchPythonDeadline({ runs: intEnv('BENCH_PYTHON_RUNS', 20), limitMs: 1000, label: 'e', title: 'Python time.sleep(30) overshoot', code: 'import time\ntime.sleep(30)' })],
  ['f', async () => (await import('./python')).benchPythonDeadline({ runs: intEnv('BENCH_PYTHON_RUNS', 20), limitMs: 1000, label: 'f', title: 'Python busy-loop overshoot', code: 'while True:\n    pass' })],
  ['g', async () => (await import('./python')).benchWarmScript({ runs: intEnv('BENCH_WARM_RUNS', 50) })],
  ['h', async () => (await import('./sampler')).benchSampler({ processes: 500, rateHz: 4, seconds: 5, warmupSeconds: 15, pairs: 20 })],
  ['i', async () => (await import('./oom')).benchOom({ runs: intEnv('BENCH_OOM_RUNS', 5) })],
  ['j', async () => (await import('./store')).benchStore({ runs: intEnv('BENCH_STORE_RUNS', 100_000), outputBytes: 100_000_000, rounds: intEnv('BENCH_STORE_ROUNDS', 11), repeats: 20 })],
  ['k', async () => (await import('./host')).benchHost({ rounds: 10, getsPerRound: 200, runsPerRound: 15, warmupRuns: 20, warmupGets: 200, latencyLines: 50, latencyRounds: 4, latencyIntervalMs: 20, loadRuns: intEnv('BENCH_HOST_RUNS', 200), loadLines: 1000, loadIntervalMs: 10, clients: 5 })],
  ['m', async () => (await import('./cli')).benchCli({ calls: intEnv('BENCH_CLI_CALLS', 30), coldStarts: intEnv('BENCH_CLI_COLD', 5), mcpCalls: intEnv('BENCH_MCP_CALLS', 30) })],
  ['q', async () => (await import('./mcp')).benchMcp({ runs: intEnv('BENCH_MCP_INIT_RUNS', 20) })],
  ['r', async () => (await import('./hook')).benchHook({ calls: intEnv('BENCH_HOOK_CALLS', 30) })],
  ['t', async () => (await import('./search')).benchSearch({ rounds: intEnv('BENCH_SEARCH_ROUNDS', 7) })],
  ['s', async () => (await import('./remote')).benchRemote({ calls: intEnv('BENCH_REMOTE_CALLS', 15), coldCalls: intEnv('BENCH_REMOTE_COLD', 5), latencyRounds: 4, latencyLines: 50 })],
  ['u', async () => (await import('./relay')).benchRelay({ gets: intEnv('BENCH_RELAY_GETS', 50), latencyRounds: 4, latencyLines: 50 })],
  ['v', async () => (await import('./services')).benchServices({ runs: intEnv('BENCH_SERVICE_PROBES', 20), liveRuns: intEnv('BENCH_SERVICE_RUNS', 200), rounds: 2, windowMs: 10_000 })],
  ['p', async () => (await import('./faults')).benchFaults({ rounds: intEnv('BENCH_FAULT_ROUNDS', 5), sweepRuns: 20, lostRuns: 100 })],
  ['n', async () => (await import('./protocol')).benchProtocol({ loads: intEnv('BENCH_PROTOCOL_LOADS', 100), rounds: intEnv('BENCH_PROTOCOL_ROUNDS', 15) })],
  ['o', async () => (await import('./load')).benchLoad({ runs: intEnv('BENCH_LOAD_RUNS', 50), rounds: intEnv('BENCH_LOAD_ROUNDS', 8), bytes: intEnv('BENCH_LOAD_BYTES', 10_000_000) })],
  ['o', async () => (await import('./descriptors')).benchDescriptors({ runs: intEnv('BENCH_FD_RUNS', 500), limit: intEnv('BENCH_FD_LIMIT', 4096) })],
  ['x', async () => (await import('./harness')).benchHarnesses()],
  ['l', async () => (await import('./ui')).benchUi({ liveRuns: intEnv('BENCH_UI_RUNS', 50), linesPerSecond: 200, runsViewSeconds: 20, detailSeconds: 5, idleSeconds: 5, bigLines: 40_000, smallLines: 10, lineChars: 50, navRounds: intEnv('BENCH_UI_ROUNDS', 5), historyRuns: intEnv('BENCH_UI_HISTORY_RUNS', 100_000), historyBaselineRuns: 100, quietRuns: 5, quietSeconds: 10, chartPoints: 3600, loginRuns: 14, loginBigLines: 40_000 })],
];

console.log(`Warden engine benchmarks (${machineLine()})`);
const started = performance.now();
let misses = 0;
for (const [key, run] of sections) {
  if (!only.has(key)) continue;
  try {
    const figure = await run();
    printFigure(figure);
    misses += figure.checks.filter((c) => !c.pass).length;
  } catch (error) {
    misses++;
    process.exitCode = 1;
    console.log(`\n(${key}) could not be measured: ${error instanceof Error ? error.message : String(error)}`);
  }
}
console.log(`\n${misses === 0 ? 'All targets met' : `${misses} target(s) missed`} in ${((performance.now() - started) / 1000).toFixed(1)} s.`);
// A missed target is reported, not an error: the exit status says only whether the bench ran.
