// Hash routes, so the same page works from a file (Electron) and from
// `warden serve` (web mode): #/runs, #/runs/ID (the tab that fits the run),
// #/runs/ID/TAB, #/history, #/sessions, #/new, #/settings.

import { useSyncExternalStore } from 'react';
import { mayLeave } from './components/leave-guard';

export type Tab = 'summary' | 'output' | 'script' | 'tree' | 'verdict' | 'timeline';
export const TABS: Tab[] = ['summary', 'output', 'script', 'tree', 'verdict', 'timeline'];

export type Route =
  | { view: 'runs' }
  /** tab null: none named, the run's detail picks the one that fits it (views/run/summary.ts). */
  | { view: 'run'; id: string; tab: Tab | null }
  | { view: 'history' }
  | { view: 'sessions' }
  | { view: 'new' }
  | { view: 'settings' };

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean);
  const [first, second, third] = parts;
  if (first === 'runs' && second && /^[0-9a-f]{6,32}$/.test(second)) {
    return { view: 'run', id: second, tab: TABS.includes(third as Tab) ? (third as Tab) : null };
  }
  if (first === 'history' || first === 'sessions' || first === 'new' || first === 'settings') return { view: first };
  return { view: 'runs' };
}

export function hrefOf(route: Route): string {
  if (route.view === 'run') return route.tab === null ? `#/runs/${route.id}` : `#/runs/${route.id}/${route.tab}`;
  return `#/${route.view}`;
}

/** Goes to `route`, unless the view shown has a guard that says stay (components/leave-guard.ts). */
export function navigate(route: Route): void {
  const href = hrefOf(route);
  if (href !== window.location.hash && !mayLeave()) return;
  window.location.hash = href;
}

function subscribe(onChange: () => void): () => void {
  window.addEventListener('hashchange', onChange);
  return () => window.removeEventListener('hashchange', onChange);
}

export function useRoute(): Route {
  const hash = useSyncExternalStore(subscribe, () => window.location.hash);
  return parseRoute(hash);
}
