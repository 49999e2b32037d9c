// Which layout Runs shows: the monitor (list and run side by side) by default
// on a screen at least MONITOR_MIN_WIDTH wide, the list below it; either
// chosen by the reader, remembered in this browser.

import { useCallback, useSyncExternalStore } from 'react';

export type LayoutChoice = 'auto' | 'monitor' | 'list';
export type Layout = 'monitor' | 'list';

export const MONITOR_MIN_WIDTH = 1200;
export const LAYOUT_KEY = 'warden.runsLayout';

export function layoutFor(choice: LayoutChoice, width: number): Layout {
  if (choice !== 'auto') return choice;
  return width >= MONITOR_MIN_WIDTH ? 'monitor' : 'list';
}

export function readChoice(stored: string | null): LayoutChoice {
  return stored === 'monitor' || stored === 'list' ? stored : 'auto';
}

const listeners = new Set<() => void>();

function storedChoice(): LayoutChoice {
  try {
    return readChoice(globalThis.localStorage?.getItem(LAYOUT_KEY) ?? null);
  } catch {
    return 'auto';
  }
}

function subscribe(onChange: () => void): () => void {
  listeners.add(onChange);
  window.addEventListener('resize', onChange);
  return () => {
    listeners.delete(onChange);
    window.removeEventListener('resize', onChange);
  };
}

/** The layout shown now, and a setter for the reader's choice (kept in this browser). */
export function useLayout(): [Layout, (choice: LayoutChoice) => void] {
  const layout = useSyncExternalStore(subscribe, () => layoutFor(storedChoice(), window.innerWidth));
  const choose = useCallback((choice: LayoutChoice) => {
    try {
      if (choice === 'auto') globalThis.localStorage?.removeItem(LAYOUT_KEY);
      else globalThis.localStorage?.setItem(LAYOUT_KEY, choice);
    } catch {
      // Not kept: the choice holds until the page closes.
    }
    for (const l of [...listeners]) l();
  }, []);
  return [layout, choose];
}
