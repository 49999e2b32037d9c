// Runs recorded as live whose host is gone become `lost`, once.
//
// A host that starts looks for runs not ended whose host is gone (hosts.ts),
// claims them in one write transaction (claimed_by = its own host id, only
// where no live host has claimed them), and only then looks at them: the
// output stored before the host went down becomes the run's output, the
// telemetry chunks its one series (live-telemetry.ts), the
// processes still carrying the run's WARDEN_SCOPE marker are found and torn
// down (or only reported), and the advice says which. Two hosts starting at
// the same moment serialize on the write lock; the second finds the runs
// claimed by a live host and leaves them. A claimer that dies before it
// finishes leaves claims that the next host takes over.

import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Proc, RunResult, TeardownReport } from '../../shared/result';
import { DEFAULTS } from '../../shared/request';
import { count, seconds } from '../../shared/format';
import { listMarked, teardown } from '../supervisor/teardown';
import { liveness, readHosts, type HostRow, type Liveness } from './hosts';
import { settleLiveSeries } from './live-telemetry';
import { indexRun, insertEvent, readStream, replaceOutput, upsertRun } from './rows';
import { all, one, run, transaction, type Database } from './sql';

export interface RecoverOptions {
  /** End the processes still carrying a lost run's marker (true), or only report them (false). */
  tearDown: boolean;
  /** Where /proc is; null where there is none (nothing can be found by marker then). */
  procRoot?: string | null;
  /** Bound on each run's teardown (default: the engine's, 10 s). */
  teardownBudgetMs?: number;
  /** When a gone host died, as its sentinel saw it (epoch ms): the runs' last sign of life. */
  diedAt?: (hostId: string) => number | undefined;
  /** Between choosing the runs to claim and writing the claim, and right after it: where a test puts a rival host's claim, to race in one order. */
  beforeClaim?: () => Promise<void>;
  afterClaim?: () => Promise<void>;
}

export interface RecoveredRun {
  id: string;
  hostId: string;
  /** Characters of output recovered from the store. */
  stdoutChars: number;
  stderrChars: number;
  /** Processes found carrying the run's marker. */
  found: Proc[];
  /** Present when they were torn down. */
  teardown?: TeardownReport;
  advice: string;
}

export interface RecoveryReport {
  recovered: RecoveredRun[];
  /** Runs not ended whose host is alive: left alone. */
  liveElsewhere: number;
}

/** The file a host's sentinel writes, in the state dir's run/ folder, when it sees its host die: epoch ms. */
export function deathNoteName(hostId: string): string {
  return `died-${hostId}`;
}

export function readDeathNote(dir: string, hostId: string): number | undefined {
  try {
    const ms = Number(readFileSync(join(dir, deathNoteName(hostId)), 'utf8').trim());
    return Number.isSafeInteger(ms) && ms > 0 ? ms : undefined;
  } catch {
    return undefined;
  }
}

/** Death notes of hosts with no run left to recover are of no more use. */
export function forgetDeathNotes(db: Database, dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => name.startsWith(deathNoteName('')));
  } catch {
    return;
  }
  for (const name of names) {
    const hostId = name.slice(deathNoteName('').length);
    if (one(db, `SELECT 1 AS x FROM runs WHERE host_id = ? AND state != 'ended' LIMIT 1`, hostId)) continue;
    rmSync(join(dir, name), { force: true });
  }
}

interface Candidate {
  id: string;
  host_id: string;
  claimed_by: string | null;
}

