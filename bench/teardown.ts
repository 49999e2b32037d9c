// (d) Teardown: a tree of `group + escapees` processes left behind by a main
// process that has exited, `escapees` of them in their own sessions (setsid),
// all carrying the run's WARDEN_SCOPE marker. The engine's teardown() is timed
// from its start until it returns (it returns once a scan finds nothing alive),
// and every pid of the tree is then checked independently in /proc.
// Baseline: the same number of processes in one process group, ended by one
// plain SIGKILL to the group, polled until every member is dead. One /proc
// scan (list + stat of every pid) is timed too, as the floor of any sweep.
//
// The trees are built by bench/reaper.py, a child subreaper, so the killed
// orphans are reaped instead of staying zombies when PID 1 does not reap.
// Without python3 the trees are built directly and the dead stay zombies
// (state Z, which the engine counts as dead).

import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { isAliveInProc, listPids, readStat } from '../src/main/supervisor/procfs';
import { teardown } from '../src/main/supervisor/teardown';
import { DEFAULTS } from '../src/shared/request';
import { check, max, median, ms, ratio, sleep, type Figure } from './lib';

export interface TeardownOptions {
  group: number;
  escapees: number;
  rounds: number;
}

interface Tree {
  pgid: number;
  startTicks: number;
  group: number[];
  escapees: number[];
}

const PROC = '/proc';
const SCRIPT = `
for ((i = 0; i < $1; i++)); do sleep 300 </dev/null >/dev/null 2>&1 & echo "g $!"; done
for ((i = 0; i < $2; i++)); do setsid sleep 300 </dev/null >/dev/null 2>&1 & echo "e $!"; done
`;

/** Builds trees through the subreaper when python3 is there, else directly. */
export class TreeBuilder {
  private reaper?: ChildProcessByStdio<Writable, Readable, null>;
  private lines?: AsyncIterator<string>;
  private rl?: Interface;
  reaping = false;
  /** Every tree built, so none is left running if a round fails. */
  private readonly built: Tree[] = [];

  async open(): Promise<void> {
    const script = join(dirname(fileURLToPath(import.meta.url)), 'reaper.py');
    const env = { ...process.env };
    delete env.WARDEN_SCOPE;
    try {
      const reaper = spawn('python3', [script], { stdio: ['pipe', 'pipe', 'inherit'], env });
      const failed = new Promise<'failed'>((resolve) => reaper.once('error', () => resolve('failed')));
      this.rl = createInterface({ input: reaper.stdout });
      this.lines = this.rl[Symbol.asyncIterator]();
      const first = await Promise.race([this.lines.next(), failed, sleep(10_000).then(() => 'failed' as const)]);
      if (first === 'failed' || first.done) throw new Error('no reaper');
      this.reaping = (JSON.parse(first.value) as { ready?: boolean }).ready === true;
      this.reaper = reaper;
    } catch {
      this.reaper = undefined;
    }
  }

  async build(scope: string | null, group: number, escapees: number): Promise<Tree> {
    let tree: Tree;
    if (this.reaper && this.lines) {
      this.reaper.stdin.write(`${JSON.stringify({ scope, group, escapees })}\n`);
      const reply = await this.lines.next();
      if (reply.done) throw new Error('the reaper went away');
      tree = JSON.parse(reply.value) as Tree;
    } else {
      tree = await buildDirect(scope, group, escapees);
    }
    this.built.push(tree);
    await waitUntilExeced(tree);
    return tree;
  }

  close(): void {
    // Only what is still provably ours: a sleep started with the tree, whose
    // parent is the tree's bash or the reaper (never a pid reused since).
    const parents = new Set([this.reaper?.pid ?? -1]);
    for (const tree of this.built) {
      parents.add(tree.pgid);
      for (const pid of [...tree.group, ...tree.escapees]) {
        const stat = readStat(PROC, pid);
        if (!stat || stat.state === 'Z' || stat.comm !== 'sleep' || stat.startTicks < tree.startTicks || !parents.has(stat.ppid)) continue;
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone meanwhile
        }
      }
      parents.delete(tree.pgid);
    }
    this.rl?.close();
    this.reaper?.stdin.end();
  }
}

async function buildDirect(scope: string | null, group: number, escapees: number): Promise<Tree> {
  const env = { ...process.env };
  delete env.WARDEN_SCOPE;
  if (scope) env.WARDEN_SCOPE = scope;
  const bash = spawn('bash', ['-c', SCRIPT, 'tree', String(group), String(escapees)], { stdio: ['ignore', 'pipe', 'inherit'], env, detached: true });
  const startTicks = readStat(PROC, bash.pid!)!.startTicks;
  const tree: Tree = { pgid: bash.pid!, startTicks, group: [], escapees: [] };
  for await (const line of createInterface({ input: bash.stdout })) {
    const [kind, pid] = line.split(' ');
    (kind === 'g' ? tree.group : tree.escapees).push(Number(pid));
  }
  return tree;
}

