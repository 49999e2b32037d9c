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

// The runs list and the event stream are asked for now, before React's first render: the Runs
// rows wait on the host's answer, not on the frame being built first.
if (window.warden) useWarden.getState().connect(window.warden);

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App api={window.warden} />
  </StrictMode>,
);