/** Recovers the lost runs of every gone host; `me` is the registered host doing it. */
export async function recoverLostRuns(db: Database, me: string, options: RecoverOptions): Promise<RecoveryReport> {
  const procRoot = options.procRoot === undefined ? (process.platform === 'linux' ? '/proc' : null) : options.procRoot;
  const candidates = all<Candidate>(db, `SELECT id, host_id, claimed_by FROM runs WHERE state != 'ended' AND host_id != ?`, me);
  if (candidates.length === 0) return { recovered: [], liveElsewhere: 0 };
  const hosts = readHosts(db, [...new Set(candidates.flatMap((c) => (c.claimed_by ? [c.host_id, c.claimed_by] : [c.host_id])))]);
  const verdicts = new Map<string, Liveness>();
  const check = (hostId: string): Liveness => {
    let found = verdicts.get(hostId);
    if (!found) verdicts.set(hostId, (found = liveness(hosts.get(hostId), procRoot)));
    return found;
  };
  let liveElsewhere = 0;
  const wanted: Candidate[] = [];
  for (const c of candidates) {
    if (check(c.host_id).alive) liveElsewhere++;
    // Claimed by a live host (or by us, earlier): that host finishes it.
    else if (c.claimed_by === null || (c.claimed_by !== me && !check(c.claimed_by).alive)) wanted.push(c);
  }
  if (wanted.length === 0) return { recovered: [], liveElsewhere };

  if (options.beforeClaim) await options.beforeClaim();
  const now = Date.now();
  const claimed = transaction(db, () =>
    wanted.filter(
      (c) =>
        run(db, `UPDATE runs SET claimed_by = ?, recovered_at = ? WHERE id = ? AND state != 'ended' AND claimed_by IS ?`, me, now, c.id, c.claimed_by)
          .changes === 1,
    ),
  );
  if (options.afterClaim) await options.afterClaim();

  // One scan per gone host finds what is left of all its runs (and its Python
  // interpreters, whose marker is the session's), instead of one per run.
  const byHost = new Map<string, Candidate[]>();
  for (const c of claimed) byHost.set(c.host_id, [...(byHost.get(c.host_id) ?? []), c]);
  const recovered: RecoveredRun[] = [];
  for (const [hostId, runs] of byHost) {
    const gone = check(hostId);
    const snapshots = new Map(runs.map((c) => [c.id, JSON.parse(one<{ result: string }>(db, 'SELECT result FROM runs WHERE id = ?', c.id)!.result) as RunResult]));
    // After a reboot none of its processes can be running: no scan.
    const canLook = gone.sameBoot && procRoot !== null;
    const owns = (snapshot: RunResult, scope: string) =>
      scope === `${hostId}.${snapshot.id}` || (snapshot.kind === 'python' && snapshot.session !== undefined && scope.startsWith(`${hostId}.session-${snapshot.session}-`));
    // A dead host's interpreters go whatever their runs; other scopes only when they are of a run recovered here.
    const wanted = (scope: string) => scope.startsWith(`${hostId}.session-`) || [...snapshots.values()].some((r) => owns(r, scope));
    const left = canLook && [...snapshots.values()].some((r) => r.state !== 'queued') ? await leftOf(hostId, procRoot, options, wanted) : new Map<string, Leftover>();
    const diedAt = options.diedAt?.(hostId);
    for (const c of runs) {
      const snapshot = snapshots.get(c.id)!;
      const mine = [...left.entries()].filter(([scope]) => owns(snapshot, scope));
      recovered.push(recoverOne(db, me, c, snapshot, hosts.get(hostId), gone, canLook && snapshot.state !== 'queued', mine.map(([, l]) => l), diedAt, procRoot, options));
    }
  }
  return { recovered, liveElsewhere };
}

interface Leftover {
  found: Proc[];
  report?: TeardownReport;
}

/**
 * What is still running of a gone host's runs, by marker value, and torn
 * down when asked: one teardown over all of them (one scan, one TERM pass, one
 * wait), whatever their number. Processes of runs that ended with their
 * descendants kept carry an ended run's marker and are left alone.
 */
async function leftOf(hostId: string, procRoot: string, options: RecoverOptions, wanted: (scope: string) => boolean): Promise<Map<string, Leftover>> {
  const base = { pgid: null, procRoot, budgetMs: options.teardownBudgetMs ?? DEFAULTS.teardownBudgetMs, passGapMs: DEFAULTS.teardownPassGapMs };
  const marked = await listMarked({ ...base, scope: `${hostId}.`, scopePrefix: true });
  const left = new Map<string, Leftover>();
  const scopeOf = new Map<number, string>();
  const excluded = new Set<string>();
  for (const { scope, ...proc } of marked) {
    if (scope === undefined) continue;
    if (!wanted(scope)) {
      excluded.add(scope);
      continue;
    }
    scopeOf.set(proc.pid, scope);
    const entry = left.get(scope) ?? { found: [] };
    entry.found.push(proc);
    left.set(scope, entry);
  }
  if (options.tearDown && left.size > 0) {
    const report = await teardown({ ...base, scope: `${hostId}.`, scopePrefix: true, excludeScopes: excluded });
    for (const [scope, entry] of left) {
      entry.report = {
        killed: report.killed.filter((p) => scopeOf.get(p.pid) === scope),
        survivors: report.survivors.filter((p) => scopeOf.get(p.pid) === scope),
        elapsedMs: report.elapsedMs,
        complete: report.complete,
        ...(report.unchecked !== undefined ? { unchecked: report.unchecked } : {}),
      };
    }
  }
  return left;
}

