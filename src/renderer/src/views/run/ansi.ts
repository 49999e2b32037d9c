// ANSI SGR styles of a line of output, as styled spans: the 16 colours
// (30-37/90-97, 40-47/100-107), the 256-colour palette (38;5;n / 48;5;n), RGB
// (38;2;r;g;b), the defaults (39/49), bold and dim (1, 2; 22 ends both),
// italic (3/23), underline (4/24), inverse (7/27) and reset (0), and OSC 8
// hyperlinks (http and https) as a span's link. Every other escape (cursor
// moves, erase, OSC titles) is stripped. A carriage return inside a line keeps
// what was written after it, as a terminal shows a progress line.
//
// What an SGR sequence means is anser's (2.3.5): an Anser instance is loaded
// with the style a line starts in, reads the sequence's parameters, and its
// state is read back as a Style. What stays here is Warden's own: where a
// sequence starts and ends in a line, and which escapes are stripped. anser
// splits its input on "ESC [" only, so an OSC title ("ESC ] 0;t BEL"), a
// charset switch ("ESC ( B"), C0 controls and the colon form "38:5:200" would
// reach the reader as raw text through it (checked against anser 2.3.5), and it
// parses a whole text from the default style, where a line here starts in the
// style the previous line ended in (styleAfter), so a 50,000-line log is styled
// a screen at a time. A cache of (style, parameters) keeps that cheap on
// long logs (bench section l).

import Anser from 'anser';

/** 0-7 the normal colours, 8-15 the bright ones (theme colours), 16-255 the palette; '#rrggbb' an RGB colour; null: the default. */
export type Colour = number | string | null;

export interface Style {
  readonly fg: Colour;
  readonly bg: Colour;
  readonly bold: boolean;
  readonly dim?: boolean;
  readonly italic?: boolean;
  readonly underline?: boolean;
  /** SGR 7 (27 ends it): foreground and background swapped, as test runners print " FAIL ". */
  readonly inverse?: boolean;
  /** An OSC 8 hyperlink's target (http or https only), until the closing OSC 8; SGR changes and resets keep it, as a terminal does. */
  readonly link?: string;
}

export interface Span {
  text: string;
  style: Style;
}

export const PLAIN: Style = Object.freeze({ fg: null, bg: null, bold: false });

export const COLOUR_NAMES = ['black', 'red', 'green', 'yellow', 'blue', 'magenta', 'cyan', 'white'] as const;

export function isPlain(style: Style): boolean {
  return style.fg === null && style.bg === null && !style.bold && !style.dim && !style.italic && !style.underline && !style.inverse && !style.link;
}

const hex = (n: number) => Math.max(0, Math.min(255, Math.round(n))).toString(16).padStart(2, '0');

// anser's class names (use_classes) for the 16 colours, by number.
const CLASS_OF = [...COLOUR_NAMES.map((c) => `ansi-${c}`), ...COLOUR_NAMES.map((c) => `ansi-bright-${c}`)];
const NUMBER_OF = new Map(CLASS_OF.map((name, i) => [name, i]));

/** The part of an Anser instance's state a Style mirrors (its public fields; the typings do not list them). */
interface AnserState {
  fg: string | null;
  bg: string | null;
  fg_truecolor: string | null;
  bg_truecolor: string | null;
  decorations: string[];
}

function load(colour: Colour): { name: string | null; truecolor: string | null } {
  if (colour === null) return { name: null, truecolor: null };
  if (typeof colour === 'string') return { name: 'ansi-truecolor', truecolor: `${parseInt(colour.slice(1, 3), 16)}, ${parseInt(colour.slice(3, 5), 16)}, ${parseInt(colour.slice(5, 7), 16)}` };
  return { name: colour < 16 ? CLASS_OF[colour]! : `ansi-palette-${colour}`, truecolor: null };
}

function read(name: string | null, truecolor: string | null): Colour {
  if (name === null) return null;
  if (name === 'ansi-truecolor' && truecolor) {
    const [r, g, b] = truecolor.split(',').map(Number);
    return `#${hex(r!)}${hex(g!)}${hex(b!)}`;
  }
  if (name.startsWith('ansi-palette-')) return Number(name.slice(13));
  return NUMBER_OF.get(name) ?? null;
}

/** One instance, loaded per call: anser keeps its state between the chunks it reads. */
const engine = new Anser() as unknown as Anser & AnserState;

// Styles are interned by their fields, so a style is PLAIN itself when plain,
// spans compare styles by identity, and each (style, parameters) is read by
// anser once. Bounded: a gradient of RGB colours cannot grow it without end.
const interned = new Map<string, Style>();
const applied = new WeakMap<Style, Map<string, Style>>();
const INTERN_MAX = 4096;

