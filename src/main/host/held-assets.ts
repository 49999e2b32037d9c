// The web build's content-named scripts and styles, held in memory once read,
// with a gzip copy: a login's page asks for them while the host also answers
// the page's preloaded API requests, and a file read in 64 KiB turns of the
// event loop waited behind those answers (the first script 243 KB, ~75 KB
// gzipped). A name is one content for good, but the file is checked (size,
// mtime) on every request, so a rebuild under a running host is served new.

import { readFileSync, type Stats } from 'node:fs';
import { gzipSync } from 'node:zlib';

export interface HeldAsset {
  body: Buffer;
  /** null when gzip saves too little to be worth the browser's inflating. */
  gzip: Buffer | null;
}

/** Larger files are streamed from disk as before. */
const MAX_HELD_BYTES = 4 * 1024 * 1024;

export class HeldAssets {
  private readonly held = new Map<string, { size: number; mtimeMs: number; asset: HeldAsset }>();

  /** The file's content (read now if not held, or changed since); null when it is too large to hold or cannot be read. */
  get(file: string, stat: Stats): HeldAsset | null {
    const known = this.held.get(file);
    if (known && known.size === stat.size && known.mtimeMs === stat.mtimeMs) return known.asset;
    if (stat.size > MAX_HELD_BYTES) return null;
    let body: Buffer;
    try {
      body = readFileSync(file);
    } catch {
      return null;
    }
    const packed = gzipSync(body, { level: 9 });
    const asset = { body, gzip: packed.length < body.length * 0.9 ? packed : null };
    this.held.set(file, { size: stat.size, mtimeMs: stat.mtimeMs, asset });
    return asset;
  }
}

/** Whether an Accept-Encoding header takes gzip (listed, with no q=0). */
export function acceptsGzip(header: string | undefined): boolean {
  for (const part of (header ?? '').split(',')) {
    const [coding, ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    if (coding !== 'gzip') continue;
    const q = params.find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  }
  return false;
}
