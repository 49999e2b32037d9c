#!/usr/bin/env -S node --
// The `warden` command. An installed package (no src/ beside bin/) runs the
// bundle npm pack's prepack built into out/cli/dist, as it is: it writes
// nothing into its install directory and needs no dev dependency. A checkout
// runs the bundle in out/cli/current (see scripts/build-cli.mjs): right after
// `npm install`, or after a source changed, it builds the bundle first
// (saying so once on stderr); only when that fails does it run the
// TypeScript sources through tsx. `warden hook` loads only hook.mjs, the
// hook's own small bundle, so a harness's hook call costs about a Node start.
//
// The `--` on the #! line: Node itself reads `--env-file FILE` anywhere in its
// argv up to the first `--` (nodejs/node#54232), script arguments included,
// and applies a NODE_OPTIONS line from it before any of Warden runs. Started
// as `warden ...`, Node stops at that `--`, so `warden run --env-file FILE` is
// Warden's alone. Started as `node bin/warden.mjs ... --env-file FILE`, Node
// has already read it when this file runs: it says so and stops (on Linux,
// where /proc shows Node's own argv).
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** Whether Node read an --env-file of Warden's arguments itself: one before the first `--` of its whole argv. */
function nodeReadEnvFile() {
  let argv;
  try {
    argv = readFileSync('/proc/self/cmdline', 'utf8').split('\0');
  } catch {
    return false; // no /proc: cannot tell
  }
  const stop = argv.indexOf('--');
  return (stop < 0 ? argv : argv.slice(0, stop)).some((arg) => arg === '--env-file' || arg.startsWith('--env-file='));
}

if (nodeReadEnvFile()) {
  process.stderr.write(
    'warden: Node itself read the --env-file given to Warden (and ran any NODE_OPTIONS in it) because it was started as `node bin/warden.mjs`, without `--`; nothing was run. Start it as `warden ...` or `node -- bin/warden.mjs ...`.\n',
  );
  process.exit(125);
}

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const current = join(root, 'out', 'cli', 'current');
const entry = process.argv[2] === 'hook' ? 'hook' : 'warden';

/** Whether the bundle exists and no input it was built from changed since. */
function fresh() {
  try {
    const { builtMs, inputs, hookInputs } = JSON.parse(readFileSync(join(current, 'stamp.json'), 'utf8'));
    for (const input of entry === 'hook' ? hookInputs : inputs) if (statSync(join(root, input)).mtimeMs > builtMs) return false;
    return true;
  } catch {
    return false;
  }
}

async function load() {
  if (!existsSync(join(root, 'src', 'cli', 'main.ts'))) {
    const bundle = join(root, 'out', 'cli', 'dist', `${entry}.mjs`);
    if (!existsSync(bundle)) {
      process.stderr.write(`warden: this package has no CLI bundle (${bundle}): it was packed without its prepack step (npm pack --ignore-scripts skips it).\n`);
      process.exit(125);
    }
    return import(pathToFileURL(bundle).href);
  }
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
    return import(pathToFileURL(join(current, `${entry}.mjs`)).href);
  }
  return fromSources();
}

async function fromSources() {
  const { register } = await import('tsx/esm/api');
  register();
  return import(entry === 'hook' ? '../src/cli/hook/main.ts' : '../src/warden.ts');
}

const { main } = await load();
process.stdout.on('error', () => undefined); // a closed pipe (| head) is not our error
process.exitCode = await main(entry === 'hook' ? process.argv.slice(3) : process.argv.slice(2));
