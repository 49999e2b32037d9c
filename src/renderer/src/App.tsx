// The app's frame: navigation, the error banner, and the view for the route.
// Every view talks only to window.warden (through the store's api).
//
// Runs, the view a login lands on, is in the first script; the others (a
// run's detail with its charts and log, History, Sessions, New run, Settings)
// are loaded when first shown, and fetched in the background once the page is
// idle, so the first script holds what the first Runs row needs and a click
// later does not wait on the network.

import { lazy, Suspense, useEffect } from 'react';
import type { WardenApi } from '../../shared/api';
import { Attention } from './components/Attention';
import { ConnectionBar } from './components/ConnectionBar';
import { HostBar } from './components/HostBar';
import { useTitle } from './components/hooks';
import { hrefOf, useRoute, type Route } from './router';
import { useWarden } from './store';
import { isWebMode } from './web-api';
import { RunsView } from './views/runs/RunsView';
import { MissingView } from './views/missing/MissingView';

const VIEWS = {
  run: () => import('./views/run/RunDetail').then((m) => ({ default: m.RunDetail })),
  history: () => import('./views/history/HistoryView').then((m) => ({ default: m.HistoryView })),
  sessions: () => import('./views/sessions/SessionsView').then((m) => ({ default: m.SessionsView })),
  new: () => import('./views/new-run/NewRunView').then((m) => ({ default: m.NewRunView })),
  settings: () => import('./views/settings/SettingsView').then((m) => ({ default: m.SettingsView })),
};
const RunDetail = lazy(VIEWS.run);
const HistoryView = lazy(VIEWS.history);
const SessionsView = lazy(VIEWS.sessions);
const NewRunView = lazy(VIEWS.new);
const SettingsView = lazy(VIEWS.settings);

/** After the first paint, when the page is idle: the views' scripts, so opening one later waits on nothing. */
function useViewsFetchedWhenIdle(): void {
  useEffect(() => {
    const fetchAll = () => {
      for (const load of Object.values(VIEWS)) void load().catch(() => undefined);
    };
    if (typeof requestIdleCallback === 'function') {
      const id = requestIdleCallback(fetchAll, { timeout: 3000 });
      return () => cancelIdleCallback(id);
    }
    const id = setTimeout(fetchAll, 1000);
    return () => clearTimeout(id);
  }, []);
}

const NAV: { route: Route; label: string }[] = [
  { route: { view: 'runs' }, label: 'Runs' },
  { route: { view: 'history' }, label: 'History' },
  { route: { view: 'sessions' }, label: 'Sessions' },
  { route: { view: 'new' }, label: 'New run' },
  { route: { view: 'settings' }, label: 'Settings' },
];

export function App({ api }: { api: WardenApi | undefined }) {
  const route = useRoute();
  const error = useWarden((s) => s.error);
  const dismissError = useWarden((s) => s.dismissError);

  useViewsFetchedWhenIdle();
  return (
    <>
      {route.view !== 'run' && <ViewTitle label={route.view === 'missing' ? 'Not found' : (NAV.find((n) => n.route.view === route.view)?.label ?? 'Warden')} />}
      <Frame api={api} route={route} error={error} dismissError={dismissError} />
    </>
  );
}

/** The page title of a view other than a run's (RunDetail sets its own). */
function ViewTitle({ label }: { label: string }) {
  useTitle(`${label} — Warden`);
  return null;
}

function Frame({ api, route, error, dismissError }: { api: WardenApi | undefined; route: Route; error: string | null; dismissError: () => void }) {
  const connection = useWarden((s) => s.connection);

  if (!api) {
    return (
      <main className="app-missing">
        <h1>Warden</h1>
        <p className="error">The Warden API is not available in this page. Open Warden from the app, or from the link `warden serve --open` prints.</p>
      </main>
    );
  }

  const active = route.view === 'run' ? 'runs' : route.view;
  return (
    <div className={`app${connection === 'online' ? '' : ' offline'}`}>
      <nav className="app-nav" aria-label="Views">
        <span className="app-brand">Warden</span>
        {NAV.map(({ route: target, label }) => (
          <a key={label} href={hrefOf(target)} className={target.view === active ? 'active' : undefined} aria-current={target.view === active ? 'page' : undefined} data-testid={`nav-${target.view}`}>
            {label}
          </a>
        ))}
        <HostBar />
      </nav>
      <ConnectionBar />
      {isWebMode() && <Attention />}
      {error && (
        <div className="app-error" role="alert" data-testid="error-banner">
          <span>{error}</span>
          <button type="button" onClick={dismissError} aria-label="Dismiss">
            ×
          </button>
        </div>
      )}
      <main className="app-main">
        {route.view === 'runs' && <RunsView />}
        <Suspense fallback={<p className="muted" aria-busy="true" data-testid="view-loading">Loading…</p>}>
          {route.view === 'run' && <RunDetail id={route.id} tab={route.tab} {...(route.lines ? { lines: route.lines } : {})} />}
          {route.view === 'history' && <HistoryView {...(route.query !== undefined ? { query: route.query } : {})} />}
          {route.view === 'missing' && <MissingView what={route.what} />}
          {route.view === 'sessions' && <SessionsView />}
          {route.view === 'new' && <NewRunView />}
          {route.view === 'settings' && <SettingsView />}
        </Suspense>
      </main>
    </div>
  );
}
