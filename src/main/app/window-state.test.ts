import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_BOUNDS, loadWindowBounds, saveWindowBounds } from './window-state';

describe('the remembered window', () => {
  it('comes back as saved', () => {
    const dir = mkdtempSync(join(tmpdir(), 'wws-'));
    expect(loadWindowBounds(dir)).toEqual(DEFAULT_BOUNDS);
    saveWindowBounds(dir, { x: 40, y: 30, width: 1000, height: 700, maximized: true });
    expect(loadWindowBounds(dir)).toEqual({ x: 40, y: 30, width: 1000, height: 700, maximized: true });
  });

  it.each([['not json'], ['{"width": 10, "height": 10}'], ['{"width": "1000", "height": 700}'], ['null']])('falls back to the defaults for %s', (text) => {
    const dir = mkdtempSync(join(tmpdir(), 'wws-'));
    writeFileSync(join(dir, 'window.json'), text);
    expect(loadWindowBounds(dir)).toEqual(DEFAULT_BOUNDS);
  });
});
