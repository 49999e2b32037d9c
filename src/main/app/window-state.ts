// The main window's size and position, kept in <state dir>/window.json so the
// app opens where it was closed. Values that are not sane (a corrupt file, a
// window far off any plausible screen) fall back to the defaults.

import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface WindowBounds {
  x?: number;
  y?: number;
  width: number;
  height: number;
  maximized?: boolean;
}

export const DEFAULT_BOUNDS: WindowBounds = { width: 1200, height: 800 };
const FILE = 'window.json';

function sane(value: unknown): WindowBounds | null {
  if (typeof value !== 'object' || value === null) return null;
  const v = value as Record<string, unknown>;
  const int = (n: unknown, min: number, max: number) => typeof n === 'number' && Number.isInteger(n) && n >= min && n <= max;
  if (!int(v.width, 480, 20_000) || !int(v.height, 360, 20_000)) return null;
  const bounds: WindowBounds = { width: v.width as number, height: v.height as number };
  if (int(v.x, -20_000, 20_000) && int(v.y, -20_000, 20_000)) {
    bounds.x = v.x as number;
    bounds.y = v.y as number;
  }
  if (v.maximized === true) bounds.maximized = true;
  return bounds;
}

export function loadWindowBounds(stateDir: string): WindowBounds {
  try {
    return sane(JSON.parse(readFileSync(join(stateDir, FILE), 'utf8'))) ?? DEFAULT_BOUNDS;
  } catch {
    return DEFAULT_BOUNDS;
  }
}

export function saveWindowBounds(stateDir: string, bounds: WindowBounds): void {
  const checked = sane(bounds);
  if (!checked) return;
  const path = join(stateDir, FILE);
  try {
    writeFileSync(`${path}.tmp`, JSON.stringify(checked), { mode: 0o600 });
    renameSync(`${path}.tmp`, path);
  } catch {
    // Not remembering the window is no reason to fail a quit.
  }
}
