// The math of a virtualised list of fixed-height lines: which lines to render
// for a scroll position, and where. Browsers cap an element's height (about
// 33 million px in Chromium), so past `maxHeight` the scroll range is scaled:
// the scrollbar maps linearly onto the lines and the rendered block is placed
// so that scrolling stays smooth and the last line is reachable.
//
// Why not @tanstack/react-virtual (issue 12 asks for a well-kept library unless
// a measured reason says otherwise): it sizes the list to count x line height.
// Measured in Debian's Chromium here, an element asked for 34,000,000 px or
// more is 33,554,428 px tall and scrolls no further: at 20 px a line that is
// 1,677,721 lines, fewer than a 2,000,000-character log of short lines has,
// whose end would be out of reach. This scales past the cap instead.
// Checked again (issue 12, Chromium 156 here): a scroller whose inner block is
// sized as @tanstack/react-virtual sizes it (count x 20 px), scrolled to its
// end: 1,677,721 lines (33,554,420 px) all reachable; 1,700,000 and 2,000,000
// lines both stop at 33,554,428 px, the last reachable line 1,677,721, so
// 322,279 lines of a 2,000,000-line merged log (two streams of one-character
// lines, within the page's 4,000,000-character cap) would be out of reach.
// Wrapped lines do use @tanstack/react-virtual (rows of measured heights, at
// least 20 px each), so a wrapped log past 1,677,721 lines has the same limit.

export interface Viewport {
  scrollTop: number;
  /** The scroller's visible height in px. */
  height: number;
  count: number;
  lineHeight: number;
  /** Lines rendered beyond each edge. */
  overscan: number;
  maxHeight?: number;
}

export interface VisibleRange {
  /** First line rendered. */
  first: number;
  /** One past the last line rendered. */
  last: number;
  /** Top of line `first` in px from the top of the scrolled content. */
  top: number;
  /** Height of the scrolled content in px. */
  total: number;
}

export const MAX_SCROLL_HEIGHT = 15_000_000;

/** The exact (fractional) line at the top of the viewport. */
function topLine(v: Viewport, total: number): number {
  const natural = v.count * v.lineHeight;
  if (natural <= total) return v.scrollTop / v.lineHeight;
  const range = total - v.height;
  const fraction = range > 0 ? Math.min(1, Math.max(0, v.scrollTop / range)) : 0;
  return fraction * Math.max(0, v.count - v.height / v.lineHeight);
}

export function visibleRange(v: Viewport): VisibleRange {
  const maxHeight = v.maxHeight ?? MAX_SCROLL_HEIGHT;
  const total = Math.min(v.count * v.lineHeight, maxHeight);
  if (v.count === 0) return { first: 0, last: 0, top: 0, total: 0 };
  const exact = topLine(v, total);
  const shown = Math.ceil(v.height / v.lineHeight) + 1;
  const first = Math.max(0, Math.floor(exact) - v.overscan);
  const last = Math.min(v.count, Math.floor(exact) + shown + v.overscan);
  // Where line `first` goes so that line `exact` sits at the viewport's top.
  const top = v.scrollTop - (exact - first) * v.lineHeight;
  return { first, last, top, total };
}

/** The scrollTop that puts line `line` at `position` (0: top, 0.5: middle) of the viewport. */
export function scrollTopFor(line: number, position: number, v: Omit<Viewport, 'scrollTop' | 'overscan'>): number {
  const maxHeight = v.maxHeight ?? MAX_SCROLL_HEIGHT;
  const natural = v.count * v.lineHeight;
  const total = Math.min(natural, maxHeight);
  const range = Math.max(0, total - v.height);
  const wanted = line - (position * v.height) / v.lineHeight + (position > 0 ? 0.5 : 0);
  if (natural <= maxHeight) return Math.min(range, Math.max(0, wanted * v.lineHeight));
  const lines = Math.max(0, v.count - v.height / v.lineHeight);
  if (lines === 0) return 0;
  return Math.min(range, Math.max(0, (wanted / lines) * range));
}
