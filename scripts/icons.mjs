// Warden's icon (a stopwatch: deadlines kept) drawn from its shapes into
// out/icons: NxN.png for electron-builder's Linux targets and the hicolor
// theme (16 to 512), and warden.svg. The shapes are the source; nothing
// drawn is kept in git. PNGs are rasterised here, antialiased by signed
// distances, and written with node:zlib (no image library needed for four
// shapes). Usage:
//
//   node scripts/icons.mjs [OUT_DIR]    (default out/icons)

import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { crc32, deflateSync } from 'node:zlib';

export const ICON_SIZES = [16, 24, 32, 48, 64, 128, 256, 512];

const BACKGROUND = [0x11, 0x18, 0x27];
const ACCENT = [0x38, 0xbd, 0xf8];
const HAND = [0xf9, 0xfa, 0xfb];

// The shapes, in a unit square (y down).
const FACE = { cx: 0.5, cy: 0.56, r: 0.28, w: 0.05 };
const HAND_SEGMENT = { x0: 0.5, y0: 0.56, x1: 0.5, y1: 0.38, w: 0.045 };
const CROWN = { cx: 0.5, cy: 0.17, hw: 0.07, hh: 0.04, r: 0.02 };
const TILE = { cx: 0.5, cy: 0.5, hw: 0.47, hh: 0.47, r: 0.2 };

function roundedBox(x, y, b) {
  const qx = Math.abs(x - b.cx) - b.hw + b.r;
  const qy = Math.abs(y - b.cy) - b.hh + b.r;
  return Math.hypot(Math.max(qx, 0), Math.max(qy, 0)) + Math.min(Math.max(qx, qy), 0) - b.r;
}

function ring(x, y, c) {
  return Math.abs(Math.hypot(x - c.cx, y - c.cy) - c.r) - c.w;
}

function segment(x, y, s) {
  const dx = s.x1 - s.x0;
  const dy = s.y1 - s.y0;
  const t = Math.max(0, Math.min(1, ((x - s.x0) * dx + (y - s.y0) * dy) / (dx * dx + dy * dy)));
  return Math.hypot(x - s.x0 - t * dx, y - s.y0 - t * dy) - s.w;
}

/** RGBA pixels of the icon at `size`: each shape's coverage from its distance, drawn over the tile. */
export function iconPixels(size) {
  const pixels = Buffer.alloc(size * size * 4);
  const cover = (d) => Math.max(0, Math.min(1, 0.5 - d * size));
  for (let py = 0; py < size; py++) {
    for (let px = 0; px < size; px++) {
      const x = (px + 0.5) / size;
      const y = (py + 0.5) / size;
      let rgb = BACKGROUND;
      for (const [colour, d] of [[ACCENT, ring(x, y, FACE)], [ACCENT, roundedBox(x, y, CROWN)], [HAND, segment(x, y, HAND_SEGMENT)]]) {
        const a = cover(d);
        if (a > 0) rgb = rgb.map((v, i) => v + (colour[i] - v) * a);
      }
      const at = (py * size + px) * 4;
      pixels[at] = Math.round(rgb[0]);
      pixels[at + 1] = Math.round(rgb[1]);
      pixels[at + 2] = Math.round(rgb[2]);
      pixels[at + 3] = Math.round(255 * cover(roundedBox(x, y, TILE)));
    }
  }
  return pixels;
}

function chunk(type, data) {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A PNG (8-bit RGBA, no filter) of `size` x `size` pixels. */
export function png(size, pixels = iconPixels(size)) {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header[8] = 8; // bit depth
  header[9] = 6; // RGBA
  const rows = Buffer.alloc(size * (size * 4 + 1));
  for (let y = 0; y < size; y++) pixels.copy(rows, y * (size * 4 + 1) + 1, y * size * 4, (y + 1) * size * 4);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', deflateSync(rows, { level: 9 })), chunk('IEND', Buffer.alloc(0))]);
}

const hex = (rgb) => `#${rgb.map((v) => v.toString(16).padStart(2, '0')).join('')}`;
const n = (v) => Number((v * 512).toFixed(2));

/** The same shapes as an SVG of 512 units. */
export function svg() {
  return [
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 512 512" width="512" height="512">',
    `  <rect x="${n(TILE.cx - TILE.hw)}" y="${n(TILE.cy - TILE.hh)}" width="${n(2 * TILE.hw)}" height="${n(2 * TILE.hh)}" rx="${n(TILE.r)}" fill="${hex(BACKGROUND)}"/>`,
    `  <circle cx="${n(FACE.cx)}" cy="${n(FACE.cy)}" r="${n(FACE.r)}" fill="none" stroke="${hex(ACCENT)}" stroke-width="${n(2 * FACE.w)}"/>`,
    `  <rect x="${n(CROWN.cx - CROWN.hw)}" y="${n(CROWN.cy - CROWN.hh)}" width="${n(2 * CROWN.hw)}" height="${n(2 * CROWN.hh)}" rx="${n(CROWN.r)}" fill="${hex(ACCENT)}"/>`,
    `  <line x1="${n(HAND_SEGMENT.x0)}" y1="${n(HAND_SEGMENT.y0)}" x2="${n(HAND_SEGMENT.x1)}" y2="${n(HAND_SEGMENT.y1)}" stroke="${hex(HAND)}" stroke-width="${n(2 * HAND_SEGMENT.w)}" stroke-linecap="round"/>`,
    '</svg>',
    '',
  ].join('\n');
}

export function writeIcons(dir) {
  mkdirSync(dir, { recursive: true });
  for (const size of ICON_SIZES) writeFileSync(join(dir, `${size}x${size}.png`), png(size));
  writeFileSync(join(dir, 'warden.svg'), svg());
  return dir;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const dir = process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..', 'out', 'icons');
  writeIcons(dir);
  console.error(`warden: wrote the icons into ${dir}`);
}