/** Waits until every process of the tree is `sleep` (past fork, setsid and exec). */
async function waitUntilExeced(tree: Tree): Promise<void> {
  const until = performance.now() + 20_000;
  const escapees = new Set(tree.escapees);
  for (const pid of [...tree.group, ...tree.escapees]) {
    for (;;) {
      const stat = readStat(PROC, pid);
      if (stat === undefined) throw new Error(`tree process ${pid} is gone before teardown`);
      if (stat.comm === 'sleep' && (!escapees.has(pid) || stat.sid === pid)) break;
      if (performance.now() > until) throw new Error(`tree process ${pid} never became sleep`);
      await sleep(2);
    }
  }
}

/** Polls until every pid is gone or a zombie, or `limitMs` passes. */
async function untilAllDead(pids: number[], limitMs: number): Promise<void> {
  const t = performance.now();
  let i = 0;
  while (i < pids.length && performance.now() - t < limitMs) {
    if (isAliveInProc(PROC, pids[i]!)) await sleep(1);
    else i++;
  }
}

function scanOnce(): number {
  const t = performance.now();
  for (const pid of listPids(PROC)) readStat(PROC, pid);
  return performance.now() - t;
}

export async function benchTeardown(options: TeardownOptions): Promise<Figure> {
  const size = options.group + options.escapees;
  const builder = new TreeBuilder();
  await builder.open();
  const engine: number[] = [];
  const survivors: number[] = [];
  const reportedKilled: number[] = [];
  const baseline: number[] = [];
  const scans: number[] = [];
  const notes: string[] = [];
  try {
    for (let round = 0; round < options.rounds; round++) {
      // Engine: the tree as a run leaves it.
      const scope = `bench${randomBytes(3).toString('hex')}.${randomBytes(6).toString('hex')}`;
      const tree = await builder.build(scope, options.group, options.escapees);
      scans.push(scanOnce());
      const t = performance.now();
      const report = await teardown({
        scope,
        pgid: tree.pgid,
        procRoot: PROC,
        notBeforeTicks: tree.startTicks,
        budgetMs: DEFAULTS.teardownBudgetMs,
        passGapMs: DEFAULTS.teardownPassGapMs,
      });
      engine.push(performance.now() - t);
      const all = [...tree.group, ...tree.escapees];
      const alive = all.filter((pid) => isAliveInProc(PROC, pid));
      survivors.push(alive.length);
      reportedKilled.push(report.killed.length);
      if (alive.length > 0) {
        notes.push(`round ${round + 1}: ${alive.length} alive after teardown (reported survivors ${report.survivors.length}); killing them`);
        for (const pid of alive) process.kill(pid, 'SIGKILL');
      }

      // Baseline: the same number of processes in one group, one SIGKILL to the group.
      const plain = await builder.build(null, size, 0);
      const tb = performance.now();
      process.kill(-plain.pgid, 'SIGKILL');
      await untilAllDead(plain.group, 10_000);
      baseline.push(performance.now() - tb);
    }
  } finally {
    builder.close();
  }
  const worstSurvivors = max(survivors);
  const worst = max(engine);
  return {
    title: `(d) teardown: ${size} processes (${options.escapees} setsid escapees) carrying the marker, main process gone; engine teardown() vs one kill -9 of a ${size}-process group (${options.rounds} rounds)`,
    lines: [
      `engine    to all dead median ${ms(median(engine))}   max ${ms(worst)}   survivors ${survivors.join(', ')}   reported killed ${reportedKilled.join(', ')}   rounds ${engine.map((t) => t.toFixed(0)).join(', ')} ms`,
      `baseline  kill -9 group + poll median ${ms(median(baseline))}   max ${ms(max(baseline))}   rounds ${baseline.map((t) => t.toFixed(0)).join(', ')} ms`,
      `          one /proc stat scan with the tree alive: median ${ms(median(scans))}`,
      `ratio     median ${ratio(median(engine), median(baseline))} vs kill -9 of the group;   ${ratio(median(engine), median(scans))} vs one /proc scan`,
      `trees built ${builder.reaping ? 'under a subreaper (dead orphans reaped)' : 'directly (dead orphans stay zombies)'}`,
      ...notes,
    ],
    checks: [check(`max ${ms(worst)} <= 1000 ms with 0 survivors (max ${worstSurvivors})`, worst <= 1000 && worstSurvivors === 0)],
  };
}
