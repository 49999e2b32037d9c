// (q) What an agent waits for and what its model receives from `warden mcp`:
//   1. time from spawn to the answer of `initialize` (a fresh state dir, no
//      host running: the server answers first and finds its host after the
//      handshake), against a bare @modelcontextprotocol/sdk stdio server
//      (Server + StdioServerTransport, nothing else) on the same Node,
//      spawned alternately (which side goes first turns).
//   2. the size of what each harness's model is shown for a run printing
//      300,000 lines and an error on stderr: the structuredContent JSON for
//      Claude Code and Codex, the text block for Gemini CLI (told apart by
//      clientInfo.name, as warden mcp does).

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { connectToHost } from '../src/client/transport';
import { check, median, ms, ratio, type Figure } from './lib';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin', 'warden.mjs');
const SDK = join(ROOT, 'node_modules', '@modelcontextprotocol', 'sdk', 'dist', 'esm');

export interface McpBenchOptions {
  /** Spawns per side. */
  runs: number;
}

const INITIALIZE = `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'warden-bench', version: '1' } } })}\n`;

/** Spawn to the first line on stdout (the initialize answer); then stdin is closed and the exit awaited. */
function timeInitialize(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, { env, stdio: ['pipe', 'pipe', 'ignore'] });
    let answered = 0;
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (answered === 0 && out.includes('\n')) {
        answered = performance.now() - started;
        if (!out.includes('"serverInfo"')) reject(new Error(`no initialize answer: ${out.slice(0, 200)}`));
        child.stdin.end();
      }
    });
    child.on('error', reject);
    child.on('exit', () => (answered > 0 ? resolve(answered) : reject(new Error(`${args.join(' ')} exited before answering`))));
    child.stdin.write(INITIALIZE);
  });
}

async function modelSizes(env: NodeJS.ProcessEnv): Promise<{ client: string; form: string; chars: number; first: string }[]> {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
  const sizes: { client: string; form: string; chars: number; first: string }[] = [];
  for (const [name, form] of [['claude-code', 'structuredContent'], ['codex-mcp-client', 'structuredContent'], ['gemini-cli-mcp-client', 'text']] as const) {
    const client = new Client({ name, version: '1' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp'], env: env as Record<string, string>, stderr: 'ignore' }));
    try {
      const reply = (await client.callTool({ name: 'run', arguments: { shell: 'seq 1 300000; echo "Error: it broke" >&2; exit 1' } }, undefined, { timeout: 120_000 })) as {
        content: { type: string; text?: string }[];
        structuredContent?: unknown;
      };
      const shown = form === 'text' ? reply.content.map((c) => c.text ?? '').join('\n') : JSON.stringify(reply.structuredContent);
      sizes.push({ client: name, form, chars: shown.length, first: shown.slice(0, 120).replace(/\n/g, '\\n') });
    } finally {
      await client.close();
    }
  }
  return sizes;
}

export async function benchMcp(options: McpBenchOptions): Promise<Figure> {
  const dir = mkdtempSync(join(tmpdir(), 'warden-bench-mcp-'));
  const env: NodeJS.ProcessEnv = { ...process.env, WARDEN_STATE_DIR: join(dir, 'state'), WARDEN_HOST_IDLE: '30s' };
  delete env.WARDEN_EMBEDDED;
  const bare = join(dir, 'bare-server.mjs');
  writeFileSync(
    bare,
    `import { Server } from ${JSON.stringify(pathToFileURL(join(SDK, 'server', 'index.js')).href)};\n` +
      `import { StdioServerTransport } from ${JSON.stringify(pathToFileURL(join(SDK, 'server', 'stdio.js')).href)};\n` +
      `const server = new Server({ name: 'bare', version: '1' }, { capabilities: { tools: {} } });\n` +
      `await server.connect(new StdioServerTransport());\n`,
  );
  try {
    // Warm the page cache and the CLI bundle (bin/warden.mjs builds it when stale).
    for (let i = 0; i < 3; i++) {
      await timeInitialize([bare], env);
      await timeInitialize([BIN, 'mcp'], env);
    }
    const wardenTimes: number[] = [];
    const bareTimes: number[] = [];
    for (let i = 0; i < options.runs; i++) {
      if (i % 2 === 0) {
        wardenTimes.push(await timeInitialize([BIN, 'mcp'], env));
        bareTimes.push(await timeInitialize([bare], env));
      } else {
        bareTimes.push(await timeInitialize([bare], env));
        wardenTimes.push(await timeInitialize([BIN, 'mcp'], env));
      }
    }
    const w = median(wardenTimes);
    const b = median(bareTimes);
    const hostStarted = (await connectToHost(env.WARDEN_STATE_DIR!)) !== null;
    const sizes = await modelSizes(env);
    const lines = [
      `1. spawn to initialize answered, ${options.runs} per side: warden mcp median ${ms(w)} (min ${ms(Math.min(...wardenTimes))}, max ${ms(Math.max(...wardenTimes))}), bare SDK stdio server ${ms(b)} (min ${ms(Math.min(...bareTimes))}, max ${ms(Math.max(...bareTimes))}): ${ratio(w, b)}; a host was started before any handshake completed: ${hostStarted ? 'yes' : 'no'}`,
      ...sizes.map((s) => `2. 300,000 lines, ${s.client} (model shown ${s.form}): ${s.chars.toLocaleString('en-US')} characters, starting ${s.first}`),
    ];
    const limits: Record<string, number> = { 'claude-code': 25_000, 'codex-mcp-client': 12_000, 'gemini-cli-mcp-client': 40_000 };
    return {
      title: '(q) warden mcp: time to initialize, and what each model is shown for 300,000 lines',
      lines,
      checks: [
        check(`initialize <= 1.3x a bare SDK stdio server (${ratio(w, b)})`, w <= 1.3 * b),
        ...sizes.map((s) => check(`${s.client}: ${s.chars.toLocaleString('en-US')} characters < its cut (${limits[s.client]!.toLocaleString('en-US')})`, s.chars < limits[s.client]!)),
      ],
    };
  } finally {
    const api = await connectToHost(env.WARDEN_STATE_DIR!).catch(() => null);
    if (api) {
      const { pid } = await api.host();
      process.kill(pid, 'SIGTERM');
      for (let i = 0; i < 200; i++) {
        try {
          process.kill(pid, 0);
        } catch {
          break;
        }
        await new Promise((r) => setTimeout(r, 25));
      }
    }
    rmSync(dir, { recursive: true, force: true });
  }
}
