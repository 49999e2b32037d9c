// file:PATH: ready when the file exists and its size has not changed for
// FILE_STABLE_MS (a socket, a pid file, a build's output written whole).

import { statSync } from 'node:fs';
import { failed, passed, type Attempt } from './attempt';

/** How long a file's size must stay the same. */
export const FILE_STABLE_MS = 750;

export class FileProbe {
  private size: number | null = null;
  private sameSinceMs = 0;

  constructor(private readonly path: string) {}

  attempt(nowMs: number): Attempt {
    let size: number;
    try {
      size = statSync(this.path).size;
    } catch (error) {
      this.size = null;
      const code = (error as NodeJS.ErrnoException).code;
      return failed(code === 'ENOENT' ? 'does not exist yet' : `cannot be read (${code ?? 'error'})`);
    }
    if (size !== this.size) {
      this.size = size;
      this.sameSinceMs = nowMs;
    }
    const stableMs = nowMs - this.sameSinceMs;
    return stableMs >= FILE_STABLE_MS ? passed() : failed(`exists (${size} bytes), not yet unchanged for ${FILE_STABLE_MS} ms`);
  }
}
