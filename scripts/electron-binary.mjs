// Where the electron package's binary is, found without loading the package:
// since Electron 42, require('electron') downloads a missing binary (from the
// network, with its own output), which `npm start`, the fuses script and the
// e2e specs must decide on themselves.

import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

/** The binary the electron package names ({ path }), or why there is none ({ missing }). */
export function electronBinary() {
  let dir;
  try {
    dir = dirname(require.resolve('electron/package.json'));
  } catch {
    return { missing: 'the electron package is not installed' };
  }
  const pathTxt = join(dir, 'path.txt');
  const name = existsSync(pathTxt) ? readFileSync(pathTxt, 'utf8').trim() : '';
  if (process.env.ELECTRON_OVERRIDE_DIST_PATH) {
    const path = join(process.env.ELECTRON_OVERRIDE_DIST_PATH, name || 'electron');
    return existsSync(path) ? { path } : { missing: `ELECTRON_OVERRIDE_DIST_PATH names ${path}, which does not exist` };
  }
  if (!name) return { missing: 'node_modules/electron/path.txt is missing: its binary was never downloaded' };
  const path = join(dir, 'dist', name);
  return existsSync(path) ? { path } : { missing: `node_modules/electron/path.txt names ${path}, which does not exist` };
}
