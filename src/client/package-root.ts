// Where this checkout (or installed package) is: the directory holding
// bin/warden.mjs, found upward from this module, which runs from
// src/client/ or, bundled, from out/cli/build-*/ (one level deeper).

import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | null | undefined;

export function packageRoot(): string | null {
  if (cached !== undefined) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  cached = null;
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, 'bin', 'warden.mjs')) && existsSync(join(dir, 'package.json'))) {
      cached = dir;
      break;
    }
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return cached;
}
