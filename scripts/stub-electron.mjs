// Writes a stub Electron distribution: the layout of Electron's Linux zip
// (`electron`, `version`, `resources/`, `locales/`, `chrome-sandbox`, the
// licenses) with an `electron` that is a shell script printing its argv.
// Electron's binary cannot be downloaded on the build machines, so the
// packaging tests (scripts/package.test.ts) and a dry run of the release
// build point WARDEN_ELECTRON_DIST at this instead. The script carries a fuse
// wire like Electron's (the sentinel @electron/fuses looks for, version 1,
// eight fuses at Electron's defaults) inside a comment, so the fuses script
// flips real bytes in it. Usage:
//
//   node scripts/stub-electron.mjs DIR [VERSION]
//
// VERSION defaults to the electron package's own.

import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** What @electron/fuses looks for before the wire. */
export const FUSE_SENTINEL = 'dL7pKGdnNz796PbbjQWNKmHXBZaB9tsX';
/** Electron's defaults, one byte a fuse ('1' on, '0' off), in FuseV1Options order. */
export const STUB_WIRE = '10110001';

export function electronVersion() {
  const require = createRequire(import.meta.url);
  return JSON.parse(readFileSync(require.resolve('electron/package.json'), 'utf8')).version;
}

/** The stub's `electron`: prints "stub-electron" and each argument on a line of its own (also to $STUB_ELECTRON_LOG when set), exits 0. */
export function stubBinary() {
  const wire = `${FUSE_SENTINEL}\x01${String.fromCharCode(STUB_WIRE.length)}${STUB_WIRE}`;
  // STUB_ELECTRON_LOG: the same lines appended to that file too (a start with no stdio, as `warden app` makes).
  return Buffer.from(
    `#!/bin/sh\n# A stub of Electron's binary (scripts/stub-electron.mjs). Fuse wire: ${wire}\n` +
      `out() { printf 'stub-electron\\n'; for arg in "$@"; do printf '%s\\n' "$arg"; done; }\n` +
      `out "$@"\n` +
      `if [ -n "$STUB_ELECTRON_LOG" ]; then out "$@" >> "$STUB_ELECTRON_LOG"; fi\n`,
    'latin1',
  );
}

export function writeStubElectron(dir, version = electronVersion()) {
  mkdirSync(join(dir, 'resources'), { recursive: true });
  mkdirSync(join(dir, 'locales'), { recursive: true });
  writeFileSync(join(dir, 'electron'), stubBinary());
  chmodSync(join(dir, 'electron'), 0o755);
  writeFileSync(join(dir, 'chrome-sandbox'), '#!/bin/sh\nexit 0\n');
  chmodSync(join(dir, 'chrome-sandbox'), 0o755);
  writeFileSync(join(dir, 'version'), version);
  writeFileSync(join(dir, 'LICENSE'), 'A stub of Electron, for packaging tests: not Electron.\n');
  writeFileSync(join(dir, 'LICENSES.chromium.html'), '<!doctype html><title>stub</title>\n');
  writeFileSync(join(dir, 'locales', 'en-US.pak'), 'stub\n');
  return dir;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [dir, version] = process.argv.slice(2);
  if (!dir || dir.startsWith('-')) {
    console.error('usage: node scripts/stub-electron.mjs DIR [VERSION]');
    process.exit(2);
  }
  writeStubElectron(dir, version);
  console.error(`warden: wrote a stub Electron ${version ?? electronVersion()} distribution into ${dir} (its electron prints its argv)`);
}
