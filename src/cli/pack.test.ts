// Installing Warden in one step: `npm pack` (prepack builds the renderer and
// the CLI bundle into the tarball), `npm install -g` of that tarball into a
// temporary prefix, then the installed `warden` run as a user would: a
// command through a background host, `warden mcp`'s initialize, and
// `warden hook`, as root and as `nobody`; and the install directory holds
// the same files afterwards (nothing is written into it at run time). Also
// `npm install -g .` from the checkout. All of it on a copy of the checkout
// (prepack rebuilds out/). The dependencies come from npm's
// cache (--prefer-offline); where neither the cache nor the registry has
// them, the install part is skipped with the reason printed.

import { execa } from 'execa';
import { chmodSync, chownSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stopBackgroundHosts } from './testkit';

const ROOT = resolve(__dirname, '../..');
const NOBODY = 65534;
const work = mkdtempSync(join(tmpdir(), 'wpack-'));
chmodSync(work, 0o755);
const stateDirs: string[] = [];
let prefix = '';
let skipped: string | null = null;

/** Every file under dir, with its size and modification time. */
function listing(dir: string): string[] {
  const out: string[] = [];
  const walk = (sub: string) => {
    for (const name of readdirSync(join(dir, sub))) {
      const path = join(sub, name);
      const stat = statSync(join(dir, path));
      if (stat.isDirectory()) walk(path);
      else out.push(`${path} ${stat.size} ${stat.mtimeMs}`);
    }
  };
  walk('');
  return out.sort();
}

function stateDir(owner?: number): string {
  const dir = mkdtempSync(join(work, 'state-'));
  if (owner !== undefined) chownSync(dir, owner, owner);
  stateDirs.push(dir);
  return dir;
}

/** A copy of the checkout to pack, so prepack's builds never touch this checkout's out/ while other tests read it. */
const checkout = join(work, 'checkout');

beforeAll(async () => {
  for (const part of ['package.json', 'package-lock.json', '.npmrc', 'README.md', 'tsconfig.json', 'electron.vite.config.ts', 'bin', 'scripts', 'src', 'runtime']) cpSync(join(ROOT, part), join(checkout, part), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(checkout, 'node_modules'));
  const packed = await execa('npm', ['pack', '--pack-destination', work], { cwd: checkout, reject: false, all: true });
  if (packed.exitCode !== 0) throw new Error(`npm pack failed: ${packed.all}`);
  const tarball = join(work, readdirSync(work).find((name) => name.endsWith('.tgz'))!);
  prefix = join(work, 'prefix');
  const installed = await execa('npm', ['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', tarball], { reject: false, all: true, timeout: 170_000 });
  if (installed.exitCode !== 0) {
    if (/ENOTCACHED|ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|network/i.test(installed.all ?? '')) {
      skipped = `npm install -g could not get the dependencies (no cache, no registry): ${(installed.all ?? '').split('\n').find((l) => /npm error/.test(l)) ?? ''}`;
      console.warn(`pack.test: skipped: ${skipped}`);
      return;
    }
    throw new Error(`npm install -g failed: ${installed.all}`);
  }
  // Readable by every user, as a system-wide install is.
  await execa('chmod', ['-R', 'a+rX', prefix]);
}, 200_000);

afterAll(async () => {
  await stopBackgroundHosts(stateDirs);
  rmSync(work, { recursive: true, force: true });
});