function keyOf(s: Style): string {
  return `${s.fg ?? ''}|${s.bg ?? ''}|${s.bold ? 1 : 0}${s.dim ? 1 : 0}${s.italic ? 1 : 0}${s.underline ? 1 : 0}${s.inverse ? 1 : 0}|${s.link ?? ''}`;
}

function intern(style: Style): Style {
  if (isPlain(style)) return PLAIN;
  const key = keyOf(style);
  const known = interned.get(key);
  if (known) return known;
  if (interned.size >= INTERN_MAX) interned.clear();
  interned.set(key, style);
  return style;
}

/** The style after one SGR sequence's parameters ("1;31", "", "38;5;200"). */
export function applySgr(style: Style, params: string): Style {
  let cache = applied.get(style);
  const hit = cache?.get(params);
  if (hit) return hit;
  const fg = load(style.fg);
  const bg = load(style.bg);
  engine.fg = fg.name;
  engine.fg_truecolor = fg.truecolor;
  engine.bg = bg.name;
  engine.bg_truecolor = bg.truecolor;
  engine.decorations = [...(style.bold ? ['bold'] : []), ...(style.dim ? ['dim'] : []), ...(style.italic ? ['italic'] : []), ...(style.underline ? ['underline'] : []), ...(style.inverse ? ['reverse'] : [])];
  // anser reads ';' between parameters; the colon form (ITU T.416, "38:5:200") means the same here.
  engine.processChunkJson(`${params.replace(/:/g, ';')}m`, { use_classes: true }, true);
  const has = (d: string) => engine.decorations.includes(d);
  const next: { -readonly [K in keyof Style]: Style[K] } = { fg: read(engine.fg, engine.fg_truecolor), bg: read(engine.bg, engine.bg_truecolor), bold: has('bold') };
  // Only the flags that are on: styles compare field by field.
  if (has('dim')) next.dim = true;
  if (has('italic')) next.italic = true;
  if (has('underline')) next.underline = true;
  if (has('reverse')) next.inverse = true;
  if (style.link) next.link = style.link;
  const result = keyOf(next) === keyOf(style) ? style : intern(next);
  if (!cache) applied.set(style, (cache = new Map()));
  if (cache.size < 256) cache.set(params, result);
  return result;
}

// ESC [ params intermediates final | ESC ] ... (BEL | ESC \) | ESC P/X/^/_ ... ESC \ | other ESC sequences | C0 controls but tab and newline | DEL.
// eslint-disable-next-line no-control-regex
const ESCAPES = /\x1b(?:\[([0-?]*)[ -/]*([@-~])|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[PX^_][^\x1b]*(?:\x1b\\)?|[ -/]*[0-~]?)|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]|\r/g;

const OSC8 = '\x1b]8;';

/**
 * The style after an OSC 8 sequence ("ESC ] 8 ; params ; URI ST"): its link
 * (an http or https URI; any other scheme, as javascript: or file:, is
 * not a link here), or none for the closing one (an empty URI).
 */
function applyLink(style: Style, sequence: string): Style {
  // eslint-disable-next-line no-control-regex
  const body = sequence.slice(OSC8.length).replace(/(?:\x07|\x1b\\)$/, '');
  const uri = body.slice(body.indexOf(';') + 1);
  const link = /^https?:\/\/[^\s]+$/i.test(uri) ? uri : undefined;
  if (link === style.link) return style;
  const next: { -readonly [K in keyof Style]: Style[K] } = { ...style };
  if (link) next.link = link;
  else delete next.link;
  return intern(next);
}

/** Spans of `text` (one line, no newline) starting in `start`, and the style at its end. */
export function parseAnsi(text: string, start: Style = PLAIN): { spans: Span[]; end: Style } {
  let spans: Span[] = [];
  let style = start;
  let from = 0;
  const push = (to: number) => {
    if (to <= from) return;
    const piece = text.slice(from, to);
    const last = spans[spans.length - 1];
    if (last && last.style === style) last.text += piece;
    else spans.push({ text: piece, style });
  };
  ESCAPES.lastIndex = 0;
  for (let m = ESCAPES.exec(text); m !== null; m = ESCAPES.exec(text)) {
    push(m.index);
    from = m.index + m[0].length;
    if (m[0] === '\r') {
      // A carriage return with more to come overwrites the line; one at the end (CRLF) changes nothing.
      if (from < text.length) spans = [];
    } else if (m[2] === 'm' && m[1] !== undefined) {
      style = applySgr(style, m[1]);
    } else if (m[0].startsWith(OSC8)) {
      style = applyLink(style, m[0]);
    }
  }
  push(text.length);
  return { spans, end: style };
}

