// Each host's connection state, in the navigation bar: this machine's host
// and every remote it relays (warden remote add), each with its own dot. A
// remote that went away is marked here and on its runs alone; the local host
// and the other remotes go on. The host reconnects by itself: this only asks
// it how things stand, every couple of seconds, and shows nothing while no
// remote is configured.

import { useEffect } from 'react';
import type { HostStatus } from '../../../shared/hosts';
import { clock } from '../format';
import { useWarden } from '../store';
import './host-bar.css';

/** How often the host is asked for its hosts' states. */
export const HOSTS_POLL_MS = 2000;

const WORDS: Record<HostStatus['state'], string> = { connected: 'connected', connecting: 'connecting…', disconnected: 'disconnected, reconnecting…' };

export function HostBar() {
  const api = useWarden((s) => s.api);
  const hosts = useWarden((s) => s.hosts);
  const connection = useWarden((s) => s.connection);
  useEffect(() => {
    if (!api?.hosts || connection !== 'online') return;
    let stopped = false;
    const ask = () => {
      void api.hosts?.().then(
        (list) => {
          if (!stopped) useWarden.getState().setHosts(list);
        },
        // The local host's own absence is the connection bar's to say.
        () => undefined,
      );
    };
    ask();
    const timer = setInterval(ask, HOSTS_POLL_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [api, connection]);

  if (hosts.length < 2) return null;
  return (
    <ul className="host-bar" aria-label="Hosts" data-testid="host-bar">
      {hosts.map((host) => (
        <li
          key={host.name}
          className={`host-pill ${host.state}`}
          data-testid="host-state"
          data-host={host.name}
          data-state={host.state}
          title={`${host.name}${host.target ? ` (${host.target})` : ' (this machine)'}: ${WORDS[host.state]}${host.state !== 'connected' ? ` since ${clock(host.since)}` : ''}${host.lastError ? `. ${host.lastError}` : ''}`}
        >
          <span className="host-dot" aria-hidden="true" />
          <span className="host-name">{host.name}</span>
          {host.state !== 'connected' && <span className="host-word">{host.state === 'connecting' ? 'connecting' : 'disconnected'}</span>}
        </li>
      ))}
    </ul>
  );
}
