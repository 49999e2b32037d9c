#!/usr/bin/env node
// The `warden` command: runs the bundled CLI in out/cli/current (see
// scripts/build-cli.mjs). Right after `npm install`, or after a source
// changed, it builds the bundle first (saying so once on stderr); only when
// that fails does it run the TypeScript sources through tsx.
import { readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const current = join(root, 'out', 'cli', 'current');

/** Whether the bundle exists and no input it was built from changed since. */
function fresh() {
  try {
    const { builtMs, inputs } = JSON.parse(readFileSync(join(current, 'meta.json'), 'utf8'));
    for (const input of inputs) if (statSync(join(root, input)).mtimeMs > builtMs) return false;
    return true;
  } catch {
    return false;
  }
}

async function load() {
  if (process.env.WARDEN_CLI_SOURCE !== '1') {
    if (!fresh()) {
      process.stderr.write('warden: building the CLI (first run after install or a change)...\n');
      try {
        const { buildCli } = await import('../scripts/build-cli.mjs');
        await buildCli();
      } catch (error) {
        const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
        process.stderr.write(`warden: building the CLI failed (${reason}); running from the sources through tsx instead.\n`);
        return fromSources();
      }
    }
    return import(pathToFileURL(join(current, 'warden.mjs')).href);
  }
  return fromSources();
}

async function fromSources() {
  const { register } = await import('tsx/esm/api');
  register();
  return import('../src/warden.ts');
}

const { main } = await load();
process.stdout.on('error', () => undefined); // a closed pipe (| head) is not our error
process.exitCode = await main(process.argv.slice(2));
