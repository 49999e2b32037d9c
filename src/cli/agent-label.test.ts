// The owner label of a hooked agent's runs, read from real processes: Gemini
// CLI runs as `node <its package's entry>`, which /proc's comm calls "node".

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { agentLabel, scriptCommand } from './agent-label';

const root = mkdtempSync(join(tmpdir(), 'wlabel-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  rmSync(root, { recursive: true, force: true });
});

function file(path: string, text: string): string {
  const full = join(root, path);
  mkdirSync(join(full, '..'), { recursive: true });
  writeFileSync(full, text);
  return full;
}

/** Starts argv and resolves with its pid once it runs its own program (after exec). */
async function started(argv: string[], marker: string): Promise<number> {
  const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'ignore'] });
  children.push(child);
  await new Promise<void>((resolve) => child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes(marker) && resolve()));
  return child.pid!;
}

const WAIT_JS = "console.log('up'); setInterval(() => {}, 1000);";

describe('agentLabel', () => {
  it('names an interpreter\'s script by the bin its package declares for it', async () => {
    const entry = file('gemini-cli/dist/index.js', WAIT_JS);
    file('gemini-cli/package.json', JSON.stringify({ name: '@google/gemini-cli', bin: { gemini: 'dist/index.js' } }));
    expect(agentLabel(await started([process.execPath, '--no-warnings', entry], 'up'))).toBe('gemini');
  });

  it('names a script outside a package by its file name, and a native program by its command name', async () => {
    const script = file('loose/codex-agent.mjs', WAIT_JS);
    expect(agentLabel(await started([process.execPath, script], 'up'))).toBe('codex-agent');
    expect(agentLabel(await started(['python3', '-u', file('loose/agent.py', "import time\nprint('up', flush=True)\ntime.sleep(60)\n")], 'up'))).toBe('agent');
    const sleeper = spawn('sleep', ['60'], { stdio: 'ignore' });
    children.push(sleeper);
    // Its comm is "sleep" once exec is done; until then it is node's fork.
    for (let i = 0; i < 200 && agentLabel(sleeper.pid!) !== 'sleep'; i++) await new Promise((r) => setTimeout(r, 25));
    expect(agentLabel(sleeper.pid!)).toBe('sleep');
  });

  it('is null for a pid that runs nothing', () => {
    expect(agentLabel(2 ** 22 + 1)).toBeNull();
  });
});

describe('scriptCommand', () => {
  it.each([
    ['pkg-a', 'bin/run.js', { name: 'tool-a', bin: { ta: 'bin/run.js', other: 'x.js' } }, 'ta'],
    ['pkg-b', 'index.js', { name: '@scope/tool-b', bin: { tb: 'cli.js' } }, 'tb'],
    ['pkg-c', 'index.js', { name: '@scope/tool-c' }, 'tool-c'],
    ['pkg-d', 'named.js', { name: 'tool-d', bin: { td: 'other.js', te: 'more.js' } }, 'named'],
    ['pkg-e', 'main.py', { name: 'tool-e', bin: { x: 'a.js', y: 'b.js' } }, 'tool-e'],
    ['pkg-g', 'lib/deep/index.js', { name: 'tool-g', bin: 'cli.js' }, 'tool-g'],
  ])('%s/%s', (dir, path, manifest, expected) => {
    const entry = file(join(dir, path), '');
    file(join(dir, 'package.json'), JSON.stringify(manifest));
    expect(scriptCommand(entry)).toBe(expected);
  });

  it('takes the file name when the package.json is not JSON, or there is none', () => {
    const broken = file('pkg-f/index.js', '');
    file('pkg-f/package.json', '{');
    expect(scriptCommand(broken)).toBe('index');
    expect(scriptCommand('/nonexistent-dir-for-warden/tool.cjs')).toBe('tool');
  });
});
