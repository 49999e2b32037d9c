// `npm run package` runs this after building out/: it flips the fuses (options
// compiled into the Electron binary, read before any of Warden's code runs)
// of the binary that runs the built app, with @electron/fuses. Not part of
// `npm run build`: a binary without --inspect can no longer be driven by
// Playwright's _electron (e2e/electron.spec.ts) or debugged (`electron-vite
// dev --inspect`), so the checkout's binary is flipped only when asked. Usage:
//
//   node scripts/fuses.mjs [--packaged] [ELECTRON]
//
// --packaged: the binary of an app packed by electron-builder (its afterPack
// hook, scripts/after-pack.cjs), whose app is in resources/app.asar: it also
// gets OnlyLoadAppFromAsar, so nothing but that archive is loaded as the app.
//
// ELECTRON defaults to the binary the electron package names (its path.txt in
// its dist/, or ELECTRON_OVERRIDE_DIST_PATH, as electron's own index.js finds
// it). Where there is none (Electron 45's package fetches it when first needed; `npm start` does)
// one line says so and the build goes on (exit 0); a binary named on the
// command line that is not there, or that has no fuse wire, is an error
// (exit 1), in one line, and the file is left as it was.

import { existsSync, statSync } from 'node:fs';
import { relative } from 'node:path';
import fuses from '@electron/fuses';
import { electronBinary } from './electron-binary.mjs';

const { flipFuses, getCurrentFuseWire, FuseV1Options, FuseVersion } = fuses;

/** The wire's bytes for a fuse's state (@electron/fuses keeps these in a module it does not export). */
const ON = 0x31; // '1'
const OFF = 0x30; // '0'
const REMOVED = 0x72; // 'r': the fuse no longer exists in this Electron

/**
 * Warden's fuses. Not set (left as the binary has them, off by default):
 * EnableEmbeddedAsarIntegrityValidation (Electron checks it on macOS and
 * Windows only; Warden's packages are Linux's); OnlyLoadAppFromAsar for the
 * checkout's binary, which runs the app from out/ (`npm run preview`) and
 * would refuse to load it (a packed app gets it: PACKAGED_FUSES);
 * LoadBrowserProcessSpecificV8Snapshot, which Warden has no snapshot for.
 */
export const WARDEN_FUSES = {
  // ELECTRON_RUN_AS_NODE would turn the app's binary into a plain Node that runs any script.
  [FuseV1Options.RunAsNode]: false,
  [FuseV1Options.EnableCookieEncryption]: true,
  // NODE_OPTIONS=--require=… would load code into the main process before Warden's.
  [FuseV1Options.EnableNodeOptionsEnvironmentVariable]: false,
  // --inspect would let anything on the machine debug (and drive) the main process.
  [FuseV1Options.EnableNodeCliInspectArguments]: false,
  // The page comes from app:// (src/main/app/protocol.ts): file:// needs no more than a browser gives it.
  [FuseV1Options.GrantFileProtocolExtraPrivileges]: false,
};

/** A packed app's: its app is resources/app.asar, and nothing else is loaded as the app (a resources/app directory dropped beside it, say). */
export const PACKAGED_FUSES = { ...WARDEN_FUSES, [FuseV1Options.OnlyLoadAppFromAsar]: true };

const fuseName = (index) => FuseV1Options[index];
const fail = (line, status = 1) => {
  console.error(`warden: ${line}`);
  process.exit(status);
};

const packaged = process.argv[2] === '--packaged';
const args = process.argv.slice(packaged ? 3 : 2);
const wanted = packaged ? PACKAGED_FUSES : WARDEN_FUSES;
if (args.length > 1 || args[0] === '--help' || args[0] === '-h' || args[0]?.startsWith('-') || (packaged && args.length === 0)) {
  fail('usage: node scripts/fuses.mjs [PATH_TO_ELECTRON_BINARY] | --packaged PATH_TO_PACKED_APP_BINARY', args[0] === '--help' || args[0] === '-h' ? 0 : 2);
}

let target;
if (args[0] !== undefined) {
  target = args[0];
  if (!existsSync(target)) fail(`fuses not set: no Electron binary at ${target}.`);
  if (!statSync(target).isFile() && !target.endsWith('.app')) fail(`fuses not set: ${target} is not a file.`);
} else {
  const found = electronBinary();
  if (found.missing) {
    console.error(`warden: fuses not set: no Electron binary here (${found.missing}); \`npm start\` downloads it, then \`npm run package\` sets them.`);
    process.exit(0);
  }
  target = found.path;
}

const shown = relative(process.cwd(), target).startsWith('..') ? target : relative(process.cwd(), target) || target;
try {
  await flipFuses(target, {
    version: FuseVersion.V1,
    // An arm64 macOS binary must be signed again after its bytes change, or it will not start.
    resetAdHocDarwinSignature: process.platform === 'darwin' && process.arch === 'arm64',
    ...wanted,
  });
  // Read back what the binary now says, as Electron will.
  const wire = await getCurrentFuseWire(target);
  const states = [];
  for (const [index, on] of Object.entries(wanted)) {
    const state = wire[index];
    if (state === REMOVED) {
      states.push(`${fuseName(index)} removed in this Electron`);
      continue;
    }
    if (state !== (on ? ON : OFF)) throw new Error(`${fuseName(index)} reads ${JSON.stringify(String.fromCharCode(state))} after flipping, not ${on ? 'on' : 'off'}`);
    states.push(`${fuseName(index)} ${on ? 'on' : 'off'}`);
  }
  console.error(`warden: fuses set on ${shown}: ${states.join(', ')}.`);
} catch (error) {
  const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
  fail(`fuses not set on ${shown}: ${message.replace(/\.\s*$/, '')}.`);
}
