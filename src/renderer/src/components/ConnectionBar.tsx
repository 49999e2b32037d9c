// A persistent bar while the host cannot be reached or no longer accepts this
// page's login. Live clocks stand still and actions are disabled meanwhile
// (store/connection-slice.ts); the page picks up by itself when the host answers again.

import { clock } from '../format';
import { useWarden } from '../store';

export function ConnectionBar() {
  const connection = useWarden((s) => s.connection);
  const since = useWarden((s) => s.offlineSince);
  if (connection === 'online') return null;
  const at = since === null ? null : new Date(Date.now() - (performance.now() - since)).toISOString();
  return (
    <div className={`app-conn ${connection}`} role="status" aria-live="assertive" data-testid="connection-bar" data-state={connection}>
      <span className="app-conn-dot" aria-hidden="true" />
      {connection === 'offline' ? (
        <span>
          <strong>Disconnected, reconnecting…</strong> The Warden host stopped answering{at ? ` at ${clock(at)}` : ''}. Clocks are paused and actions are off until it is back; runs
          go on or end on the host meanwhile.
        </span>
      ) : (
        <span>
          <strong>Logged out.</strong> The host no longer accepts this page&apos;s login (it restarted, or the login ended). Run <code>warden serve --open</code> and open the link it
          prints in this browser: this page picks up again by itself.
        </span>
      )}
    </div>
  );
}
