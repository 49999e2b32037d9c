// Bundles the `warden` command (src/warden.ts, src/cli/main.ts and everything it loads
// lazily: the embedded engine, the host of `warden serve`, `warden mcp`) into
// out/cli/ with esbuild, so a call costs about as much as starting Node
// instead of transpiling TypeScript through tsx every time.
//
// Each build goes to a directory of its own (out/cli/build-*) and the
// symlink out/cli/current is swapped to it in one rename: two processes
// building at once never leave a half-written bundle, and a process that
// loaded one build keeps loading its lazy chunks from that build.
// bin/warden.mjs builds when out/cli/current is missing or older than an
// input recorded in its meta.json.
//
//   node scripts/build-cli.mjs          build now (npm test and npm run build do)
//   node scripts/build-cli.mjs --dist   build the package's copy into out/cli/dist
//                                       (npm pack's prepack): a plain directory,
//                                       no source maps, which an installed
//                                       package runs as it is (bin/warden.mjs)
//
// Two entries: warden.mjs (the CLI) and hook.mjs (`warden hook`, which loads
// nothing but its own small module so a harness's hook call costs about a
// Node start). stamp.json holds what bin/warden.mjs checks for freshness.
// Each build also writes the harnesses' plugins into integrations/ (from
// src/cli/setup/plugin-tree.ts, bundled on its own for this), which npm pack
// ships.

import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outRoot = join(root, 'out', 'cli');
/** Builds other than the current one are removed once this old (a long-lived host may still load chunks from its own). */
const KEEP_OLD_BUILDS_MS = 60 * 60 * 1000;

export const CURRENT = join(outRoot, 'current');

export const DIST = join(outRoot, 'dist');

export async function buildCli({ dist = false } = {}) {
  const { build } = await import('esbuild');
  mkdirSync(outRoot, { recursive: true });
  const name = `${dist ? '.dist' : 'build'}-${Date.now().toString(36)}-${process.pid}`;
  const dir = join(outRoot, name);
  const startedMs = Date.now();
  const shared = {
    absWorkingDir: root,
    outdir: dir,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    outExtension: { '.js': '.mjs' },
    // Dependencies load from node_modules as they are (libsql is native; none needs bundling to start fast).
    packages: 'external',
    sourcemap: dist ? false : 'linked',
    metafile: true,
    logLevel: 'silent',
    legalComments: 'none',
  };
  // Lazy imports (the engine, SQLite, zod, the MCP SDK) become chunks loaded only by the commands that need them.
  const result = await build({ ...shared, entryPoints: { warden: 'src/warden.ts' }, splitting: true });
  // The hook is one file of its own: a harness calls it before every shell command, and each module loaded costs.
  const hook = await build({ ...shared, entryPoints: { hook: 'src/cli/hook/main.ts' }, splitting: false });
  // A warning is an import esbuild could not follow (a module that does not exist yet, say): a bundle
  // built past it would fail at run time, long after this check said it was fresh.
  const warnings = [...result.warnings, ...hook.warnings];
  if (warnings.length > 0) {
    rmSync(dir, { recursive: true, force: true });
    const first = warnings[0];
    throw new Error(`${first.location ? `${first.location.file}:${first.location.line}: ` : ''}${first.text}`);
  }
  await writeIntegrationsTree(shared, dir);
  const inputs = [...new Set([...Object.keys(result.metafile.inputs), ...Object.keys(hook.metafile.inputs), 'scripts/build-cli.mjs', 'package.json'])];
  // A hook call checks only the hook's own inputs for freshness.
  const hookInputs = [...Object.keys(hook.metafile.inputs), 'scripts/build-cli.mjs', 'package.json'];
  writeFileSync(join(dir, 'stamp.json'), `${JSON.stringify({ builtMs: startedMs, inputs, hookInputs })}\n`);
  if (dist) {
    rmSync(DIST, { recursive: true, force: true });
    renameSync(dir, DIST);
    return { dir: DIST, relative: relative(root, DIST) };
  }
  writeFileSync(join(dir, 'meta.json'), `${JSON.stringify({ builtMs: startedMs, inputs, metafile: result.metafile })}\n`);
  const link = join(outRoot, `.${name}.link`);
  symlinkSync(name, link);
  renameSync(link, CURRENT);
  for (const entry of readdirSync(outRoot)) {
    if (!entry.startsWith('build-') || entry === name) continue;
    try {
      if (Date.now() - statSync(join(outRoot, entry)).mtimeMs > KEEP_OLD_BUILDS_MS) rmSync(join(outRoot, entry), { recursive: true, force: true });
    } catch {
      // Another build removed it first.
    }
  }
  return { dir, relative: relative(root, dir) };
}

/** integrations/ from its one source: bundled apart (it imports only node:fs and node:path), run, removed. */
async function writeIntegrationsTree(shared, dir) {
  const { build } = await import('esbuild');
  const tool = join(dir, '.integrations-tool.mjs');
  await build({ ...shared, outdir: undefined, outfile: tool, sourcemap: false, metafile: false, entryPoints: ['src/cli/setup/plugin-tree.ts'], splitting: false });
  try {
    const { writeIntegrations } = await import(pathToFileURL(tool).href);
    const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
    writeIntegrations(root, version);
  } finally {
    rmSync(tool, { force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    const dist = process.argv.includes('--dist');
    const { relative: where } = await buildCli({ dist });
    console.error(`warden: built the CLI into ${where}${dist ? '' : ' (out/cli/current)'}`);
  } catch (error) {
    console.error(`warden: building the CLI failed: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
    process.exit(1);
  }
}
