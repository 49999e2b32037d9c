// Installs the real agent CLIs at pinned versions into a cache outside
// node_modules (`npm install --prefix`), once per machine and version, and
// says why not when it cannot (no npm, the registry out of reach).

import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export interface Pinned {
  /** The package on npm. */
  pkg: string;
  version: string;
  /** The bin the package declares, run as `node <file>` (no PATH, no shebang). */
  bin: string;
}

/** The versions the tests drive (Claude Code 2.1.197 is the last for Node 20). */
export const PINNED: Record<'claude-code' | 'codex' | 'gemini', Pinned> = {
  'claude-code': { pkg: '@anthropic-ai/claude-code', version: '2.1.197', bin: 'claude' },
  codex: { pkg: '@openai/codex', version: '0.169.0', bin: 'codex' },
  gemini: { pkg: '@google/gemini-cli', version: '0.61.0', bin: 'gemini' },
};

/**
 * A later Claude Code, driven through a few cases of its own (issue 17): it
 * defers MCP tools behind ToolSearch unless told not to, and refuses a result
 * above its token cap. Its package asks for Node 22 (`engines`) but its bin is
 * a native executable from an optional dependency, so Node 20 installs it
 * (npm warns) and it runs.
 */
export const CLAUDE_CODE_LATER: Pinned = { pkg: '@anthropic-ai/claude-code', version: '2.1.332', bin: 'claude' };

/** The newest Codex when the plugins came (issue 28; `npm view @openai/codex version`), driven through the plugin's cases. */
export const CODEX_LATER: Pinned = { pkg: '@openai/codex', version: '0.171.0', bin: 'codex' };

export function cacheRoot(): string {
  const base = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(base, 'warden-test', 'harnesses');
}

function run(file: string, args: string[], cwd: string, timeoutMs: number): Promise<{ code: number | null; out: string }> {
  // Not this project's settings that `npm test` passes down (ignore-scripts=true would leave Claude Code
  // without its native binary; its prefix and package); the user's registry, proxy and cache stay.
  const own = /^npm_(config_(ignore_scripts|prefix|local_prefix|global_prefix)$|package_|lifecycle_)/i;
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !own.test(key)));
  Object.assign(env, { npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' });
  return new Promise((resolve) => {
    execFile(file, args, { cwd, timeout: timeoutMs, maxBuffer: 16 << 20, env }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
      resolve({ code, out: `${stdout}${stderr}`.trim() });
    });
  });
}

/** npm's own account of a failure: its error code and first message line. */
function npmError(out: string): string {
  const lines = out.split('\n').filter((line) => line.startsWith('npm error') && !/complete log|npm help|If you are behind/.test(line));
  return lines.slice(0, 2).join('; ');
}

/** The entry script of an installed package's bin, or null. */
function binScript(dir: string, pinned: Pinned): string | null {
  const pkgDir = join(dir, 'node_modules', ...pinned.pkg.split('/'));
  try {
    const manifest = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as { version?: string; bin?: string | Record<string, string> };
    if (manifest.version !== pinned.version) return null;
    const rel = typeof manifest.bin === 'string' ? manifest.bin : manifest.bin?.[pinned.bin];
    if (!rel) return null;
    const file = join(pkgDir, rel);
    return existsSync(file) ? file : null;
  } catch {
    return null;
  }
}

/**
 * The pinned package's bin script, installing it first when the cache lacks
 * it; or `{ skip }` with the reason (printed by the caller) when it cannot be
 * had. Installs go to a temp dir renamed into place, so an interrupted
 * install never leaves a half cache.
 */
export async function ensureHarness(pinned: Pinned): Promise<{ script: string } | { skip: string }> {
  try {
    return await install(pinned);
  } catch (error) {
    // An unwritable cache (a HOME that is not there), a full disk: a reason to skip, not a crash.
    return { skip: `${pinned.pkg}@${pinned.version}: cannot install into ${cacheRoot()} (${error instanceof Error ? error.message : String(error)})` };
  }
}

async function install(pinned: Pinned): Promise<{ script: string } | { skip: string }> {
  const dir = join(cacheRoot(), `${pinned.pkg.replace('/', '+')}@${pinned.version}`);
  const cached = binScript(dir, pinned);
  if (cached) return { script: cached };
  const npm = process.env.npm_execpath && process.env.npm_execpath.endsWith('.js') ? null : 'npm';
  const npmArgs = (args: string[]): [string, string[]] => (npm ? [npm, args] : [process.execPath, [process.env.npm_execpath!, ...args]]);
  const spec = `${pinned.pkg}@${pinned.version}`;
  const [viewFile, viewArgs] = npmArgs(['view', spec, 'version', '--fetch-timeout=20000', '--fetch-retries=1']);
  mkdirSync(cacheRoot(), { recursive: true });
  const view = await run(viewFile, viewArgs, cacheRoot(), 60_000);
  if (view.code !== 0 || view.out.trim().split('\n').pop() !== pinned.version) {
    return { skip: `${spec}: the npm registry could not be reached or has no such version (${npmError(view.out) || `exit ${view.code}`})` };
  }
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  // Install scripts on: Claude Code's puts its native binary in place.
  const [file, args] = npmArgs(['install', '--prefix', tmp, '--no-save', '--no-audit', '--no-fund', '--ignore-scripts=false', '--loglevel=error', spec]);
  const install = await run(file, args, cacheRoot(), 600_000);
  if (install.code !== 0 || !binScript(tmp, pinned)) {
    rmSync(tmp, { recursive: true, force: true });
    return { skip: `${spec}: npm install failed (${npmError(install.out) || `exit ${install.code}`})` };
  }
  rmSync(dir, { recursive: true, force: true });
  renameSync(tmp, dir);
  const script = binScript(dir, pinned);
  return script ? { script } : { skip: `${spec}: installed but its bin "${pinned.bin}" is missing` };
}
