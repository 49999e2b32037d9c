import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { installLeaveGuard } from './components/leave-guard';
import { restoreAfterLogin } from './router';
import './styles.css';
import { useWarden } from './store';
import { installWebApi } from './web-api';

// Web mode: the login link lands on the route this browser was opened on before it logged in.
restoreAfterLogin(window);

// Links away from a view with unsaved changes ask first.
installLeaveGuard(window);

// Served by `warden serve` (web mode): the API over HTTP + SSE, which also tells whether the host
// can be reached; in Electron the preload set it already (the host is in-process or attached).
installWebApi(window, {
  onConnection: (state) => useWarden.getState().setConnection(state),
  onGap: () => void useWarden.getState().resync(),
});

/**
 * How long the first render waits at most for the first runs list. In web mode
 * the page preloaded it (the host's Link header), so it is usually here when
 * this script has run: the first frame then draws the rows, instead of an
 * empty Runs view, a second render and a second layout.
 */
const FIRST_LIST_WAIT_MS = 500;

function firstListLoaded(): Promise<void> {
  const loaded = (s: ReturnType<typeof useWarden.getState>) => s.order.length > 0 || s.ended.total !== null || s.error !== null;
  return new Promise((resolve) => {
    if (loaded(useWarden.getState())) return resolve();
    const finish = () => {
      clearTimeout(timer);
      stop();
      resolve();
    };
    const timer = setTimeout(finish, FIRST_LIST_WAIT_MS);
    const stop = useWarden.subscribe((s) => {
      if (loaded(s)) finish();
    });
  });
}

const render = () =>
  createRoot(document.getElementById('root')!).render(
    <StrictMode>
      <App api={window.warden} />
    </StrictMode>,
  );

// The runs list and the event stream are asked for now, before React's first render.
if (window.warden) {
  useWarden.getState().connect(window.warden);
  void firstListLoaded().then(render);
} else {
  render();
}
