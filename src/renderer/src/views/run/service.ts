// What the run view shows of a service: whether it is ready, the ports it
// listens on (a link for each that answers HTTP), and whether it takes
// input. Pure: the ServiceBar draws it.

import type { ListeningPort, RunResult } from '../../../../shared/result';
import { duration } from '../../format';
import { linkHost } from '../../../../shared/link-host';

export interface PortLink {
  port: number;
  address: string;
  /** The page to open, for a port that answered HTTP. */
  url: string | null;
}

export interface ServiceView {
  /** "Ready after 1.8 s", "Not ready in time", "Waiting to be ready (port, log:/x/)", "Never ready"; null without probes. */
  readiness: string | null;
  tone: 'ok' | 'bad' | 'wait' | null;
  /** The output line that made it ready. */
  line: string | null;
  ports: PortLink[];
  /** It was started with a stdin pipe that is still open. */
  takesInput: boolean;
  /** "lease until 2 h" on its clock, while live. */
  lease: string | null;
}

export function portLinks(ports: readonly ListeningPort[]): PortLink[] {
  const seen = new Map<number, PortLink>();
  for (const p of ports) {
    const url = p.http ? `http://${linkHost(p.address)}:${p.port}/` : null;
    const known = seen.get(p.port);
    // One entry per port: a port on both 127.0.0.1 and ::1 is one server to a reader; the link wins.
    if (!known) seen.set(p.port, { port: p.port, address: p.address, url });
    else if (known.url === null && url !== null) known.url = url;
  }
  return [...seen.values()].sort((a, b) => a.port - b.port);
}

export function serviceView(run: RunResult): ServiceView {
  const live = run.state !== 'ended';
  const ports = portLinks(live ? (run.ports ?? []) : []);
  const takesInput = live && run.stdinPipe === 'open';
  const lease = live && run.lease ? `lease until ${duration(run.lease.endsAtMs)}` : null;
  const rest = { takesInput, lease };
  if (run.ready) return { readiness: `Ready after ${duration(run.ready.afterMs)}`, tone: 'ok', line: run.ready.line ?? null, ports: ports.length > 0 || !live ? ports : portLinks(run.ready.ports), ...rest };
  if (run.ready === false) return { readiness: 'Not ready in time', tone: 'bad', line: null, ports, ...rest };
  if (run.probes) {
    const waiting = run.probes.filter((p) => !p.passed).map((p) => p.probe);
    return { readiness: live ? `Waiting to be ready (${waiting.join(', ')})` : 'Never ready: it ended first', tone: live ? 'wait' : 'bad', line: null, ports, ...rest };
  }
  return { readiness: null, tone: null, line: null, ports, ...rest };
}

/** Whether the run view shows a service bar at all. */
export function hasServiceBar(view: ServiceView): boolean {
  return view.readiness !== null || view.ports.length > 0 || view.takesInput || view.lease !== null;
}
