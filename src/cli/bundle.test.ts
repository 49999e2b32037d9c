// The bundled CLI loads only what a command needs: a call through a running
// host never imports the engine, SQLite or zod. Checked two ways: the static
// import graph of the bundle's entry (esbuild's metafile), and the modules a
// real `warden run` through a real host resolves (a loader hook logs them).

import { execa } from 'execa';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, CURRENT } from '../../scripts/build-cli.mjs';
import { stopBackgroundHosts } from './testkit';

const ROOT = resolve(__dirname, '../..');
const BIN = join(ROOT, 'bin', 'warden.mjs');

interface Metafile {
  outputs: Record<string, { imports: { path: string; kind: string; external?: boolean }[]; inputs: Record<string, unknown> }>;
}

/**
 * What the engine (execa too), the store and schema checking are made of, and
 * the code of `warden setup` and `warden hook` (only their help texts are on
 * every call's path): none of it belongs on a client's path.
 */
const HEAVY_INPUTS = [
  /^src\/main\/supervisor\/(registry|run|teardown|python\/[a-z-]+|proc-tree\/[a-z-]+)\.ts$/,
  /^src\/main\/store\/(store|index|writer)\.ts$/,
  /^src\/shared\/schemas\.ts$/,
  /^src\/cli\/setup\/(index|jsonc|diff)\.ts$/,
  /^src\/cli\/hook\/(hook|rules|shell|match|walk|bash-grammar)\.ts$/,
];
const HEAVY_PACKAGES = ['libsql', 'zod', '@modelcontextprotocol/sdk', 'execa', 'web-tree-sitter'];

let meta: Metafile;
const dirs: string[] = [];

beforeAll(async () => {
  if (!existsSync(join(CURRENT, 'meta.json'))) await buildCli();
  meta = (JSON.parse(readFileSync(join(CURRENT, 'meta.json'), 'utf8')) as { metafile: Metafile }).metafile;
});
afterAll(() => stopBackgroundHosts(dirs));

/** Inputs bundled into an output chunk, by the chunk's file name. */
function inputsOf(chunk: string): string[] {
  const key = Object.keys(meta.outputs).find((k) => basename(k) === chunk);
  return key ? Object.keys(meta.outputs[key]!.inputs) : [];
}

describe('the bundled CLI', () => {
  it('statically imports no engine, store, schema or heavy package from its entry', () => {
    const entry = Object.keys(meta.outputs).find((k) => k.endsWith('/warden.mjs'))!;
    const seen = new Set<string>();
    const externals = new Set<string>();
    const stack = [entry];
    while (stack.length > 0) {
      const key = stack.pop()!;
      if (seen.has(key)) continue;
      seen.add(key);
      for (const imported of meta.outputs[key]!.imports) {
        if (imported.kind === 'dynamic-import') continue;
        if (imported.external) externals.add(imported.path);
        else stack.push(imported.path);
      }
    }
    const inputs = [...seen].flatMap((k) => Object.keys(meta.outputs[k]!.inputs));
    expect(inputs).toContain('src/cli/main.ts');
    expect(inputs.filter((i) => HEAVY_INPUTS.some((re) => re.test(i)))).toEqual([]);
    expect([...externals].filter((e) => HEAVY_PACKAGES.some((p) => e === p || e.startsWith(`${p}/`)))).toEqual([]);
    // The engine is still in the bundle, for --embedded and serve: only not on this path.
    expect(Object.keys(meta.outputs).flatMap((k) => Object.keys(meta.outputs[k]!.inputs))).toContain('src/main/supervisor/supervisor.ts');
  });

  it('a warden run through a running host resolves none of them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wb-'));
    dirs.push(dir);
    const env = { WARDEN_STATE_DIR: dir };
    // The first call starts the host (and loads whatever that takes, in the host's process).
    expect((await execa(process.execPath, [BIN, 'run', '--json', '--', 'true'], { env, reject: false })).exitCode).toBe(0);
    const log = join(dir, 'imports.log');
    const hook = join(__dirname, 'fixtures', 'log-imports.mjs');
    const second = await execa(process.execPath, ['--import', hook, BIN, 'run', '--json', '--', 'bash', '-c', 'echo through-host'], { env: { ...env, WARDEN_IMPORT_LOG: log }, reject: false });
    expect(second.exitCode).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ verdict: 'completed', stdout: 'through-host\n' });
    const urls = readFileSync(log, 'utf8').trim().split('\n');
    const chunks = urls.filter((u) => u.includes('/out/cli/')).map((u) => basename(new URL(u).pathname));
    expect(chunks).toContain('warden.mjs');
    expect(second.stderr).not.toMatch(/building the CLI/);
    const loadedInputs = chunks.flatMap(inputsOf);
    expect(loadedInputs).toContain('src/client/transport.ts');
    expect(loadedInputs.filter((i) => HEAVY_INPUTS.some((re) => re.test(i)))).toEqual([]);
    expect(urls.filter((u) => HEAVY_PACKAGES.some((p) => u.includes(`/node_modules/${p}/`)))).toEqual([]);
  });
});