/** What a recovery cannot see: with the run's Warden gone, only its marker is left to look for. */
export const LOST_UNSEEN =
  "with its Warden gone only processes still carrying the run's WARDEN_SCOPE marker can be looked for: one that dropped the marker and left its process group (env -u WARDEN_SCOPE setsid ...) cannot be found, so check for it yourself";

function recoverOne(
  db: Database,
  me: string,
  c: Candidate,
  snapshot: RunResult,
  host: HostRow | undefined,
  gone: Liveness,
  canLook: boolean,
  left: Leftover[],
  diedAt: number | undefined,
  procRoot: string | null,
  options: RecoverOptions,
): RecoveredRun {
  const stdout = readStream(db, c.id, 'stdout');
  const stderr = readStream(db, c.id, 'stderr');
  const found = left.flatMap((l) => l.found);
  const reports = left.flatMap((l) => (l.report ? [l.report] : []));
  const unchecked = reports.find((r) => r.unchecked !== undefined)?.unchecked;
  // Looked for and nothing found is still a report: it says what the look could not see.
  const report: TeardownReport | undefined =
    reports.length === 0
      ? canLook && options.tearDown && snapshot.state !== 'queued'
        ? { killed: [], survivors: [], elapsedMs: 0, complete: false, unseen: LOST_UNSEEN }
        : undefined
      : {
          killed: reports.flatMap((r) => r.killed),
          survivors: reports.flatMap((r) => r.survivors),
          // One teardown per gone host: each scope's share carries its whole time.
          elapsedMs: Math.max(...reports.map((r) => r.elapsedMs)),
          complete: false,
          unseen: LOST_UNSEEN,
          ...(unchecked !== undefined ? { unchecked } : {}),
        };

  const now = Date.now();
  const startedAt = Date.parse(snapshot.startedAt);
  // Its last sign of life: the host's last heartbeat, or the last event recorded for the run, whichever is later.
  const lastEvent = one<{ at: number | null }>(db, 'SELECT MAX(at) AS at FROM run_events WHERE run_id = ?', c.id)?.at ?? null;
  // The sentinel's record of the host's death is the most exact sign (it saw the pipe close).
  const lastSeen = Math.max(host?.heartbeat_at ?? startedAt, lastEvent ?? startedAt, diedAt ?? startedAt, startedAt);
  const seenAfterMs = Number.isFinite(startedAt) ? lastSeen - startedAt : null;
  const advice = adviceFor(snapshot, host, gone, seenAfterMs, stdout.storedChars, stderr.storedChars, found, report, canLook, procRoot, options.tearDown);
  const notes = [...snapshot.notes];
  if (found.length > 0) notes.push(`Still running when the run was recovered: ${describe(found)}.`);
  if (report && report.survivors.length > 0) notes.push(`Still alive after the teardown: ${describe(report.survivors)}.`);
  const lost: RunResult = {
    ...snapshot,
    state: 'ended',
    verdict: 'lost',
    exitCode: null,
    signal: null,
    endedAt: new Date(now).toISOString(),
    // It ran at least until its last sign of life.
    elapsedMs: Math.max(snapshot.elapsedMs, seenAfterMs ?? 0),
    advice,
    notes,
    stdout: stdout.text,
    stderr: stderr.text,
    stdoutTruncated: stdout.dropped,
    stderrTruncated: stderr.dropped,
    ...(report ? { teardown: { ...report, elapsedMs: Math.round(report.elapsedMs) } } : {}),
  };
  delete lost.queuePosition;

  transaction(db, () => {
    // Only while the claim is still ours and nobody recorded an end meanwhile.
    const current = one<{ state: string; claimed_by: string | null }>(db, 'SELECT state, claimed_by FROM runs WHERE id = ?', c.id);
    if (!current || current.state === 'ended' || current.claimed_by !== me) return;
    const n = upsertRun(db, c.host_id, lost, null);
    const bytes = replaceOutput(db, c.id, lost.stdout, lost.stderr);
    run(db, 'UPDATE runs SET output_bytes = ? WHERE n = ?', bytes, n);
    indexRun(db, n, lost, lost.stdout, lost.stderr);
    // Its charts, as an ended run's: the series up to the host's last write, with the peak stored beside it.
    settleLiveSeries(db, c.id, now);
    insertEvent(db, c.id, now, null, 'lost', {
      hostId: c.host_id,
      hostPid: host?.pid ?? null,
      why: gone.why,
      recoveredBy: me,
      found: found.map((p) => p.pid),
      tornDown: report !== undefined,
      killed: report?.killed.map((p) => p.pid) ?? [],
      survivors: report?.survivors.map((p) => p.pid) ?? [],
    });
  });

  return {
    id: c.id,
    hostId: c.host_id,
    stdoutChars: stdout.storedChars,
    stderrChars: stderr.storedChars,
    found,
    ...(report ? { teardown: report } : {}),
    advice,
  };
}