describe('npm pack + npm install -g', () => {
  it('ships the CLI bundle, the built renderer and the Python runtime, and no sources', async () => {
    const files = (await execa('tar', ['tzf', join(work, readdirSync(work).find((name) => name.endsWith('.tgz'))!)])).stdout.split('\n');
    expect(files).toContain('package/bin/warden.mjs');
    expect(files).toContain('package/out/cli/dist/warden.mjs');
    expect(files).toContain('package/out/cli/dist/hook.mjs');
    expect(files).toContain('package/out/renderer/index.html');
    expect(files).toContain('package/runtime/warden_runtime.py');
    expect(files.filter((f) => f.startsWith('package/src/') || f.endsWith('.map') || f.startsWith('package/out/main/'))).toEqual([]);
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { private?: boolean; dependencies: Record<string, string> };
    expect(pkg.private).toBeUndefined();
    expect(Object.keys(pkg.dependencies)).not.toContain('tsx');
  });

  it('runs a command, answers MCP initialize and the hook from the install, as root and as nobody, writing nothing into it', async (context) => {
    if (skipped) return context.skip(skipped);
    const pkgDir = join(prefix, 'lib', 'node_modules', 'warden');
    const before = listing(pkgDir);
    const warden = join(prefix, 'bin', 'warden');

    const state = stateDir();
    const run = await execa(warden, ['run', '--', 'echo', 'hi'], { reject: false, env: { WARDEN_STATE_DIR: state, PATH: process.env.PATH! } });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).toBe('hi');

    const mcp = execa(warden, ['mcp'], { reject: false, env: { WARDEN_STATE_DIR: state }, stdin: 'pipe' });
    let answer = '';
    const initialized = new Promise<void>((resolvePromise) => {
      mcp.stdout!.on('data', (chunk: Buffer) => {
        answer += chunk.toString();
        if (answer.includes('\n')) resolvePromise();
      });
    });
    mcp.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'pack-test', version: '1' } } })}\n`);
    await initialized;
    mcp.stdin!.end();
    await mcp;
    expect((JSON.parse(answer.split('\n')[0]!) as { result: { serverInfo: { name: string } } }).result.serverInfo.name).toMatch(/warden/);

    const hook = await execa(warden, ['hook', 'gemini'], { input: JSON.stringify({ tool_name: 'run_shell_command', tool_input: { command: 'echo hi' } }), env: { WARDEN_STATE_DIR: state } });
    const rewritten = (JSON.parse(hook.stdout) as { hookSpecificOutput: { tool_input: { command: string } } }).hookSpecificOutput.tool_input.command;
    expect(rewritten).toContain(`${join(pkgDir, 'bin', 'warden.mjs')} run --format shell-results`);
    // Claude Code's rules make the hook read the line with the bash grammar, loaded from the install's own dependencies.
    const claudeHome = join(state, 'claude-home');
    mkdirSync(join(claudeHome, '.claude'), { recursive: true });
    writeFileSync(join(claudeHome, '.claude', 'settings.json'), JSON.stringify({ permissions: { allow: ['Bash(echo:*)'] } }));
    const claude = async (command: string) => {
      const answer = await execa(warden, ['hook', 'claude-code'], { input: JSON.stringify({ tool_name: 'Bash', cwd: claudeHome, tool_input: { command } }), env: { WARDEN_STATE_DIR: state, HOME: claudeHome, CLAUDE_CONFIG_DIR: '', CLAUDE_PROJECT_DIR: claudeHome } });
      return (JSON.parse(answer.stdout) as { hookSpecificOutput: { permissionDecision: string } }).hookSpecificOutput.permissionDecision;
    };
    expect(await claude('echo hi | echo there')).toBe('allow');
    expect(await claude("echo hi # it's\nrm -rf x\n# '")).toBe('ask');

    if (process.getuid?.() === 0) {
      // From a directory of theirs: the checkout may sit in a 0700 directory nobody cannot enter.
      const theirs = stateDir(NOBODY);
      const asNobody = await execa('setpriv', ['--reuid', String(NOBODY), '--regid', String(NOBODY), '--clear-groups', warden, 'run', '--', 'sh', '-c', 'id -u; echo from-nobody'], { reject: false, cwd: theirs, env: { HOME: theirs, WARDEN_STATE_DIR: theirs, PATH: process.env.PATH! } });
      expect(asNobody.exitCode, asNobody.stderr).toBe(0);
      expect(asNobody.stdout).toBe(`${NOBODY}\nfrom-nobody`);
    } else {
      console.warn('pack.test: the run as another user is skipped: not root, so no setpriv to nobody');
    }
    expect(listing(pkgDir)).toEqual(before);
  });

  it('installs from the checkout with npm install -g . the same way', async (context) => {
    if (skipped) return context.skip(skipped);
    const linked = join(work, 'prefix-link');
    const installed = await execa('npm', ['install', '-g', '--prefix', linked, '--prefer-offline', '--no-audit', '--no-fund', '.'], { cwd: checkout, reject: false, all: true });
    expect(installed.exitCode, installed.all).toBe(0);
    const run = await execa(join(linked, 'bin', 'warden'), ['run', '--', 'echo', 'hi'], { reject: false, env: { WARDEN_STATE_DIR: stateDir() } });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).toBe('hi');
  });
});
