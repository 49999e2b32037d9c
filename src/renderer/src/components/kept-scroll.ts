// Where a reader was in a list, kept across the views shown between (Back
// from a run, another tab and back): the list's scroll is saved as it moves,
// and given back once the list is there again (its rows may come a moment
// after the view, as History's first page does). Kept for the page's life.

import { useEffect, useLayoutEffect, useRef, type RefObject } from 'react';
import { scrollParentOf } from '../views/history/scroll';

const kept = new Map<string, number>();

/** The scroll `key`'s list was left at (px), if any. */
export function keptScroll(key: string): number | undefined {
  return kept.get(key);
}

/**
 * Keeps the scroll of the element that scrolls `anchor` (the app's main
 * pane) under `key`: saved on every scroll, given back once `ready` (the rows
 * are there) and the list is tall enough to hold it, once per showing.
 */
export function useKeptScroll(key: string, anchor: RefObject<HTMLElement | null>, ready: boolean): void {
  const restored = useRef(false);
  const scroller = useRef<HTMLElement | null>(null);
  // Attached once the list is there (a view may first show its empty state, without the anchor).
  const present = anchor.current !== null;
  useEffect(() => {
    const el = anchor.current ? (scrollParentOf(anchor.current) as HTMLElement | null) : null;
    scroller.current = el;
    if (!el) return undefined;
    // A view shown fresh starts at its own top, not where another view left the shared pane.
    if (!kept.has(key)) el.scrollTop = 0;
    const target = anchor.current;
    const onScroll = () => {
      // Before the rows are back the pane's scroll is not the reader's (it is clamped to what is there), nor is it once
      // the view is gone (the pane clamps its scroll to the next view's height before this listener is removed).
      if (restored.current && target?.isConnected) kept.set(key, el.scrollTop);
    };
    el.addEventListener('scroll', onScroll, { passive: true });
    return () => el.removeEventListener('scroll', onScroll);
  }, [key, anchor, present, ready]);
  useLayoutEffect(() => {
    const el = scroller.current ?? (anchor.current ? (scrollParentOf(anchor.current) as HTMLElement | null) : null);
    if (restored.current || !ready || !el) return;
    const want = kept.get(key) ?? 0;
    // Not tall enough yet (more rows to come): tried again at the next render that is ready.
    if (want > 0 && el.scrollHeight - el.clientHeight < want - 1) return;
    el.scrollTop = want;
    restored.current = true;
  });
}
