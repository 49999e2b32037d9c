// ANSI SGR styles of a line of output, as styled spans: the 16 colours
// (30-37/90-97, 40-47/100-107), the 256-colour palette (38;5;n / 48;5;n), RGB
// (38;2;r;g;b), the defaults (39/49), bold and dim (1, 2; 22 ends both),
// italic (3/23), underline (4/24) and reset (0). Every other escape (cursor
// moves, erase, OSC titles) is stripped. A carriage return inside a line keeps
// what was written after it, as a terminal shows a progress line.
//
// Hand-written rather than a library (anser and its kind parse a whole text
// from the default style): a line here starts in the style the previous line
// ended in (styleAfter), so a 50,000-line log is styled a screen at a time.

/** 0-7 the normal colours, 8-15 the bright ones (theme colours), 16-255 the palette; '#rrggbb' an RGB colour; null: the default. */
export type Colour = number | string | null;

export interface Style {
  readonly fg: Colour;
  readonly bg: Colour;
  readonly bold: boolean;
  readonly dim?: boolean;
  readonly italic?: boolean;
  readonly underline?: boolean;
}

export interface Span {
  text: string;
  style: Style;
}

export const PLAIN: Style = Object.freeze({ fg: null, bg: null, bold: false });

export const COLOUR_NAMES = ['black', 'red', 'green', 'yellow', 'blue', 'magenta', 'cyan', 'white'] as const;

export function isPlain(style: Style): boolean {
  return style.fg === null && style.bg === null && !style.bold && !style.dim && !style.italic && !style.underline;
}

function withStyle(style: Style, change: Partial<Style>): Style {
  const next = { ...style, ...change };
  if (next.fg === style.fg && next.bg === style.bg && next.bold === style.bold && !!next.dim === !!style.dim && !!next.italic === !!style.italic && !!next.underline === !!style.underline) return style;
  if (isPlain(next)) return PLAIN;
  // Only the flags that are on: styles compare field by field, and a plain copy is PLAIN itself.
  const out: { -readonly [K in keyof Style]: Style[K] } = { fg: next.fg, bg: next.bg, bold: next.bold };
  if (next.dim) out.dim = true;
  if (next.italic) out.italic = true;
  if (next.underline) out.underline = true;
  return out;
}

const hex = (n: number) => Math.max(0, Math.min(255, Math.round(n))).toString(16).padStart(2, '0');

/** The style after one SGR sequence's parameters ("1;31", "", "38;5;200"). */
export function applySgr(style: Style, params: string): Style {
  const codes = params === '' ? [0] : params.split(/[;:]/).map((p) => (p === '' ? 0 : Number(p)));
  let s = style;
  for (let i = 0; i < codes.length; i++) {
    const code = codes[i]!;
    if (code === 0) s = PLAIN;
    else if (code === 1) s = withStyle(s, { bold: true });
    else if (code === 2) s = withStyle(s, { dim: true });
    else if (code === 3) s = withStyle(s, { italic: true });
    else if (code === 4) s = withStyle(s, { underline: true });
    else if (code === 22) s = withStyle(s, { bold: false, dim: false });
    else if (code === 23) s = withStyle(s, { italic: false });
    else if (code === 24) s = withStyle(s, { underline: false });
    else if (code >= 30 && code <= 37) s = withStyle(s, { fg: code - 30 });
    else if (code === 39) s = withStyle(s, { fg: null });
    else if (code >= 40 && code <= 47) s = withStyle(s, { bg: code - 40 });
    else if (code === 49) s = withStyle(s, { bg: null });
    else if (code >= 90 && code <= 97) s = withStyle(s, { fg: code - 90 + 8 });
    else if (code >= 100 && code <= 107) s = withStyle(s, { bg: code - 100 + 8 });
    else if (code === 38 || code === 48) {
      // Extended colours: 5;n (256 colours) or 2;r;g;b. The first 16 of the 256 are the ones above.
      const mode = codes[i + 1];
      if (mode === 5) {
        const n = codes[i + 2];
        if (n !== undefined && Number.isInteger(n) && n >= 0 && n < 256) s = withStyle(s, code === 38 ? { fg: n } : { bg: n });
        i += 2;
      } else if (mode === 2) {
        const [r, g, b] = [codes[i + 2], codes[i + 3], codes[i + 4]];
        if (r !== undefined && g !== undefined && b !== undefined && [r, g, b].every(Number.isFinite)) {
          const colour = `#${hex(r)}${hex(g)}${hex(b)}`;
          s = withStyle(s, code === 38 ? { fg: colour } : { bg: colour });
        }
        i += 4;
      } else {
        i += 1;
      }
    }
  }
  return s;
}

// ESC [ params intermediates final | ESC ] ... (BEL | ESC \) | ESC P/X/^/_ ... ESC \ | other ESC sequences | C0 controls but tab and newline | DEL.
// eslint-disable-next-line no-control-regex
const ESCAPES = /\x1b(?:\[([0-?]*)[ -/]*([@-~])|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[PX^_][^\x1b]*(?:\x1b\\)?|[ -/]*[0-~]?)|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]|\r/g;

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

/** CSS class names of a style: ansi-fg-1, ansi-bg-4 (the 16 theme colours), ansi-bold, ansi-dim, ansi-italic, ansi-underline. */
export function styleClass(style: Style): string {
  if (style === PLAIN) return '';
  const parts: string[] = [];
  if (typeof style.fg === 'number' && style.fg < 16) parts.push(`ansi-fg-${style.fg}`);
  if (typeof style.bg === 'number' && style.bg < 16) parts.push(`ansi-bg-${style.bg}`);
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

/** The inline colours a style needs beyond its classes (palette and RGB colours), or undefined. */
export function styleColours(style: Style): { color?: string; backgroundColor?: string } | undefined {
  const colour = (c: Colour) => (typeof c === 'string' ? c : typeof c === 'number' && c >= 16 ? paletteColour(c) : undefined);
  const color = colour(style.fg);
  const backgroundColor = colour(style.bg);
  if (color === undefined && backgroundColor === undefined) return undefined;
  return { ...(color ? { color } : {}), ...(backgroundColor ? { backgroundColor } : {}) };
}
