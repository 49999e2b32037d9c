// (m) What a `warden` call costs an agent: the bundled CLI as a process,
// against `node -e 0` (starting Node and doing nothing) in the same run.
//   1. `warden run --json -- true` through a running background host, and
//      embedded (`--embedded`), interleaved with `node -e 0`: median wall,
//      ratios, and the CLI's own peak RSS (VmHWM of its own address space at its exit,
//      measured in separate calls so the probe costs the timed ones nothing).
//   2. The first call with no host running (it starts one): spawn to exit.
//   3. `warden mcp`: a `run` of `true` through the SDK's Client over stdio,
//      against the same run through the socket API (start + wait), alternating.
//   4. The same socket start + wait with calls 150 ms apart, and back to back.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectToHost } from '../src/client/transport';
import { check, median, mb, ms, ratio, type Figure } from './lib';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin', 'warden.mjs');

export interface CliBenchOptions {
  /** Calls per side. */
  calls: number;
  /** Fresh state dirs for the first-call figure. */
  coldStarts: number;
  /** MCP run round trips per side. */
  mcpCalls: number;
}

function timeCall(argv: string[], env: NodeJS.ProcessEnv): number {
  const started = performance.now();
  const result = spawnSync(argv[0]!, argv.slice(1), { env, stdio: ['ignore', 'ignore', 'pipe'] });
  const elapsed = performance.now() - started;
  if (result.status !== 0) throw new Error(`${argv.join(' ')} exited ${result.status}: ${String(result.stderr).trim().split('\n')[0]}`);
  return elapsed;
}

/**
 * A process's own peak RSS: a preload writes VmHWM from /proc/self/status (kilobytes) when it exits.
 * Not getrusage's maxrss: Linux carries that across fork and exec, so every child of this 120 MB
 * bench reported the bench's size, node -e 0 included.
 */
function peakRss(argv: string[], env: NodeJS.ProcessEnv, dir: string): number {
  const probe = join(dir, 'rss-probe.cjs');
  const out = join(dir, 'rss.txt');
  writeFileSync(probe, `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(out)}, /VmHWM:\\s*(\\d+)/.exec(require('node:fs').readFileSync('/proc/self/status', 'utf8'))[1]));\n`);
  const result = spawnSync(process.execPath, ['--require', probe, ...argv.slice(1)], { env, stdio: 'ignore' });
  if (result.status !== 0) throw new Error(`${argv.join(' ')} exited ${result.status}`);
  return Number(readFileSync(out, 'utf8')) * 1024;
}

