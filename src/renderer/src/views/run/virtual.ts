// The math of a virtualised list of fixed-height lines: which lines to render
// for a scroll position, and where. Browsers cap an element's height (about
// 33 million px in Chromium), so past `maxHeight` the scroll range is scaled:
// the scrollbar maps linearly onto the lines and the rendered block is placed
// so that scrolling stays smooth and the last line is reachable.
//
// Not @tanstack/react-virtual for fixed-height lines: it sizes the list to
// count x line height, and Chromium stops an element at 33,554,428 px, so at
// 20 px a line everything past line 1,677,721 would be out of reach (a
// 2,000,000-line merged log is within the page's cap). Wrapped lines do use
// it (rows of measured heights), and have that limit.

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
