// The app's frame: navigation, the error banner, and the view for the route.
// Every view talks only to window.warden (through the store's api).

import { useEffect } from 'react';
import type { WardenApi } from '../../shared/api';
import { Attention } from './components/Attention';
import { ConnectionBar } from './components/ConnectionBar';
import { HostBar } from './components/HostBar';
import { useTitle } from './components/hooks';
import { hrefOf, useRoute, type Route } from './router';
import { useWarden } from './store';
import { isWebMode } from './web-api';
import { HistoryView } from './views/history/HistoryView';
import { NewRunView } from './views/new-run/NewRunView';
import { RunDetail } from './views/run/RunDetail';
import { RunsView } from './views/runs/RunsView';
import { SessionsView } from './views/sessions/SessionsView';
import { SettingsView } from './views/settings/SettingsView';

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
  const connect = useWarden((s) => s.connect);

  useEffect(() => (api ? connect(api) : undefined), [api, connect]);
  return (
    <>
      {route.view !== 'run' && <ViewTitle label={NAV.find((n) => n.route.view === route.view)?.label ?? 'Warden'} />}
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
        {route.view === 'run' && <RunDetail id={route.id} tab={route.tab} {...(route.lines ? { lines: route.lines } : {})} />}
        {route.view === 'history' && <HistoryView />}
        {route.view === 'sessions' && <SessionsView />}
        {route.view === 'new' && <NewRunView />}
        {route.view === 'settings' && <SettingsView />}
      </main>
    </div>
  );
}
