// Every live run's listening ports, kept up to date: one pass of the port
// finder over all live runs every PORTS_EVERY_MS while any runs, each run
// told when its ports change (an event), and each new port asked once
// whether it answers HTTP (the app's link).

import type { ListeningPort } from '../../../shared/result';
import type { PortFinder } from './finder';
import { answersHttp } from './http-check';

/** How often every live run's ports are looked at, at most. */
export const PORTS_EVERY_MS = 1_000;
/**
 * The watch waits at least this many times as long as its last pass took:
 * on a machine where reading the kernel's tables is slow (large socket
 * hashes, a loaded machine), it looks less often rather than take more than
 * about 2 % of a core.
 */
const PASS_SHARE = 50;
/**
 * A port of a run that is no service (started without readiness probes) is
 * asked whether it answers HTTP only once it has listened this long: a test
 * suite's short-lived servers, which may count their requests, never see
 * Warden's HEAD /; a dev server started without --ready gets its link then.
 */
export const HTTP_CHECK_AFTER_MS = 5_000;

export interface PortedRun {
  readonly id: string;
  readonly ended: boolean;
  /** Started with readiness probes: its ports are asked about HTTP at once. */
  readonly service: boolean;
  /** Its processes as last known (cheap: read on every pass for every live run). */
  knownPids(): number[];
  setPorts(ports: ListeningPort[]): boolean;
}

export class PortWatch {
  private timer?: NodeJS.Timeout;
  private lastPassMs = 0;
  /** Per run, per "address port": whether it answers HTTP (undefined while being asked), or when it was first seen (a number, not asked yet). */
  private readonly http = new Map<string, Map<string, boolean | undefined | number>>();
  /** Per run, the ports last found (told again with their HTTP answers when those come). */
  private readonly last = new Map<string, ListeningPort[]>();

  constructor(
    private readonly finder: PortFinder,
    private readonly runs: () => Iterable<PortedRun>,
    private readonly everyMs = PORTS_EVERY_MS,
    private readonly httpAfterMs = HTTP_CHECK_AFTER_MS,
  ) {}

  /** Looks now and then on its own timer while runs are live (it never keeps the process alive). */
  wake(): void {
    if (this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const started = performance.now();
      const live = this.pass();
      this.lastPassMs = performance.now() - started;
      if (live > 0) this.wake();
    }, Math.max(this.everyMs, this.lastPassMs * PASS_SHARE));
    this.timer.unref();
  }

  /** One pass over the live runs (`fresh`: the tables read whatever the counters say); returns how many were live. */
  pass(fresh = false): number {
    const live = new Map<string, PortedRun>();
    for (const run of this.runs()) if (!run.ended) live.set(run.id, run);
    const pids = new Map<string, number[]>();
    for (const [id, run] of live) pids.set(id, run.knownPids());
    const found = live.size > 0 ? this.finder.find(pids, { every: true, fresh }) : null;
    for (const id of this.http.keys()) if (!live.has(id)) this.forget(id);
    if (found === null) return live.size;
    for (const [id, ports] of found) this.tell(live.get(id)!, ports);
    return live.size;
  }

  /** A run ended: what was known of its ports goes. */
  forget(runId: string): void {
    this.http.delete(runId);
    this.last.delete(runId);
    this.finder.forgetRun(runId);
  }

  private tell(run: PortedRun, ports: ListeningPort[]): void {
    this.last.set(run.id, ports);
    let known = this.http.get(run.id);
    if (!known) this.http.set(run.id, (known = new Map()));
    const now = performance.now();
    const withHttp = ports.map((p) => {
      const key = `${p.address} ${p.port}`;
      if (!known.has(key)) known.set(key, now);
      const seenAt = known.get(key);
      if (typeof seenAt === 'number' && (run.service || now - seenAt >= this.httpAfterMs)) {
        known.set(key, undefined);
        void answersHttp(p.address, p.port).then((yes) => {
          if (this.http.get(run.id) !== known) return;
          known.set(key, yes);
          const latest = this.last.get(run.id);
          if (yes && !run.ended && latest) this.tell(run, latest);
        });
      }
      const http = known.get(key);
      return typeof http === 'boolean' ? { ...p, http } : p;
    });
    run.setPorts(withHttp);
  }
}
