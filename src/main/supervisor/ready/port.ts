// port (and port:N): ready when the run's own processes hold a listening TCP
// socket (on N): read from the kernel's tables against their descriptors
// (ports/finder.ts), so a stale server of someone else's on the port does
// not pass it, as it would pass tcp:N.

import type { ListeningPort } from '../../../shared/result';
import { failed, passed, type Attempt } from './attempt';

export function probePort(wanted: number | null, ports: ListeningPort[] | null): Attempt {
  if (ports === null) return failed('the listening sockets cannot be read here (no /proc)');
  const match = wanted === null ? ports[0] : ports.find((p) => p.port === wanted);
  if (match) return passed({ port: match.port });
  if (wanted !== null && ports.length > 0) return failed(`its processes listen on ${ports.map((p) => p.port).join(', ')}, not ${wanted}`);
  return failed('its processes hold no listening TCP socket yet');
}
