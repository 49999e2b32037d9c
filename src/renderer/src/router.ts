// Hash routes, so the same page works from the app:// protocol (Electron) and from
// `warden serve` (web mode): #/runs, #/runs/ID (the tab that fits the run),
// #/runs/ID/TAB, #/history, #/sessions, #/new, #/settings.

import { splitRunId } from '../../shared/hosts';
import { AFTER_LOGIN_KEY } from '../../shared/http-api';
import { useSyncExternalStore } from 'react';
import { mayLeave } from './components/leave-guard';

export type Tab = 'summary' | 'output' | 'script' | 'tree' | 'verdict' | 'timeline';
export const TABS: Tab[] = ['summary', 'output', 'script', 'tree', 'verdict', 'timeline'];

/** Lines of the output a link points at, 1-based, in the rows of a view: all (merged), stdout or stderr. */
export interface LineRange {
  stream: 'all' | 'stdout' | 'stderr';
  from: number;
  to: number;
}

/** "L120", "L120-L140", "stderr:L12": the lines part of an output link. */
export function parseLines(text: string | undefined): LineRange | undefined {
  const m = /^(?:(stdout|stderr):)?L(\d+)(?:-L?(\d+))?$/.exec(text ?? '');
  if (!m) return undefined;
  const from = Number(m[2]);
  const to = m[3] === undefined ? from : Number(m[3]);
  if (from < 1) return undefined;
  return { stream: (m[1] as 'stdout' | 'stderr' | undefined) ?? 'all', from: Math.min(from, to), to: Math.max(from, to) };
}

export function linesText(lines: LineRange): string {
  return `${lines.stream === 'all' ? '' : `${lines.stream}:`}L${lines.from}${lines.to !== lines.from ? `-L${lines.to}` : ''}`;
}

export type Route =
  | { view: 'runs' }
  /** tab null: none named, the run's detail picks the one that fits it (views/run/summary.ts). `lines`: a link to lines of the output (#L120, #L120-L140). */
  | { view: 'run'; id: string; tab: Tab | null; lines?: LineRange }
  /** `query`: History's filters, as its link carries them (#/history?verdict=failed&range=day); the view reads them. */
  | { view: 'history'; query?: string }
  | { view: 'sessions' }
  | { view: 'new' }
  | { view: 'settings' }
  /** A link to no run or page of this app: said, never a silent start page. `what` is the link's path, as typed. */
  | { view: 'missing'; what: string };

export function parseRoute(hash: string): Route {
  const whole = hash.replace(/^#\/?/, '');
  const at = whole.indexOf('?');
  const path = at < 0 ? whole : whole.slice(0, at);
  const query = at < 0 ? '' : whole.slice(at + 1);
  const parts = path.split('/').filter(Boolean);
  const [first, second, third, fourth] = parts;
  if (first === 'runs' && second !== undefined) {
    // A remote's run is ID@HOST (src/shared/hosts.ts); anything else is no run.
    if (splitRunId(second) === null) return { view: 'missing', what: `runs/${second}` };
    const tab = TABS.includes(third as Tab) ? (third as Tab) : null;
    const lines = tab === 'output' ? parseLines(fourth) : undefined;
    const id = second;
    return lines ? { view: 'run', id, tab, lines } : { view: 'run', id, tab };
  }
  if (first === 'history') return query !== '' ? { view: 'history', query } : { view: 'history' };
  if (first === 'sessions' || first === 'new' || first === 'settings') return { view: first };
  if (first === undefined || first === 'runs') return { view: 'runs' };
  return { view: 'missing', what: path };
}

export function hrefOf(route: Route): string {
  if (route.view === 'run') {
    if (route.tab === null) return `#/runs/${route.id}`;
    return `#/runs/${route.id}/${route.tab}${route.lines && route.tab === 'output' ? `/${linesText(route.lines)}` : ''}`;
  }
  if (route.view === 'history') return route.query ? `#/history?${route.query}` : '#/history';
  // A missing page has no link of its own: the start page's.
  if (route.view === 'missing') return '#/runs';
  return `#/${route.view}`;
}

/** Replaces the page's link with `route`'s without a new entry in the browser's history (a filter typed, not a place visited). */
export function replaceRoute(route: Route): void {
  const href = hrefOf(route);
  if (href === window.location.hash) return;
  window.history.replaceState(window.history.state, '', href);
  // replaceState fires no hashchange: the views reading the route are told.
  window.dispatchEvent(new HashChangeEvent('hashchange'));
}

/** How long a route kept by the login page stays good: a login abandoned then does not steer a later one. */
export const AFTER_LOGIN_MAX_AGE_MS = 15 * 60_000;

/**
 * The route the login page kept (AFTER_LOGIN_KEY: `{ hash, at }`), as this
 * app's own hash link, or null. Only a fresh `#/...` of plain route characters
 * is taken, and it is rebuilt from its parsed route, so nothing kept there can
 * name another origin, a javascript: URL or a path outside the hash.
 */
export function afterLoginHash(stored: string | null, now: number): string | null {
  if (!stored) return null;
  let value: unknown;
  try {
    value = JSON.parse(stored);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const { hash, at } = value as { hash?: unknown; at?: unknown };
  if (typeof hash !== 'string' || typeof at !== 'number') return null;
  const age = now - at;
  if (!(age >= 0 && age <= AFTER_LOGIN_MAX_AGE_MS)) return null;
  if (!/^#\/[A-Za-z0-9._~@%/:?&=+-]{0,500}$/.test(hash) || hash.includes('..')) return null;
  const href = hrefOf(parseRoute(hash));
  return href.startsWith('#/') ? href : null;
}

/**
 * Web mode, before the first render: a page opened without a route (the login
 * link lands on /) goes to the route the login page kept, once. The kept route
 * is removed whatever happens, so it steers one landing at most.
 */
export function restoreAfterLogin(win: Window): void {
  let stored: string | null;
  try {
    stored = win.localStorage.getItem(AFTER_LOGIN_KEY);
    if (stored === null) return;
    win.localStorage.removeItem(AFTER_LOGIN_KEY);
  } catch {
    return; // no storage (a sandboxed or private page): the start page
  }
  if (win.location.hash.replace(/^#\/?/, '') !== '') return; // opened on a route of its own
  const hash = afterLoginHash(stored, Date.now());
  // A fragment only: the same document, the same origin.
  if (hash) win.history.replaceState(win.history.state, '', hash);
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
