import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import './styles.css';
import { installWebApi } from './web-api';

// Served by `warden serve` (web mode): the API over HTTP + SSE; in Electron the preload set it already.
installWebApi(window);

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App api={window.warden} />
  </StrictMode>,
);