/** The style at the end of `text` (from `start`), without building spans: for lines off screen. */
export function styleAfter(text: string, start: Style): Style {
  if (text.indexOf('\x1b') === -1) return start;
  let style = start;
  ESCAPES.lastIndex = 0;
  for (let m = ESCAPES.exec(text); m !== null; m = ESCAPES.exec(text)) {
    if (m[2] === 'm' && m[1] !== undefined) style = applySgr(style, m[1]);
    else if (m[0].startsWith(OSC8)) style = applyLink(style, m[0]);
  }
  return style;
}

/** The text a reader sees (escapes stripped, carriage returns applied). */
export function plainText(text: string): string {
  // Fast path: nothing to strip.
  // eslint-disable-next-line no-control-regex
  if (!/[\x00-\x08\x0b-\x1f\x7f]/.test(text)) return text;
  return parseAnsi(text)
    .spans.map((s) => s.text)
    .join('');
}

/**
 * CSS class names of a style: ansi-fg-1, ansi-bg-4 (the 16 theme colours),
 * ansi-bold, ansi-dim, ansi-italic, ansi-underline; inverse video: ansi-inverse
 * (the default colours swapped) with ansi-inv-bg-N for a theme colour as a
 * solid background, and the background's colour as the text's.
 */
export function styleClass(style: Style): string {
  if (style === PLAIN) return '';
  const parts: string[] = [];
  if (style.inverse) {
    parts.push('ansi-inverse');
    if (typeof style.bg === 'number' && style.bg < 16) parts.push(`ansi-fg-${style.bg}`);
    if (typeof style.fg === 'number' && style.fg < 16) parts.push(`ansi-inv-bg-${style.fg}`);
  } else {
    if (typeof style.fg === 'number' && style.fg < 16) parts.push(`ansi-fg-${style.fg}`);
    if (typeof style.bg === 'number' && style.bg < 16) parts.push(`ansi-bg-${style.bg}`);
  }
  if (style.bold) parts.push('ansi-bold');
  if (style.dim) parts.push('ansi-dim');
  if (style.italic) parts.push('ansi-italic');
  if (style.underline) parts.push('ansi-underline');
  return parts.join(' ');
}

const CUBE = [0, 95, 135, 175, 215, 255];

/** A palette colour (16-255) as RGB: the 6x6x6 cube, then 24 greys. */
export function paletteColour(n: number): string {
  if (n >= 232) {
    const v = 8 + (n - 232) * 10;
    return `#${hex(v)}${hex(v)}${hex(v)}`;
  }
  const i = n - 16;
  return `#${hex(CUBE[Math.floor(i / 36)]!)}${hex(CUBE[Math.floor(i / 6) % 6]!)}${hex(CUBE[i % 6]!)}`;
}

/** Relative luminance (WCAG) of '#rrggbb', 0 (black) to 1 (white). */
function luminance(rgb: string): number {
  const channel = (i: number) => {
    const c = parseInt(rgb.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
}

/**
 * A palette or RGB text colour as the theme can read it: a very light one
 * (yellow, near white) is darkened on the light theme, a very dark one (navy,
 * near black) lightened on the dark one, by how much run.css's
 * --ansi-keep-light and --ansi-keep-dark say; the rest is shown as written.
 */
export function readableColour(rgb: string): string {
  const l = luminance(rgb);
  if (l > 0.6) return `color-mix(in srgb, ${rgb} var(--ansi-keep-light, 100%), #000)`;
  if (l < 0.06) return `color-mix(in srgb, ${rgb} var(--ansi-keep-dark, 100%), #fff)`;
  return rgb;
}

/** Text for a background when the program named none: light on a dark one, dark on a light one (the contrasts meet at a luminance of about 0.18). */
function textOn(background: string): string {
  return luminance(background) > 0.18 ? '#1c1d21' : '#f2f3f5';
}

/**
 * The inline colours a style needs beyond its classes (palette and RGB
 * colours), or undefined. A palette or RGB background with the default text
 * gets the text that reads on it (the theme's own text would be dark on the
 * dark green of a diff's added line in the light theme); a text colour
 * written with a background is shown as written.
 */
export function styleColours(style: Style): { color?: string; backgroundColor?: string } | undefined {
  const colour = (c: Colour) => (typeof c === 'string' ? c : typeof c === 'number' && c >= 16 ? paletteColour(c) : undefined);
  const fg = colour(style.inverse ? style.bg : style.fg);
  const backgroundColor = colour(style.inverse ? style.fg : style.bg);
  let color: string | undefined;
  if (fg !== undefined) color = style.inverse || backgroundColor !== undefined ? fg : readableColour(fg);
  else if (backgroundColor !== undefined && !style.inverse && style.fg === null) color = textOn(backgroundColor);
  if (color === undefined && backgroundColor === undefined) return undefined;
  return { ...(color ? { color } : {}), ...(backgroundColor ? { backgroundColor } : {}) };
}