function describe(procs: Proc[]): string {
  const shown = procs.slice(0, 5).map((p) => `pid ${p.pid} (${p.command.length > 60 ? `${p.command.slice(0, 57)}...` : p.command})`);
  return procs.length > 5 ? `${shown.join(', ')} and ${procs.length - 5} more` : shown.join(', ');
}

function adviceFor(
  snapshot: RunResult,
  host: HostRow | undefined,
  gone: Liveness,
  seenAfterMs: number | null,
  stdoutChars: number,
  stderrChars: number,
  found: Proc[],
  report: TeardownReport | undefined,
  canLook: boolean,
  procRoot: string | null,
  tearDown: boolean,
): string {
  const parts: string[] = [];
  // On the run's own terms (an ISO instant means nothing in a sentence): how long after it started.
  const seen = snapshot.state !== 'queued' && seenAfterMs !== null && seenAfterMs > 0 ? `, last seen alive ${seconds(seenAfterMs)} after the run started` : '';
  parts.push(
    `This run was ${snapshot.state === 'queued' ? 'queued' : 'live'} when Warden lost it: ${gone.why}${seen}, and its end was never recorded, so its exit status is unknown.`,
  );
  if (snapshot.state === 'queued') parts.push('It had not started.');
  parts.push(
    stdoutChars + stderrChars > 0
      ? `Recovered the ${count(stdoutChars)} characters of stdout and ${count(stderrChars)} of stderr stored before then; output of the last moments (up to the store's ${seconds(250)} batching) may be missing.`
      : 'No output had been stored for it.',
  );
  if (!canLook) {
    if (!gone.sameBoot) parts.push('None of its processes can still be running after the restart.');
    else if (procRoot === null) parts.push('Without /proc its processes could not be looked for by their WARDEN_SCOPE marker: check for them yourself.');
  } else if (found.length === 0) {
    parts.push('No process carrying its WARDEN_SCOPE marker was still running; one that dropped the marker and left its process group could not be looked for once its Warden was gone.');
  } else if (report) {
    const killed = report.killed.length;
    parts.push(
      `${found.length === 1 ? '1 process' : `${found.length} processes`} still carrying its WARDEN_SCOPE marker ${found.length === 1 ? 'was' : 'were'} torn down: ${describe(found)}; ${killed} ended${report.survivors.length > 0 ? `, ${report.survivors.length} still alive: ${describe(report.survivors)}. End them with kill -9 ${report.survivors.map((p) => p.pid).join(' ')}` : ''}.`,
    );
  } else if (!tearDown) {
    parts.push(
      `${found.length === 1 ? '1 process' : `${found.length} processes`} still carrying its WARDEN_SCOPE marker ${found.length === 1 ? 'is' : 'are'} running and ${found.length === 1 ? 'was' : 'were'} left alone, as asked: ${describe(found)}. End them with kill ${found.map((p) => p.pid).join(' ')} if they are not wanted.`,
    );
  }
  return parts.join(' ');
}
