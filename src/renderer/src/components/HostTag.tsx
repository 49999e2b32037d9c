// The host a run lives on, beside it in Runs and History, once any remote is
// configured; "unreachable" while that remote cannot be reached (what the row
// shows is what was last seen).

import { hostOf, LOCAL_HOST } from '../../../shared/hosts';
import { useWarden } from '../store';
import './host-bar.css';

export function HostTag({ id }: { id: string }) {
  const host = hostOf(id);
  const shown = useWarden((s) => s.hosts.length > 1);
  const state = useWarden((s) => (host === LOCAL_HOST ? 'connected' : (s.hosts.find((h) => h.name === host)?.state ?? 'connecting')));
  if (!shown) return null;
  const unreachable = state !== 'connected';
  return (
    <span
      className={`host-tag${unreachable ? ' unreachable' : ''}`}
      data-testid="run-host"
      data-host={host}
      data-unreachable={unreachable ? 'true' : undefined}
      title={unreachable ? `Host ${host} cannot be reached now: this is what was last seen of the run. It goes on there, and shows again when the host is back.` : `On host ${host}`}
    >
      {host}
      {unreachable ? ' · unreachable' : ''}
    </span>
  );
}

/** The host filter's choices: every host, then each by name, with its state when not connected. */
export function HostOptions() {
  const hosts = useWarden((s) => s.hosts);
  return (
    <>
      <option value="">All hosts</option>
      {hosts.map((h) => (
        <option key={h.name} value={h.name}>
          {h.name}
          {h.state === 'connected' ? '' : ` (${h.state})`}
        </option>
      ))}
    </>
  );
}
