// A run's live process tree through the engine: tree events while it runs
// (parent links, commands, RSS, an escaped setsid child marked), and the
// peak figures in its result.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ProcNode, ProcTreeSnapshot } from '../../shared/proc-tree';
import { Harness } from './proc-testkit';

let harness: Harness;
afterEach(async () => {
  await harness?.cleanup();
});

function walk(nodes: ProcNode[], out: ProcNode[] = []): ProcNode[] {
  for (const node of nodes) {
    out.push(node);
    walk(node.children, out);
  }
  return out;
}

describe.skipIf(process.platform !== 'linux')('a run\'s process tree', () => {
  it('is reported live with parent links, commands and RSS, and its peak is in the result', async () => {
    harness = new Harness();
    const snapshots: ProcTreeSnapshot[] = [];
    harness.supervisor.subscribe((event) => {
      if (event.type === 'tree') snapshots.push(event.snapshot);
    });
    const script = 'import subprocess, time\nps = [subprocess.Popen(["sleep", "2"]) for _ in range(3)]\ntime.sleep(1.5)\n[p.kill() for p in ps]';
    const r = await harness.run({ argv: ['bash', '-c', `python3 -c '${script}'; echo done`] });
    expect(r.verdict).toBe('completed');
    const mine = snapshots.filter((s) => s.runId === r.id);
    const full = mine.find((s) => walk(s.roots).filter((n) => n.command.startsWith('sleep 2')).length === 3);
    expect(full, 'a snapshot with bash -> python3 -> 3 sleeps').toBeDefined();
    const [bash] = full!.roots;
    expect(bash!.command).toMatch(/^bash -c/);
    const python = bash!.children.find((c) => /python3/.test(c.command.split(' ')[0]!));
    expect(python).toBeDefined();
    expect(python!.children.map((c) => c.command)).toEqual(['sleep 2', 'sleep 2', 'sleep 2']);
    for (const node of walk(full!.roots)) {
      expect(node.rssBytes).toBeGreaterThan(0);
      expect(node.escaped).toBe(false);
    }
    expect(r.peak!.processes).toBeGreaterThanOrEqual(5);
    expect(r.peak!.rssBytes).toBeGreaterThan(0);
  });

  it('marks a setsid child that left the tree as escaped', async () => {
    harness = new Harness();
    const snapshots: ProcTreeSnapshot[] = [];
    // The run ends when a snapshot has shown the escaped sleep (a gate file), however long the sampler takes.
    const gates = mkdtempSync(join(tmpdir(), 'wtree-gate-'));
    const gate = join(gates, 'seen');
    harness.supervisor.subscribe((event) => {
      if (event.type !== 'tree') return;
      snapshots.push(event.snapshot);
      if (walk(event.snapshot.roots).some((n) => n.command === 'sleep 30' && n.escaped)) writeFileSync(gate, '');
    });
    // The intermediate bash exits at once, so the setsid sleep is reparented out of the run's tree.
    const r = await harness.run({ argv: ['bash', '-c', '(setsid sleep 30 &); until [ -e "$1" ]; do sleep 0.05; done', 'tree', gate] });
    rmSync(gates, { recursive: true, force: true });
    const escaped = snapshots
      .filter((s) => s.runId === r.id)
      .flatMap((s) => walk(s.roots))
      .filter((n) => n.command === 'sleep 30');
    // Seen escaped; a snapshot taken before the subshell that started it exited may show it inside the tree still.
    expect(escaped.length).toBeGreaterThan(0);
    expect(escaped.at(-1)!.escaped).toBe(true);
    expect(r.teardown!.killed.map((p) => p.command)).toContain('sleep 30');
  });

  it('a Python script\'s tree is its interpreter and what the script started, with the peak in its result', async () => {
    harness = new Harness();
    const snapshots: ProcTreeSnapshot[] = [];
    harness.supervisor.subscribe((event) => {
      if (event.type === 'tree') snapshots.push(event.snapshot);
    });
    const session = `tree${process.pid}`;
    // The sleeps stay until the sampler has shown both (the test then opens the gate), not for a time a loaded machine's sampler might miss.
    const gate = join(mkdtempSync(join(tmpdir(), 'warden-tree-')), 'seen');
    const shown = (s: ProcTreeSnapshot) => walk(s.roots).filter((n) => n.command === 'sleep 3').length === 2;
    harness.supervisor.subscribe((event) => {
      if (event.type === 'tree' && shown(event.snapshot)) writeFileSync(gate, '');
    });
    const code = `import os, subprocess, time\nps = [subprocess.Popen(["sleep", "3"]) for _ in range(2)]\nwhile not os.path.exists(${JSON.stringify(gate)}):\n    time.sleep(0.02)\n[p.kill() for p in ps]\n[p.wait() for p in ps]`;
    const r = await harness.run({ code, session });
    expect(r.verdict).toBe('completed');
    const interpreterPid = harness.supervisor.sessions().find((s) => s.name === session)!.pid;
    const full = snapshots.filter((s) => s.runId === r.id).find((s) => walk(s.roots).filter((n) => n.command === 'sleep 3').length === 2);
    expect(full, 'a snapshot with the interpreter and its 2 sleeps').toBeDefined();
    expect(full!.roots[0]!.pid).toBe(interpreterPid);
    expect(full!.roots[0]!.children.map((c) => c.command)).toEqual(['sleep 3', 'sleep 3']);
    expect(r.peak!.processes).toBeGreaterThanOrEqual(3);
    await harness.supervisor.closeSession(session);
  });

  it('samples nothing with sampling turned off', async () => {
    harness = new Harness({ sampleRateHz: 0 });
    let trees = 0;
    harness.supervisor.subscribe((event) => {
      if (event.type === 'tree') trees += 1;
    });
    const r = await harness.run({ argv: ['sleep', '0.3'] });
    expect(trees).toBe(0);
    // No sample: a peak comes only from the run's cgroup counter, where it had one (one process, never a tree's count).
    if (r.peak) expect(r.peak.processes).toBe(1);
  });
});