async function stopHost(dir: string): Promise<void> {
  const api = await connectToHost(dir);
  if (!api) return;
  const { pid } = await api.host();
  process.kill(pid, 'SIGTERM');
  for (let i = 0; i < 200; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}

export async function benchCli(options: CliBenchOptions): Promise<Figure> {
  const dir = mkdtempSync(join(tmpdir(), 'wbench-cli-'));
  const env: NodeJS.ProcessEnv = { ...process.env, WARDEN_STATE_DIR: dir, WARDEN_HOST_IDLE: '5m' };
  delete env.WARDEN_EMBEDDED;
  const node = [process.execPath, '-e', '0'];
  const hosted = [process.execPath, BIN, 'run', '--json', '--', 'true'];
  const embedded = [process.execPath, BIN, 'run', '--embedded', '--json', '--', 'true'];
  const lines: string[] = [];
  try {
    // Build the bundle if needed and start the host, outside the timed calls.
    timeCall(hosted, env);
    for (let i = 0; i < 5; i++) {
      timeCall(node, env);
      timeCall(hosted, env);
      timeCall(embedded, env);
    }
    const times: Record<'node' | 'hosted' | 'embedded', number[]> = { node: [], hosted: [], embedded: [] };
    for (let i = 0; i < options.calls; i++) {
      // Which side goes first turns each round, so drift on the machine falls on all of them.
      const order = (['node', 'hosted', 'embedded'] as const).map((_, k, all) => all[(k + i) % all.length]!);
      for (const side of order) times[side].push(timeCall(side === 'node' ? node : side === 'hosted' ? hosted : embedded, env));
    }
    const rss = { node: peakRss(node, env, dir), hosted: peakRss(hosted, env, dir), embedded: peakRss(embedded, env, dir) };
    const m = { node: median(times.node), hosted: median(times.hosted), embedded: median(times.embedded) };
    lines.push(`1. ${options.calls} calls per side, interleaved: median node -e 0 ${ms(m.node)}, warden run -- true through the host ${ms(m.hosted)} (${ratio(m.hosted, m.node)}), embedded ${ms(m.embedded)} (${ratio(m.embedded, m.node)}); hosted / embedded ${ratio(m.hosted, m.embedded)}`);
    lines.push(`   min: node ${ms(Math.min(...times.node))}, hosted ${ms(Math.min(...times.hosted))}, embedded ${ms(Math.min(...times.embedded))}`);
    lines.push(`   peak RSS of the process: node -e 0 ${mb(rss.node)}, warden through the host ${mb(rss.hosted)}, embedded ${mb(rss.embedded)}`);
    await stopHost(dir);

    // 2. No host running: the call starts one and then runs through it.
    const colds: number[] = [];
    for (let i = 0; i < options.coldStarts; i++) {
      const fresh = mkdtempSync(join(tmpdir(), 'wbench-cold-'));
      try {
        colds.push(timeCall(hosted, { ...env, WARDEN_STATE_DIR: fresh }));
      } finally {
        await stopHost(fresh);
        rmSync(fresh, { recursive: true, force: true });
      }
    }
    lines.push(`2. first call with no host (it starts one): median ${ms(median(colds))}, max ${ms(Math.max(...colds))} over ${options.coldStarts} fresh state dirs`);

    // 3. MCP round trip against the socket API, on one host.
    const mcp = await benchMcp(dir, env, options.mcpCalls);
    lines.push(`3. ${options.mcpCalls} run of true per side: MCP tools/call run ${ms(mcp.mcp)}, socket API start + wait ${ms(mcp.api)} (${ratio(mcp.mcp, mcp.api)})`);

    // 4. What the host's side of a call costs when calls are far apart (as CLI calls are) and back to back.
    const spacing = await sparseAndDense(dir, 12, 150);
    lines.push(`4. socket API start + wait of true, medians of 12: 150 ms apart (as CLI calls come) ${ms(spacing.sparse)}, back to back ${ms(spacing.dense)} (a cold cgroup attach waits for an RCU grace period: bench/README.md)`);
    return {
      title: '(m) the warden CLI per call, and warden mcp',
      lines,
      checks: [
        check(`through a host <= 1.5x node -e 0 (${ratio(m.hosted, m.node)})`, m.hosted <= 1.5 * m.node),
        check(`through a host <= 2.0x embedded (${ratio(m.hosted, m.embedded)})`, m.hosted <= 2 * m.embedded),
        check(`CLI peak RSS <= 70 MB (${mb(rss.hosted)})`, rss.hosted <= 70e6),
        check(`first call with no host <= 1 s (${ms(median(colds))})`, median(colds) <= 1000),
      ],
    };
  } finally {
    await stopHost(dir);
    rmSync(dir, { recursive: true, force: true });
  }
}

async function sparseAndDense(dir: string, calls: number, gapMs: number): Promise<{ sparse: number; dense: number }> {
  const api = await connectToHost(dir);
  if (!api) throw new Error('no host for the spacing figure');
  const one = async () => {
    const t = performance.now();
    await api.wait((await api.start({ argv: ['true'] })).id);
    return performance.now() - t;
  };
  const sparse: number[] = [];
  const dense: number[] = [];
  for (let i = 0; i < calls; i++) {
    await new Promise((r) => setTimeout(r, gapMs));
    sparse.push(await one());
  }
  for (let i = 0; i < calls; i++) dense.push(await one());
  return { sparse: median(sparse), dense: median(dense) };
}

async function benchMcp(dir: string, env: NodeJS.ProcessEnv, calls: number): Promise<{ mcp: number; api: number }> {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp'], env: env as Record<string, string>, stderr: 'ignore' });
  const client = new Client({ name: 'warden-bench', version: '1' });
  await client.connect(transport);
  try {
    // The server connects to the host in the background: its first answer means it has.
    const first = await client.callTool({ name: 'run', arguments: { argv: ['true'] } });
    if (first.isError) throw new Error(`MCP run failed: ${JSON.stringify(first.content)}`);
    const api = await connectToHost(dir);
    if (!api) throw new Error('no host for the MCP bench');
    const viaMcp = async () => {
      const t = performance.now();
      const reply = await client.callTool({ name: 'run', arguments: { argv: ['true'] } });
      if (reply.isError) throw new Error(`MCP run failed: ${JSON.stringify(reply.content)}`);
      return performance.now() - t;
    };
    const viaApi = async () => {
      const t = performance.now();
      const started = await api.start({ argv: ['true'] });
      await api.wait(started.id);
      return performance.now() - t;
    };
    for (let i = 0; i < 5; i++) {
      await viaMcp();
      await viaApi();
    }
    const a: number[] = [];
    const b: number[] = [];
    for (let i = 0; i < calls; i++) {
      if (i % 2 === 0) {
        a.push(await viaMcp());
        b.push(await viaApi());
      } else {
        b.push(await viaApi());
        a.push(await viaMcp());
      }
    }
    return { mcp: median(a), api: median(b) };
  } finally {
    await client.close();
  }
}
